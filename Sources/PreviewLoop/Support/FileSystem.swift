import Glibc

/// The file operations the engine does: whole writes to a descriptor, a file's first bytes, path
/// joining, the system's words for a failure, and (in `FileSystem+Paths.swift`) every system call that
/// takes or returns a path, through ``FilePathBytes``.
package enum FileSystem {
    /// The absolute path with every symbolic link, `.` and `..` resolved; `nil` when it does not exist.
    package static func resolvedPath(_ path: String) -> String? {
        guard let resolved = FilePathBytes.withCString(path, { realpath($0, nil) }) else { return nil }
        defer { free(resolved) }
        return FilePathBytes.decode(cString: resolved)
    }

    /// Opens a regular file for reading, refusing anything else before reading a byte (a named pipe
    /// would block until a writer came, a device might never end); returns the descriptor (blocking
    /// reads) and the file's size. `name` is how errors name the file.
    package static func openRegularFile(_ path: String, name: String) throws(PreviewLoopError) -> (descriptor: Int32, size: Int) {
        let descriptor = Self.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            throw PreviewLoopError(code == ENOENT ? .inputNotFound : .inputNotReadable, "\(name): \(errorText(code))")
        }
        var status = Glibc.stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw PreviewLoopError(.invalidArgument, "\(name): not a regular file (a folder, pipe or device)")
        }
        _ = fcntl(descriptor, F_SETFL, 0)
        return (descriptor, Int(status.st_size))
    }

    /// Reads a regular file whole (see ``openRegularFile(_:name:)``), refusing one over `limit` bytes.
    ///
    /// - Parameter what: how errors name the file (`font file`, `recipe`).
    package static func readRegularFile(_ path: String, limit: Int, what: String) throws(PreviewLoopError) -> [UInt8] {
        let (descriptor, size) = try openRegularFile(path, name: "\(what) '\(path)'")
        defer { close(descriptor) }
        guard size <= limit else {
            throw PreviewLoopError(.tooLarge, "\(what) '\(path)': \(size) bytes, more than the \(limit >> 20) MiB allowed")
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 {
                if errno == EINTR { continue }
                throw PreviewLoopError(.inputNotReadable, "\(what) '\(path)': \(errorText(errno))")
            }
            if count == 0 { break }
            filled += count
        }
        return Array(bytes[0..<filled])
    }

    /// Writes all of `bytes` to `descriptor`, retrying after interruptions and short writes.
    ///
    /// - Returns: 0, or the `errno` that stopped the write (a closed pipe, a full disk).
    package static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return 0
    }

    /// Up to `count` bytes from the start of the file at `path` (fewer when the file is shorter);
    /// `nil` when it cannot be opened or read.
    static func prefix(ofFileAt path: String, count: Int) -> [UInt8]? {
        let descriptor = Self.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        let isRead = bytes.withUnsafeMutableBytes { buffer -> Bool in
            while filled < count {
                let got = read(descriptor, buffer.baseAddress! + filled, count - filled)
                if got < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                if got == 0 { break }
                filled += got
            }
            return true
        }
        guard isRead else { return nil }
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// `name` inside the directory `directory`: `out` + `a.png` → `out/a.png`, `out/` + `a.png` →
    /// `out/a.png`, an empty directory → `a.png`.
    static func appending(_ name: String, to directory: String) -> String {
        if directory.isEmpty { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The system's text for an `errno` value (`strerror`): `No such file or directory`.
    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

}
