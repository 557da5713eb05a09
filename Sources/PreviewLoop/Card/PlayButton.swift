/// The play glyph of a card: a right-pointing triangle in a translucent disc, anti-aliased.
public struct PlayButton: Hashable, Sendable {
    /// The disc's colour and opacity (default black at 45 %).
    public var fill: RGBAColor
    /// The triangle's colour (default opaque white).
    public var glyph: RGBAColor

    /// Creates a play button's look.
    public init(fill: RGBAColor = RGBAColor(red: 0, green: 0, blue: 0, alpha: 115), glyph: RGBAColor = .white) {
        self.fill = fill
        self.glyph = glyph
    }

    /// The button's diameter for a frame of `size`: 72 at 320 wide for 16:9 and wider frames, scaling with
    /// the width; frames taller than 16:9 scale with their height instead, so the button keeps the
    /// same share of the shorter dimension (0.225 of the width at 16:9, 0.4 of the height).
    public static func diameter(for size: Size) -> Double {
        72.0 / 320.0 * min(Double(size.width), Double(size.height) * CardStyle.defaultAspectRatio)
    }

    /// The triangle for a button of `diameter` at `center`: 0.42 of the diameter tall and 0.36 wide,
    /// shifted right by a twelfth of its width, halfway between centring its bounding box (which looks
    /// too far left) and centring its centroid: the usual optical correction for a play glyph.
    public static func triangle(center: Point, diameter: Double) -> Shape {
        let height = 0.42 * diameter, width = 0.36 * diameter
        let left = center.x - width / 2 + width / 12
        return .convexPolygon([Point(x: left, y: center.y - height / 2), Point(x: left + width, y: center.y),
                               Point(x: left, y: center.y + height / 2)])
    }

    /// Draws the button onto `image` centred at `center`, `diameter` pixels across, with its opacity
    /// multiplied by `opacity` (0–1).
    public func draw(on image: inout RGBAImage, center: Point, diameter: Double, opacity: Double = 1) {
        guard diameter > 0, opacity > 0 else { return }
        image.fill(.disc(center: center, radius: diameter / 2), with: fill, opacity: opacity)
        image.fill(Self.triangle(center: center, diameter: diameter), with: glyph, opacity: opacity)
    }
}
