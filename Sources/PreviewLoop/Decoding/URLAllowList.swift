/// The http(s) URLs a source may be read from: a list of prefixes such as
/// `https://media.example.com/videos/`.
///
/// A URL is admitted when it has a prefix's scheme, host and port and its path continues the prefix's
/// path at a segment boundary: `https://media.example.com/videos/` admits `…/videos/a.mp4` and
/// `…/videos/2024/b.mp4`, never `https://media.example.com.evil.test/…`, `…/videos-private/…`,
/// `http://media.example.com/videos/…` or another port. A prefix without a trailing slash admits
/// itself and the paths below it (`…/videos` admits `…/videos` and `…/videos/a.mp4`, not `…/videos2`).
///
/// Both sides are compared in one normal form (``normalized(_:)``): scheme and host lower-cased, the
/// default port dropped. A URL that could mean different things to different servers is never
/// admitted: one with user information (`user@`), a fragment, a backslash, a space or control
/// character, or a path segment that is `.` or `..` or holds an encoded `/` or `\` once decoded.
///
/// Set it as ``SourceOptions/allowedURLs``: the source policy then checks the input, every redirect hop
/// and every resource a playlist names against it, before anything is sent.
public struct URLAllowList: Sendable, Hashable {
    /// A URL split into what is compared.
    struct Parts: Sendable, Hashable {
        var scheme: String
        var host: String
        /// `nil` for the scheme's default port.
        var port: Int?
        /// Starts with `/`; never holds `.` or `..` segments.
        var path: String
        /// After `?`, as given; `nil` without one.
        var query: String?

        var text: String {
            "\(scheme)://\(host)\(port.map { ":\($0)" } ?? "")\(path)\(query.map { "?" + $0 } ?? "")"
        }
    }

    /// The prefixes, in normal form.
    public let prefixes: [String]
    private let parts: [Parts]

    /// The most characters a URL or prefix may have.
    public static let maximumLength = 4096

    /// Reads `prefixes` (http or https URLs, no query).
    ///
    /// - Throws: ``PreviewLoopError`` `.invalidArgument` naming the first prefix that is not an http(s)
    ///   URL in the sense above, or that carries a query.
    public init(_ prefixes: [String]) throws(PreviewLoopError) {
        var parts: [Parts] = []
        for prefix in prefixes {
            guard let parsed = Self.parse(prefix), parsed.query == nil else {
                throw PreviewLoopError(.invalidArgument, "\(prefix.filter { !$0.isNewline }): not an http(s) URL prefix "
                                       + "(scheme://host[:port]/path, with no user, query, fragment, . or .. segment)")
            }
            parts.append(parsed)
        }
        self.parts = parts
        self.prefixes = parts.map(\.text)
    }

    /// Whether `url` is under one of the prefixes.
    public func admits(_ url: String) -> Bool {
        guard let candidate = Self.parse(url) else { return false }
        return parts.contains { prefix in
            guard prefix.scheme == candidate.scheme, prefix.host == candidate.host, prefix.port == candidate.port else { return false }
            if candidate.path == prefix.path { return true }
            let base = prefix.path.hasSuffix("/") ? prefix.path : prefix.path + "/"
            return candidate.path.hasPrefix(base)
        }
    }

    /// `url` in normal form (scheme and host lower-cased, the default port dropped, an empty path as
    /// `/`), or `nil` when it is not an http(s) URL this list could admit.
    public static func normalized(_ url: String) -> String? {
        parse(url)?.text
    }

    static func parse(_ url: String) -> Parts? {
        guard url.utf8.count <= maximumLength,
              !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f || $0 == "\\" || $0 == "#" }),
              let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return nil }
        let scheme = url[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = url[url.index(colon, offsetBy: 3)...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        // host, host:port, [v6], [v6]:port
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._:[]".contains($0)) }) else { return nil }
        var port: Int?
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let number = Int(portText), (1...65_535).contains(number) else { return nil }
            port = number == (scheme == "https" ? 443 : 80) ? nil : number
        }
        let afterAuthority = rest[authorityEnd...]
        let queryStart = afterAuthority.firstIndex(of: "?")
        var path = String(afterAuthority[..<(queryStart ?? afterAuthority.endIndex)])
        if path.isEmpty { path = "/" }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            guard let decoded = PercentEncoding.decode(segment), decoded != [0x2e], decoded != [0x2e, 0x2e],
                  !decoded.contains(UInt8(ascii: "/")), !decoded.contains(UInt8(ascii: "\\")) else { return nil }
        }
        let query = queryStart.map { String(afterAuthority[afterAuthority.index(after: $0)...]) }
        return Parts(scheme: scheme, host: host.lowercased(), port: port, path: path, query: query)
    }
}
