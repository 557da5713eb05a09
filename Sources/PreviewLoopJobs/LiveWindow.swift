import Glibc
import PreviewLoop

// `animated.*?latest=true` on a remote HLS media playlist (an http(s) URL under `--allow-source`, or an
// object in an `s3://` root's bucket): the server reads the playlist, picks the segments that cover its
// newest seconds, checks and fetches each itself (as `latest` on a thumbnail checks and reads its one
// segment) and writes them one after another into one local file, which the render reads as a file.
// FFmpeg's HLS demuxer never sees the remote playlist, so it never fetches anything.

extension InputOptions {
    /// The most bytes of segments (with their `#EXT-X-MAP` initialization section) fetched for one
    /// remote `latest` window; more is `.tooLarge`.
    static let latestSegmentsLimit = 64 << 20

    /// Whether the input is a remote HLS playlist a server's `latest` window is fetched from: an http(s)
    /// URL or an `s3://` object whose path ends in `.m3u8` or `.m3u`.
    var isRemotePlaylist: Bool {
        guard opened == nil, case .url(let url) = Source(argument: input),
              ["http", "https", "s3"].contains(url.scheme?.lowercased() ?? "") else { return false }
        let path = url.path.lowercased()
        return path.hasSuffix(".m3u8") || path.hasSuffix(".m3u")
    }

    /// For a remote HLS media playlist (``isRemotePlaylist``): the segments that cover its newest
    /// `length` seconds (by their `#EXTINF` durations, the newest segment last), fetched and written one
    /// after another into a new file in `folder` (an fMP4 playlist's `#EXT-X-MAP` section first), which
    /// the caller reads and removes, with the window in it: where it starts, in seconds from the file's
    /// start, and how long it lasts (from the durations too: a fragmented MP4 read this way reports its
    /// end as its duration; a percentage is of the playlist's); `nil` for any other input. The playlist is read as it stands now
    /// and never waited on. Every segment is resolved and checked before any is fetched: an http(s)
    /// one against the allow-list (and every redirect hop as it is fetched), an object against the
    /// playlist's bucket and ``objectKeyPrefix``. No partial file is left behind.
    ///
    /// - Throws: `.refusedByPolicy` for a segment outside the allow-list, `.inputNotFound` for an
    ///   object outside the bucket or prefix (or a missing segment), `.notMediaFile` for a multivariant,
    ///   encrypted or byte-range playlist, `.tooLarge` past ``latestSegmentsLimit``, what a fetch throws.
    func remoteLatestCopy(in folder: String, serial: Int, length: TimePosition) throws(PreviewLoopError) -> (path: String, start: Double, length: Double)? {
        guard isRemotePlaylist else { return nil }
        let objectPlaylist = input.lowercased().hasPrefix("s3://")
        // The playlist's own version pin (a server's preconditions) is not the segments'.
        var segmentOptions = sourceOptions
        segmentOptions.requestHeaders = segmentOptions.requestHeaders.filter {
            !["if-match", "if-unmodified-since"].contains($0.key.lowercased())
        }
        let text: String, base: String
        if objectPlaylist {
            text = String(decoding: try RemoteDocument.fetchObject(input, options: sourceOptions, limit: ThumbCommand.playlistLimit), as: UTF8.self)
            base = input
        } else {
            let (body, url) = try RemoteDocument.fetch(input, options: sourceOptions, limit: ThumbCommand.playlistLimit)
            text = String(decoding: body, as: UTF8.self)
            base = url
        }
        func resolved(_ uri: String) throws(PreviewLoopError) -> String {
            if objectPlaylist {
                guard let url = RemoteDocument.resolveObject(uri, against: base, keyPrefix: objectKeyPrefix ?? "") else {
                    throw PreviewLoopError(.inputNotFound, "\(input): a segment the playlist names is not an object "
                                           + (objectKeyPrefix == nil ? "in its bucket" : "under the served prefix"))
                }
                return url
            }
            guard let url = RemoteDocument.resolve(uri, against: base) else {
                throw PreviewLoopError(.refusedByPolicy, "\(input): a segment is not an http(s) URL (\(uri.prefix(80)))")
            }
            if let allowed = allowedURLs, !allowed.admits(url) {
                throw PreviewLoopError(.refusedByPolicy, "\(input): a segment is outside the prefixes this server may read")
            }
            return url
        }
        return try Self.latestSegmentsCopy(playlist: text, name: input, length: length, in: folder, serial: serial,
                                           resolve: resolved) { url, left throws(PreviewLoopError) in
            objectPlaylist ? try RemoteDocument.fetchObject(url, options: segmentOptions, limit: left)
                           : try RemoteDocument.fetch(url, options: segmentOptions, limit: left).body
        }
    }

    /// For a local HLS media playlist (the input, or on a server its checked copy ``opened``) whose
    /// segments are fragmented MP4 (`#EXT-X-MAP`): as ``remoteLatestCopy(in:serial:length:)``, its
    /// newest segments covering `length` written after their initialization section into one new file
    /// in `folder`, each read as the local file ``segmentPath(_:input:)`` names (inside
    /// ``confinement`` when set); `nil` for anything else. FFmpeg 5.1's HLS demuxer loses such segments'
    /// initialization section when it seeks, so a window after the playlist's start is read from one
    /// fragmented MP4 file instead.
    func localFragmentedLatestCopy(in folder: String, serial: Int, length: TimePosition) throws(PreviewLoopError) -> (path: String, start: Double, length: Double)? {
        let readable = opened ?? input
        guard case .file = Source(argument: input), try ThumbCommand.playlist(at: readable, name: input) != nil else { return nil }
        let text = String(decoding: try FileSystem.readRegularFile(readable, limit: ThumbCommand.playlistLimit, what: "playlist"), as: UTF8.self)
        guard try Self.initializationSections(in: text, name: input).contains(where: { $0 != nil }) else { return nil }
        return try Self.latestSegmentsCopy(playlist: text, name: input, length: length, in: folder, serial: serial,
                                           resolve: { uri throws(PreviewLoopError) in try segmentPath(uri, input: input) }) { path, left throws(PreviewLoopError) in
            try FileSystem.readRegularFile(path, limit: left, what: "segment")
        }
    }

    /// The segments of the media playlist `text` that cover its newest `length` seconds (by their
    /// `#EXTINF` durations, within one initialization section), each resolved by `resolve` before any is
    /// read and then read by `read` (given what is left of ``latestSegmentsLimit``), written one after
    /// another into a new file in `folder` after their `#EXT-X-MAP` section: the path, and the window
    /// in it from the durations. No partial file is left behind.
    private static func latestSegmentsCopy(playlist text: String, name input: String, length: TimePosition, in folder: String, serial: Int,
                                           resolve: (String) throws(PreviewLoopError) -> String,
                                           read: (String, Int) throws(PreviewLoopError) -> [UInt8]) throws(PreviewLoopError) -> (path: String, start: Double, length: Double) {
        let playlist = try MediaPlaylist(text: text, name: input)
        let maps = try Self.initializationSections(in: text, name: input)
        guard maps.count == playlist.segments.count else { throw PreviewLoopError(.corruptData, "\(input): the playlist could not be read") }
        guard let newest = playlist.segments.indices.last else {
            throw PreviewLoopError(.corruptData, "\(input): the playlist lists no segment")
        }
        // Back from the newest until the durations cover the window, within one initialization section.
        let wanted = switch length {
        case .seconds(let seconds): seconds
        case .percent(let percent): playlist.segments.reduce(0) { $0 + $1.duration } * percent / 100
        }
        var first = newest, covered = playlist.segments[newest].duration
        while covered < wanted, first > 0, maps[first - 1] == maps[newest] {
            first -= 1
            covered += playlist.segments[first].duration
        }
        let urls = try ((maps[newest].map { [$0] } ?? []) + playlist.segments[first...newest].map(\.uri)).map { uri throws(PreviewLoopError) in
            try resolve(uri)
        }
        // The container the pieces make: an fMP4 file after its initialization section, else MPEG-TS.
        let path = folder + "/latest-\(getpid())-\(serial)" + (maps[newest] == nil ? ".ts" : ".mp4")
        let descriptor = FileSystem.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PreviewLoopError(.outputNotWritable, "\(input): the segments' copy could not be written in \(folder)") }
        var written = 0
        do throws(PreviewLoopError) {
            for url in urls {
                let left = Self.latestSegmentsLimit - written
                let bytes: [UInt8]
                do {
                    bytes = try read(url, left)
                } catch where error.code == .tooLarge {
                    throw PreviewLoopError(.tooLarge, "\(input): the segments of its newest \(Format.fixed(covered, 3)) s are over "
                                           + "\(Self.latestSegmentsLimit >> 20) MiB, the most fetched for latest")
                }
                let status = bytes.withUnsafeBytes { FileSystem.writeAll($0, to: descriptor) }
                guard status == 0 else {
                    throw PreviewLoopError(.outputNotWritable, "\(input): the segments' copy could not be written in \(folder)")
                }
                written += bytes.count
            }
        } catch {
            close(descriptor)
            FileSystem.unlink(path)
            throw error
        }
        guard close(descriptor) == 0 else {
            FileSystem.unlink(path)
            throw PreviewLoopError(.outputNotWritable, "\(input): the segments' copy could not be written in \(folder)")
        }
        return (path, max(0, covered - wanted), wanted)
    }

    /// For each segment of the playlist `text`, in order, the URI of the `#EXT-X-MAP` initialization
    /// section in force (`nil` for none).
    ///
    /// - Throws: `.notMediaFile` for an encrypted segment (`#EXT-X-KEY` other than `METHOD=NONE`) or a
    ///   segment or section that is part of a file (`BYTERANGE`): they cannot be fetched whole.
    static func initializationSections(in text: String, name: String) throws(PreviewLoopError) -> [String?] {
        var maps: [String?] = []
        var current: String?
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = MediaPlaylist.trimmed(raw)
            if line.isEmpty { continue }
            guard line.hasPrefix("#") else {
                maps.append(current)
                continue
            }
            if line.hasPrefix("#EXT-X-KEY:"), !line.contains("METHOD=NONE") {
                throw PreviewLoopError(.notMediaFile, "\(name): encrypted segments (#EXT-X-KEY) are not read")
            }
            if line.hasPrefix("#EXT-X-BYTERANGE") || (line.hasPrefix("#EXT-X-MAP:") && line.contains("BYTERANGE=")) {
                throw PreviewLoopError(.notMediaFile, "\(name): segments that are ranges of a file (BYTERANGE) are not read")
            }
            if line.hasPrefix("#EXT-X-MAP:") {
                guard let start = line.firstRange(of: "URI=\"")?.upperBound, let end = line[start...].firstIndex(of: "\"") else {
                    throw PreviewLoopError(.notMediaFile, "\(name): an #EXT-X-MAP without a URI")
                }
                current = String(line[start..<end])
            }
        }
        return maps
    }
}
