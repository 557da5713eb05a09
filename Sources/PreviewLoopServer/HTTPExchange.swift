import Synchronization

/// What carries an exchange: a connection of the daemon, or the in-process client. Its methods are
/// called under the exchange's lock.
package protocol HTTPTransport: AnyObject, Sendable {
    /// Parks the connection until `resume()` (it costs no thread meanwhile).
    func suspend()
    /// The answer to a suspended exchange is ready.
    func resume()
    /// Whether the client went away while the exchange was suspended.
    var isClientGone: Bool { get }
}

/// One request and, once known, its response: the context every middleware and the responder share.
/// Made on the daemon's thread; answered from any thread.
///
/// Besides the request it carries what the middlewares leave for the way back: transforms for the
/// response (applied innermost first, to a response given now or later alike), the precondition check
/// for a response whose validators are known before its body, and the hooks run when the exchange is
/// over.
///
/// Invariant: the mutable state is touched only under `state`'s lock.
package final class HTTPExchange: @unchecked Sendable {
    /// The request as it arrived (a middleware may hand the next step a changed copy).
    package let request: HTTPRequest
    /// When the request arrived, on the monotonic clock.
    package let arrival: ContinuousClock.Instant
    /// What the cache did for it, for the access log: `hit`, `disk`, `miss`, `coalesced` or empty.
    package var cacheOutcome: String {
        get { state.withLock { $0.outcome } }
        set { state.withLock { $0.outcome = newValue } }
    }
    /// The status and body size sent, once queued.
    package var sentStatus: Int { state.withLock { $0.sentStatus } }
    package var sentBytes: Int { state.withLock { $0.sentBytes } }

    /// Given the validators of a response and the way to make its body: the reply to send.
    package typealias Preconditions = @Sendable (_ validators: [(name: String, value: String)],
                                                 _ body: @Sendable () -> HTTPReply) -> HTTPReply
    /// Run when the exchange is over: its duration in seconds and whether the response was sent whole.
    package typealias FinishHook = @Sendable (_ exchange: HTTPExchange, _ seconds: Double, _ completed: Bool) -> Void

    private struct State {
        var pending: HTTPResponse?
        var isSuspended = false
        var isAnswered = false
        var outcome = ""
        var sentStatus = 0, sentBytes = 0
        var transforms: [@Sendable (HTTPResponse) -> HTTPResponse] = []
        var preconditions: Preconditions?
        var finishHooks: [FinishHook] = []
    }
    private let state = Mutex(State())
    private let transport: any HTTPTransport

    package init(request: HTTPRequest, transport: any HTTPTransport) {
        self.request = request
        self.transport = transport
        arrival = .now
    }

    /// Parks the connection until ``answer(_:)-swift.method``: call it before handing the exchange to
    /// another thread. Idempotent: an exchange already suspended (by an earlier step of its handling)
    /// stays so.
    package func suspend() {
        state.withLock { state in
            guard !state.isSuspended, !state.isAnswered else { return }
            transport.suspend()
            state.isSuspended = true
        }
    }

    /// Answers a suspended exchange from any thread; only the first answer counts (a deadline and a
    /// finished render may race). Returns whether this answer was the one taken.
    @discardableResult
    package func answer(_ response: HTTPResponse) -> Bool {
        state.withLock { state in
            guard !state.isAnswered else { return false }
            state.isAnswered = true
            state.pending = response
            if state.isSuspended {
                state.isSuspended = false
                transport.resume()
            }
            return true
        }
    }

    /// Answers a suspended exchange with a reply made later (its preconditions checked as the chain's
    /// own reply's are); `.later` leaves it to another answer.
    package func answer(_ reply: HTTPReply) {
        if case .now(let response) = resolved(reply) { answer(response) }
    }

    /// Whether an answer has been given.
    package var isAnsweredYet: Bool { state.withLock { $0.isAnswered } }

    /// Whether the client closed its connection while this exchange was suspended, unanswered.
    package var isClientGone: Bool {
        state.withLock { state in
            guard state.isSuspended, !state.isAnswered else { return false }
            return transport.isClientGone
        }
    }

    // MARK: What middlewares leave for the way back

    /// Adds a change to the response, whichever path answers (now, after a render, or a refusal).
    /// Call it before handing the request on: changes apply innermost first.
    package func mapResponse(_ transform: @escaping @Sendable (HTTPResponse) -> HTTPResponse) {
        state.withLock { $0.transforms.append(transform) }
    }

    /// Sets how a response whose validators are known before its body is answered (conditional
    /// requests); without it the body is made.
    package func evaluatePreconditions(with check: @escaping Preconditions) {
        state.withLock { $0.preconditions = check }
    }

    /// Adds a hook run when the exchange is over; hooks run in the order added.
    package func onFinish(_ hook: @escaping FinishHook) {
        state.withLock { $0.finishHooks.append(hook) }
    }

    /// `reply` with its preconditions evaluated: `.now` or `.later`, never `.validated`.
    package func resolved(_ reply: HTTPReply) -> HTTPReply {
        var reply = reply
        while case .validated(let validators, let body) = reply {
            if let check = state.withLock({ $0.preconditions }) {
                reply = check(validators, body)
                // A check answers once; a body that is itself validated is made.
                if case .validated(_, let inner) = reply { reply = inner() }
            } else {
                reply = body()
            }
        }
        return reply
    }

    // MARK: For the transport

    /// The response given to ``answer(_:)-swift.method`` and not yet sent, if any.
    package func takeResponse() -> HTTPResponse? {
        state.withLock { state in
            defer { state.pending = nil }
            return state.pending
        }
    }

    /// The response to send for `response`: the middlewares' changes applied, innermost first; the
    /// exchange is answered and the status and length recorded.
    package func prepared(_ response: HTTPResponse) -> HTTPResponse {
        let transforms = state.withLock { state in
            state.isAnswered = true
            return state.transforms
        }
        let final = transforms.reversed().reduce(response) { $1($0) }
        state.withLock { state in
            state.sentStatus = final.status
            state.sentBytes = final.length
        }
        return final
    }

    /// The exchange is over: sent, or the connection closed (`completed` is `false` then). Runs the
    /// finish hooks.
    package func finish(completed: Bool) {
        let seconds = Double((ContinuousClock.now - arrival) / .microseconds(1)) / 1e6
        let hooks = state.withLock { $0.finishHooks }
        for hook in hooks { hook(self, seconds, completed) }
    }
}
