internal import PreviewLoopFFmpeg
internal import PreviewLoopRemote
import FoundationEssentials

/// A small http(s) document read whole — an HLS playlist whose newest segment is wanted — through an
/// input's ``SourcePolicy``: the URL and every redirect hop checked as ``HTTPRangeBytes`` checks them (a
/// refused hop is never contacted), the input's request headers, TLS settings and timeouts, and at most
/// a given number of bytes kept.
package enum RemoteDocument {
    /// The document at `url` and the URL it was read from after redirects.
    ///
    /// - Throws: ``PreviewLoopError`` `.refusedByPolicy` for a URL or hop the policy refuses,
    ///   `.inputNotFound` for 404 or 410, `.tooLarge` for a body over `limit`, `.timedOut` past the
    ///   timeout, `.inputNotReadable` for another status or no answer, `.invalidArgument` for something
    ///   that is not an http(s) URL.
    package static func fetch(_ url: String, options: SourceOptions, limit: Int) throws(PreviewLoopError) -> (body: [UInt8], url: String) {
        let name = RemoteValidators.printable(url)
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw PreviewLoopError(.invalidArgument, "\(name): not an http(s) URL")
        }
        let policy = try options.ffmpegInput(for: .url(parsed)).policy
        let limits = HTTPTransfer.Limits(connectTimeout: options.openTimeout, stallTimeout: options.readTimeout,
                                         verifiesCertificates: options.verifiesCertificates,
                                         certificateAuthorities: options.certificateAuthorities)
        let transfer: HTTPTransfer
        do { transfer = try HTTPTransfer(limits: limits) } catch { throw PreviewLoopError(.inputNotReadable, "\(name): \(error.reason)") }
        let headers = ["User-Agent: preview-loop"] + options.requestHeaders.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        let deadline = ContinuousClock.now + .milliseconds(Int64(options.openTimeout * 1000))
        return try policy.followingRedirects(from: url, name: name) { target throws(PreviewLoopError) in
            let response = transfer.get(url: target, headers: headers, bodyLimit: limit + 1, shouldStop: { ContinuousClock.now > deadline })
            RangeReader.processRequests.add(1, ordering: .relaxed)
            RangeReader.processBytesReceived.add(Int64(response.body.count), ordering: .relaxed)
            if response.wasStopped { throw PreviewLoopError(.timedOut, "\(name): no whole answer within \(options.openTimeout) s") }
            switch response.status {
            case 200:
                guard response.body.count <= limit else {
                    throw PreviewLoopError(.tooLarge, "\(name): more than \(limit >> 20) MB; a playlist is far smaller")
                }
                return .answered((response.body, target))
            case 0:
                throw PreviewLoopError(.inputNotReadable, "\(name): no HTTP answer (\(response.failure ?? "the connection failed"))")
            default:
                return .status(response.status, location: response.headers["location"])
            }
        }
    }

    /// `reference` (a segment's URI in a playlist read from `base`) as an absolute http(s) URL; `nil` for
    /// anything else (another scheme, `data:`, a URI that does not parse).
    package static func resolve(_ reference: String, against base: String) -> String? {
        guard let baseURL = URL(string: base), let resolved = URL(string: reference, relativeTo: baseURL)?.absoluteURL,
              let scheme = resolved.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return nil }
        return resolved.absoluteString
    }
}
