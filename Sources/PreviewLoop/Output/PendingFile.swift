import Glibc

/// A file written under a temporary name beside its destination and renamed into place by
/// ``commit()``; until then (and after ``discard()``, a failure, or when released) nothing exists at
/// the destination path. The one temporary-then-rename of the code base: ``AtomicFile/write(_:to:)``,
/// the muxer's output (``AnimationWriter``, which FFmpeg writes by the temporary's path) and the CLI's
/// timing log use it. The temporary is registered with ``TemporaryFiles`` while it exists. One thread
/// at a time.
package final class PendingFile {
    /// Where the file appears on commit.
    package let path: String
    /// The hidden temporary in the same directory: `.NAME.PID.RANDOM.tmp`.
    package let temporaryPath: String
    /// What the file is, for error messages (`timing log`); `nil` names only the path.
    private let purpose: String?
    /// The open temporary; -1 once committed or discarded.
    private var descriptor: Int32

    /// Creates the temporary file.
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when the directory is missing, `path` is a
    ///   directory, or the temporary cannot be created, naming the path and the system's reason.
    package init(path: String, purpose: String? = nil) throws(PreviewLoopError) {
        self.path = path
        self.purpose = purpose
        temporaryPath = try AtomicFile.temporaryPath(for: path)
        let temporary = temporaryPath
        let opened = TemporaryFiles.register(temporary, creatingWith: { () -> (descriptor: Int32, error: Int32) in
            let descriptor = FileSystem.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            return (descriptor, descriptor >= 0 ? 0 : errno)
        }, created: { $0.descriptor >= 0 })
        descriptor = opened.descriptor
        guard descriptor >= 0 else { throw Self.failure(path, purpose, opened.error, creating: true) }
    }

    deinit {
        discard()
    }

    /// Appends bytes.
    package func write(_ bytes: [UInt8]) throws(PreviewLoopError) {
        let failure = bytes.withUnsafeBytes { FileSystem.writeAll($0, to: descriptor) }
        guard failure == 0 else { throw Self.failure(path, purpose, failure) }
    }

    /// Closes the temporary, gives it the mode of the file it replaces (if any) and renames it to
    /// ``path``; on failure the temporary is removed.
    package func commit() throws(PreviewLoopError) {
        defer { TemporaryFiles.unregister(temporaryPath) }
        var failure = AtomicFile.keepMode(of: path, on: temporaryPath)
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        descriptor = -1
        if failure == 0 && FileSystem.rename(temporaryPath, path) != 0 { failure = errno }
        if failure != 0 {
            FileSystem.unlink(temporaryPath)
            throw Self.failure(path, purpose, failure)
        }
    }

    /// Closes and removes the temporary; does nothing once committed.
    package func discard() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
        FileSystem.unlink(temporaryPath)
        TemporaryFiles.unregister(temporaryPath)
    }

    private static func failure(_ path: String, _ purpose: String?, _ code: Int32, creating: Bool = false) -> PreviewLoopError {
        let reason = String(cString: strerror(code))
        guard let purpose else { return PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(reason))") }
        return PreviewLoopError(.outputNotWritable, "cannot \(creating ? "create" : "write") the \(purpose) \(path): \(reason)")
    }
}
