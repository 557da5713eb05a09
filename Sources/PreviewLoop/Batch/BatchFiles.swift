import FoundationEssentials
import Glibc

/// The file operations a batch needs beyond ``AtomicFile``: whole reads with a limit, appends of
/// whole lines, directory trees, an exclusive lock.
package enum BatchFiles {
    /// Reads a regular file whole, refusing one over `limit` bytes.
    package static func readFile(_ path: String, limit: Int) throws(PreviewLoopError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw PreviewLoopError(code == ENOENT ? .inputNotFound : .inputNotReadable, "\(path): \(FileSystem.errorText(code))")
        }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR {
            throw PreviewLoopError(.inputNotReadable, "\(path): is a directory")
        }
        return try readAll(descriptor: descriptor, name: path, limit: limit)
    }

    /// Reads a descriptor to its end, refusing more than `limit` bytes.
    package static func readAll(descriptor: Int32, name: String, limit: Int) throws(PreviewLoopError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw PreviewLoopError(.inputNotReadable, "\(name): \(FileSystem.errorText(errno))")
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            if bytes.count > limit { throw PreviewLoopError(.tooLarge, "\(name): larger than \(limit >> 20) MiB") }
        }
    }

    /// The size of a regular file, or `nil` when it is missing or not a regular file.
    package static func fileSize(_ path: String) -> Int? {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(status.st_size)
    }

    /// Whether `path` is a directory.
    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// Removes a file or a directory tree, if present.
    static func remove(_ path: String) {
        if isDirectory(path) {
            try? FileManager.default.removeItem(atPath: path)
        } else {
            unlink(path)
        }
    }

    /// Creates a directory (and parents).
    static func makeDirectory(_ path: String) throws(PreviewLoopError) {
        _ = try AtomicFile.createDirectory(path)
    }

    /// Renames, reporting the system's reason.
    static func rename(_ from: String, _ to: String) throws(PreviewLoopError) {
        guard Glibc.rename(from, to) == 0 else {
            throw PreviewLoopError(.outputNotWritable, "cannot move \(from) to \(to): \(FileSystem.errorText(errno))")
        }
    }
}

/// A results file open for appending whole lines: each line goes out in one `write(2)` on an
/// `O_APPEND` descriptor, so a killed run leaves whole lines (and a reader sees whole records).
package final class BatchLineWriter: @unchecked Sendable {
    private let descriptor: Int32
    private let lock = ConditionLock()
    /// The file's path.
    package let path: String

    /// Creates (or empties, with `truncate`) the file.
    package init(path: String, truncate: Bool = true) throws(PreviewLoopError) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0o644)
        guard descriptor >= 0 else {
            throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(FileSystem.errorText(errno)))")
        }
    }

    deinit { close(descriptor) }

    /// Appends `line` and a newline, then flushes it to the disk.
    package func append(_ line: String) throws(PreviewLoopError) {
        let bytes = Array((line + "\n").utf8)
        lock.lock()
        defer { lock.unlock() }
        let failure = bytes.withUnsafeBytes { FileSystem.writeAll($0, to: descriptor) }
        guard failure == 0 else {
            throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(FileSystem.errorText(failure)))")
        }
        fsync(descriptor)
    }
}
