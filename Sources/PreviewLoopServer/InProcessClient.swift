import Glibc
import PreviewLoop

/// Sends requests to a responder (a server's middleware chain) without a socket and waits for the
/// response, as the daemon would send it: the middlewares' changes applied, the finish hooks run (so
/// metrics and the access log see the request), a file body read into bytes, no body for `HEAD`.
/// What the daemon itself adds (`Content-Length`, `Date`, `Connection`) is not there.
package struct InProcessClient: Sendable {
    /// A response as the client would read it.
    package struct Reply: Sendable {
        package var status: Int
        package var headers: [(name: String, value: String)]
        package var body: [UInt8]
        /// The body's length as the daemon would announce it (a `HEAD` reply has no body but its length).
        package var length: Int

        /// The first value of the header `name`, whatever the case of its letters.
        package func header(_ name: String) -> String? {
            headers.first { HTTPRequest.same($0.name, name) }?.value
        }

        package var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// What the client asks when no answer comes: the responder broke its promise to answer.
    package struct NoAnswer: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    package let responder: any HTTPResponder

    package init(_ responder: any HTTPResponder) {
        self.responder = responder
    }

    /// Sends `method target` with `headers` from `peer` and waits up to `timeout` for the answer.
    package func send(_ target: String, method: String = "GET", headers: [(name: String, value: String)] = [],
                      peer: String = "127.0.0.1", timeout: Duration = .seconds(120)) throws(NoAnswer) -> Reply {
        let transport = Waiter()
        let exchange = HTTPExchange(request: HTTPRequest(method: method, target: target, headers: headers, peer: peer),
                                    transport: transport)
        let response: HTTPResponse
        switch exchange.resolved(responder.respond(to: exchange.request, in: exchange)) {
        case .now(let now):
            response = now
        case .later, .validated:
            guard transport.waitForResume(timeout: timeout), let later = exchange.takeResponse() else {
                exchange.finish(completed: false)
                throw NoAnswer(description: "no answer to \(method) \(target) within \(timeout)")
            }
            response = later
        }
        let sent = exchange.prepared(response)
        var body = sent.body
        if let file = sent.file {
            body = [UInt8](repeating: 0, count: file.length)
            let read = body.withUnsafeMutableBytes { pread(file.descriptor, $0.baseAddress, file.length, off_t(file.offset)) }
            close(file.descriptor)
            if read != file.length { body = Array(body.prefix(max(0, read))) }
        }
        exchange.finish(completed: true)
        return Reply(status: sent.status, headers: sent.headers, body: method == "HEAD" ? [] : body, length: sent.length)
    }
}

/// The in-process transport: a suspended exchange waits on a condition until it is answered.
private final class Waiter: HTTPTransport, @unchecked Sendable {
    private let condition = ConditionLock()
    private var resumed = false

    func suspend() {}

    func resume() {
        condition.withLock {
            resumed = true
            condition.broadcast()
        }
    }

    var isClientGone: Bool { false }

    /// Whether the exchange was answered within `timeout`.
    func waitForResume(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        condition.lock()
        defer { condition.unlock() }
        while !resumed {
            let left = deadline - .now
            guard left > .zero else { return false }
            condition.wait(timeout: left)
        }
        return true
    }
}
