/// Which pages on other origins may read the server's responses from script (CORS, `--allow-origin`),
/// and the headers that say so. As a middleware it answers preflights (`OPTIONS`, when any origin is
/// allowed) and adds its headers to every response, whichever step gave it.
///
/// Pictures in `<img>` tags and videos need none of this; a page needs it to `fetch()` a response, to
/// read its placeholder headers, or to draw a `crossorigin` picture on a `<canvas>` and read it back.
struct CrossOriginPolicy: HTTPMiddleware {
    /// The origins allowed: `["*"]` for any, empty for none.
    let origins: [String]

    /// The response headers a script on another origin may read besides the CORS-safelisted ones.
    static let exposedHeaders = "Thumbhash, Blurhash, Dominant-Color, ETag, Content-Range, Accept-Ranges, Retry-After"
    /// The request headers a preflight may ask for: those a cache or a player sends.
    static let allowedRequestHeaders = "Range, If-None-Match, If-Range"
    /// How long a browser may remember a preflight's answer, in seconds.
    static let preflightMaxAge = 86_400

    /// Whether any origin is allowed (and `OPTIONS` is answered).
    var isEnabled: Bool { !origins.isEmpty }

    /// The headers every response carries for a request whose `Origin` header is `origin`: none without
    /// `--allow-origin`; `*` or the one origin whatever the request; with several origins the request's own
    /// when listed, and `Vary: Origin` on every response so that caches keep the answers apart.
    func headers(requestOrigin origin: String?) -> [(name: String, value: String)] {
        guard let first = origins.first else { return [] }
        let expose = (name: "Access-Control-Expose-Headers", value: Self.exposedHeaders)
        if origins.count == 1 { return [("Access-Control-Allow-Origin", first), expose] }
        guard let origin, origins.contains(origin) else { return [("Vary", "Origin")] }
        return [("Vary", "Origin"), ("Access-Control-Allow-Origin", origin), expose]
    }

    /// The answer to an `OPTIONS` request (a CORS preflight): 204 with the methods and request headers
    /// allowed; the allow-origin headers are added as to every response.
    func preflight() -> HTTPResponse {
        HTTPResponse(status: 204, headers: [
            ("Allow", "GET, HEAD, OPTIONS"), ("Access-Control-Allow-Methods", "GET, HEAD"),
            ("Access-Control-Allow-Headers", Self.allowedRequestHeaders),
            ("Access-Control-Max-Age", String(Self.preflightMaxAge)), ("Cache-Control", "no-store"),
        ])
    }

    func handle(_ request: HTTPRequest, in exchange: HTTPExchange, next: (HTTPRequest) -> HTTPReply) -> HTTPReply {
        let added = headers(requestOrigin: request.header("Origin"))
        if !added.isEmpty {
            exchange.mapResponse { response in
                var response = response
                response.headers += added
                return response
            }
        }
        if request.method == "OPTIONS", isEnabled { return .now(preflight()) }
        return next(request)
    }
}
