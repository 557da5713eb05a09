/// The play glyph of a card: a right-pointing triangle in a translucent disc, anti-aliased.
///
/// Over a poster, ``adapted(to:center:diameter:)`` keeps the disc visible: a dark disc disappears on a
/// dark poster, so where ``fill`` would not stand out by ``minimumContrast`` from the pixels around the
/// disc, the disc turns more opaque or takes the glyph's colour, whichever needs less opacity.
public struct PlayButton: Hashable, Sendable {
    /// The disc's colour and opacity (default black at 45 %).
    public var fill: RGBAColor
    /// The triangle's colour (default opaque white).
    public var glyph: RGBAColor
    /// The least WCAG 2 contrast ratio (``RGBAColor/contrastRatio(_:_:)``) that
    /// ``adapted(to:center:diameter:)`` keeps between the disc and the picture just outside it, and
    /// between the triangle and the disc (default 3, what WCAG asks of a control's boundary); 1 or less
    /// keeps ``fill`` and ``glyph`` as they are.
    public var minimumContrast: Double

    /// Creates a play button's look.
    public init(fill: RGBAColor = RGBAColor(red: 0, green: 0, blue: 0, alpha: 115), glyph: RGBAColor = .white,
                minimumContrast: Double = 3) {
        self.fill = fill
        self.glyph = glyph
        self.minimumContrast = minimumContrast
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
    /// multiplied by `opacity` (0–1), in ``fill`` and ``glyph`` as they are (see
    /// ``adapted(to:center:diameter:)`` for colours chosen by the picture under the button).
    public func draw(on image: inout RGBAImage, center: Point, diameter: Double, opacity: Double = 1) {
        guard diameter > 0, opacity > 0 else { return }
        image.fill(.disc(center: center, radius: diameter / 2), with: fill, opacity: opacity)
        image.fill(Self.triangle(center: center, diameter: diameter), with: glyph, opacity: opacity)
    }

    /// The button's colours for a disc of `diameter` at `center` over `backdrop`, judged against the
    /// backdrop's pixels in a ring just outside the disc (as wide as a sixth of the radius, at least
    /// 2 pixels), by their mean WCAG 2 relative luminance:
    ///
    /// - ``fill`` as it is when the disc over those pixels contrasts at least ``minimumContrast``:1
    ///   with them (a dark disc on a light or middling poster);
    /// - else the least opacity from ``fill``'s up that reaches it, either in ``fill``'s colour or in
    ///   ``glyph``'s (a light disc on a dark poster), whichever needs less; when neither can, the one
    ///   that contrasts most, opaque;
    /// - the triangle in ``glyph`` while it contrasts ``minimumContrast``:1 with the disc, else in
    ///   ``fill``'s colour, opaque.
    ///
    /// The result's ``minimumContrast`` is 1: its colours are final.
    public func adapted(to backdrop: RGBImage, center: Point, diameter: Double) -> PlayButton {
        let radius = diameter / 2
        guard minimumContrast > 1, radius > 0 else { return self }
        let ring = Self.ringPixels(of: backdrop, center: center, from: radius, to: radius + max(2, radius / 6))
        guard !ring.isEmpty else { return self }
        let outside = Self.luminance(of: ring, under: .clear, alpha: 0)
        func contrast(_ color: RGBAColor, alpha: Int) -> Double {
            RGBAColor.contrastRatio(Self.luminance(of: ring, under: color, alpha: alpha), outside)
        }
        let base = Int(fill.alpha)
        if contrast(fill, alpha: base) >= minimumContrast { return self.final }
        /// The least alpha from `base` up at which `color` reaches the contrast, by bisection (the
        /// contrast grows with the alpha for a colour darker or lighter than the whole ring).
        func leastAlpha(_ color: RGBAColor) -> Int? {
            guard contrast(color, alpha: 255) >= minimumContrast else { return nil }
            var low = base, high = 255            // contrast(low) < minimum <= contrast(high)
            if contrast(color, alpha: low) >= minimumContrast { return low }
            while high - low > 1 {
                let middle = (low + high) / 2
                if contrast(color, alpha: middle) >= minimumContrast { high = middle } else { low = middle }
            }
            return high
        }
        let dark = fill.withAlpha(255), light = glyph.withAlpha(255)
        let disc: RGBAColor
        switch (leastAlpha(dark), leastAlpha(light)) {
        case let (darkAlpha?, lightAlpha?): disc = lightAlpha < darkAlpha ? light.withAlpha(UInt8(lightAlpha)) : dark.withAlpha(UInt8(darkAlpha))
        case let (darkAlpha?, nil): disc = dark.withAlpha(UInt8(darkAlpha))
        case let (nil, lightAlpha?): disc = light.withAlpha(UInt8(lightAlpha))
        case (nil, nil): disc = contrast(light, alpha: 255) > contrast(dark, alpha: 255) ? light : dark
        }
        let discLuminance = Self.luminance(of: ring, under: disc, alpha: Int(disc.alpha))
        let glyphKeeps = RGBAColor.contrastRatio(glyph.relativeLuminance, discLuminance) >= minimumContrast
        return PlayButton(fill: disc, glyph: glyphKeeps ? glyph : dark, minimumContrast: 1)
    }

    /// The button with its colours final (``minimumContrast`` 1).
    private var final: PlayButton { PlayButton(fill: fill, glyph: glyph, minimumContrast: 1) }

    /// The mean relative luminance of `ring`'s pixels under `color` at `alpha` (0–255), blended as
    /// ``RGBAImage/fill(_:with:opacity:)`` does.
    private static func luminance(of ring: [(UInt8, UInt8, UInt8)], under color: RGBAColor, alpha: Int) -> Double {
        let a = Double(alpha) / 255
        func over(_ top: UInt8, _ bottom: UInt8) -> UInt8 { UInt8((Double(top) * a + Double(bottom) * (1 - a)).rounded()) }
        return ring.reduce(0.0) {
            $0 + RGBAColor.relativeLuminance(red: over(color.red, $1.0), green: over(color.green, $1.1), blue: over(color.blue, $1.2))
        } / Double(ring.count)
    }

    /// The pixels of `image` whose centres lie between `inner` and `outer` from `center`.
    private static func ringPixels(of image: RGBImage, center: Point, from inner: Double, to outer: Double) -> [(UInt8, UInt8, UInt8)] {
        let left = max(0, Int((center.x - outer).rounded(.down))), right = min(image.width - 1, Int((center.x + outer).rounded(.up)))
        let top = max(0, Int((center.y - outer).rounded(.down))), bottom = min(image.height - 1, Int((center.y + outer).rounded(.up)))
        guard left <= right, top <= bottom else { return [] }
        var pixels: [(UInt8, UInt8, UInt8)] = []
        for y in top...bottom {
            for x in left...right {
                let dx = Double(x) + 0.5 - center.x, dy = Double(y) + 0.5 - center.y
                let distance = (dx * dx + dy * dy).squareRoot()
                if distance >= inner && distance <= outer { pixels.append(image[x, y]) }
            }
        }
        return pixels
    }
}
