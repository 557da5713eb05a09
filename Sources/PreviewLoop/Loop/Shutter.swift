import FoundationEssentials
import Synchronization

/// Where recorded frames go: every frame presented between `startRecording` and `stopRecording`.
///
/// `write(_:)` is called on the loop's thread, in presentation order; `finish()` once, when recording
/// stops (by `stopRecording()`, by a new `startRecording`, or when the loop ends).
public protocol FrameSink: AnyObject, Sendable {
    /// Takes one presented frame.
    func write(_ frame: VideoFrame) throws(PreviewLoopError)
    /// Completes the output (closes files, writes indexes).
    func finish() throws(PreviewLoopError)
}

/// Records frames as images in a directory: `PPP-FFFFF.ppm` (pass and index, 1-based) plus
/// `frames.csv` (file, pass, index, presentation_time, wall_time) written when recording stops.
///
/// Each image is written atomically. Thread-safe: the index is guarded by a mutex.
public final class ImageDirectorySink: FrameSink {
    /// The directory written to.
    public let directory: String
    private let rows = Mutex<[String]>([])

    /// Creates the sink, creating the directory if needed.
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when the directory cannot be made.
    public init(directory: String) throws(PreviewLoopError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw PreviewLoopError(.outputNotWritable, "\(directory): cannot create the directory")
        }
        self.directory = directory
    }

    /// Writes the frame as `PPP-FFFFF.ppm`.
    public func write(_ frame: VideoFrame) throws(PreviewLoopError) {
        let name = DecimalText.zeroPadded(frame.loopIndex + 1, 3) + "-" + DecimalText.zeroPadded(frame.index + 1, 5) + ".ppm"
        try AtomicFile.write(PPM.encode(frame.image), to: directory + "/" + name)
        let row = "\(name),\(frame.loopIndex + 1),\(frame.index + 1),\(DecimalText.fixed(frame.presentationTime.seconds, 6)),"
            + DecimalText.fixed(frame.timings.wallTime.seconds, 6)
        rows.withLock { $0.append(row) }
    }

    /// Writes `frames.csv`.
    public func finish() throws(PreviewLoopError) {
        let text = (["file,pass,index,presentation_time,wall_time"] + rows.withLock { $0 }).joined(separator: "\n") + "\n"
        try AtomicFile.write(Array(text.utf8), to: directory + "/frames.csv")
    }
}

/// The shutter of a running loop: stills of the next presented frame and recordings of spans.
///
/// Thread-safe: requests come from any thread, frames from the loop's thread; all state is guarded
/// by one mutex, and sinks and continuations are called outside it.
final class Shutter: Sendable {
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
