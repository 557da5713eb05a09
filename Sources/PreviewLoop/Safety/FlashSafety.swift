/// What a writer of autoplaying loops does about photosensitive flashes in what it writes.
public enum FlashSafety: String, Sendable, Hashable, CaseIterable {
    /// Analyse the frames as written, repeated as a player repeats the loop (the seam included), and
    /// report the verdict; the file is written either way.
    case check
    /// Move the loop window to the nearest one (to the start asked for) whose frames, played on repeat
    /// through their seam, are below an extended failure, reading the clip once; the frames written are
    /// then checked as with ``check``. When no window within ``FlashAvoidance/searchReach`` of the start
    /// is safe, nothing is written and the call throws ``PreviewLoopError/Code/unsafeFlashes``.
    case avoid
    /// No analysis.
    case off
}

/// Where ``FlashSafety/avoid`` put a loop window.
public struct FlashAvoidance: Sendable, Hashable {
    /// How far from the start asked for a window may move, either way: 10 seconds.
    public static let searchReach = 10.0
    /// Candidate windows start about this far apart: a quarter of a second, rounded to whole frames of
    /// the output (4 frames = 0.267 s at 15 fps; one frame at 5 fps or less).
    public static let searchStep = 0.25

    /// The window's start that was asked for, from the stream's own start.
    public var requestedStart: Duration
    /// The start of the window written: the requested one when it is safe.
    public var start: Duration
    /// How many candidate windows were analysed to find it.
    public var windowsChecked: Int

    /// Creates a record of a window's move.
    public init(requestedStart: Duration, start: Duration, windowsChecked: Int) {
        self.requestedStart = requestedStart
        self.start = start
        self.windowsChecked = windowsChecked
    }

    /// Whether the window was moved from where it was asked for.
    public var isMoved: Bool { start != requestedStart }
}

/// Analyses a loop's frames as they are written and then as a player repeats them: the first pass,
/// then the loop again from its start until ``seamSpan`` after the seam, so that the jump from the last
/// frame to the first is judged with what comes before and after it, every pass.
///
/// Keeps the analysis cells (not the pictures) of the first ``seamSpan`` of the loop for the repeat.
package struct LoopFlashCheck: Sendable {
    /// How long after the first seam the repeat is followed: five seconds for an extended failure, and a
    /// second for its windows.
    static let seamSpan = 6.0

    private var analyzer = FlashAnalyzer()
    /// The first ``seamSpan`` of the loop: each frame's cells and time from the loop's start.
    private var kept: [(sample: FlashSample, time: Double)] = []
    private var frameCount = 0
    private var lastTime = 0.0
    private let framesPerSecond: Double

    /// A check of frames at a constant rate (`add(_:)`), or of timed frames when `framesPerSecond`
    /// is 0 (`add(_:at:)`).
    package init(framesPerSecond: Int) {
        self.framesPerSecond = Double(framesPerSecond)
    }

    /// The next frame written.
    mutating func add(_ image: RGBImage) {
        add(FlashSample(image))
    }

    /// The next frame written, already reduced.
    mutating func add(_ sample: FlashSample) {
        add(sample, at: Double(frameCount) / framesPerSecond)
    }

    /// The next frame, shown at `time` seconds from the loop's start.
    package mutating func add(_ sample: FlashSample, at time: Double) {
        analyzer.add(sample, at: time)
        if time < Self.seamSpan { kept.append((sample, time)) }
        frameCount += 1
        lastTime = time
    }

    /// Whether no frame was added.
    package var isEmpty: Bool { frameCount == 0 }

    /// The report over the written pass, lasting `playTime`, then its repeat through the seam.
    package func report(playTime: Double) -> FlashReport {
        var analyzer = analyzer
        guard frameCount > 0, playTime > 0 else { return analyzer.report() }
        let end = playTime + Self.seamSpan
        var offset = playTime
        var last = lastTime
        repeating: while true {
            for (sample, time) in kept {
                if offset + time >= end { break repeating }
                analyzer.add(sample, at: offset + time)
                last = offset + time
            }
            // A loop longer than the span: what was kept covers the span after the seam.
            if kept.count < frameCount { break }
            offset += playTime
        }
        let interval = framesPerSecond > 0 ? 1 / framesPerSecond : max(0, playTime - lastTime)
        return analyzer.report(duration: min(end, last + interval))
    }
}
