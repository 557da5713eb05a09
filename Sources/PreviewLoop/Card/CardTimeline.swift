/// Where a card's sequence is at one instant.
public enum CardPhase: Hashable, Sendable {
    /// The poster with its play button, before the tap.
    case poster
    /// The reveal runs: `progress` (0–1, after easing) of the way from poster to video; the video has
    /// played for `videoTime` seconds (it starts at the tap).
    case revealing(progress: Double, videoTime: Double)
    /// The video plays, `videoTime` seconds after the tap.
    case playing(videoTime: Double)
    /// The fade back to the poster runs, `progress` (0–1, after easing) of the way; the video goes on
    /// under it.
    case closing(progress: Double, videoTime: Double)

    /// Seconds of video played since the tap, when video shows.
    public var videoTime: Double? {
        switch self {
        case .poster: nil
        case .revealing(_, let time), .playing(let time), .closing(_, let time): time
        }
    }
}

/// The timing of a card's sequence: poster hold, reveal, play, and optional fade back, back to back.
///
/// Time 0 is the start of the poster hold; the tap comes at ``posterHold``, and the video's clock
/// starts there.
public struct CardTimeline: Hashable, Sendable {
    /// How long the poster shows before the tap.
    public var posterHold: Double
    /// The reveal's duration.
    public var revealDuration: Double
    /// How long the video plays after the reveal.
    public var playLength: Double
    /// The fade back's duration; 0 without one.
    public var closeDuration: Double
    /// The reveal's timing curve (the fade back uses it too).
    public var easing: Easing

    /// The timeline of `style`.
    public init(style: CardStyle) {
        posterHold = style.posterHold
        revealDuration = style.revealDuration
        playLength = style.playLength
        closeDuration = style.closes ? style.closeDuration : 0
        easing = style.easing
    }

    /// The whole sequence's length.
    public var duration: Double { posterHold + videoDuration }

    /// How much video the sequence shows: reveal, play and fade back.
    public var videoDuration: Double { revealDuration + playLength + closeDuration }

    /// The phase at `time` seconds from the start (clamped into the sequence; its very end is the
    /// last phase's end state).
    public func phase(at time: Double) -> CardPhase {
        let time = time.isNaN ? 0 : min(max(0, time), duration)
        guard time >= posterHold else { return .poster }
        let video = time - posterHold
        if video < revealDuration {
            return .revealing(progress: easing.progress(video / revealDuration), videoTime: video)
        }
        if video < revealDuration + playLength || closeDuration == 0 {
            return .playing(videoTime: video)
        }
        let closing = (video - revealDuration - playLength) / closeDuration
        return .closing(progress: easing.progress(closing), videoTime: video)
    }
}

/// The card's pure geometry: the reveal disc and the corner shape.
public enum CardGeometry {
    /// The radius of the reveal disc at `progress` (0–1, after easing) on a frame of `size`:
    /// `(0.05 + 0.95 × progress) × diagonal / 2`, so that the disc starts at 5 % of the diagonal across
    /// and ends covering the whole frame.
    public static func revealRadius(progress: Double, size: Size) -> Double {
        let diagonal = (Double(size.width) * Double(size.width) + Double(size.height) * Double(size.height)).squareRoot()
        return (0.05 + 0.95 * min(1, max(0, progress))) * diagonal / 2
    }

    /// The reveal disc at `progress`, centred on the frame.
    public static func revealDisc(progress: Double, size: Size) -> Shape {
        .disc(center: center(of: size), radius: revealRadius(progress: progress, size: size))
    }

    /// The frame's rounded outline for a corner radius.
    public static func outline(size: Size, cornerRadius: Double) -> Shape {
        .roundedRectangle(origin: Point(x: 0, y: 0), width: Double(size.width), height: Double(size.height),
                          cornerRadius: cornerRadius)
    }

    /// The centre of a frame of `size`.
    public static func center(of size: Size) -> Point {
        Point(x: Double(size.width) / 2, y: Double(size.height) / 2)
    }
}
