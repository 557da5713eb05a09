import FoundationEssentials
import Glibc

/// The file operations a batch needs beyond ``AtomicFile``: whole reads with a limit, appends of
/// whole lines, directory trees, an exclusive lock.
package enum BatchFiles {
    /// Reads a regular file whole, refusing one over `limit` bytes.
    package static func readFile(_ path: String, limit: Int) throws(PreviewLoopError) -> [UInt8] {
        let descriptor = FileSystem.open(path, O_RDONLY | O_CLOEXEC)
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

    /// Reads a regular file, refusing more than `limit` bytes, and anything else — a FIFO, a device, a
    /// socket, a folder — at once instead of blocking on it: for files read at start-up, where a FIFO
    /// would hang the start with no output.
    package static func readRegularFile(_ path: String, limit: Int) throws(PreviewLoopError) -> [UInt8] {
        let descriptor = FileSystem.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else {
            let code = errno
            throw PreviewLoopError(code == ENOENT ? .inputNotFound : .inputNotReadable, "\(path): \(FileSystem.errorText(code))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw PreviewLoopError(.inputNotReadable, "\(path): not a regular file")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
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
        guard FileSystem.stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(status.st_size)
    }

    /// Whether anything (a file, folder or link, even a dangling one) is at `path`.
    static func exists(_ path: String) -> Bool {
        var status = stat()
        return FileSystem.lstat(path, &status) == 0
    }

    /// Whether `path` is a directory.
    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return FileSystem.stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// Removes a file or a directory tree, if present.
    static func remove(_ path: String) {
        if isDirectory(path) {
            FileSystem.removeTree(path)
        } else {
            FileSystem.unlink(path)
        }
    }

    /// Creates a directory (and parents).
    /// Whether the regular files `first` and `second` hold the same bytes: the same file (device and
    /// inode), or the same size and contents compared a block at a time. `false` when either cannot be read.
    static func sameContents(_ first: String, _ second: String) -> Bool {
        let a = FileSystem.open(first, O_RDONLY | O_CLOEXEC), b = FileSystem.open(second, O_RDONLY | O_CLOEXEC)
        defer { if a >= 0 { close(a) }; if b >= 0 { close(b) } }
        var statusA = stat(), statusB = stat()
        guard a >= 0, b >= 0, fstat(a, &statusA) == 0, fstat(b, &statusB) == 0,
              (statusA.st_mode & S_IFMT) == S_IFREG, (statusB.st_mode & S_IFMT) == S_IFREG, statusA.st_size == statusB.st_size else {
            return false
        }
        if statusA.st_dev == statusB.st_dev && statusA.st_ino == statusB.st_ino { return true }
        var bufferA = [UInt8](repeating: 0, count: 1 << 20), bufferB = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let countA = bufferA.withUnsafeMutableBytes { read(a, $0.baseAddress, $0.count) }
            guard countA >= 0 else { return false }
            // Fill the same count from the other file (a read may return less than asked).
            var filled = 0
            while filled < countA {
                let count = bufferB.withUnsafeMutableBytes { read(b, $0.baseAddress! + filled, countA - filled) }
                guard count > 0 else { return false }
                filled += count
            }
            if countA == 0 { return true }
            guard bufferA[..<countA] == bufferB[..<countA] else { return false }
        }
    }

    static func makeDirectory(_ path: String) throws(PreviewLoopError) {
        _ = try AtomicFile.createDirectory(path)
    }

    /// Renames, reporting the system's reason.
    static func rename(_ from: String, _ to: String) throws(PreviewLoopError) {
        guard FileSystem.rename(from, to) == 0 else {
            throw PreviewLoopError(.outputNotWritable, "cannot move \(from) to \(to): \(FileSystem.errorText(errno))")
        }
    }
}

/// A results file open for appending whole lines: each line goes out in one `write(2)` on an
/// `O_APPEND` descriptor and is flushed to the disk, so a killed run leaves whole lines. The file is
/// never emptied: a rerun appends its records after the earlier runs' (readers take the latest record
/// of each clip). A write cut short (a full disk) is taken back to the last whole line, and a tail an
/// earlier run left without its newline is cut off when the file is opened.
package final class BatchLineWriter: @unchecked Sendable {
    private let descriptor: Int32
    private let lock = ConditionLock()
    /// The file's path.
    package let path: String

    /// Opens (or creates) the file for appending. Only one writer may have a file open: batch holds
    /// its shard's lock when it opens the shard's results file.
    package init(path: String) throws(PreviewLoopError) {
        self.path = path
        descriptor = FileSystem.open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            if code == ELOOP {
                throw PreviewLoopError(.outputNotWritable, "\(path): is a symbolic link; batch writes its results only to a file of its own")
            }
            throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(FileSystem.errorText(code)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw PreviewLoopError(.outputNotWritable, "\(path): not a regular file; batch writes its results only to one")
        }
        _ = fcntl(descriptor, F_SETFL, O_APPEND)
        Self.cutTornTail(descriptor, size: Int(status.st_size))
    }

    deinit { close(descriptor) }

    /// Cuts what follows the last newline (a line a killed or full-disk run did not finish).
    private static func cutTornTail(_ descriptor: Int32, size: Int) {
        guard size > 0 else { return }
        var end = size
        var chunk = [UInt8](repeating: 0, count: 65536)
        while end > 0 {
            let start = max(0, end - chunk.count)
            let count = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, end - start, off_t(start)) }
            guard count == end - start else { return }
            if let newline = chunk[0..<count].lastIndex(of: UInt8(ascii: "\n")) {
                let whole = start + newline + 1
                if whole < size { _ = ftruncate(descriptor, off_t(whole)) }
                return
            }
            end = start
        }
        _ = ftruncate(descriptor, 0)
    }

    /// Appends `line` and a newline, then flushes it to the disk; on failure the file is left as it
    /// was before the call.
    package func append(_ line: String) throws(PreviewLoopError) {
        let bytes = Array((line + "\n").utf8)
        lock.lock()
        defer { lock.unlock() }
        var status = stat()
        let before = fstat(descriptor, &status) == 0 ? Int(status.st_size) : nil
        let failure = bytes.withUnsafeBytes { FileSystem.writeAll($0, to: descriptor) }
        guard failure == 0 else {
            if let before { _ = ftruncate(descriptor, off_t(before)) }
            throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(FileSystem.errorText(failure)))")
        }
        guard fsync(descriptor) == 0 else {
            let code = errno
            if let before { _ = ftruncate(descriptor, off_t(before)) }
            throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(FileSystem.errorText(code)))")
        }
    }
}

/// Reads a results file a line at a time with a bounded line length; only regular files.
package enum ResultsLines {
    /// The longest line read: a record with thousands of outputs is well under it.
    package static let maxLineBytes = 16 << 20

    /// Calls `line` with each non-empty line's number, bytes (without the newline) and whether it is
    /// the last line and has no newline (a line a killed writer did not finish).
    package static func read(_ path: String, line: (Int, ArraySlice<UInt8>, Bool) throws -> Void) throws {
        let descriptor = try FileSystem.openRegularFile(path, name: path).descriptor
        defer { close(descriptor) }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var number = 0
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw PreviewLoopError(.inputNotReadable, "\(path): \(FileSystem.errorText(errno))")
            }
            if count == 0 { break }
            var start = 0
            while let newline = chunk[start..<count].firstIndex(of: UInt8(ascii: "\n")) {
                number += 1
                if pending.isEmpty {
                    if newline > start { try line(number, chunk[start..<newline], false) }
                } else {
                    pending += chunk[start..<newline]
                    try check(pending.count, number, path)
                    try line(number, pending[...], false)
                    pending.removeAll(keepingCapacity: true)
                }
                start = newline + 1
            }
            pending += chunk[start..<count]
            try check(pending.count, number + 1, path)
        }
        if !pending.isEmpty { try line(number + 1, pending[...], true) }
    }

    private static func check(_ length: Int, _ number: Int, _ path: String) throws {
        guard length <= maxLineBytes else {
            throw PreviewLoopError(.tooLarge, "\(path): line \(number) is longer than \(maxLineBytes >> 20) MiB; not a results file")
        }
    }
}
