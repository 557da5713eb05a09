import Glibc
import PreviewLoopCLI

/// A private folder the server makes at start (mode 0700, under `$TMPDIR` or `/tmp`) for the files
/// renders write before they are read back, and removes with what is left in it when it stops. It
/// never touches anything it did not create: the folder is new, named by `mkdtemp`.
final class ScratchFolder: Sendable {
    /// Its absolute path.
    let path: String

    init() throws(ServerStartError) {
        var base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        if base.isEmpty || !base.hasPrefix("/") { base = "/tmp" }
        var template = Array((base + "/preview-loop-serve.XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw ServerStartError(message: "cannot make a scratch folder in \(Format.oneLine(base)): \(String(cString: strerror(errno)))")
        }
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes the files in the folder (renders' leftovers after a stop), then the folder.
    func remove() {
        guard let directory = opendir(path) else { return }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(directory)
        for name in names { unlink(path + "/" + name) }
        rmdir(path)
    }
}
