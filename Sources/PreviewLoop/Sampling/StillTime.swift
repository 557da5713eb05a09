/// Where a still asked for at a time is taken, and how a record says so: within the video's
/// ``VideoInfo/duration`` (for a truncated file, the part its data holds), so a time past the data's
/// end gives the last frame, and ``choice(accuracy:)`` says that it is not the frame asked for.
public struct StillTime: Sendable, Hashable {
    /// The time asked for, in seconds from the stream's start (a percentage already resolved).
    public var asked: Double
    /// The time the frame is taken at: `asked` kept within 0 and the video's duration.
    public var taken: Double
    /// Where the data ends when the time asked lies past it in a truncated file, else `nil`.
    public var dataEnd: Double?

    /// The still for `asked` seconds of the clip `info` describes.
    public init(asked: Double, info: VideoInfo) {
        self.asked = asked
        var taken = max(0, asked)
        if let duration = info.duration { taken = min(taken, duration) }
        self.taken = taken
        if info.isTruncated, let end = info.decodableDuration, asked > end + 1e-6 { dataEnd = end }
    }

    /// Whether the frame given is not the one asked for: the time lies past the end of a truncated file's data.
    public var isPastDataEnd: Bool { dataEnd != nil }

    /// `the time asked (exact)`, or for a time past a truncated file's data `the last frame: the data ends
    /// at 5.005 s, before the time asked (9.000 s; the file is truncated)` (`the last keyframe` with
    /// keyframe accuracy).
    public func choice(accuracy: SeekAccuracy) -> String {
        guard let dataEnd else { return "the time asked (\(accuracy.rawValue))" }
        return "the last \(accuracy == .keyframe ? "keyframe" : "frame"): the data ends at \(DecimalText.fixed(dataEnd, 3)) s, "
            + "before the time asked (\(DecimalText.fixed(asked, 3)) s; the file is truncated)"
    }
}
