internal import PreviewLoopFFmpeg
internal import PreviewLoopRemote
import FoundationEssentials

/// An http(s) input's bytes read in bounded byte ranges through libcurl (``RangeReader``, as `s3://`
/// objects are), handed to FFmpeg through its custom I/O instead of FFmpeg's own `http` protocol, which
/// asks for `bytes=N-` (everything to the end) at every seek and so streams far more than a sampler uses.
///
/// ``open(_:options:interrupter:)`` sends one request, `Range: bytes=0-262143`, following redirects hop
/// by hop as the input's ``SourcePolicy`` admits them (the same rules as ``OpenGate``; a refused hop is
/// never contacted). Only a `206 Partial Content` answer with a usable `Content-Range` that is not a
/// playlist makes a ranged input; anything else (a server that ignores ranges and answers `200`, an
/// error status, no answer, a refused hop, a playlist by its extension, content type or first bytes)
/// leaves the input to FFmpeg's protocol, which then reads it as before: forward through a server
/// without ranges, and with the same errors for a refused, missing or unreachable input.
final class HTTPRangeBytes: RangedBytes {
    /// The URL read, after redirects.
    let url: String
    /// The URL as given, for messages.
    private let name: String
    let reader: RangeReader
    var failure: RemoteFailure?

    private init(url: String, name: String, reader: RangeReader) {
        self.url = url
        self.name = name
        self.reader = reader
    }

    /// The last read's failure as the library's error, if a read failed for a reason of the server's.
    var readError: PreviewLoopError? {
        guard let failure, failure.kind != .stopped else { return nil }
        let code: PreviewLoopError.Code = switch failure.kind {
        case .notFound: .inputNotFound
        case .stopped: .timedOut
        default: .inputNotReadable
        }
        let reason = failure.reason.replacing("the store answered", with: "the server answered")
            .replacing("the object changed", with: "the resource changed")
        return PreviewLoopError(code, "\(RemoteValidators.printable(name)): \(reason)")
    }

    /// Extensions of playlists, which stay on FFmpeg's protocol (their segments are nested opens).
    static let playlistExtensions: Set<String> = ["m3u8", "m3u", "mpd"]

    /// Whether a content type names a playlist or manifest.
    static func isPlaylist(contentType: String?) -> Bool {
        guard let type = contentType?.lowercased() else { return false }
        return type.contains("mpegurl") || type.contains("dash+xml")
    }

    /// The ranged bytes of an http(s) `source`, or `nil` when it is to be read through FFmpeg's protocol
    /// (not http(s), a playlist, or a server that did not answer the first range as one).
    static func open(_ source: Source, options: SourceOptions, interrupter: Interrupter) throws(PreviewLoopError) -> HTTPRangeBytes? {
        guard case .url(let given) = source, let scheme = given.scheme?.lowercased(), scheme == "http" || scheme == "https",
              !playlistExtensions.contains(URL(fileURLWithPath: given.path).pathExtension.lowercased()) else { return nil }
        // A policy of its own, so the input's (which counts opens) is left to FFmpeg's open.
        let policy = try options.ffmpegInput(for: source).policy
        guard policy.refusal(for: given.absoluteString) == nil else { return nil }
        let limits = HTTPTransfer.Limits(connectTimeout: options.openTimeout, stallTimeout: options.readTimeout,
                                         verifiesCertificates: options.verifiesCertificates,
                                         certificateAuthorities: options.certificateAuthorities)
        guard let transfer = try? HTTPTransfer(limits: limits) else { return nil }
        let pinned = options.requestHeaders.first { $0.key.lowercased() == "if-match" }?.value
        let extra = options.requestHeaders.filter { $0.key.lowercased() != "if-match" }.sorted { $0.key < $1.key }
            .map { "\($0.key): \($0.value)" }
        let shouldStop = { interrupter.shouldInterrupt }
        func headers(range: String, ifMatch: String?) -> [String] {
            ["Range: \(range)", "User-Agent: preview-loop"] + extra + (ifMatch.map { ["If-Match: \($0)"] } ?? [])
        }

        let first = RangeReader.Window().initial
        var target = given.absoluteString
        var response: HTTPTransfer.Response?
        for _ in 0...OpenGate.maxRedirects {
            // Only a range's body is read: any other answer (a whole body, a redirect's, an error page)
            // is left after its header, so a server without ranges costs one header here, not a window.
            let answer = transfer.get(url: target, headers: headers(range: "bytes=0-\(first - 1)", ifMatch: pinned),
                                      bodyLimit: first, shouldStop: shouldStop) { status, fields in
                status == 206 && !isPlaylist(contentType: fields["content-type"])
            }
            guard [301, 302, 303, 307, 308].contains(answer.status) else { response = answer; break }
            guard let location = answer.headers["location"],
                  let next = RedirectProbe.redirectTarget(inHeader: "HTTP/1.1 \(answer.status) Redirect\r\nLocation: \(location)\r\n\r\n",
                                                          relativeTo: target),
                  policy.refusal(forRedirectTo: next, ofInput: true) == nil else { return nil }
            target = next
        }
        guard let response, response.status == 206, !response.wasStopped, !isPlaylist(contentType: response.headers["content-type"]),
              !response.body.starts(with: Array("#EXTM3U".utf8)) else { return nil }
        let url = target
        let reader = RangeReader(transfer: transfer, pinnedTo: pinned) { range, ifMatch in
            (url, headers(range: range, ifMatch: ifMatch))
        }
        // A caller's own precondition on the date stands for the pin.
        reader.pinsLastModified = !options.requestHeaders.keys.contains { $0.lowercased() == "if-unmodified-since" }
        reader.shouldStop = shouldStop
        do {
            try reader.adopt(response, count: first)
        } catch where error.kind == .transport {
            // The first range was cut off (a dropped connection): asked again, with the reader's retries.
            do { try reader.open() } catch { return nil }
        } catch {
            return nil
        }
        return HTTPRangeBytes(url: url, name: given.absoluteString, reader: reader)
    }
}
