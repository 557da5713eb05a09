/// How a sheet or strip chooses the times of its tiles.
public enum TilePick: String, Sendable, CaseIterable {
    /// The middles of equal slices of the span (what sheets and strips always did).
    case even
    /// The first frame of each shot, strongest cuts first, filled in evenly when shots are fewer than
    /// tiles, without near-identical tiles.
    case scenes
}

/// One chosen tile time and why.
public struct TileChoice: Hashable, Sendable {
    /// Why a tile is where it is.
    public enum Reason: String, Sendable {
        /// `--pick even`: the middle of an equal slice.
        case even
        /// The start of the span: the first shot.
        case start
        /// The first frame of a shot after a detected cut.
        case cut
        /// Filled in: the middle of the longest stretch without a tile.
        case fill
        /// A sheet with fewer distinct tiles than places: a frame repeating a shot shown, the spare
        /// spread farthest in time from the other tiles, completing the last row.
        case spread
    }
    /// The time asked for.
    public var time: Double
    public var reason: Reason
    /// The cut score, for `.cut`.
    public var score: Double?

    public init(time: Double, reason: Reason, score: Double? = nil) {
        self.time = time
        self.reason = reason
        self.score = score
    }
}

/// A tile left out as a near-duplicate of a kept one.
public struct DroppedTile: Hashable, Sendable {
    public var choice: TileChoice
    /// The time of the frame it showed.
    public var frameTime: Double
    /// The frame time of the kept tile it repeats.
    public var duplicateOf: Double
    /// Their ``LumaThumbnail/normalisedDifference(from:)``.
    public var distance: Double
}

/// The tiles chosen for a sheet or strip: their frames in time order and what was chosen and why.
public struct TilePlan: Sendable {
    public var pick: TilePick
    /// The kept tiles' choices, in the order of ``frames``.
    public var tiles: [TileChoice]
    /// The kept frames.
    public var frames: [VideoFrame]
    /// Tiles dropped as near-duplicates.
    public var dropped: [DroppedTile]
    /// The cut search, for `.scenes`.
    public var scan: SceneScan?
    /// The frames of the tiles dropped as near-duplicates (not those inside a transition): what a sheet
    /// completes its last row with (`fillRows(columns:rows:)`).
    var spares: [(choice: TileChoice, frame: VideoFrame)] = []
    /// For a sheet whose distinct tiles fill fewer places than asked (`fillRows(columns:rows:)`): the
    /// grid asked for and the grid drawn, columns by rows; `nil` otherwise.
    public var gridAsked: Size?
    public var grid: Size?
}

extension TileChoice {
    /// The scene tile times before sampling: the span's start, then the strongest `count - 1` cuts,
    /// then fills in the middles of the longest stretches without a tile, in time order.
    public static func sceneChoices(cuts: [SceneCut], count: Int, start: Double, length: Double) -> [TileChoice] {
        guard count > 0 else { return [] }
        let end = start + length
        let strongest = cuts.filter { $0.time > start && $0.time < end }
            .sorted { $0.score != $1.score ? $0.score > $1.score : $0.time < $1.time }
            .prefix(count - 1)
        var choices = [TileChoice(time: start, reason: .start)]
            + strongest.map { TileChoice(time: $0.time, reason: .cut, score: $0.score) }
        let fills = fillTimes(count - choices.count, among: choices.map(\.time), start: start, end: end)
        choices += fills.map { TileChoice(time: $0, reason: .fill) }
        return choices.sorted { $0.time < $1.time }
    }

    /// `count` times, each the middle of the longest stretch of `start...end` between `taken` times
    /// and the ones already added.
    static func fillTimes(_ count: Int, among taken: [Double], start: Double, end: Double) -> [Double] {
        guard count > 0 else { return [] }
        var times = (taken + [start, end]).sorted()
        var added: [Double] = []
        for _ in 0..<count {
            var best = 0
            for index in 1..<times.count where times[index] - times[index - 1] > times[best + 1] - times[best] {
                best = index - 1
            }
            let middle = (times[best] + times[best + 1]) / 2
            times.insert(middle, at: best + 1)
            added.append(middle)
        }
        return added
    }
}
