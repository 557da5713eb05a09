import Glibc
import PreviewLoop
import PreviewLoopJobs

/// A private folder the server makes at start (mode 0700, under `$TMPDIR` or `/tmp`) for the files
/// renders read besides their source (an HLS playlist's checked copy, a remote playlist's newest segments
/// for `animated.*?latest`; animations are made in memory),
/// and removes with what is left in it when it stops. It
/// never touches anything it did not create: the folder is new, named by `mkdtemp`.
final class ScratchFolder: Sendable {
    /// Its absolute path.
    let path: String

    init() throws(ServerStartError) {
        var base = getenv("TMPDIR").map { FilePathBytes.decode(cString: $0) } ?? "/tmp"
        if base.isEmpty || !base.hasPrefix("/") { base = "/tmp" }
        guard let made = FileSystem.makeTemporaryDirectory(base + "/preview-loop-serve.XXXXXX") else {
            throw ServerStartError(message: "cannot make a scratch folder in \(Format.oneLine(base)): \(String(cString: strerror(errno)))")
        }
        path = made
    }

    /// Removes the files in the folder (renders' leftovers after a stop), then the folder.
    func remove() {
        guard let names = FileSystem.names(inDirectory: path) else { return }
        for name in names { FileSystem.unlink(path + "/" + name) }
        FileSystem.rmdir(path)
    }
}
