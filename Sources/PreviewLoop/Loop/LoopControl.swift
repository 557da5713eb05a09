internal import PreviewLoopFFmpeg
import Dispatch
import Synchronization

/// Stops a running loop from any thread: cancels FFmpeg's blocking I/O (through the interrupter) and
/// wakes a realtime wait early.
///
/// `@unchecked Sendable`: the only mutable state is the interrupter's atomics; `condition` is used
/// solely to sleep and to wake sleepers, never to guard data.
final class LoopControl: @unchecked Sendable {
    let interrupter = Interrupter()
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

/// A handle on a loop started with ``PreviewLoop/start(loops:onFrame:onCompletion:)``.
public final class PreviewLoopHandle: Sendable {
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
    public func capture() async throws -> VideoFrame { try await control.frameTap.capture() }

    /// Sends every frame presented from now on to `sink` (finishing an earlier recording first).
    public func startRecording(to sink: any FrameSink) throws { try control.frameTap.startRecording(to: sink) }

    /// Stops sending frames and finishes the sink; rethrows a write error the recording met.
    public func stopRecording() throws { try control.frameTap.stopRecording() }

    /// Blocks the calling thread until the loop has finished; rethrows its error, if any.
    public func wait() throws {
        done.wait()
        done.signal()          // let other waiters through too
        if let error = outcome.error { throw error }
    }

    func finish(_ error: (any Error)?) {
        outcome.error = error
        done.signal()
    }
}

/// Holds a loop's final error. `@unchecked Sendable`: written once by the loop thread before the
/// semaphore is signalled, read only after waiting on it.
private final class OutcomeBox: @unchecked Sendable {
    var error: (any Error)?
}
