import Glibc
import PreviewLoop
import PreviewLoopJobs

/// A request path's source, found under the root: the file's real path and its identity, which the
/// response's validator is made from.
struct ResolvedSource: Sendable {
    /// The real path (no symbolic link, no `..`), inside the root.
    var path: String
    /// Device, inode, size and modification time: a different file or a changed one has another identity.
    /// For a remote source, its URL and validators.
    var identity: String
    /// A remote source's validators; `nil` for a file under the root.
    var remote: RemoteValidators? = nil
    /// What the response's validator and cache key are made from: for a file under the root, its path
    /// relative to the root (outputs may show it, and hard links are two paths), size and modification
    /// time — nothing that differs between machines holding the same file; for a remote source, its
    /// URL and validators.
    var version: String
    /// For an object under an `s3://` root, the entity tag its render is pinned to.
    var objectEntityTag: String? = nil
    /// For a live HLS playlist under the root (one without `#EXT-X-ENDLIST`), the seconds its answers
    /// may be cached (``LivePlaylists``); `nil` for everything else.
    var liveMaxAge: Int? = nil

    /// Whether it is a live playlist.
    var isLive: Bool { liveMaxAge != nil }

    init(path: String, identity: String, remote: RemoteValidators? = nil, version: String? = nil) {
        self.path = path
        self.identity = identity
        self.remote = remote
        self.version = version ?? identity
    }

    /// Whether a response made from it may be cached and validated: a file always; a remote source
    /// when its server names the version (an ETag or a Last-Modified).
    var isCacheable: Bool { remote?.identifiesVersion ?? true }
}

/// Reads request paths: percent escapes decoded once, and a path confined to the root.
enum SourcePath {
    /// Percent-decodes `text`; `nil` for a malformed escape, a NUL or a control character. With
    /// `plusIsSpace` (query items) `+` is a space. With `asFileName` (a path component) bytes that are not
    /// UTF-8 are kept with ``FilePathBytes``' escape, so `%FF` reaches the file whose name has that byte;
    /// otherwise (query items) they make it `nil`.
    static func decode(_ text: String, plusIsSpace: Bool = false, asFileName: Bool = false) -> String? {
        guard let bytes = PercentEncoding.decode(text, plusIsSpace: plusIsSpace),
              !bytes.contains(where: { $0 < 0x20 || $0 == 0x7f }) else { return nil }
        return asFileName ? FilePathBytes.decode(bytes) : String(validating: bytes, as: UTF8.self)
    }

    /// A raw query's items percent-decoded (`+` as a space), or the 400 to answer when one is not valid
    /// percent-encoded UTF-8.
    static func decodedQuery(_ rawQuery: [(name: String, value: String?)]) -> Result<[(name: String, value: String)], PreviewRequestError> {
        var query: [(name: String, value: String)] = []
        for item in rawQuery {
            guard let name = decode(item.name, plusIsSpace: true), let value = decode(item.value ?? "", plusIsSpace: true) else {
                return .failure(PreviewRequestError(status: 400, detail: "A query item is not valid percent-encoded UTF-8."))
            }
            query.append((name, value))
        }
        return .success(query)
    }

    /// Splits a raw request path into its source's relative path and the route (its last component).
    /// `nil` when the path is malformed or could leave the root: an empty component (`//`, a leading
    /// `/` after the first), `.`, `..`, a backslash, or an escape that does not decode.
    static func split(_ rawPath: String) -> (source: [String], route: String)? {
        guard rawPath.hasPrefix("/"), rawPath.utf8.count <= FeedPage.maxRequestPathBytes else { return nil }
        var components: [String] = []
        for raw in rawPath.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            guard let component = decode(String(decoding: raw, as: UTF8.self), asFileName: true), !component.isEmpty,
                  component != ".", component != "..", !component.contains("/"), !component.contains("\\") else {
                return nil
            }
            components.append(component)
        }
        guard let route = components.popLast() else { return nil }
        return (components, route)
    }

    /// The regular file at `components` under `root` (a real path), or `nil` when there is none or its
    /// real path (symbolic links followed) is not inside the root.
    static func resolve(_ components: [String], under root: String) -> ResolvedSource? {
        guard !components.isEmpty else { return nil }
        let joined = root + "/" + components.joined(separator: "/")
        guard let real = realPath(joined), real.hasPrefix(root == "/" ? "/" : root + "/") else { return nil }
        var status = stat()
        guard FileSystem.stat(real, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        let relative = root == "/" ? String(real.dropFirst()) : String(real.dropFirst(root.count + 1))
        return ResolvedSource(path: real, identity: identity(of: status),
                              version: "file\n\(relative)\n\(status.st_size)\n\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)")
    }

    /// The file `source` names, opened for a render: the file actually opened must still be the one the
    /// request resolved (the same identity, so the same validator) and its path, as the kernel names the
    /// open file, must still be inside `root`. A file renamed, replaced or a link swapped in since the
    /// request was resolved is `nil`, and what the render then reads is this open file (through
    /// `/proc/self/fd/N`), whatever happens to the path afterwards. The caller closes the descriptor.
    ///
    /// A live playlist is rewritten (and replaced by a rename) as it grows: with `sameVersion` false
    /// the file opened need only be a regular file inside the root.
    static func open(_ source: ResolvedSource, under root: String, sameVersion: Bool = true) -> (descriptor: Int32, path: String)? {
        // O_NONBLOCK: a FIFO swapped in opens at once (and is refused below) instead of blocking.
        let descriptor = FileSystem.open(source.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { return nil }
        let link = "/proc/self/fd/\(descriptor)"
        var buffer = [CChar](repeating: 0, count: 4097)
        let count = readlink(link, &buffer, 4096)
        var status = stat()
        guard count > 0, fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG,
              !sameVersion || identity(of: status) == source.identity,
              FilePathBytes.decode(buffer[..<count].map { UInt8(bitPattern: $0) }).hasPrefix(root == "/" ? "/" : root + "/") else {
            close(descriptor)
            return nil
        }
        return (descriptor, link)
    }

    /// Device, inode, size and modification time.
    static func identity(of status: stat) -> String {
        "\(status.st_dev):\(status.st_ino):\(status.st_size):\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"
    }

    /// `realpath(3)`.
    static func realPath(_ path: String) -> String? {
        FileSystem.resolvedPath(path)
    }
}

/// Live HLS playlists under the root: a media playlist without `#EXT-X-ENDLIST` grows, so what is
/// served from it ages with its newest segment.
enum LivePlaylists {
    /// The most bytes of a playlist read to tell.
    static let limit = 4 << 20

    /// Whether `path` is named as a playlist is (`.m3u8`, `.m3u`, in any case).
    static func isPlaylistPath(_ path: String) -> Bool {
        let lowered = path.lowercased()
        return lowered.hasSuffix(".m3u8") || lowered.hasSuffix(".m3u")
    }

    /// `source` marked live when it is a local `.m3u8` (or `.m3u`) media playlist that has not ended:
    /// its version then also names the newest segment and its sequence number (so validators and cache
    /// keys move on with the playlist), and its answers may be cached for the playlist's target
    /// duration (1 to 10 seconds). Anything else is returned as is.
    static func marked(_ source: ResolvedSource) -> ResolvedSource {
        guard source.remote == nil, source.objectEntityTag == nil, isPlaylistPath(source.path),
              let bytes = try? FileSystem.readRegularFile(source.path, limit: limit, what: "playlist") else { return source }
        return marked(source, playlist: bytes)
    }

    /// `source` marked live when `bytes` (its text) are a media playlist that has not ended, as
    /// ``marked(_:)`` says; anything else is returned as is.
    static func marked(_ source: ResolvedSource, playlist bytes: [UInt8]) -> ResolvedSource {
        guard let playlist = try? MediaPlaylist(text: String(decoding: bytes, as: UTF8.self), name: source.path),
              playlist.isLive else { return source }
        var marked = source
        let newest = playlist.newest
        marked.version += "\nlive\n\(newest?.sequenceNumber ?? playlist.mediaSequence)\n\(newest?.uri ?? "")"
        marked.liveMaxAge = min(10, max(1, Int((playlist.targetDuration ?? 1).rounded(.down))))
        return marked
    }
}
