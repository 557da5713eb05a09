import PreviewLoop
import Synchronization

/// Receives the loop's frames on the loop's thread: counts them and writes the timing log and the
/// frames directory.
///
/// Invariant: all state lives in `state` and is touched only under its lock. The loop delivers frames
/// one at a time, so the lock is never contended in practice; it makes the main thread's reads after
/// `wait()` (and a stop from a signal handler's thread) well-defined.
final class LoopRecorder: Sendable {
    /// What the recorder holds.
    private struct State {
        /// The open log, until committed or discarded.
        var log: TimingLog?
        /// Frames recorded so far.
        var frameCount = 0
        /// Passes seen so far (the highest pass number).
        var passCount = 0
        /// The first write failure; once set, nothing more is recorded.
        var failure: PreviewLoopError?
        /// Capture times not yet reached.
        var pendingCaptures: [Double] = []
        /// Stills written so far.
        var captureCount = 0
        /// Recorded frames written so far.
        var recordCount = 0
        /// The wall times of the first and the last frame handed over.
        var firstWall: Duration?
        var lastWall: Duration?
    }

    /// What `--capture-at` and `--record` ask for: stills at wall times, and every frame of a
    /// wall-time span, written to a directory.
    struct Shutter: Sendable {
        /// Wall times (seconds from the loop's start), sorted.
        var captureTimes: [Double] = []
        /// The recorded wall-time span.
        var recordSpan: Range<Double>?
        /// Where they are written.
        var directory: String?
    }

    /// The format of frame files, stills and recordings (`--format`): PPM by default.
    private let format: ImageFileFormat

    /// Everything mutable, under one lock.
    private let state: Mutex<State>
    /// The directory frames are written to, if any.
    private let framesDirectory: String?
    /// Stills and recordings to make.
    private let shutter: Shutter

    /// Creates a recorder writing to an open log and a frames directory that exists, either optional.
    init(log: sending TimingLog?, framesDirectory: String?, shutter: Shutter = Shutter(), format: ImageFileFormat = .ppm) {
        state = Mutex(State(log: log, pendingCaptures: shutter.captureTimes))
        self.format = format
        self.framesDirectory = framesDirectory
        self.shutter = shutter
    }

    /// Records a frame: a log row and a `PPP-FFFFF.ppm` file (or `.png`, `.jpg`).
    ///
    /// - Returns: `false` when writing failed (the failure is kept); the caller should stop the loop.
    func record(_ frame: VideoFrame) -> Bool {
        state.withLock { state in
            guard state.failure == nil else { return false }
            do {
                try state.log?.append(frame)
                if let framesDirectory {
                    let path = framesDirectory + "/" + Self.frameFileName(pass: frame.loopIndex + 1, index: frame.index + 1, format: format)
                    try AtomicFile.write(format.encode(frame.image), to: path)
                }
                if let directory = shutter.directory {
                    // A still is the first frame presented at or after its wall time, as capture() gives.
                    let wall = frame.timings.wallTime.seconds
                    while let next = state.pendingCaptures.first, next <= wall {
                        state.pendingCaptures.removeFirst()
                        state.captureCount += 1
                        let name = "capture-\(DecimalText.zeroPadded(state.captureCount, 2)).\(format.fileExtensions[0])"
                        try AtomicFile.write(format.encode(frame.image), to: directory + "/" + name)
                    }
                    if let span = shutter.recordSpan, span.contains(wall) {
                        let name = "record-" + Self.frameFileName(pass: frame.loopIndex + 1, index: frame.index + 1, format: format)
                        try AtomicFile.write(format.encode(frame.image), to: directory + "/" + name)
                        state.recordCount += 1
                    }
                }
            } catch {
                state.failure = error as? PreviewLoopError
                    ?? PreviewLoopError(.outputNotWritable, Format.oneLine(String(describing: error)))
                return false
            }
            state.frameCount += 1
            state.passCount = max(state.passCount, frame.loopIndex + 1)
            if state.firstWall == nil { state.firstWall = frame.timings.wallTime }
            state.lastWall = frame.timings.wallTime
            return true
        }
    }

    /// `PPP-FFFFF.ppm`: the pass and the frame within it, from 1, zero-padded to 3 and 5 digits, with
    /// the format's usual extension.
    static func frameFileName(pass: Int, index: Int, format: ImageFileFormat = .ppm) -> String {
        DecimalText.zeroPadded(pass, 3) + "-" + DecimalText.zeroPadded(index, 5) + "." + format.fileExtensions[0]
    }

    /// The first failure to write a frame or a log row, if any.
    var failure: PreviewLoopError? {
        state.withLock { $0.failure }
    }

    /// The frames recorded, and the passes they came from.
    var counts: (frames: Int, passes: Int) {
        state.withLock { ($0.frameCount, $0.passCount) }
    }

    /// Frames delivered per second of wall time from the first hand-over to the last: (frames − 1) /
    /// (last − first), 0 with fewer than two frames, on wall times in microseconds: the same definition
    /// and resolution as `timing`'s "fps delivered" over the log, so the two print the same figure.
    var deliveredRate: Double {
        state.withLock { state in
            guard state.frameCount > 1, let first = state.firstWall, let last = state.lastWall else { return 0 }
            // At the log's resolution (microseconds), so the figure is exactly what `timing` computes.
            func logged(_ wall: Duration) -> Double { (Format.seconds(wall) * 1e6).rounded() / 1e6 }
            let span = logged(last) - logged(first)
            return span > 0 ? Double(state.frameCount - 1) / span : 0
        }
    }

    /// The `--capture-at` times no frame reached, and how many frames `--record` wrote.
    var shutterOutcome: (missedCaptures: [Double], recorded: Int) {
        state.withLock { ($0.pendingCaptures, $0.recordCount) }
    }

    /// Finishes the log: renamed into place (or already on standard output).
    func commitLog() throws {
        try state.withLock { state in
            try state.log?.commit()
            state.log = nil
        }
    }

    /// Abandons the log: nothing appears at its path.
    func discardLog() {
        state.withLock { state in
            state.log?.discard()
            state.log = nil
        }
    }
}
