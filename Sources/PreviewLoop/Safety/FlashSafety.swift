/// What a writer of autoplaying loops does about photosensitive flashes in what it writes.
public enum FlashSafety: String, Sendable, Hashable, CaseIterable {
    /// Analyse the frames as written, repeated as a player repeats the loop (the seam included), and
    /// report the verdict; the file is written either way.
    case check
    /// No analysis.
    case off
}

/// Analyses a loop's frames as they are written and then as a player repeats them: the first pass,
/// then the loop again from its start until ``seamSpan`` after the seam, so that the jump from the last
/// frame to the first is judged with what comes before and after it, every pass.
///
/// Keeps the analysis cells (not the pictures) of the first ``seamSpan`` of the loop for the repeat.
struct LoopFlashCheck {
    /// How long after the first seam the repeat is followed: five seconds for an extended failure, and a
    /// second for its windows.
    static let seamSpan = 6.0

    private var analyzer = FlashAnalyzer()
    private var kept: [FlashSample] = []
    private var frameCount = 0
    private let framesPerSecond: Double

    init(framesPerSecond: Int) {
        self.framesPerSecond = Double(framesPerSecond)
    }

    /// The next frame written.
    mutating func add(_ image: RGBImage) {
        let sample = FlashSample(image)
        let time = Double(frameCount) / framesPerSecond
        analyzer.add(sample, at: time)
        if time < Self.seamSpan { kept.append(sample) }
        frameCount += 1
    }

    /// The report over the written pass, lasting `playTime`, then its repeat through the seam.
    func report(playTime: Double) -> FlashReport {
        var analyzer = analyzer
        guard frameCount > 0, playTime > 0 else { return analyzer.report() }
        let end = playTime + Self.seamSpan
        var offset = playTime
        repeating: while true {
            for (index, sample) in kept.enumerated() {
                let time = offset + Double(index) / framesPerSecond
                if time >= end { break repeating }
                analyzer.add(sample, at: time)
            }
            // A loop longer than the span: what was kept covers the span after the seam.
            if kept.count < frameCount { break }
            offset += playTime
        }
        return analyzer.report(duration: min(end, analyzer.lastTime + 1 / framesPerSecond))
    }
}
