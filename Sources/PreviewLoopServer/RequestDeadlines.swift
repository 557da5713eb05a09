import Glibc
import PreviewLoopRemote
import Synchronization

/// Closes connections whose request has not arrived whole within its deadline, however slowly it
/// trickles in. libmicrohttpd's own timeout counts idle time only, so a client sending a byte a second
/// would keep its connection forever, and enough of them would keep every other client out.
///
/// A connection is watched from its accept, and again from the end of each response (keep-alive), until
/// its next request's headers are in; a request waiting for its render is not watched (the request
/// deadline answers it). Past the deadline the connection's socket is shut down, never closed:
/// libmicrohttpd sees the end of the stream and closes the connection itself.
///
/// Invariant: `watched` is touched only under its lock. An entry's socket belongs to its connection for
/// as long as the entry exists: libmicrohttpd notifies a connection's close before it closes the socket,
/// and that notification removes the entry under the same lock, so a socket number reused by a later
/// connection is never shut down by mistake.
final class RequestDeadlines: @unchecked Sendable {
    private struct Entry {
        var socket: Int32
        /// When the request must be in; `nil` while a request is being answered.
        var deadline: ContinuousClock.Instant?
    }

    /// How long a request may take to arrive whole.
    let limit: Duration
    private let watched = Mutex<[UInt: Entry]>([:])
    private let isStopping = Atomic<Bool>(false)
    private var thread = pthread_t()
    private var isRunning = false

    init(limit: Duration) {
        self.limit = limit
    }

    /// Starts the sweeping thread; `false` when it could not be started.
    func start() -> Bool {
        guard let thread = JoinableThread.start({ [self] in sweep() }) else { return false }
        self.thread = thread
        isRunning = true
        return true
    }

    /// Stops the sweeping thread.
    func stop() {
        guard isRunning else { return }
        isStopping.store(true, ordering: .relaxed)
        pthread_join(thread, nil)
        isRunning = false
    }

    /// A connection was accepted: its first request is due within the limit.
    func opened(_ connection: OpaquePointer, socket: Int32) {
        guard socket >= 0 else { return }
        let deadline = ContinuousClock.now + limit
        watched.withLock { $0[UInt(bitPattern: connection)] = Entry(socket: socket, deadline: deadline) }
    }

    /// A request's headers are in: it is no longer watched.
    func requestArrived(on connection: OpaquePointer) {
        watched.withLock { $0[UInt(bitPattern: connection)]?.deadline = nil }
    }

    /// A response was sent: the connection's next request is due within the limit.
    func responseSent(on connection: OpaquePointer) {
        let deadline = ContinuousClock.now + limit
        watched.withLock { $0[UInt(bitPattern: connection)]?.deadline = deadline }
    }

    /// libmicrohttpd is closing the connection (its socket is still open).
    func closed(_ connection: OpaquePointer) {
        _ = watched.withLock { $0.removeValue(forKey: UInt(bitPattern: connection)) }
    }

    /// The connections watched now (for tests).
    var count: Int { watched.withLock { $0.count } }

    private func sweep() {
        while !isStopping.load(ordering: .relaxed) {
            let now = ContinuousClock.now
            watched.withLock { entries in
                for (key, entry) in entries {
                    guard let deadline = entry.deadline, deadline <= now else { continue }
                    // Shut down under the lock: the socket is still this connection's (see the invariant).
                    shutdown(entry.socket, Int32(SHUT_RDWR))
                    entries[key]?.deadline = nil
                }
            }
            usleep(50_000)
        }
    }
}
