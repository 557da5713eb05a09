import FoundationEssentials
internal import PreviewLoopFFmpeg

/// What an http(s) server says identifies the current version of a resource: its `ETag`,
/// `Last-Modified` and `Content-Length`, asked with a `HEAD` request before any media is read.
///
/// A server that renders previews by URL (`preview-loop serve --allow-source`) makes its own validators
/// from these, so a changed video gets new ones; ``preconditions`` make a later read fail (`412`) rather
/// than decode a version other than the one validated.
public struct RemoteValidators: Sendable, Hashable {
    /// The URL the answer came from, after the redirects the source policy admitted.
    public var url: String
    /// The `ETag` header as sent (quotes and any `W/` kept), if any.
    public var entityTag: String?
    /// The `Last-Modified` header as sent, if any.
    public var lastModified: String?
    /// The `Content-Length` header, if any.
    public var contentLength: Int?

    /// Creates validators.
    public init(url: String, entityTag: String? = nil, lastModified: String? = nil, contentLength: Int? = nil) {
        self.url = url
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.contentLength = contentLength
    }

    /// Whether the server named the version at all (an `ETag` or a `Last-Modified`); without either a
    /// changed resource cannot be told from the same one.
    public var identifiesVersion: Bool { entityTag != nil || lastModified != nil }

    /// Request headers that make a read of ``url`` fail when the resource is no longer this version:
    /// `If-Match` with a strong `ETag`, else `If-Unmodified-Since` with `Last-Modified`; none without
    /// either. Set them as ``SourceOptions/requestHeaders``.
    public var preconditions: [String: String] {
        if let entityTag, !entityTag.hasPrefix("W/") { return ["If-Match": entityTag] }
        if let lastModified { return ["If-Unmodified-Since": lastModified] }
        return [:]
    }

    /// One string holding every validator, for building a cache key.
    public var identity: String {
        "\(url)\n\(entityTag ?? "-")\n\(lastModified ?? "-")\n\(contentLength.map(String.init) ?? "-")"
    }

    /// Asks `url`'s server for the resource's validators with `HEAD`, following redirects as
    /// `options` admit them (its origin rule, ``SourceOptions/allowsCrossOriginRedirects`` and
    /// ``SourceOptions/allowedURLs``, at most 8 hops), within `options.openTimeout`, authenticating
    /// https servers as `options` says.
    ///
    /// - Throws: ``PreviewLoopError`` `.refusedByPolicy` for a URL or hop the policy refuses (nothing is
    ///   sent to it), `.inputNotFound` for 404 or 410, `.inputNotReadable` for another status or no answer
    ///   (refused connection, failed TLS handshake or certificate check), `.timedOut` past the timeout,
    ///   `.invalidArgument` for something that is not an http(s) URL.
    public static func fetch(_ url: String, options: SourceOptions = SourceOptions()) throws(PreviewLoopError) -> RemoteValidators {
        guard let parsed = URL(string: url) else {
            throw PreviewLoopError(.invalidArgument, "\(Self.printable(url)): not a URL")
        }
        let (_, _, policy) = try options.ffmpegInput(for: .url(parsed))
        let interrupter = Interrupter()
        interrupter.setDeadline(after: options.openTimeout)
        let readTimeout = String(Int(options.readTimeout * 1_000_000))
        return try policy.followingRedirects(from: url, name: Self.printable(url)) { target throws(PreviewLoopError) in
            guard let text = RedirectProbe.responseHead(of: target, method: "HEAD", headers: options.requestHeaders.sorted { $0.key < $1.key },
                                                        interrupt: interrupter.callback, readTimeout: readTimeout, tls: options.tlsOptions),
                  let head = HTTPResponseHead(parsing: text) else {
                if interrupter.expiredLimit != nil {
                    throw PreviewLoopError(.timedOut, "\(Self.printable(url)): no answer within \(options.openTimeout) s")
                }
                throw PreviewLoopError(.inputNotReadable, "\(Self.printable(url)): no HTTP answer (connection refused or closed, "
                                       + "or the TLS handshake or certificate check failed)")
            }
            guard (200...299).contains(head.status) else { return .status(head.status, location: head["location"]) }
            return .answered(RemoteValidators(url: target, entityTag: head["etag"], lastModified: head["last-modified"],
                                              contentLength: head["content-length"].flatMap { Int($0) }))
        }
    }

    /// A URL for a message: one line, at most 200 characters.
    static func printable(_ url: String) -> String {
        let line = url.filter { !$0.isNewline }
        return line.count > 200 ? String(line.prefix(200)) + "…" : line
    }
}

/// An HTTP response's status line and header fields.
struct HTTPResponseHead: Sendable, Equatable {
    /// The status code.
    var status: Int
    /// Field names lower-cased, values trimmed; a repeated field keeps its first value.
    var fields: [String: String]

    /// Reads `text` (a status line, then fields, up to the blank line); `nil` when it does not start
    /// with an HTTP status line.
    init?(parsing text: String) {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/") else { return nil }
        let words = statusLine.split(separator: " ", maxSplits: 2)
        guard words.count >= 2, words[1].count == 3, let status = Int(words[1]) else { return nil }
        self.status = status
        fields = [:]
        for line in lines.dropFirst() {
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingPrefix(while: { $0 == " " || $0 == "\t" })
            let trimmed = String(value.reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
            if fields[name] == nil { fields[name] = trimmed }
        }
    }

    /// The value of the field `name` (lower case).
    subscript(name: String) -> String? { fields[name] }
}
