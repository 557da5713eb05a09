/// How risky a stretch of flashing is, from safe to unsafe (ordered: ``failure`` is the worst).
public enum FlashVerdict: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// At most one flash in any one second.
    case pass
    /// Two or three flashes in a one-second window, not kept up for five seconds: within WCAG's
    /// threshold, near it.
    case warning
    /// Two or three flashes a second (or more) kept up: a second that is the fifth or later of a run of
    /// consecutive such seconds (IRIS's extended failure, reported as IRIS does once the flashing has been
    /// sustained, not back to its start).
    case extendedFailure = "extended_failure"
    /// More than three flashes (more than six transitions) of the luminance or the red kind in a
    /// one-second window: over WCAG 2.3.1's threshold.
    case failure

    private var rank: Int { Self.allCases.firstIndex(of: self)! }

    public static func < (lhs: FlashVerdict, rhs: FlashVerdict) -> Bool { lhs.rank < rhs.rank }
}

/// One second of an analysed sequence: its worst one-second window of flashes.
public struct FlashSecond: Sendable, Hashable, Codable {
    /// The second, from 0 (the sequence's first frame).
    public var second: Int
    /// Complete luminance flashes (pairs of opposing transitions) in the second's worst window.
    public var luminanceFlashes: Int
    /// Complete red flashes in the second's worst window.
    public var redFlashes: Int
    /// The largest share of the picture (0–1) that made one transition together in a frame of the second,
    /// whether or not it reached the 25 % that makes it count.
    public var area: Double
    /// The second's verdict.
    public var verdict: FlashVerdict

    /// Creates a second's entry.
    public init(second: Int, luminanceFlashes: Int, redFlashes: Int, area: Double, verdict: FlashVerdict) {
        self.second = second
        self.luminanceFlashes = luminanceFlashes
        self.redFlashes = redFlashes
        self.area = area
        self.verdict = verdict
    }

    enum CodingKeys: String, CodingKey {
        case second, area, verdict
        case luminanceFlashes = "luminance_flashes", redFlashes = "red_flashes"
    }
}

/// A run of consecutive seconds with the same verdict, other than pass.
public struct FlashSpan: Sendable, Hashable, Codable {
    /// Where it starts, seconds from the first frame.
    public var start: Double
    /// Where it ends (the end of its last second, or of the sequence).
    public var end: Double
    /// Its seconds' verdict.
    public var verdict: FlashVerdict

    /// Creates a span.
    public init(start: Double, end: Double, verdict: FlashVerdict) {
        self.start = start
        self.end = end
        self.verdict = verdict
    }
}

/// What ``FlashAnalyzer`` found: a verdict per second, the risky spans and the worst verdict.
///
/// **Counting "in any one second".** A window is one second long and ends at a transition: it holds
/// that transition and those less than a second (to the millisecond) before it. Each reported second
/// gives the worst window ending at a transition within it (a second with no transition reports 0
/// flashes). A window's flashes are its complete pairs of opposing transitions (transitions ÷ 2,
/// rounded down); more than six transitions (a fourth flash begun) is a failure, as IRIS counts. So a
/// hard cut each second is one transition and never a flash.
public struct FlashReport: Sendable, Hashable, Codable {
    /// The worst verdict of any second.
    public var verdict: FlashVerdict
    /// One entry per second of the sequence (at least one).
    public var seconds: [FlashSecond]
    /// The seconds that are not a pass, joined into spans of one verdict.
    public var spans: [FlashSpan]

    /// Creates a report from its parts.
    public init(verdict: FlashVerdict, seconds: [FlashSecond], spans: [FlashSpan]) {
        self.verdict = verdict
        self.seconds = seconds
        self.spans = spans
    }

    /// Transitions a one-second window may hold before it fails: six (three flashes).
    public static let maximumTransitions = 6
    /// Flashes a second from which a second is near the threshold (a warning), or part of an extended
    /// failure when kept up.
    public static let frequentFlashes = 2
    /// Consecutive seconds of frequent flashing that make an extended failure.
    public static let extendedSeconds = 5

    /// The verdicts of a sequence: frame times and transition times in seconds from its first frame.
    init(frameTimes: [Double], frameAreas: [Double], luminanceTransitions: [Double], redTransitions: [Double],
         duration: Double) {
        // A container may claim far more than its frames show: at most a second past the last frame.
        let last = frameTimes.last ?? 0
        let duration = min(duration.isFinite ? max(0, duration) : 0, last + 1)
        let secondCount = max(1, Int((duration - 1e-6).rounded(.up)), Int((frameTimes.last ?? 0).rounded(.down)) + 1)
        let luminance = Self.worstWindows(luminanceTransitions, seconds: secondCount)
        let red = Self.worstWindows(redTransitions, seconds: secondCount)
        var areas = [Double](repeating: 0, count: secondCount)
        for (time, area) in zip(frameTimes, frameAreas) {
            let second = min(secondCount - 1, max(0, Int(time.rounded(.down))))
            areas[second] = max(areas[second], area)
        }
        let isFailure = (0..<secondCount).map { luminance[$0] > Self.maximumTransitions || red[$0] > Self.maximumTransitions }
        let isFrequent = (0..<secondCount).map {
            isFailure[$0] || luminance[$0] / 2 >= Self.frequentFlashes || red[$0] / 2 >= Self.frequentFlashes
        }
        // Seconds that are the fifth or later of a run of frequent ones: the flashing has been kept up.
        var isSustained = [Bool](repeating: false, count: secondCount)
        var run = 0
        for second in 0..<secondCount {
            run = isFrequent[second] ? run + 1 : 0
            isSustained[second] = run >= Self.extendedSeconds
        }
        seconds = (0..<secondCount).map { second in
            let verdict: FlashVerdict = isFailure[second] ? .failure
                : isSustained[second] ? .extendedFailure : isFrequent[second] ? .warning : .pass
            return FlashSecond(second: second, luminanceFlashes: luminance[second] / 2, redFlashes: red[second] / 2,
                               area: (areas[second] * 1000).rounded() / 1000, verdict: verdict)
        }
        verdict = seconds.map(\.verdict).max() ?? .pass
        var spans: [FlashSpan] = []
        for entry in seconds where entry.verdict != .pass {
            let start = Double(entry.second), end = min(Double(entry.second + 1), max(duration, start))
            if let last = spans.last, last.verdict == entry.verdict, last.end >= start {
                spans[spans.count - 1].end = max(last.end, end)
            } else {
                spans.append(FlashSpan(start: start, end: max(end, start), verdict: entry.verdict))
            }
        }
        self.spans = spans
    }

    /// For each second, the most transitions in a one-second window ending at a transition in it.
    static func worstWindows(_ transitions: [Double], seconds: Int) -> [Int] {
        var worst = [Int](repeating: 0, count: seconds)
        var first = 0
        for (index, time) in transitions.enumerated() {
            // The window (time − 1 s, time], to the millisecond: a transition exactly a second earlier is out.
            while transitions[first] <= time - 1 + 1e-3 { first += 1 }
            let second = min(seconds - 1, max(0, Int(time.rounded(.down))))
            worst[second] = max(worst[second], index - first + 1)
        }
        return worst
    }
}
