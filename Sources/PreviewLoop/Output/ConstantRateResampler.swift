/// Turns frames with presentation times into a constant frame rate: output frame `k`, at
/// `t = k / framesPerSecond`, is the source frame displayed at `t` (the last one presented at or
/// before it). Source frames come in presentation order; each output frame is decided as soon as
/// the next source frame shows where the previous one stops. Pure and streaming.
struct ConstantRateResampler {
    /// The output frame rate.
    let framesPerSecond: Int
    /// Output frames decided so far.
    private(set) var outputCount = 0

    /// Timestamps this close are the same instant (source times are rounded to the nanosecond).
    private static let tolerance = 1e-6

    init(framesPerSecond: Int) {
        precondition(framesPerSecond > 0)
        self.framesPerSecond = framesPerSecond
    }

    /// How many output instants lie strictly before `seconds`.
    func instants(before seconds: Double) -> Int {
        max(0, Int((seconds * Double(framesPerSecond) - Self.tolerance).rounded(.up)))
    }

    /// A source frame presented at `seconds` arrived: returns how many more output frames go to the
    /// frame before it (they are the instants before this one).
    mutating func advance(to seconds: Double) -> Int {
        let total = instants(before: seconds)
        defer { outputCount = max(outputCount, total) }
        return max(0, total - outputCount)
    }

    /// The stream ended after `length` seconds: how many output frames the last source frame still
    /// fills, and how long the very last output frame lasts.
    mutating func finish(length: Double) -> (count: Int, lastDuration: Double) {
        let total = max(1, instants(before: length))
        let remaining = max(0, total - outputCount)
        outputCount = max(outputCount, total)
        let lastStart = Double(outputCount - 1) / Double(framesPerSecond)
        return (remaining, min(1 / Double(framesPerSecond), max(0, length - lastStart)))
    }
}
