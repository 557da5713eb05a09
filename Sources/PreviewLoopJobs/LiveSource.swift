import FoundationEssentials
import Glibc
import PreviewLoop

// `thumb --latest` and `--program-time` (the image API's `latest=true` and `program_time`): the frame is
// read from one segment of an HLS media playlist, found by reading the playlist itself, so a live
// playlist is never read from its start and never waited on. The segment is opened as a plain local
// file, with no demuxer that opens other files; on a server it must lie inside the root.

/// Where a `--latest` or `--program-time` frame is read: the file, and the time in it.
struct LiveFrameSource {
    /// The file to open (a segment, or the input itself when it is not a playlist).
    var source: Source
    /// The library's options for it.
    var options: SourceOptions
    /// Seconds into it; `nil` for its last frame.
    var offset: Double?
    /// What was chosen, for the summary line (`the last frame of segment 42 (seg42.ts), the newest`).
    var note: String
}

/// `--program-time` outside the playlist's window: the request's 404, naming the window.
struct ProgramTimeOutsideWindow: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

extension ThumbCommand {
    /// The most bytes of a playlist read.
    static let playlistLimit = 4 << 20

    /// With `--latest` or `--program-time`, where the frame is read; `nil` otherwise.
    func liveFrameSource() throws -> LiveFrameSource? {
        guard latest || programTime != nil else { return nil }
        let input = source.input
        let readable = source.opened ?? input
        // An http(s) playlist: its text read whole, its segment read as a remote input; an object's
        // likewise, its segment another object of the same bucket.
        var remoteBase: String?
        var objectBase: String?
        let playlist: MediaPlaylist?
        switch Source(argument: input) {
        case .file:
            playlist = try Self.playlist(at: readable, name: input)
        case .url(let url) where url.scheme?.lowercased() == "s3":
            // Named as a playlist: read as one; any other object is a file (its last frame).
            let name = url.path.lowercased()
            if name.hasSuffix(".m3u8") || name.hasSuffix(".m3u") {
                let body = try RemoteDocument.fetchObject(input, options: source.sourceOptions, limit: Self.playlistLimit)
                playlist = try MediaPlaylist(text: String(decoding: body, as: UTF8.self), name: input)
                objectBase = input
            } else {
                playlist = nil
            }
        case .url(let url) where ["http", "https"].contains(url.scheme?.lowercased() ?? "") && url.host != nil:
            let (body, base) = try RemoteDocument.fetch(input, options: source.sourceOptions, limit: Self.playlistLimit)
            guard MediaPlaylist.looksLikePlaylist(body.prefix(16)) else {
                throw PreviewLoopError(.invalidArgument, "\(input): --latest and --program-time read HLS playlists over http(s); this is not one")
            }
            playlist = try MediaPlaylist(text: String(decoding: body, as: UTF8.self), name: input)
            remoteBase = base
        default:
            throw PreviewLoopError(.invalidArgument, "\(input): --latest and --program-time read local files and playlists, "
                                   + "http(s) playlists and s3:// objects")
        }
        guard let playlist else {
            // Not a playlist: a file's last frame; a file has no wall clock.
            if programTime != nil {
                throw PreviewLoopError(.invalidArgument, "\(input): not an HLS playlist, so it has no EXT-X-PROGRAM-DATE-TIME timeline for --program-time")
            }
            return LiveFrameSource(source: source.source, options: source.sourceOptions, offset: nil, note: "the last frame")
        }
        let chosen: MediaPlaylist.Segment
        var offset: Double?
        var note: String
        if let programTime {
            guard playlist.hasProgramDates, let window = playlist.programDateWindow else {
                throw PreviewLoopError(.invalidArgument, "\(input): the playlist has no EXT-X-PROGRAM-DATE-TIME tag, so a program time cannot be placed")
            }
            guard let found = playlist.segment(atProgramDate: programTime) else {
                throw ProgramTimeOutsideWindow(message: "\(ProgramDate.text(programTime)) is outside the playlist's window, "
                    + "\(ProgramDate.text(window.lowerBound)) to \(ProgramDate.text(window.upperBound))")
            }
            chosen = found.segment
            offset = found.offset
            note = "\(Format.fixed(found.offset, 3)) s into segment \(chosen.sequenceNumber) (\(chosen.uri))"
        } else {
            guard let newest = playlist.newest else {
                throw PreviewLoopError(.corruptData, "\(input): the playlist lists no segment")
            }
            chosen = newest
            note = "the last frame of segment \(chosen.sequenceNumber) (\(chosen.uri)), the "
                + (playlist.hasEnded ? "last of the ended playlist" : "newest of the live playlist")
        }
        var options = source.sourceOptions
        options.allowedFormats = MediaPlaylist.segmentFormats(options.allowedFormats)
        if let objectBase {
            guard let url = RemoteDocument.resolveObject(chosen.uri, against: objectBase, keyPrefix: source.objectKeyPrefix ?? ""),
                  let parsed = URL(string: url) else {
                throw PreviewLoopError(.inputNotFound, "\(input): a segment the playlist names is not an object "
                                       + (source.objectKeyPrefix == nil ? "in its bucket" : "under the served prefix"))
            }
            // The playlist's version pin is the playlist's: the segment is another object.
            options.requestHeaders = options.requestHeaders.filter { $0.key.lowercased() != "if-match" }
            return LiveFrameSource(source: .url(parsed), options: options, offset: offset, note: note)
        }
        if let remoteBase {
            guard let url = RemoteDocument.resolve(chosen.uri, against: remoteBase), let parsed = URL(string: url) else {
                throw PreviewLoopError(.refusedByPolicy, "\(input): a segment is not an http(s) URL (\(chosen.uri.prefix(80)))")
            }
            // The playlist's version pin is the playlist's: the segment is another resource.
            options.requestHeaders = options.requestHeaders.filter { !["if-match", "if-unmodified-since"].contains($0.key.lowercased()) }
            return LiveFrameSource(source: .url(parsed), options: options, offset: offset, note: note)
        }
        return LiveFrameSource(source: .file(try source.segmentPath(chosen.uri, input: input)), options: options, offset: offset, note: note)
    }

    /// The playlist in the file at `path`, or `nil` when the file does not begin as one.
    static func playlist(at path: String, name: String) throws(PreviewLoopError) -> MediaPlaylist? {
        let (descriptor, size) = try FileSystem.openRegularFile(path, name: name)
        defer { close(descriptor) }
        var head = [UInt8](repeating: 0, count: 16)
        let count = read(descriptor, &head, head.count)
        guard count > 0, MediaPlaylist.looksLikePlaylist(head[..<count]) else { return nil }
        guard size <= playlistLimit else {
            throw PreviewLoopError(.tooLarge, "\(name): a playlist over \(playlistLimit >> 20) MiB")
        }
        let bytes = try FileSystem.readRegularFile(path, limit: playlistLimit, what: "playlist")
        return try MediaPlaylist(text: String(decoding: bytes, as: UTF8.self), name: name)
    }
}

extension InputOptions {
    /// The local path of a segment the playlist `input` names as `uri`: relative to the playlist's
    /// folder, never another protocol, and inside ``InputOptions/confinement`` when set.
    func segmentPath(_ uri: String, input: String) throws(PreviewLoopError) -> String {
        var path = uri
        if let local = Self.localFileURL(uri) {
            path = local
        } else if uri.contains("://") || uri.lowercased().hasPrefix("data:") {
            throw PreviewLoopError(.refusedByPolicy, "\(input): a segment is not a local file (\(uri.prefix(80)))")
        }
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<query]) }
        if !path.hasPrefix("/") {
            let absolute = FileSystem.absolute(input)
            let folder = absolute.lastIndex(of: "/").map { String(absolute[..<$0]) } ?? "."
            path = folder + "/" + path
        }
        if let root = confinement {
            guard let real = FileSystem.resolvedPath(path), real.hasPrefix(root == "/" ? "/" : root + "/") else {
                throw PreviewLoopError(.inputNotFound, "\(input): a segment the playlist names is not a file inside the served folder")
            }
            return real
        }
        return path
    }

    /// The path of a `file:` URI on this host, percent-decoded; `nil` for anything else.
    private static func localFileURL(_ uri: String) -> String? {
        guard uri.lowercased().hasPrefix("file:") else { return nil }
        guard let decoded = PercentEncoding.decode(uri.dropFirst("file:".count)), let text = String(validating: decoded, as: UTF8.self),
              !text.contains("\0") else { return nil }
        if text.hasPrefix("//") {
            let rest = text.dropFirst(2)
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            let host = rest[..<slash].lowercased()
            guard host.isEmpty || host == "localhost" else { return nil }
            return String(rest[slash...])
        }
        return text
    }

    /// On a server (``confinement`` set, the input read from ``opened``): when the input is an HLS
    /// media playlist, a copy of it in `scratch` to read instead, every segment (and `#EXT-X-MAP`) named by
    /// its real path, checked to lie inside the served folder, and closed with `#EXT-X-ENDLIST` (a live
    /// playlist is read as it stands now, never waited on). The opened descriptor's path has no folder
    /// its segments could be found relative to. `nil` for anything that is not a playlist.
    ///
    /// - Throws: `.notMediaFile` for a multivariant playlist, `.refusedByPolicy` for an encrypted one or
    ///   a segment that is not a local file, `.inputNotFound` for a segment outside the folder.
    func confinedPlaylistCopy(in scratch: String, serial: Int) throws(PreviewLoopError) -> String? {
        guard confinement != nil, opened != nil else { return nil }
        return try endedPlaylistCopy(in: scratch, serial: serial)
    }

    /// When the input (or ``opened``) is an HLS media playlist, a copy of it in `folder` naming every
    /// segment by its path (checked to lie inside ``confinement`` when set) and closed with
    /// `#EXT-X-ENDLIST`: read as it stands now, never waited on. `nil` for anything that is not a playlist.
    func endedPlaylistCopy(in folder: String, serial: Int) throws(PreviewLoopError) -> String? {
        let readable = opened ?? input
        // Read through the playlist reader first: a multivariant playlist is refused there.
        guard try ThumbCommand.playlist(at: readable, name: input) != nil else { return nil }
        let text = String(decoding: try FileSystem.readRegularFile(readable, limit: ThumbCommand.playlistLimit, what: "playlist"), as: UTF8.self)
        func local(_ uri: String) throws(PreviewLoopError) -> String {
            let path = try segmentPath(uri, input: input)
            guard !path.contains(where: { $0.isNewline || $0 == "\"" }) else {
                throw PreviewLoopError(.refusedByPolicy, "\(input): a segment's path holds a line break or a quote")
            }
            return path
        }
        var lines: [String] = []
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = MediaPlaylist.trimmed(raw)
            if line.isEmpty || line == "#EXT-X-ENDLIST" { continue }
            if !line.hasPrefix("#") {
                lines.append(try local(line))
            } else if let valueStart = Self.end(of: "URI=\"", in: line) {
                let tag = String(line.prefix { $0 != ":" })
                guard tag == "#EXT-X-MAP", let valueEnd = line[valueStart...].firstIndex(of: "\"") else {
                    throw PreviewLoopError(.notMediaFile, "\(input): \(tag.prefix(40)) names another file; only plain media playlists are served")
                }
                let path = try local(String(line[valueStart..<valueEnd]))
                let before = String(line[..<valueStart]), after = String(line[valueEnd...])
                lines.append(before + path + after)
            } else {
                lines.append(line)
            }
        }
        lines.append("#EXT-X-ENDLIST")
        let path = folder + "/playlist-\(getpid())-\(serial).m3u8"
        let descriptor = FileSystem.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PreviewLoopError(.outputNotWritable, "\(input): the playlist's copy could not be written in \(folder)") }
        let bytes = Array((lines.joined(separator: "\n") + "\n").utf8)
        let status = bytes.withUnsafeBytes { FileSystem.writeAll($0, to: descriptor) }
        guard close(descriptor) == 0, status == 0 else {
            FileSystem.unlink(path)
            throw PreviewLoopError(.outputNotWritable, "\(input): the playlist's copy could not be written in \(folder)")
        }
        return path
    }

    /// Where the first `needle` in `line` ends, if it is there.
    private static func end(of needle: String, in line: String) -> String.Index? {
        var index = line.startIndex
        while index < line.endIndex {
            if line[index...].hasPrefix(needle) { return line.index(index, offsetBy: needle.count) }
            index = line.index(after: index)
        }
        return nil
    }
}

extension RenderRun {
    /// With `render --latest`: the window as the input's newest `--length` seconds, found from the
    /// input's duration. On the command line a playlist is first copied, closed with `#EXT-X-ENDLIST`,
    /// into a folder of its own (returned, for the caller to remove), so a live one is read as it stands
    /// now and never waited on; on a server the input already is such a copy. The folder is registered
    /// with ``TemporaryFiles``: the caller removes it with ``removeLatestFolder(_:)``.
    static func latestWindow(_ options: inout RenderCommand, source: inout Source, limits: SourceOptions) throws -> String? {
        var folder: String?
        func removeFolder() {
            guard let folder else { return }
            FileSystem.removeTree(folder)
            TemporaryFiles.unregister(folder)
        }
        if options.source.opened == nil, case .file = source {
            var base = getenv("TMPDIR").map { FilePathBytes.decode(cString: $0) } ?? "/tmp"
            if !base.hasPrefix("/") { base = "/tmp" }
            let made = (base.hasSuffix("/") ? base : base + "/") + ".preview-loop-latest.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
            let status = TemporaryFiles.register(made, creatingWith: { FileSystem.mkdir(made, 0o700) == 0 ? 0 : errno }, created: { $0 == 0 })
            guard status == 0 else {
                throw PreviewLoopError(.outputNotWritable, "\(options.source.input): cannot make a folder for the playlist's copy in \(base): "
                                       + String(cString: strerror(status)))
            }
            folder = made
            do {
                // Fragmented MP4 segments: the newest of them joined into one file, the window from their durations.
                if let joined = try options.source.localFragmentedLatestCopy(in: made, serial: 0, length: options.length) {
                    source = .file(joined.path)
                    options.start = .seconds(joined.start)
                    options.length = .seconds(joined.length)
                    return made
                }
                if let copy = try options.source.endedPlaylistCopy(in: made, serial: 0) { source = .file(copy) }
            } catch {
                removeFolder()
                throw error
            }
        }
        do {
            let info = try MediaProbe.probe(source, options: limits)
            guard let duration = info.duration, duration > 0 else {
                throw PreviewLoopError(.invalidArgument, "\(options.source.input): --latest needs the input's duration, which it does not give")
            }
            let length = switch options.length {
            case .seconds(let seconds): seconds
            case .percent(let percent): duration * percent / 100
            }
            options.start = .seconds(max(0, duration - length))
        } catch {
            removeFolder()
            throw error
        }
        return folder
    }

    /// Removes what ``latestWindow(_:source:limits:)`` made.
    static func removeLatestFolder(_ folder: String?) {
        guard let folder else { return }
        FileSystem.removeTree(folder)
        TemporaryFiles.unregister(folder)
    }
}
