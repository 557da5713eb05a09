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
    /// A new file gets the process's usual mode (0666 less the umask); a file it replaces keeps its mode.
    package static func write(_ bytes: [UInt8], to path: String) throws(PreviewLoopError) {
        let temporary = try temporaryPath(for: path)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(String(cString: strerror(errno))))")
        }
        TemporaryFiles.register(temporary)
        defer { TemporaryFiles.unregister(temporary) }
        var failure = bytes.withUnsafeBytes { FileSystem.writeAll($0, to: descriptor) }
        if failure == 0 { failure = keepMode(of: path, on: temporary) }
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(String(cString: strerror(failure))))")
        }
    }

    /// Gives `temporary` the permission bits of the regular file at `path`, if there is one, so that
    /// replacing a file does not change who may read it.
    ///
    /// - Returns: 0, or the `errno` of a failed `chmod`.
    package static func keepMode(of path: String, on temporary: String) -> Int32 {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return 0 }
        return chmod(temporary, status.st_mode & 0o7777) == 0 ? 0 : errno
    }

    /// Creates the directory `path` and any missing parents.
    ///
    /// - Returns: whether this call created it (so that a caller can remove it again if nothing is
    ///   written into it).
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when it cannot be created or is a file.
    @discardableResult
    package static func createDirectory(_ path: String) throws(PreviewLoopError) -> Bool {
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

extension AtomicFile {
    /// A temporary path beside a destination that something else writes (FFmpeg's muxer), registered
    /// with ``TemporaryFiles``: ``commit()`` gives it the destination's mode and renames it over the
    /// destination; released uncommitted (after any failure), it is removed. One thread at a time.
    final class Temporary {
        /// Where the finished file goes.
        let path: String
        /// Where it is written meanwhile: `.NAME.PID.RANDOM.tmp` in the same directory.
        let temporaryPath: String
        private var isCommitted = false

        /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when the directory is missing or `path`
        ///   is a directory.
        init(for path: String) throws(PreviewLoopError) {
            self.path = path
            temporaryPath = try AtomicFile.temporaryPath(for: path)
            TemporaryFiles.register(temporaryPath)
        }

        deinit {
            guard !isCommitted else { return }
            unlink(temporaryPath)
            TemporaryFiles.unregister(temporaryPath)
        }

        /// Renames the written temporary over the destination, keeping a replaced file's mode.
        func commit() throws(PreviewLoopError) {
            let kept = AtomicFile.keepMode(of: path, on: temporaryPath)
            guard kept == 0 else {
                throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(String(cString: strerror(kept))))")
            }
            guard rename(temporaryPath, path) == 0 else {
                throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(String(cString: strerror(errno))))")
            }
            isCommitted = true
            TemporaryFiles.unregister(temporaryPath)
        }
    }
}
