import PreviewLoopJobs

// Responders and middleware, composed in order: each middleware sees the request on the way in, may
// answer it itself or hand it (changed or not) to the next step, and leaves on the exchange what it
// does on the way back (response changes, precondition checks, finish hooks), so that a response
// given later, after a render, passes through the same steps as one given at once.

/// A response now, or later.
package enum HTTPReply: Sendable {
    /// The response, now.
    case now(HTTPResponse)
    /// The exchange was suspended (``HTTPExchange/suspend()``) and will be answered from another thread
    /// (``HTTPExchange/answer(_:)-swift.method``).
    case later
    /// A response whose validators (`ETag`, `Cache-Control`) are known before its body: a conditional
    /// request may be answered from them (304) without making the body.
    case validated(validators: [(name: String, value: String)], body: @Sendable () -> HTTPReply)
}

/// What answers requests: the innermost step, or a whole chain.
package protocol HTTPResponder: Sendable {
    func respond(to request: HTTPRequest, in exchange: HTTPExchange) -> HTTPReply
}

/// One step of a chain.
package protocol HTTPMiddleware: Sendable {
    /// Answers `request`, by itself or by calling `next` (at most once).
    func handle(_ request: HTTPRequest, in exchange: HTTPExchange, next: (HTTPRequest) -> HTTPReply) -> HTTPReply
}

/// Middlewares in order, the first outermost, around a responder. Its replies are never `.validated`:
/// preconditions are evaluated on the way out (by a middleware that set a check, or by making the body).
package struct HTTPChain: HTTPResponder {
    package let middlewares: [any HTTPMiddleware]
    package let responder: any HTTPResponder

    package init(_ middlewares: [any HTTPMiddleware], responder: any HTTPResponder) {
        self.middlewares = middlewares
        self.responder = responder
    }

    package func respond(to request: HTTPRequest, in exchange: HTTPExchange) -> HTTPReply {
        exchange.resolved(step(0, request, exchange))
    }

    private func step(_ index: Int, _ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPReply {
        guard index < middlewares.count else { return responder.respond(to: request, in: exchange) }
        return middlewares[index].handle(request, in: exchange) { step(index + 1, $0, exchange) }
    }
}

/// A responder made of a closure (tests, small routes).
package struct ClosureResponder: HTTPResponder {
    let body: @Sendable (HTTPRequest, HTTPExchange) -> HTTPReply

    package init(_ body: @escaping @Sendable (HTTPRequest, HTTPExchange) -> HTTPReply) {
        self.body = body
    }

    package func respond(to request: HTTPRequest, in exchange: HTTPExchange) -> HTTPReply {
        body(request, exchange)
    }
}

/// Only the methods listed are served (the first calls are `GET` and `HEAD`): others are 405 with
/// `Allow`, and a `GET` or `HEAD` that announces a body is 400 (the body is never read).
package struct AllowedMethods: HTTPMiddleware {
    /// What `Allow` lists.
    let allowed: [String]

    package init(_ allowed: [String]) { self.allowed = allowed }

    package func handle(_ request: HTTPRequest, in exchange: HTTPExchange, next: (HTTPRequest) -> HTTPReply) -> HTTPReply {
        let isRead = request.method == "GET" || request.method == "HEAD"
        if request.hasBody && isRead {
            return .now(Problem.response(PreviewRequestError(status: 400, detail: "A GET or HEAD request carries no body here.")))
        }
        guard isRead else {
            var response = Problem.response(PreviewRequestError(status: 405, detail: "Only GET and HEAD are served."))
            response.headers.append(("Allow", allowed.joined(separator: ", ")))
            return .now(response)
        }
        return next(request)
    }
}
