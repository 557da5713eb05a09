/// Where a decoded picture goes in an output frame: which source pixels are kept, how large they are
/// scaled (still in the decoded orientation), and where the upright result lands in the output.
///
/// Pure geometry; the scaler turns it into `sws_scale` calls.
public struct FrameLayout: Hashable, Sendable {
    /// The source pixels kept, in decoded (coded) coordinates.
    public var sourceCrop: Rect
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
    ///   - mode: fill (cover, centre-crop), fit (letterbox on black) or stretch.
    public init(source: Size, sampleAspectRatio: Rational, orientation: Orientation, output: Size, mode: ContentMode) {
        let sar = sampleAspectRatio.doubleValue ?? 1
        let sw = Double(source.width), sh = Double(source.height)
        // The upright picture's size in square display units.
        let displayWidth = orientation.swapsAxes ? sh : sw * sar
        let displayHeight = orientation.swapsAxes ? sw * sar : sh
        let ow = Double(output.width), oh = Double(output.height)
        self.orientation = orientation
        self.outputSize = output

        switch mode {
        case .aspectFill:
            // Work on the upright picture in its own pixels, as FFmpeg's autorotate-then-crop does, so
            // the centring rounds the same way; then map the crop back to decoded coordinates.
            // A decoded pixel is `sar` wide; after a quarter turn that width is the upright height.
            let upright = orientation.swapsAxes ? source.transposed : source
            let scale = max(ow / displayWidth, oh / displayHeight)
            let keptWidth = ow / scale, keptHeight = oh / scale          // display units
            let (uprightPixelWidth, uprightPixelHeight) = orientation.swapsAxes ? (1.0, sar) : (sar, 1.0)
            let cw = Self.clampedRound(keptWidth / uprightPixelWidth, upTo: upright.width)
            let ch = Self.clampedRound(keptHeight / uprightPixelHeight, upTo: upright.height)
            let uprightCrop = Rect(x: (upright.width - cw) / 2, y: (upright.height - ch) / 2, width: cw, height: ch)
            sourceCrop = orientation.decodedRect(forUpright: uprightCrop, decodedSize: source)
            scaledSize = orientation.swapsAxes ? output.transposed : output
            placement = Rect(x: 0, y: 0, width: output.width, height: output.height)
        case .aspectFit:
            let scale = min(ow / displayWidth, oh / displayHeight)
            let pw = Self.clampedRound(displayWidth * scale, upTo: output.width)
            let ph = Self.clampedRound(displayHeight * scale, upTo: output.height)
            sourceCrop = Rect(x: 0, y: 0, width: source.width, height: source.height)
            placement = Rect(x: (output.width - pw) / 2, y: (output.height - ph) / 2, width: pw, height: ph)
            scaledSize = orientation.swapsAxes ? placement.size.transposed : placement.size
        case .stretch:
            sourceCrop = Rect(x: 0, y: 0, width: source.width, height: source.height)
            scaledSize = orientation.swapsAxes ? output.transposed : output
            placement = Rect(x: 0, y: 0, width: output.width, height: output.height)
        }
    }

    /// Whether the picture leaves part of the output uncovered (letterbox bars to paint black).
    public var hasBars: Bool { placement.size != outputSize }

    /// Rounds to the nearest whole pixel, at least 1 and at most `limit`.
    static func clampedRound(_ value: Double, upTo limit: Int) -> Int {
        guard value.isFinite else { return limit }
        return Int(min(Double(limit), max(1, value.rounded())))
    }
}
