/// Where a decoded picture goes in an output frame: which source pixels are kept, how large they are
/// scaled (still in the decoded orientation), and where the upright result lands in the output.
///
/// Pure geometry; the scaler turns it into `sws_scale` calls.
public struct FrameLayout: Hashable, Sendable {
    /// The source pixels kept, in decoded (coded) coordinates.
    public var sourceCrop: Rect
    /// The same pixels in the upright picture's coordinates (after the turn): what the output shows of
    /// it. The whole upright picture for fit and stretch.
    public var uprightCrop: Rect
    /// The size the crop is scaled to, before the orientation is applied.
    public var scaledSize: Size
    /// Where the upright scaled picture is placed in the output frame; the rest is black.
    public var placement: Rect
    /// The turn applied after scaling.
    public var orientation: Orientation
    /// The output frame's size.
    public var outputSize: Size

    /// Plans how a decoded picture fills an output frame.
    ///
    /// - Parameters:
    ///   - source: the decoded picture's size in pixels.
    ///   - sampleAspectRatio: the width of one source pixel relative to its height (undefined means square).
    ///   - orientation: the turn that makes the picture upright.
    ///   - output: the output frame's size.
    ///   - mode: fill (cover, centre-crop), fit (letterbox on black) or stretch; smart crop plans the
    ///     centred crop here, which ``movingCrop(x:y:source:)`` then places.
    public init(source: Size, sampleAspectRatio: Rational, orientation: Orientation, output: Size, mode: ContentMode) {
        let sar = sampleAspectRatio.doubleValue ?? 1
        let sw = Double(source.width), sh = Double(source.height)
        // The upright picture's size in square display units.
        let displayWidth = orientation.swapsAxes ? sh : sw * sar
        let displayHeight = orientation.swapsAxes ? sw * sar : sh
        let ow = Double(output.width), oh = Double(output.height)
        self.orientation = orientation
        self.outputSize = output

        let upright = orientation.swapsAxes ? source.transposed : source
        switch mode {
        case .aspectFill, .smartCrop:
            // Work on the upright picture in its own pixels, as FFmpeg's autorotate-then-crop does, so
            // the centring rounds the same way; then map the crop back to decoded coordinates.
            // A decoded pixel is `sar` wide; after a quarter turn that width is the upright height.
            let scale = max(ow / displayWidth, oh / displayHeight)
            let keptWidth = ow / scale, keptHeight = oh / scale          // display units
            let (uprightPixelWidth, uprightPixelHeight) = orientation.swapsAxes ? (1.0, sar) : (sar, 1.0)
            let cw = Self.clampedRound(keptWidth / uprightPixelWidth, upTo: upright.width)
            let ch = Self.clampedRound(keptHeight / uprightPixelHeight, upTo: upright.height)
            uprightCrop = Rect(x: (upright.width - cw) / 2, y: (upright.height - ch) / 2, width: cw, height: ch)
            sourceCrop = orientation.decodedRect(forUpright: uprightCrop, decodedSize: source)
            scaledSize = orientation.swapsAxes ? output.transposed : output
            placement = Rect(x: 0, y: 0, width: output.width, height: output.height)
        case .aspectFit:
            let scale = min(ow / displayWidth, oh / displayHeight)
            let pw = Self.clampedRound(displayWidth * scale, upTo: output.width)
            let ph = Self.clampedRound(displayHeight * scale, upTo: output.height)
            sourceCrop = Rect(x: 0, y: 0, width: source.width, height: source.height)
            uprightCrop = Rect(x: 0, y: 0, width: upright.width, height: upright.height)
            placement = Rect(x: (output.width - pw) / 2, y: (output.height - ph) / 2, width: pw, height: ph)
            scaledSize = orientation.swapsAxes ? placement.size.transposed : placement.size
        case .stretch:
            sourceCrop = Rect(x: 0, y: 0, width: source.width, height: source.height)
            uprightCrop = Rect(x: 0, y: 0, width: upright.width, height: upright.height)
            scaledSize = orientation.swapsAxes ? output.transposed : output
            placement = Rect(x: 0, y: 0, width: output.width, height: output.height)
        }
    }

    /// The same layout with the crop's top-left corner at (`x`, `y`) of the upright picture, kept
    /// inside it (a corner that would push the crop out is moved back in).
    ///
    /// A side that moves may move one pixel further, so that the decoded crop starts on an even column
    /// and row: 4:2:0 and 4:2:2 pictures are then cut between whole chroma samples, and the cut is the
    /// same whether the picture is turned before it (`ffmpeg`'s `hflip,crop=…`) or after. A side left
    /// where it was stays exactly there.
    ///
    /// - Parameters:
    ///   - x: the crop's left edge in the upright picture's pixels.
    ///   - y: the crop's top edge in the upright picture's pixels.
    ///   - source: the decoded picture's size, as given to the initializer.
    public func movingCrop(x: Int, y: Int, source: Size) -> FrameLayout {
        let upright = orientation.swapsAxes ? source.transposed : source
        let room = (x: max(0, upright.width - uprightCrop.width), y: max(0, upright.height - uprightCrop.height))
        // The decoded crop's start along the upright x (or y) axis, for a corner at `at`.
        func decodedStart(_ at: (x: Int, y: Int), alongX: Bool) -> Int {
            let rect = orientation.decodedRect(forUpright: Rect(x: at.x, y: at.y, width: uprightCrop.width, height: uprightCrop.height),
                                               decodedSize: source)
            return alongX != orientation.swapsAxes ? rect.x : rect.y
        }
        func settled(_ value: Int, current: Int, room: Int, start: (Int) -> Int) -> Int {
            guard value != current else { return value }
            return [value, value - 1, value + 1].first { (0...room).contains($0) && start($0) % 2 == 0 } ?? value
        }
        let cx = settled(min(max(0, x), room.x), current: uprightCrop.x, room: room.x) { decodedStart(($0, 0), alongX: true) }
        let cy = settled(min(max(0, y), room.y), current: uprightCrop.y, room: room.y) { decodedStart((0, $0), alongX: false) }
        var moved = self
        moved.uprightCrop.x = cx
        moved.uprightCrop.y = cy
        moved.sourceCrop = orientation.decodedRect(forUpright: moved.uprightCrop, decodedSize: source)
        return moved
    }

    /// Whether the picture leaves part of the output uncovered (letterbox bars to paint black).
    public var hasBars: Bool { placement.size != outputSize }

    /// Rounds to the nearest whole pixel, at least 1 and at most `limit`.
    static func clampedRound(_ value: Double, upTo limit: Int) -> Int {
        guard value.isFinite else { return limit }
        return Int(min(Double(limit), max(1, value.rounded())))
    }
}
