import Glibc
import PreviewLoop
import PreviewLoopJobs

/// Rendered responses kept on disk (`--cache DIR`, `--cache-size`), shared by every server pointed at
/// the same folder and kept across restarts.
///
/// An entry is one file, `DIR/<validator>.<extension>`, named by the response's `ETag` (which already
/// holds the source's identity, the route, the normalised query and the engine's version), so a
/// replaced source can never be answered with an old entry. The file starts with the entity's own
/// headers (``EntryHead``: a marker line, `Name: value` lines, an empty line), then the body; a file
/// without that start is not an entry (a miss, rendered again and replaced). Each entry is written to a temporary file
/// (`DIR/.tmp-…`, never served) and renamed into place, so a reader sees a whole file or none, after a
/// full disk or `kill -9` too. A hit is sent from its file descriptor. A hit refreshes the entry's
/// modification time (at most once a minute), and eviction removes the least recently used entries
/// until the cache is at 90 % of its cap, after reading the folder again, so it sees the entries other
/// servers wrote.
///
/// The folder is marked with a `CACHEDIR.TAG` (the Cache Directory Tagging convention, which backup
/// tools honour). The server only takes a folder that is new, empty or already so marked by
/// PreviewLoop, and removes only files named as its entries and temporaries are: nothing a user put
/// there.
///
/// Invariant: `entries`, `bytes`, `storesSinceScan` and `isEvicting` are touched only under `lock`;
/// `bytes` is the sum of the entries' sizes as last seen.
final class DiskCache: @unchecked Sendable {
    /// The option that names the folder (`--cache`), for start-up errors.
    private static var optionName: String { ServeCommand.cache.spec.longSpelling }

    /// The folder, as given.
    let directory: String
    /// The cap in bytes.
    let capacity: Int

    private struct Entry {
        var size: Int
        /// The last use (the file's modification time), in seconds since 1970.
        var used: Int
    }
    private var entries: [String: Entry] = [:]
    private var bytes = 0
    private var storesSinceScan = 0
    private var isEvicting = false
    private var nextTemporary = 0
    private let lock = ConditionLock()
    private let metrics: ServerMetrics

    /// The marker file's name and the text it starts with (the convention's signature).
    static let tagName = "CACHEDIR.TAG"
    static let signature = "Signature: 8a477f597d28d172789f06886806bc55"
    static let tagText = signature + "\n# This file marks a cache of rendered previews made by preview-loop serve.\n"
        + "# Any entry may be deleted at any time. See https://bford.info/cachedir/\n"
    /// How often the folder is read again to learn of entries other servers wrote.
    static let storesPerScan = 256
    /// A temporary file this old, or of a process that is gone, is a leftover and removed.
    static let staleSeconds = 3600

    /// Opens the cache in `directory`, making the folder (mode 0755) if absent.
    init(directory: String, capacity: Int, metrics: ServerMetrics) throws(ServerStartError) {
        self.directory = directory
        self.capacity = capacity
        self.metrics = metrics
        let shown = Format.oneLine(directory)
        if FileSystem.mkdir(directory, 0o755) != 0 && errno != EEXIST {
            throw ServerStartError(message: "\(Self.optionName) \(shown): \(Self.errorText())")
        }
        var status = stat()
        guard FileSystem.stat(directory, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw ServerStartError(message: "\(Self.optionName) \(shown): not a folder")
        }
        guard FileSystem.access(directory, W_OK | X_OK) == 0 else {
            throw ServerStartError(message: "\(Self.optionName) \(shown): \(Self.errorText())")
        }
        try claimFolder()
        let scanned = scan()
        lock.withLock {
            entries = scanned
            bytes = scanned.values.reduce(0) { $0 + $1.size }
        }
        metrics.diskCacheChanged(bytes: lock.withLock { bytes }, evictions: 0)
    }

    /// The entry's file name for a validator (`"…"`, quotes included) and a route (`thumbnail.jpg`).
    static func entryName(tag: String, route: String) -> String {
        let hex = tag.filter { $0 != "\"" }
        let fileExtension = route.split(separator: ".").last.map(String.init) ?? "bin"
        return hex + "." + fileExtension
    }

    /// An open entry: its descriptor (the caller owns it), where its body starts, the body's size and
    /// the headers stored with it.
    struct Hit {
        var descriptor: Int32
        /// The body's first byte in the file.
        var offset: Int
        /// The body's size in bytes.
        var size: Int
        var headers: [(name: String, value: String)]
    }

    /// The entry named `name`, opened, or `nil` when there is none (or it is not a whole regular file
    /// starting with its headers).
    func open(_ name: String) -> Hit? {
        let descriptor = FileSystem.open(directory + "/" + name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return nil }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_size > 0,
              let head = EntryHead.read(descriptor), head.length < Int(status.st_size) else {
            close(descriptor)
            return nil
        }
        let now = time(nil)
        if now - status.st_mtim.tv_sec >= 60 {
            // Marks it used: eviction goes by modification time. Glibc's UTIME_OMIT (2^30 - 2) leaves the
            // access time, UTIME_NOW (2^30 - 1) sets the modification time; Swift does not import the macros.
            var times = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2), timespec(tv_sec: 0, tv_nsec: (1 << 30) - 1)]
            _ = futimens(descriptor, &times)
        }
        let size = Int(status.st_size)
        lock.withLock {
            if let old = entries.updateValue(Entry(size: size, used: now), forKey: name) {
                bytes -= old.size
            }
            bytes += size
        }
        return Hit(descriptor: descriptor, offset: head.length, size: size - head.length, headers: head.headers)
    }

    /// Writes `entry` (its headers, then its body) as the entry `name`: to a temporary file, then
    /// renamed into place. A failure (a full disk, say) leaves no file and only counts in the metrics;
    /// the response is answered anyway.
    func store(_ entry: CachedBody, as name: String) {
        guard !entry.body.isEmpty, let head = EntryHead.bytes(entry.headers) else { return }
        let body = head + entry.body
        guard body.count <= capacity / 2 else { return }
        let serial = lock.withLock { () -> Int in
            nextTemporary += 1
            return nextTemporary
        }
        let temporary = directory + "/.tmp-\(getpid())-\(serial)-" + name
        let descriptor = FileSystem.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            metrics.diskCacheWriteFailed()
            return
        }
        var written = 0
        let complete = body.withUnsafeBytes { raw -> Bool in
            while written < raw.count {
                let count = write(descriptor, raw.baseAddress! + written, raw.count - written)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return true
        }
        guard close(descriptor) == 0, complete, FileSystem.rename(temporary, directory + "/" + name) == 0 else {
            FileSystem.unlink(temporary)
            metrics.diskCacheWriteFailed()
            return
        }
        let shouldEvict: Bool = lock.withLock {
            if let old = entries.updateValue(Entry(size: body.count, used: time(nil)), forKey: name) {
                bytes -= old.size
            }
            bytes += body.count
            storesSinceScan += 1
            guard !isEvicting, bytes > capacity || storesSinceScan >= Self.storesPerScan else { return false }
            isEvicting = true
            return true
        }
        metrics.diskCacheChanged(bytes: lock.withLock { bytes }, evictions: 0)
        if shouldEvict { evict() }
    }

    /// Reads the folder again and, when over the cap, removes the least recently used entries until at
    /// 90 % of it. One caller at a time (`isEvicting`).
    private func evict() {
        var scanned = scan()
        var total = scanned.values.reduce(0) { $0 + $1.size }
        var removed = 0
        if total > capacity {
            let target = capacity / 10 * 9
            // Oldest first; the name breaks ties, so every server evicts in the same order.
            let order = scanned.sorted { ($0.value.used, $0.key) < ($1.value.used, $1.key) }
            for (name, entry) in order where total > target {
                // Another server may have removed it first: it is gone either way.
                if FileSystem.unlink(directory + "/" + name) == 0 || errno == ENOENT {
                    total -= entry.size
                    scanned[name] = nil
                    removed += 1
                }
            }
        }
        lock.withLock {
            entries = scanned
            bytes = total
            storesSinceScan = 0
            isEvicting = false
        }
        metrics.diskCacheChanged(bytes: total, evictions: removed)
    }

    /// The entries in the folder now; removes leftover temporary files on the way.
    private func scan() -> [String: Entry] {
        var found: [String: Entry] = [:]
        guard let names = FileSystem.names(inDirectory: directory) else { return found }
        let now = time(nil)
        for name in names {
            let isEntry = Self.isEntryName(name)
            let temporaryOwner = isEntry ? nil : Self.temporaryOwner(name)
            guard isEntry || temporaryOwner != nil else { continue }
            var status = stat()
            guard FileSystem.lstat(directory + "/" + name, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { continue }
            if let owner = temporaryOwner {
                let ownerGone = owner != getpid() && kill(owner, 0) != 0 && errno == ESRCH
                if ownerGone || now - status.st_mtim.tv_sec > Self.staleSeconds { FileSystem.unlink(directory + "/" + name) }
                continue
            }
            found[name] = Entry(size: Int(status.st_size), used: status.st_mtim.tv_sec)
        }
        return found
    }

    /// Whether `name` is an entry's: 64 (or 32) lowercase hex digits, a dot and 1 to 5 lowercase letters or digits.
    static func isEntryName(_ name: String) -> Bool {
        // 64 hexadecimal digits (a SHA-256); 32 in caches written by earlier versions, which are
        // still recognised so that eviction removes them.
        let bytes = Array(name.utf8)
        guard let dot = bytes.firstIndex(of: UInt8(ascii: ".")), dot == 64 || dot == 32,
              bytes.count >= dot + 2, bytes.count <= dot + 6 else { return false }
        let isHex = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) }
        let isLower = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
        return bytes[..<dot].allSatisfy(isHex) && bytes[(dot + 1)...].allSatisfy(isLower)
    }

    /// The process id in a temporary file's name (`.tmp-PID-SERIAL-ENTRY`), or `nil` for another name.
    static func temporaryOwner(_ name: String) -> pid_t? {
        guard name.hasPrefix(".tmp-") else { return nil }
        let parts = name.dropFirst(5).split(separator: "-", maxSplits: 2)
        guard parts.count == 3, Int(parts[1]) != nil, isEntryName(String(parts[2])),
              let pid = pid_t(parts[0]), pid > 0 else { return nil }
        return pid
    }

    /// Takes the folder: already marked by PreviewLoop, or empty (then marked). Anything else is refused,
    /// so eviction never runs in a folder of the user's files.
    private func claimFolder() throws(ServerStartError) {
        let shown = Format.oneLine(directory)
        let tagPath = directory + "/" + Self.tagName
        for _ in 0..<2 {
            if let text = Self.readSmallFile(tagPath) {
                // A tag another server is still writing reads as the start of ours.
                guard text.hasPrefix(Self.signature) && text.contains("preview-loop") || Self.tagText.hasPrefix(text) else {
                    throw ServerStartError(message: "\(Self.optionName) \(shown): its CACHEDIR.TAG is another program's; give a folder of its own")
                }
                return
            }
            guard let names = FileSystem.names(inDirectory: directory) else { throw ServerStartError(message: "\(Self.optionName) \(shown): \(Self.errorText())") }
            let others = names.filter { $0 != Self.tagName }.count
            guard others == 0 else {
                throw ServerStartError(message: "\(Self.optionName) \(shown): the folder holds files and no preview-loop CACHEDIR.TAG; "
                    + "give a new or empty folder")
            }
            // O_EXCL: of several servers starting at once, one writes the tag and the others read it.
            let descriptor = FileSystem.open(tagPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if descriptor >= 0 {
                let bytes = Array(Self.tagText.utf8)
                let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                close(descriptor)
                guard count == bytes.count else {
                    FileSystem.unlink(tagPath)
                    throw ServerStartError(message: "\(Self.optionName) \(shown): cannot write its CACHEDIR.TAG: \(Self.errorText())")
                }
                return
            }
            guard errno == EEXIST else { throw ServerStartError(message: "\(Self.optionName) \(shown): \(Self.errorText())") }
            // Another server wrote it meanwhile: read it on the second turn (it may still be short).
            usleep(50_000)
        }
        throw ServerStartError(message: "\(Self.optionName) \(shown): its CACHEDIR.TAG cannot be read")
    }

    /// A file's text when it is a regular file under 4 KiB, else `nil`.
    private static func readSmallFile(_ path: String) -> String? {
        let descriptor = FileSystem.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_size < 4096 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}

/// The start of a disk cache entry: `preview-loop cache entry 1`, a line per header (`Name: value`),
/// an empty line; at most ``maximumLength`` bytes. The body follows.
enum EntryHead {
    static let marker = Array("preview-loop cache entry 1\n".utf8)
    static let maximumLength = 4096

    /// The head for `headers`; `nil` when a header cannot be written (a line break in it, a name with a
    /// colon) or the head would be too long.
    static func bytes(_ headers: [(name: String, value: String)]) -> [UInt8]? {
        var bytes = marker
        for (name, value) in headers {
            guard !name.isEmpty, !name.contains(":"), !(name + value).contains(where: { $0 == "\n" || $0 == "\r" }) else { return nil }
            bytes += Array((name + ": " + value + "\n").utf8)
        }
        bytes.append(UInt8(ascii: "\n"))
        return bytes.count <= maximumLength ? bytes : nil
    }

    /// The head at the start of an open file (read with `pread`, the file position left alone): its
    /// length and headers; `nil` when the file does not start with one.
    static func read(_ descriptor: Int32) -> (length: Int, headers: [(name: String, value: String)])? {
        var buffer = [UInt8](repeating: 0, count: maximumLength)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return parse(buffer[..<count])
    }

    /// The head at the start of `bytes` (an entry read whole, or its first ``maximumLength`` bytes):
    /// its length and headers; `nil` when they do not start with one.
    static func parse(_ bytes: some Collection<UInt8>) -> (length: Int, headers: [(name: String, value: String)])? {
        let buffer = Array(bytes.prefix(maximumLength))
        let count = buffer.count
        guard count >= marker.count + 1, buffer.starts(with: marker) else { return nil }
        var headers: [(name: String, value: String)] = []
        var start = marker.count
        while start < count {
            guard let end = buffer[start..<count].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            if end == start { return (end + 1, headers) }
            let line = String(decoding: buffer[start..<end], as: UTF8.self)
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...].dropFirst())))
            start = end + 1
        }
        return nil
    }
}
