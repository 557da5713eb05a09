import FoundationEssentials
import Synchronization

/// What taps a running loop's presented frames (its "shutter"): stills of the next presented frame
/// and recordings of spans.
///
/// Thread-safe: requests come from any thread, frames from the loop's thread; all state is guarded
/// by one mutex, and sinks and continuations are called outside it.
final class FrameTap: Sendable {
    private struct State {
        var captures: [CheckedContinuation<Result<VideoFrame, PreviewLoopError>, Never>] = []
        var sink: (any FrameSink)?
        var isClosed = false
        var failure: PreviewLoopError?
    }
    private let state = Mutex(State())

    /// The next frame presented (or an error when the loop ends first).
    func capture() async throws(PreviewLoopError) -> VideoFrame {
        try await withCheckedContinuation { continuation in
            let closed = state.withLock { state -> Bool in
                if state.isClosed { return true }
                state.captures.append(continuation)
                return false
            }
            if closed { continuation.resume(returning: .failure(PreviewLoopError(.cancelled, "the loop has ended"))) }
        }.get()
    }

    /// Starts sending presented frames to `sink`, finishing any earlier recording first.
    func startRecording(to sink: any FrameSink) throws(PreviewLoopError) {
        let previous = state.withLock { state -> (any FrameSink)? in
            let previous = state.sink
            state.sink = state.isClosed ? nil : sink
            return previous
        }
        try previous?.finish()
    }

    /// Stops recording and finishes the sink; rethrows a write error the recording met.
    func stopRecording() throws(PreviewLoopError) {
        let (sink, failure) = state.withLock { state -> ((any FrameSink)?, PreviewLoopError?) in
            defer { state.sink = nil; state.failure = nil }
            return (state.sink, state.failure)
        }
        try sink?.finish()
        if let failure { throw failure }
    }

    /// Called on the loop's thread for each presented frame.
    func presented(_ frame: VideoFrame) {
        let (captures, sink) = state.withLock { state -> ([CheckedContinuation<Result<VideoFrame, PreviewLoopError>, Never>], (any FrameSink)?) in
            defer { state.captures.removeAll() }
            return (state.captures, state.sink)
        }
        for capture in captures { capture.resume(returning: .success(frame)) }
        guard let sink else { return }
        do {
            try sink.write(frame)
        } catch {
            // Recording stops at the first failure; stopRecording() reports it.
            state.withLock { state in
                if state.sink === sink { state.sink = nil; state.failure = error }
            }
        }
    }

    /// The loop ended: pending captures fail, a recording is finished.
    func close() {
        let (captures, sink) = state.withLock { state -> ([CheckedContinuation<Result<VideoFrame, PreviewLoopError>, Never>], (any FrameSink)?) in
            state.isClosed = true
            defer { state.captures.removeAll(); state.sink = nil }
            return (state.captures, state.sink)
        }
        for capture in captures { capture.resume(returning: .failure(PreviewLoopError(.cancelled, "the loop ended before another frame"))) }
        try? sink?.finish()
    }
}
