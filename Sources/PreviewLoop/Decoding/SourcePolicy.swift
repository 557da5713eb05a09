import FoundationEssentials
import Synchronization

/// What an input may make the engine open besides itself (playlist segments, referenced files).
///
/// FFmpeg calls ``FormatContext``'s `io_open` hook for every resource a demuxer opens, the input
/// itself included; the hook asks ``refusal(for:)`` first. A remote input may only reach its own origin
/// (so a playlist cannot point at a local file or another local port), a local file only local files
/// (never the network), and memory or a pipe nothing at all. Thread-safe: the record of refusals is
/// guarded by a mutex; everything else is immutable.
final class SourcePolicy: Sendable {
    enum Kind: Sendable, Equatable {
        case localFiles
        case sameOrigin(host: String, port: Int)
        /// Only the input itself (a pipe).
        case nothingNested
        /// Nothing at all (bytes in memory, read through a custom I/O context).
        case nothing
    }

    let kind: Kind
    private let refused = Mutex<String?>(nil)
    private let opens = Mutex(0)

    init(kind: Kind) {
        self.kind = kind
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
            let otherPort = parsed.port ?? (scheme == "https" ? 443 : 80)
            if otherHost == host && otherPort == port { return nil }
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
