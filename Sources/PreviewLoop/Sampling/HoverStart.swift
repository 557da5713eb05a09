/// Where a hover preview's window starts: at the poster (so the preview opens on the picture the
/// poster shows, past a title card or a fade), or at a time.
public enum HoverStart: Sendable, Hashable, CustomStringConvertible {
    /// At the poster's frame: the first good frame of the poster's window, as `thumb --at auto` picks it
    /// (in a batch, the recipe's poster, however it is chosen).
    case poster
    /// At a time: seconds or a percentage of the duration.
    case at(TimePosition)

    /// Parses `poster` or a time as ``TimePosition/init(parsing:)`` reads it (`12.5`, `mm:ss`,
    /// `hh:mm:ss.ms`, `10%`).
    public init?(parsing text: String) {
        if text == "poster" {
            self = .poster
        } else if let time = TimePosition(parsing: text) {
            self = .at(time)
        } else {
            return nil
        }
    }

    /// `poster`, `12.5` (seconds) or `10%`.
    public var description: String {
        switch self {
        case .poster: "poster"
        case .at(let time): time.description
        }
    }
}
