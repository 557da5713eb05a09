/// The ranges of the numbers the library takes, exported so that every way in checks the same ones:
/// the CLI's options, a batch recipe's keys and the server's query parameters declare their limits
/// with these, and the library's own `validate()` and initialisers refuse values outside them.
///
/// ```swift
/// ValueRanges.stripColumns.contains(12)   // true: 1 to 1000
/// ```
public enum ValueRanges {
    /// Lossy quality, 0 (smallest) to 100 (best): JPEG, WebP, MP4 and animated WebP.
    public static let quality: ClosedRange<Int> = 0...100
    /// Frames per second of an animation (a hover preview, a card): 1 to 120.
    public static let framesPerSecond: ClosedRange<Int> = 1...120
    /// Frames in a contact strip: 1 to 1000.
    public static let stripCount: ClosedRange<Int> = 1...1000
    /// Tiles per row of a contact strip: 1 to 1000 (more than the strip's count is reduced to it).
    public static let stripColumns: ClosedRange<Int> = 1...1000
    /// Pixels between the tiles of a strip or a sheet: 0 to 256.
    public static let tileGap: ClosedRange<Int> = 0...256
    /// Columns, and rows, of a contact sheet's grid: 1 to 100 each.
    public static let sheetGrid: ClosedRange<Int> = 1...100
    /// Pixels around a contact sheet: 0 to 1024.
    public static let sheetMargin: ClosedRange<Int> = 0...1024
    /// A contact sheet's tile width in pixels: 16 to 4096.
    public static let sheetTileWidth: ClosedRange<Int> = 16...4096
    /// A contact sheet's width in pixels: 16 to 16383, WebP's largest side.
    public static let sheetWidth: ClosedRange<Int> = 16...16383
    /// Scrub-bar thumbnails asked for by number (``SpriteInterval/count(_:)``): 1 to 100000.
    public static let spriteCount: ClosedRange<Int> = 1...100_000
    /// Columns, and rows, of one sprite sheet's grid: 1 to 100 each.
    public static let spriteGrid: ClosedRange<Int> = 1...100
    /// How many shards a batch manifest is split into (`batch --shard-count`): 1 to 100000.
    public static let shardCount: ClosedRange<Int> = 1...100_000
}

extension ValueRanges {
    /// Throws unless `framesPerSecond` is within ``framesPerSecond``: every animation's one check.
    package static func check(framesPerSecond value: Int) throws(PreviewLoopError) {
        guard framesPerSecond.contains(value) else {
            throw PreviewLoopError(.invalidArgument, "the frame rate must be \(framesPerSecond.inWords) frames per second, not \(value)")
        }
    }
}

extension ClosedRange<Int> {
    /// `1 to 1000`: a range as messages and help texts state it, so a text names the range that is checked.
    package var inWords: String { "\(lowerBound) to \(upperBound)" }
}
