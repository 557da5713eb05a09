import FoundationEssentials
import Glibc

/// Writes files so that readers see either nothing or the whole file: the bytes go to a temporary file
/// in the same directory, which is then renamed over the destination. A failure leaves nothing behind.
public enum AtomicFile {
    /// A hidden, unique temporary path beside `path`, for writing before the rename.
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when the directory is missing or `path`
    ///   is a directory.
    static func temporaryPath(for path: String) throws(PreviewLoopError) -> String {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory else {
            throw PreviewLoopError(.outputNotWritable, "\(path): the directory \(directory) does not exist")
        }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory {
            throw PreviewLoopError(.outputNotWritable, "\(path): is a directory")
        }
        return directory + "/." + url.lastPathComponent + ".\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
    }

    /// Writes `bytes` to `path` atomically.
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` naming the path and the cause.
    public static func write(_ bytes: [UInt8], to path: String) throws {
        let temporary = try temporaryPath(for: path)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(String(cString: strerror(errno))))")
        }
        var failure = bytes.withUnsafeBytes { FileSystem.writeAll($0, to: descriptor) }
        close(descriptor)
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(String(cString: strerror(failure))))")
        }
    }

    /// Creates the directory `path` and any missing parents.
    ///
    /// - Returns: whether this call created it (so that a caller can remove it again if nothing is
    ///   written into it).
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when it cannot be created or is a file.
    @discardableResult
    public static func createDirectory(_ path: String) throws -> Bool {
        var isDirectory = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory else {
                throw PreviewLoopError(.outputNotWritable, "\(path): is a file, not a directory")
            }
            return false
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw PreviewLoopError(.outputNotWritable, "cannot create the directory \(path): \(FileSystem.reason(for: error))")
        }
        return true
    }
}
