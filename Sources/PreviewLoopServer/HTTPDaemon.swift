internal import CMicroHTTPD
import Glibc
import Synchronization

// The only file that talks to libmicrohttpd. It owns the listening socket and the daemon, turns each
// request into an `HTTPRequest` and its `HTTPExchange` for a responder (a middleware chain), and
// queues the responder's `HTTPResponse` on the connection, now or later: a request that needs a render
// suspends its connection (it costs no thread while it waits) and is resumed when the response is ready.
// It knows nothing of what is served, nor how many threads suit the machine (the caller says).

/// A daemon connection as an exchange's transport: suspended and resumed through libmicrohttpd.
private final class DaemonConnection: HTTPTransport, @unchecked Sendable {
    let connection: OpaquePointer

    init(_ connection: OpaquePointer) { self.connection = connection }

    func suspend() { MHD_suspend_connection(connection) }
    func resume() { MHD_resume_connection(connection) }

    /// A suspended connection is not polled by libmicrohttpd, so its socket is peeked at here; under the
    /// exchange's lock the connection stays suspended, so the socket is still the connection's own.
    var isClientGone: Bool {
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

/// Why the server could not start.
package struct ServerStartError: Error, Sendable {
    package var message: String
}

/// The daemon: a listening socket on an IPv4 address and libmicrohttpd's polling threads (epoll). It
/// knows HTTP only: what a request is for is the responder's business.
package final class HTTPDaemon: @unchecked Sendable {
    /// The port listened on (the one the system picked for port 0).
    package let port: Int
    private var daemon: OpaquePointer?
    private var listenSocket: Int32
    private let responder: any HTTPResponder
    /// Guards `daemon` and `listenSocket` after start.
    private let lock = Mutex(())
    /// Closes connections whose request does not arrive whole within the connection timeout.
    fileprivate let deadlines: RequestDeadlines

    /// Binds `host` (an IPv4 address) and `port` (0 picks a free one) and starts serving requests with
    /// `responder` on `threads` polling threads.
    package init(host: String, port requestedPort: Int, threads: Int, maxConnections: Int, maxConnectionsPerAddress: Int,
                 connectionTimeout: Double, responder: any HTTPResponder) throws(ServerStartError) {
        let address = "\(host):\(requestedPort)"
        self.responder = responder
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
            var request = HTTPRequest(method: method, target: start.target, headers: Self.headers(of: connection),
                                      peer: Self.peer(of: connection))
            // The path as libmicrohttpd read it (escapes kept: see `cmhd_keep_escapes`).
            request.path = url
            let exchange = HTTPExchange(request: request, transport: DaemonConnection(connection))
            start.exchange = exchange
            // A request that is not a plain GET or HEAD is answered now, before its body (which is never
            // read: libmicrohttpd then closes the connection after the answer). Others are answered on
            // the next call, so a keep-alive connection stays open.
            guard request.hasBody || (method != "GET" && method != "HEAD") else { return .YES }
            start.isHandled = true
            return respond(exchange, on: connection)
        }
        if !start.isHandled {
            start.isHandled = true
            return respond(exchange, on: connection)
        }
        // Called again after a resume: the answer is ready.
        guard let response = exchange.takeResponse() else { return .YES }
        return queue(response, for: exchange, on: connection)
    }

    private func respond(_ exchange: HTTPExchange, on connection: OpaquePointer) -> MHD_Result {
        guard case .now(let response) = exchange.resolved(responder.respond(to: exchange.request, in: exchange)) else {
            return .YES
        }
        return queue(response, for: exchange, on: connection)
    }

    private func queue(_ given: HTTPResponse, for exchange: HTTPExchange, on connection: OpaquePointer) -> MHD_Result {
        let response = exchange.prepared(given)
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
        for header in response.headers {
            _ = MHD_add_response_header(made, header.name, header.value)
        }
        return MHD_queue_response(connection, UInt32(response.status), made)
    }

    fileprivate func finished(connection: OpaquePointer?, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                              code: MHD_RequestTerminationCode) {
        // MHD_REQUEST_TERMINATED_COMPLETED_OK is 0: the connection may carry another request.
        if let connection, code.rawValue == 0 { deadlines.responseSent(on: connection) }
        guard let state, let pointer = state.pointee else { return }
        state.pointee = nil
        let start = Unmanaged<RequestStart>.fromOpaque(pointer).takeRetainedValue()
        guard let exchange = start.exchange else { return }
        exchange.finish(completed: code.rawValue == 0)
    }

    /// Every header of the request on `connection`, in the order sent.
    private static func headers(of connection: OpaquePointer) -> [(name: String, value: String)] {
        let collected = HeaderList()
        withExtendedLifetime(collected) {
            _ = MHD_get_connection_values(connection, .HEADER_KIND, { context, _, key, value in
                guard let context, let key else { return .YES }
                let list = Unmanaged<HeaderList>.fromOpaque(context).takeUnretainedValue()
                list.items.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
                return .YES
            }, Unmanaged.passUnretained(collected).toOpaque())
        }
        return collected.items
    }

    /// The client's IPv4 address, as text.
    private static func peer(of connection: OpaquePointer) -> String? {
        guard let address = cmhd_client_address(connection), address.pointee.sa_family == sa_family_t(AF_INET) else { return nil }
        return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            var bytes = inet.pointee.sin_addr
            guard inet_ntop(AF_INET, &bytes, &text, socklen_t(text.count)) != nil else { return nil }
            return String(cString: text)
        }
    }

    /// The query's items of a request target (``HTTPRequest/query(of:)``).
    static func query(of target: String) -> [(name: String, value: String?)] { HTTPRequest.query(of: target) }

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
    /// Whether the responder has seen it (only the daemon's thread reads or sets it).
    var isHandled = false
    init(target: String) { self.target = target }
}

/// The headers of one request, as libmicrohttpd lists them.
private final class HeaderList {
    var items: [(name: String, value: String)] = []
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
