import Glibc

/// The system calls that take or return a path, each through ``FilePathBytes``: a path goes to the
/// kernel as the bytes it stands for, a name comes back decoded with the same escape. Every path a
/// system call sees in the engine, the CLI and the server passes through here.
///
/// Each returns what its C call returns (and leaves `errno` set), so call sites read as the POSIX
/// they replace: `FileSystem.open(path, O_RDONLY)`, `FileSystem.stat(path, &status)`.
extension FileSystem {
    /// `open(2)`.
    package static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        FilePathBytes.withCString(path) { Glibc.open($0, flags, mode) }
    }

    /// `stat(2)`.
    package static func stat(_ path: String, _ status: inout Glibc.stat) -> Int32 {
        FilePathBytes.withCString(path) { systemStat($0, &status) }
    }

    /// `lstat(2)`.
    package static func lstat(_ path: String, _ status: inout Glibc.stat) -> Int32 {
        FilePathBytes.withCString(path) { systemLinkStat($0, &status) }
    }

    /// `rename(2)`.
    @discardableResult
    package static func rename(_ from: String, _ to: String) -> Int32 {
        FilePathBytes.withCString(from) { old in FilePathBytes.withCString(to) { Glibc.rename(old, $0) } }
    }

    /// `link(2)`.
    @discardableResult
    package static func link(_ from: String, _ to: String) -> Int32 {
        FilePathBytes.withCString(from) { old in FilePathBytes.withCString(to) { Glibc.link(old, $0) } }
    }

    /// `unlink(2)`.
    @discardableResult
    package static func unlink(_ path: String) -> Int32 {
        FilePathBytes.withCString(path) { Glibc.unlink($0) }
    }

    /// `mkdir(2)`.
    package static func mkdir(_ path: String, _ mode: mode_t) -> Int32 {
        FilePathBytes.withCString(path) { Glibc.mkdir($0, mode) }
    }

    /// `rmdir(2)`.
    @discardableResult
    package static func rmdir(_ path: String) -> Int32 {
        FilePathBytes.withCString(path) { Glibc.rmdir($0) }
    }

    /// `chmod(2)`.
    @discardableResult
    package static func chmod(_ path: String, _ mode: mode_t) -> Int32 {
        FilePathBytes.withCString(path) { Glibc.chmod($0, mode) }
    }

    /// `access(2)`.
    package static func access(_ path: String, _ mode: Int32) -> Int32 {
        FilePathBytes.withCString(path) { Glibc.access($0, mode) }
    }

    /// `mkdtemp(3)` on `template` (ending in `XXXXXX`): the directory made, or `nil` (`errno` set).
    package static func makeTemporaryDirectory(_ template: String) -> String? {
        var characters = FilePathBytes.cString(template)
        guard characters.withUnsafeMutableBufferPointer({ Glibc.mkdtemp($0.baseAddress!) }) != nil else { return nil }
        return characters.withUnsafeBufferPointer { FilePathBytes.decode(cString: $0.baseAddress!) }
    }

    /// The names in the directory at `path`, `.` and `..` left out, in the order `readdir` gives
    /// them, each decoded with the escape; `nil` when it cannot be opened (`errno` set).
    package static func names(inDirectory path: String) -> [String]? {
        guard let directory = FilePathBytes.withCString(path, { opendir($0) }) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = entryName(entry)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The name of a directory entry `readdir` returned, decoded with the escape.
    package static func entryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
        withUnsafeBytes(of: entry.pointee.d_name) { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            return FilePathBytes.decode(bytes.prefix { $0 != 0 })
        }
    }

    /// The whole content of the file at `path` (what `FileManager.contents(atPath:)` reads), or `nil`
    /// when it cannot be opened or read (`errno` set).
    package static func contents(of path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
        }
    }

    /// The process's working directory (`getcwd`), decoded with the escape; `.` when it cannot be
    /// read (removed, or too long).
    package static var currentDirectory: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return buffer.withUnsafeBufferPointer { FilePathBytes.decode(cString: $0.baseAddress!) }
    }

    /// `path` made absolute against the working directory (no other change).
    package static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : currentDirectory + "/" + path
    }

    /// Whether something is at `path` (symbolic links followed) and whether it is a directory.
    package static func fileExists(_ path: String) -> (exists: Bool, isDirectory: Bool) {
        var status = Glibc.stat()
        guard stat(path, &status) == 0 else { return (false, false) }
        return (true, status.st_mode & S_IFMT == S_IFDIR)
    }

    /// The directory part and the last component of `path`, as the temporary beside a file needs
    /// them: trailing slashes ignored, a path without a slash in the working directory.
    package static func split(_ path: String) -> (directory: String, name: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return (currentDirectory, String(trimmed)) }
        let directory = trimmed[..<slash]
        return (directory.isEmpty ? "/" : String(directory), String(trimmed[trimmed.index(after: slash)...]))
    }

    /// Creates the directory `path` and any missing parents (as `mkdir -p`); 0, or the `errno` that
    /// stopped it.
    package static func makeDirectories(_ path: String, mode: mode_t = 0o777) -> Int32 {
        if fileExists(path).isDirectory { return 0 }
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        // A missing parent is made first; one that exists as a file makes this mkdir fail (ENOTDIR).
        var status = Glibc.stat()
        if let slash = trimmed.lastIndex(of: "/"), slash != trimmed.startIndex, lstat(String(trimmed[..<slash]), &status) != 0 {
            let parent = makeDirectories(String(trimmed[..<slash]), mode: mode)
            if parent != 0 { return parent }
        }
        if mkdir(String(trimmed), mode) == 0 { return 0 }
        let code = errno
        return code == EEXIST && fileExists(path).isDirectory ? 0 : code
    }

    /// Removes the file or the directory tree at `path` (symbolic links removed, not followed);
    /// failures are ignored, as a clean-up's are.
    package static func removeTree(_ path: String) {
        var status = Glibc.stat()
        guard lstat(path, &status) == 0 else { return }
        if status.st_mode & S_IFMT == S_IFDIR {
            for name in names(inDirectory: path) ?? [] { removeTree(appending(name, to: path)) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}

// `Glibc.stat(…)` names the structure, not the function: the calls are made at file scope, where
// both are in view and the arguments choose the function.
private func systemStat(_ path: UnsafePointer<CChar>, _ status: inout stat) -> Int32 { stat(path, &status) }
private func systemLinkStat(_ path: UnsafePointer<CChar>, _ status: inout stat) -> Int32 { lstat(path, &status) }
