import FoundationEssentials
import Glibc

/// Writes files so that readers see either nothing or the whole file: the bytes go to a temporary file
/// in the same directory, which is then renamed over the destination. A failure leaves nothing behind.
package enum AtomicFile {
    /// A hidden, unique temporary path beside `path`, for writing before the rename.
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when the directory is missing or `path`
    ///   is a directory.
    static func temporaryPath(for path: String) throws(PreviewLoopError) -> String {
        let (directory, name) = FileSystem.split(path)
        guard FileSystem.fileExists(directory).isDirectory else {
            throw PreviewLoopError(.outputNotWritable, "\(path): the directory \(directory) does not exist")
        }
        if FileSystem.fileExists(path).isDirectory {
            throw PreviewLoopError(.outputNotWritable, "\(path): is a directory")
        }
        return FileSystem.appending(".\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp", to: directory)
    }

    /// Writes `bytes` to `path` atomically.
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` naming the path and the cause.
    /// A new file gets the process's usual mode (0666 less the umask); a file it replaces keeps its mode.
    package static func write(_ bytes: [UInt8], to path: String) throws(PreviewLoopError) {
        let file = try PendingFile(path: path)
        try file.write(bytes)
        try file.commit()
    }

    /// Gives `temporary` the permission bits of the regular file at `path`, if there is one, so that
    /// replacing a file does not change who may read it.
    ///
    /// - Returns: 0, or the `errno` of a failed `chmod`.
    package static func keepMode(of path: String, on temporary: String) -> Int32 {
        var status = stat()
        guard FileSystem.stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return 0 }
        return FileSystem.chmod(temporary, status.st_mode & 0o7777) == 0 ? 0 : errno
    }

    /// Creates the directory `path` and any missing parents.
    ///
    /// - Returns: whether this call created it (so that a caller can remove it again if nothing is
    ///   written into it).
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when it cannot be created or is a file.
    @discardableResult
    package static func createDirectory(_ path: String) throws(PreviewLoopError) -> Bool {
        let existing = FileSystem.fileExists(path)
        if existing.exists {
            guard existing.isDirectory else {
                throw PreviewLoopError(.outputNotWritable, "\(path): is a file, not a directory")
            }
            return false
        }
        let failure = FileSystem.makeDirectories(path)
        guard failure == 0 else {
            throw PreviewLoopError(.outputNotWritable, "cannot create the directory \(path): \(FileSystem.errorText(failure))")
        }
        return true
    }
}
