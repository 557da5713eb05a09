import FoundationEssentials
internal import PreviewLoopFFmpeg
import Synchronization

/// What an input may make the engine open besides itself (playlist segments, referenced files).
///
/// FFmpeg calls ``FormatContext``'s `io_open` hook for every resource a demuxer opens, the input
/// itself included; the hook asks ``refusal(for:)`` first. A remote input may only reach its own origin
/// (so a playlist cannot point at a local file or another local port), a local file only local files
/// (never the network), and memory or a pipe nothing at all.
///
/// Redirects are checked hop by hop (``refusal(forRedirectTo:ofInput:)``): a redirect of the input
/// itself may only stay on its origin unless `allowsCrossOriginRedirects` (then any http(s) origin,
/// which then counts as the input's own for its nested opens); a redirect of a nested resource may
/// only lead to an origin the input has. Never to another protocol. Thread-safe: the record of
/// refusals, the open count and the origins reached are guarded by mutexes; everything else is immutable.
final class SourcePolicy: Sendable, OpenPolicy {
    enum Kind: Sendable, Equatable {
        case localFiles
        case sameOrigin(host: String, port: Int)
        /// Only the input itself (a pipe).
        case nothingNested
        /// Nothing at all (bytes in memory, read through a custom I/O context).
        case nothing
    }

    let kind: Kind
    /// Whether the input itself may be redirected to other http(s) origins.
    let allowsCrossOriginRedirects: Bool
    /// The URLs a remote input, its redirects and its nested resources must be under, when set.
    let allowedURLs: URLAllowList?
    private let refused = Mutex<String?>(nil)
    private let opens = Mutex(0)
    /// Origins (`host:port`) a remote input was redirected to with permission: its nested opens may use them too.
    private let redirectOrigins = Mutex<[String]>([])

    init(kind: Kind, allowsCrossOriginRedirects: Bool = false, allowedURLs: URLAllowList? = nil) {
        self.kind = kind
        self.allowsCrossOriginRedirects = allowsCrossOriginRedirects
        self.allowedURLs = allowedURLs
    }

    /// Why `url` is not under ``allowedURLs``, or `nil` when it is (or there is no list).
    private func allowListRefusal(_ url: String) -> String? {
        guard let allowedURLs, !allowedURLs.admits(url) else { return nil }
        return "\(url.filter { !$0.isNewline }) is not under an allowed source prefix"
    }

    /// How many opens ``refusal(for:)`` has been asked about (the first is the input itself).
    var openCount: Int { opens.withLock { $0 } }

    /// Why a redirect to `url` may not be followed, or `nil` when it may.
    ///
    /// - Parameter ofInput: whether the redirect answers the request for the input itself (not a
    ///   playlist's segment or another nested resource).
    func refusal(forRedirectTo url: String, ofInput: Bool) -> String? {
        guard case .sameOrigin(let host, let port) = kind else {
            return "this input may not be redirected (to \(url))"
        }
        guard let origin = Self.origin(of: url) else {
            return "a redirect may only lead to an http(s) URL, not \(url)"
        }
        if let refusal = allowListRefusal(url) { return "a redirect leads out of the allowed sources: \(refusal)" }
        let reached = redirectOrigins.withLock { $0 }
        if origin == "\(host):\(port)" || reached.contains(origin) { return nil }
        if ofInput && allowsCrossOriginRedirects {
            redirectOrigins.withLock { $0.append(origin) }
            return nil
        }
        if ofInput {
            return "the input redirects to another origin, \(origin) (only \(host):\(port) unless cross-origin redirects are allowed: --allow-redirects)"
        }
        return "a nested resource redirects to \(origin) (only \(host):\(port))"
    }

    /// `host:port` of an http(s) URL (the port defaulted from the scheme), or `nil` for any other URL.
    static func origin(of url: String) -> String? {
        let lowered = url.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), let parsed = URL(string: url),
              let host = parsed.host?.lowercased(), !host.isEmpty else { return nil }
        return "\(host):\(parsed.port ?? (lowered.hasPrefix("https://") ? 443 : 80))"
    }

    /// Why `url` may not be opened, or `nil` when it may.
    func refusal(for url: String) -> String? {
        let count = opens.withLock { value -> Int in value += 1; return value }
        let lowered = url.lowercased()
        let scheme = lowered.firstIndex(of: ":").map { String(lowered[..<$0]) } ?? ""
        switch kind {
        case .localFiles:
            // A plain path or file: only; any other protocol (http, concat, subfile, data…) is refused.
            if lowered.hasPrefix("file:") || !lowered.contains(":") || lowered.hasPrefix("/") { return nil }
            return "a local input may only open local files, not \(scheme): URLs"
        case .sameOrigin(let host, let port):
            guard scheme == "http" || scheme == "https", let parsed = URL(string: url), let otherHost = parsed.host?.lowercased() else {
                return "a remote input may only open http(s) URLs of its own origin, not \(scheme.isEmpty ? "local paths" : scheme + ":")"
            }
            if let refusal = allowListRefusal(url) { return refusal }
            let otherPort = parsed.port ?? (scheme == "https" ? 443 : 80)
            if otherHost == host && otherPort == port { return nil }
            if redirectOrigins.withLock({ $0.contains("\(otherHost):\(otherPort)") }) { return nil }
            return "a remote input may not open \(otherHost):\(otherPort) (only \(host):\(port))"
        case .nothingNested:
            return count == 1 ? nil : "this input may not open other resources"
        case .nothing:
            return "an input in memory may not open other resources"
        }
    }

    /// Remembers the first refusal, for the error message.
    func record(_ reason: String) {
        refused.withLock { if $0 == nil { $0 = reason } }
    }

    /// The first refusal, if any.
    var firstRefusal: String? { refused.withLock { $0 } }
}

/// What one request of ``SourcePolicy/followingRedirects(from:name:_:)`` came back with.
enum RedirectHop<Answer> {
    /// What was asked for.
    case answered(Answer)
    /// Another HTTP status, with the answer's `Location` header field when it has one.
    case status(Int, location: String?)
}

extension SourcePolicy {
    /// Asks for `url` with `request`, following the redirects this policy admits for an input (at most
    /// ``OpenGate/maxRedirects`` hops): the URL and every hop are checked before they are contacted.
    ///
    /// - Parameters:
    ///   - name: the URL as messages show it.
    ///   - request: makes one request of the URL it is given.
    /// - Throws: ``PreviewLoopError`` `.refusedByPolicy` for a URL or hop the policy refuses, or one hop
    ///   too many; `.inputNotFound` for 404 or 410; `.inputNotReadable` for a redirect without a usable
    ///   `Location` or any other status; what `request` throws.
    func followingRedirects<Answer>(from url: String, name: String,
                                    _ request: (String) throws(PreviewLoopError) -> RedirectHop<Answer>) throws(PreviewLoopError) -> Answer {
        if let refusal = refusal(for: url) { throw PreviewLoopError(.refusedByPolicy, "\(name): \(refusal)") }
        var target = url
        for _ in 0...OpenGate.maxRedirects {
            let status: Int, location: String?
            switch try request(target) {
            case .answered(let answer): return answer
            case .status(let code, let field): (status, location) = (code, field)
            }
            switch status {
            case 301, 302, 303, 307, 308:
                guard let location,
                      let next = RedirectProbe.redirectTarget(inHeader: "HTTP/1.1 \(status) Redirect\r\nLocation: \(location)\r\n\r\n",
                                                              relativeTo: target) else {
                    throw PreviewLoopError(.inputNotReadable, "\(name): a redirect without a usable Location")
                }
                if let refusal = refusal(forRedirectTo: next, ofInput: true) {
                    throw PreviewLoopError(.refusedByPolicy, "\(name): \(refusal)")
                }
                target = next
            case 404, 410:
                throw PreviewLoopError(.inputNotFound, "\(name): the server answered \(status)")
            default:
                throw PreviewLoopError(.inputNotReadable, "\(name): the server answered \(status)")
            }
        }
        throw PreviewLoopError(.refusedByPolicy, "\(name): more than \(OpenGate.maxRedirects) redirects")
    }
}
