import Foundation
import Testing
@testable import PreviewLoop

/// The area of the disc of `radius` at (`cx`, `cy`) inside the rectangle [0, w] × [0, h], by numeric
/// integration of the clipped chord over x: independent of the mask code it checks.
private func discAreaInRectangle(cx: Double, cy: Double, radius: Double, width: Double, height: Double) -> Double {
    let steps = 200_000
    let left = max(0, cx - radius), right = min(width, cx + radius)
    guard right > left else { return 0 }
    let dx = (right - left) / Double(steps)
    var area = 0.0
    for step in 0..<steps {
        let x = left + (Double(step) + 0.5) * dx
        let half = (radius * radius - (x - cx) * (x - cx)).squareRoot()
        area += max(0, min(height, cy + half) - max(0, cy - half)) * dx
    }
    return area
}

@Suite("Card geometry and the compositor (pure)")
struct CompositorTests {
    @Test("The revealed fraction matches the disc formula within 1 %", arguments: [
        Size(width: 480, height: 270), Size(width: 320, height: 180), Size(width: 270, height: 480), Size(width: 101, height: 57),
    ])
    func revealedFraction(size: Size) throws {
        let diagonal = (Double(size.width * size.width + size.height * size.height)).squareRoot()
        for progress in [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0] {
            let radius = (0.05 + 0.95 * progress) * diagonal / 2
            #expect(abs(CardGeometry.revealRadius(progress: progress, size: size) - radius) < 1e-9)
            let exact = discAreaInRectangle(cx: Double(size.width) / 2, cy: Double(size.height) / 2, radius: radius,
                                            width: Double(size.width), height: Double(size.height)) / Double(size.area)
            let mask = try CoverageMask(CardGeometry.revealDisc(progress: progress, size: size), size: size)
            // Within 1 %, or within half a pixel of area for the smallest discs (26 px² at the start on
            // 101x57), where sampling the edge at pixel centres alone moves the sum by that much.
            let error = abs(mask.coveredFraction - exact)
            #expect(error <= 0.01 * exact || error * Double(size.area) <= 0.5, "progress \(progress): \(mask.coveredFraction) vs \(exact)")
        }
        // The end state covers the whole frame: the disc's diameter is the diagonal.
        #expect(try CoverageMask(CardGeometry.revealDisc(progress: 1, size: size), size: size).values.allSatisfy { $0 >= 250 })
    }

    @Test("The disc's edge is anti-aliased: a ramp about one pixel wide, not a step")
    func discEdge() throws {
        let size = Size(width: 200, height: 100)
        let mask = try CoverageMask(.disc(center: Point(x: 100, y: 50), radius: 30.25), size: size)
        // Along the row through the centre, pixel centres at x + 0.5: distance from the centre 29.5…
        #expect(mask[129, 50] == 1)                        // centre at 29.5 from the middle: inside by 0.75
        #expect(abs(mask[130, 50] - 0.25) < 0.01)          // at 30.5: outside by 0.25 → covered a quarter
        #expect(mask[131, 50] == 0)                        // at 31.5: outside
        #expect(mask[100, 50] == 1 && mask[0, 0] == 0)
    }

    @Test("Rounded corners: outside the radius is transparent, just inside is opaque, the edges are whole")
    func corners() throws {
        let size = Size(width: 480, height: 270), radius = 22.0
        var picture = try RGBAImage(width: size.width, height: size.height, color: RGBAColor(red: 10, green: 200, blue: 30))
        try picture.apply(try CoverageMask(CardGeometry.outline(size: size, cornerRadius: radius), size: size))
        // Each corner's circle has its centre `radius` in from both edges.
        let corners = [(0, 0, 1, 1), (size.width - 1, 0, -1, 1), (0, size.height - 1, 1, -1), (size.width - 1, size.height - 1, -1, -1)]
        for (x, y, stepX, stepY) in corners {
            #expect(picture[x, y].alpha == 0, "corner pixel (\(x), \(y))")
            // The pixel whose centre lies 1.5 px outside the arc, on the diagonal, is transparent…
            let outside = Int((radius - (radius + 1.5) / 2.squareRoot()).rounded(.down))
            #expect(picture[x + stepX * outside, y + stepY * outside].alpha == 0)
            // …the one 1.5 px inside it is opaque and keeps its colour.
            let inside = Int((radius - (radius - 1.5) / 2.squareRoot()).rounded(.up))
            #expect(picture[x + stepX * inside, y + stepY * inside] == RGBAColor(red: 10, green: 200, blue: 30))
            // Along the edges, past the arc, nothing is cut.
            #expect(picture[x + stepX * Int(radius), y].alpha == 255 && picture[x, y + stepY * Int(radius)].alpha == 255)
        }
        #expect(picture[240, 0].alpha == 255 && picture[0, 135].alpha == 255)
        // Flattened, the corners take the background colour.
        let flat = picture.flattened(on: RGBAColor(red: 255, green: 0, blue: 255))
        #expect(flat[0, 0] == (255, 0, 255) && flat[240, 135] == (10, 200, 30))
    }

    @Test("An aspect ratio that is not finite and positive falls back to 16:9",
          arguments: [0.0, -1.0, -16.0 / 9.0, Double.nan, Double.infinity, -Double.infinity])
    func aspectFallback(ratio: Double) {
        #expect(CardStyle.usableAspectRatio(ratio) == 16.0 / 9.0)
        #expect(CardStyle.size(width: 480, aspectRatio: ratio) == Size(width: 480, height: 270))
    }

    @Test("Usable aspect ratios give the height they say, rounded (and even when asked)")
    func aspectSizes() {
        #expect(CardStyle.size(width: 480, aspectRatio: 4.0 / 3.0) == Size(width: 480, height: 360))
        #expect(CardStyle.size(width: 480, aspectRatio: 1) == Size(width: 480, height: 480))
        #expect(CardStyle.size(width: 480, aspectRatio: 9.0 / 16.0) == Size(width: 480, height: 853))
        #expect(CardStyle.size(width: 480, aspectRatio: 9.0 / 16.0, even: true) == Size(width: 480, height: 854))
        #expect(CardStyle.usableAspectRatio(2.39) == 2.39)
    }

    @Test("Ease-in-out: fixed ends, symmetric, increasing, flat at both ends")
    func easing() {
        let ease = Easing.easeInOut
        #expect(ease.progress(0) == 0 && abs(ease.progress(1) - 1) < 1e-12)
        #expect(abs(ease.progress(0.5) - 0.5) < 1e-9)
        var previous = -1.0
        for step in 0...100 {
            let x = Double(step) / 100
            let y = ease.progress(x)
            #expect(y >= previous)
            #expect(abs(y + ease.progress(1 - x) - 1) < 1e-9)
            previous = y
        }
        #expect(ease.progress(0.05) < 0.02 && ease.progress(0.95) > 0.98)
        #expect(ease.progress(-3) == 0 && ease.progress(7) == 1 && ease.progress(.nan) == 0)
        #expect(Easing.linear.progress(0.3) == 0.3)
    }

    @Test("The timeline: poster, reveal (eased), play, and the fade back when asked")
    func timeline() {
        var style = CardStyle(posterHold: 1, playLength: 2)
        var timeline = CardTimeline(style: style)
        #expect(timeline.duration == 3.6)
        #expect(timeline.phase(at: 0) == .poster && timeline.phase(at: 0.999) == .poster)
        #expect(timeline.phase(at: 1) == .revealing(progress: 0, videoTime: 0))
        guard case .revealing(let half, let video) = timeline.phase(at: 1.3) else { Issue.record("not revealing"); return }
        #expect(abs(half - 0.5) < 1e-9 && abs(video - 0.3) < 1e-9)
        guard case .revealing(let early, _) = timeline.phase(at: 1.1) else { Issue.record("not revealing"); return }
        #expect(early < 1.0 / 6.0)   // eased: slower than linear at the start
        #expect(timeline.phase(at: 2) == .playing(videoTime: 1))
        #expect(timeline.phase(at: 99).videoTime == 3.6 - 1)
        style.closes = true
        timeline = CardTimeline(style: style)
        #expect(abs(timeline.duration - 3.95) < 1e-9)
        guard case .closing(let closing, _) = timeline.phase(at: 3.6 + 0.175) else { Issue.record("not closing"); return }
        #expect(abs(closing - 0.5) < 1e-9)
    }

    @Test("The play button measures 72 at 320 wide and scales with the frame's shorter side")
    func playButtonSize() {
        #expect(PlayButton.diameter(for: Size(width: 320, height: 180)) == 72)
        #expect(PlayButton.diameter(for: Size(width: 480, height: 270)) == 108)
        #expect(PlayButton.diameter(for: Size(width: 640, height: 180)) == 72)       // wider: by the height
        #expect(abs(PlayButton.diameter(for: Size(width: 180, height: 320)) - 40.5) < 1e-9)
    }

    static let red = try! RGBImage(width: 160, height: 90, pixels: [UInt8]((0..<(160 * 90)).flatMap { _ in [255, 0, 0] as [UInt8] }))
    static let blue = try! RGBImage(width: 160, height: 90, pixels: [UInt8]((0..<(160 * 90)).flatMap { _ in [0, 0, 255] as [UInt8] }))

    @Test("The circular reveal shows the video inside the disc and the poster outside")
    func circleReveal() throws {
        let style = CardStyle(size: Self.red.size, cornerRadius: 0, showsPlayButton: false)
        let compositor = try CardCompositor(style: style)
        for progress in [0.2, 0.5, 0.8] {
            let picture = try compositor.picture(at: .revealing(progress: progress, videoTime: 0), poster: Self.red, video: Self.blue)
            let radius = CardGeometry.revealRadius(progress: progress, size: style.size)
            var blueArea = 0.0
            for y in 0..<90 {
                for x in 0..<160 {
                    let pixel = picture[x, y]
                    #expect(Int(pixel.red) + Int(pixel.blue) >= 254 && pixel.alpha == 255)
                    blueArea += Double(pixel.blue) / 255
                    let distance = ((Double(x) + 0.5 - 80) * (Double(x) + 0.5 - 80) + (Double(y) + 0.5 - 45) * (Double(y) + 0.5 - 45)).squareRoot()
                    if distance < radius - 1 { #expect(pixel.blue == 255) }
                    if distance > radius + 1 { #expect(pixel.red == 255) }
                }
            }
            let exact = discAreaInRectangle(cx: 80, cy: 45, radius: radius, width: 160, height: 90)
            #expect(abs(blueArea - exact) <= 0.01 * exact)
        }
    }

    @Test("The fade reveal cross-fades the whole frame; closing fades the poster back")
    func fadeReveal() throws {
        let style = CardStyle(size: Self.red.size, cornerRadius: 0, showsPlayButton: false, reveal: .fade)
        let compositor = try CardCompositor(style: style)
        let half = try compositor.picture(at: .revealing(progress: 0.5, videoTime: 0), poster: Self.red, video: Self.blue)
        #expect(half[0, 0] == RGBAColor(red: 128, green: 0, blue: 128) && half[80, 45] == half[0, 0])
        let quarter = try compositor.picture(at: .closing(progress: 0.25, videoTime: 3), poster: Self.red, video: Self.blue)
        #expect(quarter[10, 10] == RGBAColor(red: 64, green: 0, blue: 191))
        #expect(try compositor.picture(at: .playing(videoTime: 1), poster: Self.red, video: Self.blue)[5, 5] == RGBAColor(red: 0, green: 0, blue: 255))
    }

    @Test("The poster's play button: a translucent dark disc with an opaque white triangle, centred")
    func playButton() throws {
        let style = CardStyle(size: Self.red.size, cornerRadius: 0)
        let compositor = try CardCompositor(style: style)
        let poster = try compositor.picture(at: .poster, poster: Self.red, video: nil)
        let diameter = PlayButton.diameter(for: style.size)   // 36 at 160x90
        #expect(poster[80, 45] == .white)                      // the triangle covers the centre
        // Inside the disc, left of the triangle: red under black, a little more opaque than the
        // default 115/255 so that the disc keeps 3:1 against pure red.
        let button = style.playButton.adapted(to: Self.red, center: CardGeometry.center(of: style.size), diameter: diameter)
        #expect(button.fill.red == 0 && button.fill.alpha > 115 && button.fill.alpha < 160 && button.glyph == .white)
        let shaded = poster[80 - Int(diameter * 0.4), 45]
        #expect(shaded.red == UInt8((255.0 * (1 - Double(button.fill.alpha) / 255.0)).rounded()) && shaded.green == 0 && shaded.blue == 0)
        #expect(poster[2, 2] == RGBAColor(red: 255, green: 0, blue: 0))
        // Symmetric about the horizontal axis.
        for x in 60..<100 { for dy in 1..<20 { #expect(poster[x, 45 - dy] == poster[x, 44 + dy]) } }
        // The reveal grows it and fades it: at 80 %, the centre is mostly the video's blue.
        let late = try compositor.picture(at: .revealing(progress: 0.8, videoTime: 0.4), poster: Self.red, video: Self.blue)
        #expect(late[80, 45].blue > 200 && late[80, 45].red < 60)
    }

    /// The WCAG 2 contrast ratio between the mean luminances of a card picture's pixels in two rings
    /// around the centre, at `inner` and `outer` (fractions of the radius, each ± 0.1).
    static func ringContrast(_ picture: RGBAImage, radius: Double, inner: Double, outer: Double) -> Double {
        func mean(at fraction: Double) -> Double {
            var sum = 0.0, count = 0.0
            for y in 0..<picture.height { for x in 0..<picture.width {
                let dx = Double(x) + 0.5 - Double(picture.width) / 2, dy = Double(y) + 0.5 - Double(picture.height) / 2
                let distance = (dx * dx + dy * dy).squareRoot() / radius
                if abs(distance - fraction) <= 0.1 { sum += picture[x, y].relativeLuminance; count += 1 }
            } }
            return sum / count
        }
        return RGBAColor.contrastRatio(mean(at: inner), mean(at: outer))
    }

    @Test("The play disc stands out 3:1 from the poster just outside it, and the triangle from the disc, on any poster",
          arguments: [(0, 0, 0), (255, 255, 255), (118, 118, 118), (40, 40, 40), (255, 0, 0), (0, 0, 255), (255, 255, 0)])
    func playButtonContrast(red: Int, green: Int, blue: Int) throws {
        let size = Size(width: 320, height: 180)
        let pixel = [UInt8(red), UInt8(green), UInt8(blue)]
        let backdrop = try RGBImage(width: size.width, height: size.height, pixels: [UInt8]((0..<size.area).flatMap { _ in pixel }))
        let compositor = try CardCompositor(style: CardStyle(size: size, cornerRadius: 0))
        let picture = try compositor.picture(at: .poster, poster: backdrop, video: nil)
        let radius = PlayButton.diameter(for: size) / 2            // 36 at 320 wide
        // The disc between the triangle (within 0.55 of the radius) and its edge, against the poster
        // just outside the edge.
        let disc = Self.ringContrast(picture, radius: radius, inner: 0.8, outer: 1.2)
        #expect(disc >= 3, "the disc stands out \(disc):1 on \(pixel)")
        let glyph = RGBAColor.contrastRatio(picture[160, 90].relativeLuminance, picture[160 - Int(radius * 0.8), 90].relativeLuminance)
        #expect(glyph >= 3, "the triangle stands out \(glyph):1 from the disc on \(pixel)")
    }

    @Test("WCAG 2 luminance and contrast: black 0, white 1, 21:1 between them")
    func wcagContrast() {
        #expect(RGBAColor.black.relativeLuminance == 0 && RGBAColor.white.relativeLuminance == 1)
        #expect(abs(RGBAColor.contrastRatio(0, 1) - 21) < 1e-12 && RGBAColor.contrastRatio(0.3, 0.3) == 1)
        // #777777 on white is the well-known 4.48:1.
        let grey = RGBAColor(red: 0x77, green: 0x77, blue: 0x77).relativeLuminance
        #expect(abs(RGBAColor.contrastRatio(grey, 1) - 4.48) < 0.01)
    }

    @Test("Source-over, masks and blends keep straight alpha right")
    func alphaArithmetic() throws {
        var canvas = try RGBAImage(width: 4, height: 1)
        canvas.fill(.roundedRectangle(origin: Point(x: 0, y: 0), width: 4, height: 1, cornerRadius: 0),
                    with: RGBAColor(red: 200, green: 100, blue: 0, alpha: 128))
        #expect(canvas[1, 0] == RGBAColor(red: 200, green: 100, blue: 0, alpha: 128))   // over clear: the colour itself
        var opaque = try RGBAImage(width: 2, height: 1, color: .white)
        opaque.draw(canvas, atX: 0, y: 0)
        let a = 128.0 / 255.0
        let expected = [200.0, 100, 0].map { UInt8(($0 * a + 255 * (1 - a)).rounded()) }
        #expect(opaque[0, 0] == RGBAColor(red: expected[0], green: expected[1], blue: expected[2], alpha: 255))
        // Blending towards a transparent picture fades the alpha, not the colour.
        let faded = try RGBAImage(width: 1, height: 1, color: RGBAColor(red: 0, green: 255, blue: 0))
            .blended(with: RGBAImage(width: 1, height: 1), amount: 0.5)
        #expect(faded[0, 0] == RGBAColor(red: 0, green: 255, blue: 0, alpha: 128))
        #expect(RGBAColor(parsing: "#336699") == RGBAColor(red: 0x33, green: 0x66, blue: 0x99))
        #expect(RGBAColor(parsing: "f00") == RGBAColor(red: 255, green: 0, blue: 0))
        #expect(RGBAColor(parsing: "#11223344")?.alpha == 0x44 && RGBAColor(parsing: "transparent") == .clear)
        #expect(RGBAColor(parsing: "#12345") == nil && RGBAColor(parsing: "blue") == nil && RGBAColor(parsing: "#gg0000") == nil)
        #expect(RGBAColor(red: 1, green: 2, blue: 255, alpha: 16).description == "#0102ff10")
    }
}
