internal import CMicroHTTPD
import Glibc
import Synchronization

// The only file that talks to libmicrohttpd. It owns the listening socket and the daemon, turns each
// request into an `HTTPExchange` for the server's logic, and queues the logic's `HTTPResponse` on the
// connection, now or later: a request that needs a render suspends its connection (it costs no thread
// while it waits) and is resumed when the response is ready.

/// A response: status, headers and the body, in memory or a part of an open file (`Content-Length` is
/// set by the daemon).
package struct HTTPResponse: Sendable {
    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]
    /// A body sent from a file instead of `body`: the daemon owns the descriptor once the response is
    /// queued, and closes it when the response is sent or dropped.
    package var file: FileBody?

    package init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = [], file: FileBody? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.file = file
    }

    /// The bytes it sends.
    package var length: Int { file?.length ?? body.count }
}

/// `length` bytes from `offset` of an open file.
package struct FileBody: Sendable {
    package var descriptor: Int32
    package var offset: Int
    package var length: Int
}

/// One request and, once known, its response. Made on the daemon's thread; answered from any thread.
///
/// Invariant: the mutable state is touched only under `state`'s lock.
package final class HTTPExchange: @unchecked Sendable {
    /// `GET`, `HEAD`, …
    package let method: String
    /// The path as sent, percent escapes kept (`/a%20b.mp4/thumbnail.jpg`).
    package let rawPath: String
    /// The query's items in order, exactly as sent (escapes and `+` kept); a value is `nil` for an item
    /// without `=`.
    package let rawQuery: [(name: String, value: String?)]
    /// Whether the request announced a body (`Content-Length` above 0 or `Transfer-Encoding`). The
    /// daemon hands such a request to the handler at once, before its body, and never reads the body.
    package let hasBody: Bool
    /// The `If-None-Match` header, if sent.
    package let ifNoneMatch: String?
    /// The `Range` and `If-Range` headers, if sent.
    package let range: String?, ifRange: String?
    /// The `Origin` header, if sent (a browser sends it with cross-origin requests).
    package let origin: String?
    /// When the request arrived, on the monotonic clock.
    package let arrival: ContinuousClock.Instant
    /// What the cache did for it, for the access log: `hit`, `miss`, `coalesced` or empty.
    package var cacheOutcome: String {
        get { state.withLock { $0.outcome } }
        set { state.withLock { $0.outcome = newValue } }
    }
    /// The status and body size sent, once queued.
    package private(set) var sentStatus = 0, sentBytes = 0

    private struct State {
        var pending: HTTPResponse?
        var isSuspended = false
        var isAnswered = false
        var outcome = ""
    }
    private let state = Mutex(State())
    fileprivate let connection: OpaquePointer
    /// Whether the handler has seen it (only the daemon's thread reads or sets it).
    fileprivate var isHandled = false

    fileprivate init(connection: OpaquePointer, method: String, rawPath: String,
                     rawQuery: [(name: String, value: String?)], hasBody: Bool, ifNoneMatch: String?, range: String?,
                     ifRange: String?, origin: String?) {
        self.connection = connection
        self.method = method
        self.rawPath = rawPath
        self.rawQuery = rawQuery
        self.hasBody = hasBody
        self.ifNoneMatch = ifNoneMatch
        self.range = range
        self.ifRange = ifRange
        self.origin = origin
        arrival = .now
    }

    /// Parks the connection until ``answer(_:)``: call it before handing the exchange to another thread.
    /// Idempotent: an exchange already suspended (by an earlier step of its handling) stays so.
    package func suspend() {
        state.withLock { state in
            guard !state.isSuspended, !state.isAnswered else { return }
            MHD_suspend_connection(connection)
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
                MHD_resume_connection(connection)
            }
            return true
        }
    }

    /// Whether an answer has been given.
    package var isAnsweredYet: Bool { state.withLock { $0.isAnswered } }

    /// Whether the client closed its connection while this exchange was suspended, unanswered. (A
    /// suspended connection is not polled by libmicrohttpd, so its socket is peeked at here; under the
    /// state's lock the connection stays suspended, so the socket is still the connection's own.)
    package var isClientGone: Bool {
        state.withLock { state in
            guard state.isSuspended, !state.isAnswered else { return false }
            let socket = cmhd_connection_fd(connection)
            guard socket >= 0 else { return false }
            var probe = pollfd(fd: socket, events: Int16(POLLIN) | Int16(0x2000 /* POLLRDHUP */), revents: 0)
            guard poll(&probe, 1, 0) == 1 else { return false }
            if probe.revents & (Int16(POLLHUP) | Int16(POLLERR) | Int16(0x2000)) != 0 { return true }
            // Readable: more bytes (a pipelined request) or the end of the stream.
            var byte: UInt8 = 0
            return recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0
        }
    }

    /// The response to queue on this call of the access handler, if ready; `nil` while suspended.
    fileprivate func takeResponse() -> HTTPResponse? {
        state.withLock { state in
            defer { state.pending = nil }
            return state.pending
        }
    }

    fileprivate func markAnswered(_ response: HTTPResponse) {
        state.withLock { $0.isAnswered = true }
        sentStatus = response.status
        sentBytes = response.length
    }
}

/// What the server's logic does with requests.
package protocol HTTPHandler: AnyObject, Sendable {
    /// Answers now with a response, or returns `nil` after calling `exchange.suspend()` and arranging for
    /// `exchange.answer(_:)` to be called later (from any thread).
    func respond(to exchange: HTTPExchange) -> HTTPResponse?
    /// The exchange is over: sent, or the connection closed (`completed` is `false` then).
    func finished(_ exchange: HTTPExchange, completed: Bool)
    /// Headers added to every response to `exchange`, whichever path answered it (now, after a render,
    /// or a refusal).
    func commonHeaders(for exchange: HTTPExchange) -> [(name: String, value: String)]
}

extension HTTPHandler {
    /// No headers but each response's own.
    package func commonHeaders(for exchange: HTTPExchange) -> [(name: String, value: String)] { [] }
}

/// Why the server could not start.
package struct ServerStartError: Error, Sendable {
    package var message: String
}

/// The daemon: a listening socket on an IPv4 address and libmicrohttpd's polling threads (epoll). It
/// knows HTTP only: what a request is for is the handler's business.
package final class HTTPDaemon: @unchecked Sendable {
    /// The port listened on (the one the system picked for port 0).
    package let port: Int
    private var daemon: OpaquePointer?
    private var listenSocket: Int32
    private let handler: any HTTPHandler
    /// Guards `daemon` and `listenSocket` after start.
    private let lock = Mutex(())
    /// Closes connections whose request does not arrive whole within the connection timeout.
    fileprivate let deadlines: RequestDeadlines

    /// Binds `host` (an IPv4 address) and `port` (0 picks a free one) and starts serving requests with
    /// `handler` on `threads` polling threads.
    package init(host: String, port requestedPort: Int, threads: Int, maxConnections: Int, maxConnectionsPerAddress: Int,
                 connectionTimeout: Double, handler: any HTTPHandler) throws(ServerStartError) {
        let address = "\(host):\(requestedPort)"
        self.handler = handler
        deadlines = RequestDeadlines(limit: .milliseconds(Int64(max(0.001, connectionTimeout) * 1000)))
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw ServerStartError(message: "cannot open a socket: \(Self.errorText())") }
        var reuse: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        guard (0...65_535).contains(requestedPort) else {
            close(socket)
            throw ServerStartError(message: "\(requestedPort) is not a port")
        }
        socketAddress.sin_port = in_port_t(UInt16(requestedPort).bigEndian)
        guard inet_pton(AF_INET, host, &socketAddress.sin_addr) == 1 else {
            close(socket)
            throw ServerStartError(message: "\(host) is not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(socket, 256) == 0 else {
            let reason = Self.errorText()
            close(socket)
            throw ServerStartError(message: "cannot listen on \(address): \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        port = Int(UInt16(bigEndian: actual.sin_port))
        listenSocket = socket
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard deadlines.start() else {
            close(socket)
            throw ServerStartError(message: "cannot start the request deadline thread (pthread_create failed)")
        }
        daemon = cmhd_start(flags, socket, UInt32(max(1, threads)), UInt32(maxConnections), UInt32(maxConnectionsPerAddress),
                            UInt32(max(1, connectionTimeout.rounded(.up))), accessHandler, completedHandler,
                            connectionHandler, targetHook, context)
        guard daemon != nil else {
            deadlines.stop()
            close(socket)
            throw ServerStartError(message: "libmicrohttpd could not start on \(address)")
        }
    }

    /// Stops accepting connections; those open are served on. The listening socket is closed.
    package func stopAccepting() {
        lock.withLock { _ in
            guard let daemon, listenSocket >= 0 else { return }
            let socket = MHD_quiesce_daemon(daemon)
            if socket >= 0 { close(socket) }
            listenSocket = -1
        }
    }

    /// Stops the daemon and closes every connection; every suspended exchange must have been answered.
    package func stop() {
        let stopping: OpaquePointer? = lock.withLock { _ in
            defer { daemon = nil }
            return daemon
        }
        guard let stopping else { return }
        MHD_stop_daemon(stopping)
        deadlines.stop()
        lock.withLock { _ in
            if listenSocket >= 0 { close(listenSocket) }
            listenSocket = -1
        }
    }

    deinit { stop() }

    fileprivate func respond(connection: OpaquePointer, url: String, method: String,
                             state: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        // The request-line hook left the request target; the first call has the headers.
        let start: RequestStart
        if let pointer = state.pointee {
            start = Unmanaged<RequestStart>.fromOpaque(pointer).takeUnretainedValue()
        } else {
            start = RequestStart(target: url)
            state.pointee = Unmanaged.passRetained(start).toOpaque()
        }
        guard let exchange = start.exchange else {
            deadlines.requestArrived(on: connection)
            func header(_ name: String) -> String? {
                MHD_lookup_connection_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
            }
            let length = header("Content-Length").map { $0.filter { $0 != " " && $0 != "\t" } }
            let hasBody = header("Transfer-Encoding") != nil || (length.map { $0 != "0" } ?? false)
            let exchange = HTTPExchange(connection: connection, method: method, rawPath: url,
                                        rawQuery: Self.query(of: start.target), hasBody: hasBody,
                                        ifNoneMatch: header("If-None-Match"), range: header("Range"),
                                        ifRange: header("If-Range"), origin: header("Origin"))
            start.exchange = exchange
            // A request that is not a plain GET or HEAD is answered now, before its body (which is never
            // read: libmicrohttpd then closes the connection after the answer). Others are answered on
            // the next call, so a keep-alive connection stays open.
            guard hasBody || (method != "GET" && method != "HEAD") else { return .YES }
            exchange.isHandled = true
            guard let response = handler.respond(to: exchange) else { return .YES }
            return queue(response, for: exchange)
        }
        if !exchange.isHandled {
            exchange.isHandled = true
            guard let response = handler.respond(to: exchange) else { return .YES }
            return queue(response, for: exchange)
        }
        // Called again after a resume: the answer is ready.
        guard let response = exchange.takeResponse() else { return .YES }
        return queue(response, for: exchange)
    }

    private func queue(_ response: HTTPResponse, for exchange: HTTPExchange) -> MHD_Result {
        exchange.markAnswered(response)
        let made: OpaquePointer?
        if let file = response.file {
            // libmicrohttpd reads the file as it sends (sendfile where it can) and closes it after.
            made = MHD_create_response_from_fd_at_offset64(UInt64(file.length), file.descriptor, UInt64(file.offset))
            if made == nil { close(file.descriptor) }
        } else {
            made = response.body.withUnsafeBytes { body in
                MHD_create_response_from_buffer(body.count, UnsafeMutableRawPointer(mutating: body.baseAddress),
                                                Self.mustCopy)
            }
        }
        guard let made else { return .NO }
        defer { MHD_destroy_response(made) }
        for header in response.headers + handler.commonHeaders(for: exchange) {
            _ = MHD_add_response_header(made, header.name, header.value)
        }
        return MHD_queue_response(exchange.connection, UInt32(response.status), made)
    }

    fileprivate func finished(connection: OpaquePointer?, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                              code: MHD_RequestTerminationCode) {
        // MHD_REQUEST_TERMINATED_COMPLETED_OK is 0: the connection may carry another request.
        if let connection, code.rawValue == 0 { deadlines.responseSent(on: connection) }
        guard let state, let pointer = state.pointee else { return }
        state.pointee = nil
        let start = Unmanaged<RequestStart>.fromOpaque(pointer).takeRetainedValue()
        guard let exchange = start.exchange else { return }
        handler.finished(exchange, completed: code.rawValue == 0)
    }

    /// The query's items of a request target, in order and exactly as sent: split at `&` (empty items
    /// dropped) and each at its first `=`; escapes and `+` kept.
    static func query(of target: String) -> [(name: String, value: String?)] {
        let bytes = target.utf8
        guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return [] }
        return bytes[bytes.index(after: mark)...].split(separator: UInt8(ascii: "&")).map { item in
            guard let equals = item.firstIndex(of: UInt8(ascii: "=")) else { return (String(decoding: item, as: UTF8.self), nil) }
            return (String(decoding: item[..<equals], as: UTF8.self), String(decoding: item[item.index(after: equals)...], as: UTF8.self))
        }
    }

    /// `MHD_RESPMEM_MUST_COPY` (2): libmicrohttpd copies the body, so the response owns its bytes.
    private static let mustCopy = MHD_ResponseMemoryMode(rawValue: 2)!

    private static func errorText() -> String { String(cString: strerror(errno)) }
}

/// libmicrohttpd's access handler: to the daemon whose pointer is `context`.
private let accessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, _, uploadSize, state in
    guard let context, let connection, let state else { return .NO }
    let daemon = Unmanaged<HTTPDaemon>.fromOpaque(context).takeUnretainedValue()
    // A request body is never read: every route is GET or HEAD, and others are refused on the first call.
    if let uploadSize { uploadSize.pointee = 0 }
    return daemon.respond(connection: connection, url: url.map { String(cString: $0) } ?? "/",
                          method: method.map { String(cString: $0) } ?? "", state: state)
}

/// libmicrohttpd's completion callback.
private let completedHandler: MHD_RequestCompletedCallback = { context, connection, state, code in
    guard let context else { return }
    Unmanaged<HTTPDaemon>.fromOpaque(context).takeUnretainedValue().finished(connection: connection, state: state, code: code)
}

/// What the request-line hook hands the access handler (through libmicrohttpd's per-request pointer):
/// the request target as sent and, from the first call of the access handler on, the exchange.
private final class RequestStart {
    let target: String
    var exchange: HTTPExchange?
    init(target: String) { self.target = target }
}

/// libmicrohttpd's request-line hook: keeps the whole request target and leaves libmicrohttpd no query
/// to split (the server splits it: `HTTPDaemon.query(of:)`).
private let targetHook: cmhd_target_hook = { _, uri, _ in
    guard let uri else { return nil }
    let start = RequestStart(target: String(cString: uri))
    cmhd_empty_query(uri)
    return Unmanaged.passRetained(start).toOpaque()
}

/// libmicrohttpd's connection notifications: accepted connections are watched for their request's
/// deadline until they close.
private let connectionHandler: MHD_NotifyConnectionCallback = { context, connection, _, code in
    guard let context, let connection else { return }
    let deadlines = Unmanaged<HTTPDaemon>.fromOpaque(context).takeUnretainedValue().deadlines
    if code.rawValue == 0 { // MHD_CONNECTION_NOTIFY_STARTED
        deadlines.opened(connection, socket: cmhd_connection_fd(connection))
    } else {
        deadlines.closed(connection)
    }
}
