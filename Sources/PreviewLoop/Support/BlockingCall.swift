import Glibc
import Synchronization
internal import PreviewLoopFFmpeg

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

/// Hands a value that is not `Sendable` to another thread that becomes its only user.
///
/// `@unchecked Sendable`: the sender gives up every reference when it wraps the value.
struct UncheckedTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
