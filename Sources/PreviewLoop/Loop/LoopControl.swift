internal import PreviewLoopFFmpeg
import Dispatch
import Synchronization

/// Stops a running loop from any thread: cancels FFmpeg's blocking I/O (through the interrupter) and
/// wakes a realtime wait early.
///
/// `@unchecked Sendable`: the only mutable state is the interrupter's atomics; `condition` is used
/// solely to sleep and to wake sleepers, never to guard data.
final class LoopControl: @unchecked Sendable {
    let interrupter = Interrupter.forCurrentCall()
    /// Stills and recordings of the presented frames.
    let frameTap = FrameTap()
    private let condition = ConditionLock()
    /// Interrupters of inputs opened before the loop started, cancelled along with its own.
    private let adopted = Mutex<[Interrupter]>([])

    /// Makes ``stop()`` interrupt an input opened elsewhere too.
    func adopt(_ other: Interrupter) {
        adopted.withLock { $0.append(other) }
        if isStopped { other.cancel() }
    }

    /// Asks the loop to stop as soon as possible.
    func stop() {
        cancelIO()
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Interrupts every blocking FFmpeg call of the loop's inputs.
    func cancelIO() {
        interrupter.cancel()
        for other in adopted.withLock({ $0 }) { other.cancel() }
    }

    /// Whether ``stop()`` was called.
    var isStopped: Bool { interrupter.isCancelled }

    /// Sleeps until the monotonic `deadline` (a `ContinuousClock` instant).
    ///
    /// - Returns: `false` when woken by ``stop()``.
    func sleep(until deadline: ContinuousClock.Instant) -> Bool {
        let clock = ContinuousClock()
        condition.lock()
        defer { condition.unlock() }
        while !isStopped {
            let remaining = clock.now.duration(to: deadline)
            if remaining <= .zero { return true }
            condition.wait(timeout: remaining)
        }
        return false
    }
}

extension LoopPlayer {
    /// A handle on a loop started with ``LoopPlayer/start(loops:onFrame:onCompletion:)``.
    public final class Handle: Sendable {
        let control: LoopControl
        private let done = DispatchSemaphore(value: 0)
        private let outcome = OutcomeBox()

        init(control: LoopControl) {
            self.control = control
        }

        /// Stops decoding promptly: blocking reads are interrupted and no further frame is delivered.
        /// The completion handler still runs, with no error; a recording is finished.
        public func stop() { control.stop() }

        /// The next frame the loop presents, as a still of the live preview.
        ///
        /// - Throws: ``PreviewLoopError/Code/cancelled`` when the loop ends before presenting another frame.
        public func capture() async throws(PreviewLoopError) -> VideoFrame { try await control.frameTap.capture() }

        /// Sends every frame presented from now on to `sink` (finishing an earlier recording first).
        public func startRecording(to sink: any FrameSink) throws(PreviewLoopError) { try control.frameTap.startRecording(to: sink) }

        /// Stops sending frames and finishes the sink; rethrows a write error the recording met.
        public func stopRecording() throws(PreviewLoopError) { try control.frameTap.stopRecording() }

        /// Blocks the calling thread until the loop has finished; rethrows its error, if any.
        ///
        /// From async code use ``finished()``, which suspends instead of blocking a thread.
        public func wait() throws(PreviewLoopError) {
            done.wait()
            done.signal()          // let other waiters through too
            if let error = outcome.error { throw error }
        }

        /// Suspends until the loop has finished; rethrows its error, if any (none after ``stop()``).
        ///
        /// Cancelling the waiting task stops the loop (as ``stop()`` does) and throws
        /// ``PreviewLoopError/Code/cancelled`` once it has ended.
        public func finished() async throws(PreviewLoopError) {
            let result: PreviewLoopError? = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    outcome.whenFinished { continuation.resume(returning: $0) }
                }
            } onCancel: {
                control.stop()
            }
            if Task.isCancelled { throw PreviewLoopError(.cancelled, "the loop was cancelled") }
            if let result { throw result }
        }

        func finish(_ error: PreviewLoopError?) {
            outcome.finish(error)
            done.signal()
        }
    }
}

/// The name ``LoopPlayer/Handle`` had before it was nested in ``LoopPlayer``.
@available(*, deprecated, renamed: "LoopPlayer.Handle")
public typealias PreviewLoopHandle = LoopPlayer.Handle

/// Holds a loop's final error and the async waiters. Thread-safe: all state is behind one mutex;
/// waiters are resumed outside it.
private final class OutcomeBox: Sendable {
    private struct State {
        var isFinished = false
        var error: PreviewLoopError?
        var waiters: [@Sendable (PreviewLoopError?) -> Void] = []
    }
    private let state = Mutex(State())

    /// The loop's error, once it has finished.
    var error: PreviewLoopError? { state.withLock { $0.error } }

    func finish(_ error: PreviewLoopError?) {
        let waiters = state.withLock { state in
            state.isFinished = true
            state.error = error
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter(error) }
    }

    /// Calls `body` once the loop has finished (at once if it has).
    func whenFinished(_ body: @escaping @Sendable (PreviewLoopError?) -> Void) {
        let finished = state.withLock { state -> PreviewLoopError?? in
            if state.isFinished { return .some(state.error) }
            state.waiters.append(body)
            return .none
        }
        if let finished { body(finished) }
    }
}
