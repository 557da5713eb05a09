import Glibc
import Synchronization

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

/// Runs a blocking library call (opening, demuxing, decoding, encoding) for an `async` caller: on a
/// thread of its own, never on Swift concurrency's cooperative pool, with the awaiting task's
/// cancellation reaching FFmpeg.
///
/// The one cancellation outcome of every `async` entry point: when the awaiting task is cancelled
/// before the work has finished, the call throws ``PreviewLoopError/Code/cancelled`` (whatever the
/// interrupted work itself reported), after the work has stopped and released what it held — its
/// thread, its FFmpeg objects and any temporary file. Work that finished before the cancellation
/// arrived returns its result.
enum BlockingCall {
    /// Receives the tally of each call started in the task (tests only).
    @TaskLocal static var observer: (@Sendable (LiveObjects.Tally) -> Void)?

    /// Runs `body` on a new thread named `name` and returns (or throws) what it did.
    static func run<T>(_ name: String, _ body: @escaping @Sendable () throws(PreviewLoopError) -> T) async throws(PreviewLoopError) -> T {
        if Task.isCancelled { throw PreviewLoopError(.cancelled, "cancelled before it started") }
        let scope = CancellationScope()
        // The call's threads and FFmpeg objects, counted for a test that asked (see ``observer``).
        let tally = LiveObjects.Tally()
        observer?(tally)
        let outcome: Result<UncheckedTransfer<T>, PreviewLoopError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<UncheckedTransfer<T>, PreviewLoopError>, Never>) in
                let work: @Sendable () -> Void = {
                    let result: Result<UncheckedTransfer<T>, PreviewLoopError>
                    do throws(PreviewLoopError) {
                        result = .success(UncheckedTransfer(try scope.enter(body)))
                    } catch {
                        result = .failure(error)
                    }
                    continuation.resume(returning: result)
                }
                do throws(PreviewLoopError) {
                    // The new thread takes the call's tally and scope, not the caller's thread's.
                    try LiveObjects.with(tally) { () throws(PreviewLoopError) in
                        try CancellationScope.withNone { () throws(PreviewLoopError) in
                            try NamedThread.detach(name: name, work)
                        }
                    }
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        } onCancel: {
            scope.cancel()
        }
        // The thread resumed us as its last act; its count drops right after (tests wait for it).
        switch outcome {
        case .success(let value):
            return value.value
        case .failure(let error) where scope.isCancelled:
            throw error.code == .cancelled ? error : PreviewLoopError(.cancelled, "cancelled (\(error.message))")
        case .failure(let error):
            throw error
        }
    }
}
