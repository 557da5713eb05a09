/// When a poster is taken, as a user asks for it (`thumb --at`, a batch poster's `"at"`).
public enum PosterTime: Sendable, Hashable, CustomStringConvertible {
    /// The first good frame of a window (``FrameSampler/posterFrame(in:size:mode:)-4hyr5``).
    case auto
    /// The most representative good frame of the whole clip (``FrameSampler/bestPosterFrame(size:mode:)-42f28``).
    case best
    /// The frame displayed at a time (seconds or a percentage of the duration), kept within the clip.
    case at(TimePosition)

    /// Parses `auto`, `best` or a time as ``TimePosition/init(parsing:)`` reads it (`12.5`, `mm:ss`,
    /// `hh:mm:ss.ms`, `10%`).
    public init?(parsing text: String) {
        switch text {
        case "auto": self = .auto
        case "best": self = .best
        default:
            guard let time = TimePosition(parsing: text) else { return nil }
            self = .at(time)
        }
    }

    /// `auto`, `best`, `12.5` (seconds) or `10%`.
    public var description: String {
        switch self {
        case .auto: "auto"
        case .best: "best"
        case .at(let time): time.description
        }
    }
}
