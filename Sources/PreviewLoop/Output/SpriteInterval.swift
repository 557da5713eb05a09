/// How far apart scrub-bar thumbnails are: chosen from the clip's duration (``auto``), a fixed number
/// of seconds, or a number of thumbnails over the clip.
public enum SpriteInterval: Sendable, Hashable, CustomStringConvertible {
    /// About ``autoThumbnails`` thumbnails for a clip shorter than ``longClip`` seconds and
    /// ``autoThumbnailsLong`` for a longer one (as Mux's storyboards choose), never closer than one
    /// frame; ``fallback`` seconds when the duration is unknown.
    case auto
    /// One thumbnail per this many seconds, above 0.
    case every(Double)
    /// This many thumbnails spread over the clip (at least 1), never closer than one frame.
    case count(Int)

    /// Thumbnails ``auto`` gives a clip shorter than ``longClip``.
    public static let autoThumbnails = 50
    /// Thumbnails ``auto`` gives a clip of ``longClip`` or more.
    public static let autoThumbnailsLong = 100
    /// The duration (15 minutes) from which ``auto`` gives ``autoThumbnailsLong``.
    public static let longClip = 900.0
    /// The interval ``auto`` and ``count(_:)`` use when the duration is unknown (a live stream, a pipe).
    public static let fallback = 10.0

    /// Parses `auto` or a time above 0 as ``TimePosition/init(parsing:)`` reads it (`2.5`, `mm:ss`),
    /// no percentage.
    public init?(parsing text: String) {
        if text == "auto" {
            self = .auto
        } else if case .seconds(let value)? = TimePosition(parsing: text), value > 0, value.isFinite {
            self = .every(value)
        } else {
            return nil
        }
    }

    /// The interval in seconds for a clip of `duration` (nil when unknown) whose frames are
    /// `frameInterval` apart: a chosen interval is rounded to the microsecond and at least one frame.
    public func seconds(duration: Double?, frameInterval: Double) -> Double {
        let tiles: Int
        switch self {
        case .every(let seconds): return seconds
        case .auto:
            guard let duration, duration > 0 else { return Self.fallback }
            tiles = duration < Self.longClip ? Self.autoThumbnails : Self.autoThumbnailsLong
        case .count(let count):
            tiles = max(1, count)
        }
        guard let duration, duration > 0, duration.isFinite else { return Self.fallback }
        let interval = ((duration / Double(tiles)) * 1e6).rounded() / 1e6
        return max(interval, frameInterval > 0 ? frameInterval : 1e-3)
    }

    /// `auto`, `10.0` (seconds) or `count=50`.
    public var description: String {
        switch self {
        case .auto: "auto"
        case .every(let seconds): "\(seconds)"
        case .count(let count): "count=\(count)"
        }
    }
}
