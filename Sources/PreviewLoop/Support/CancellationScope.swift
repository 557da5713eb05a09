import Glibc
import Synchronization
internal import PreviewLoopFFmpeg

/// The interrupters of one blocking call run by ``BlockingCall``: every input the call opens registers
/// its interrupter here, so cancelling the awaiting task interrupts all of them at once (I/O through
/// FFmpeg's interrupt callback, decoding at the next frame).
///
/// Found through a thread-local slot of the thread running the call. Thread-safe: the list and the flag
/// are behind one mutex; interrupters are cancelled outside it.
final class CancellationScope: Sendable {
    private struct State {
        var isCancelled = false
        var members: [Interrupter] = []
    }
    private let state = Mutex(State())

    /// Interrupts every registered interrupter, and every one registered from now on.
    func cancel() {
        let members = state.withLock { state in
            state.isCancelled = true
            return state.members
        }
        for member in members { member.cancel() }
    }

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Adds `interrupter` to those ``cancel()`` interrupts (cancelling it at once when it came late).
    func register(_ interrupter: Interrupter) {
        let cancelled = state.withLock { state in
            state.members.append(interrupter)
            return state.isCancelled
        }
        if cancelled { interrupter.cancel() }
    }

    /// Runs `body` with no current scope (a new call's thread must not inherit the caller's).
    static func withNone<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, nil)
        defer { pthread_setspecific(key, previous) }
        return try body()
    }

    /// The scope of the call running on this thread, if any.
    static var current: CancellationScope? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<CancellationScope>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Runs `body` with this scope as the thread's current one.
    func enter<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let previous = pthread_getspecific(Self.key)
        pthread_setspecific(Self.key, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(Self.key, previous) }
        return try body()
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
}

extension Interrupter {
    /// A new interrupter that the current ``BlockingCall`` (if the calling thread runs one) cancels
    /// when its task is cancelled.
    static func forCurrentCall() -> Interrupter {
        let interrupter = Interrupter()
        CancellationScope.current?.register(interrupter)
        return interrupter
    }
}

/// Cancels one synchronous library call run on a thread of the caller's own (a server's render worker):
/// the inputs the call opens inside ``run(_:)`` are interrupted by ``cancel()``, I/O at once through
/// FFmpeg's interrupt callback and decoding at the next frame, and the call throws
/// ``PreviewLoopError/Kind/cancelled``.
package final class WorkCancellation: Sendable {
    private let scope = CancellationScope()

    package init() {}

    /// Runs `body` on this thread under this cancellation.
    package func run<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try scope.enter(body)
    }

    /// Interrupts the call running under it, and any started under it from now on.
    package func cancel() { scope.cancel() }

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool { scope.isCancelled }

    /// Whether the call running on this thread has been cancelled (`false` outside ``run(_:)``).
    package static var isCurrentCancelled: Bool { CancellationScope.current?.isCancelled ?? false }
}
