import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// The smart crop's measure and window search on pictures drawn here: where the window goes, that
/// the summed-area search finds the window a brute-force sum finds, and that it stays inside the
/// picture whatever the sizes.
@Suite("Smart crop: the measure and the window search")
struct SmartCropTests {
    /// A `width`×`height` picture of one colour, with `paint` drawing over it.
    static func picture(_ width: Int, _ height: Int, grey: UInt8 = 128,
                        paint: (_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8)? = { _, _ in nil }) -> RGBImage {
        var pixels = [UInt8](repeating: grey, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                guard let (r, g, b) = paint(x, y) else { continue }
                let index = (y * width + x) * 3
                pixels[index] = r; pixels[index + 1] = g; pixels[index + 2] = b
            }
        }
        return try! RGBImage(width: width, height: height, pixels: pixels)
    }

    /// A saturated, textured square (red and blue stripes two pixels wide) at `box`.
    static func object(in box: Rect) -> (Int, Int) -> (UInt8, UInt8, UInt8)? {
        { x, y in
            guard x >= box.x, x < box.x + box.width, y >= box.y, y < box.y + box.height else { return nil }
            return (x / 2) % 2 == 0 ? (230, 20, 20) : (20, 20, 230)
        }
    }

    /// Whether `inner` lies inside `outer`.
    static func contains(_ outer: Rect, _ inner: Rect) -> Bool {
        inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width
            && inner.y + inner.height <= outer.y + outer.height
    }

    @Test("A flat picture keeps the centred crop", arguments: [(UInt8(128), 256, 144), (0, 256, 144), (255, 99, 201), (40, 7, 3)])
    func flat(grey: UInt8, width: Int, height: Int) {
        let image = Self.picture(width, height, grey: grey)
        #expect(SmartCrop.origin(for: Size(width: height * 3 / 4, height: height), upright: image.size, choosingOn: image) == nil)
        #expect(SmartCrop.origin(for: Size(width: width, height: max(1, height / 3)), upright: image.size, choosingOn: image) == nil)
        let best = SmartCrop(image).bestOrigin(for: Size(width: max(1, width / 3), height: height))
        #expect(best.centredX && best.centredY)
    }

    @Test("The window moves onto an off-centre object, along either axis", arguments: [
        // Right third of a wide picture, a square window.
        (Size(width: 256, height: 144), Rect(x: 200, y: 40, width: 48, height: 48), Size(width: 144, height: 144)),
        // Left edge.
        (Size(width: 256, height: 144), Rect(x: 4, y: 90, width: 30, height: 30), Size(width: 144, height: 144)),
        // The bottom of a tall picture, a wide window.
        (Size(width: 90, height: 160), Rect(x: 30, y: 120, width: 30, height: 30), Size(width: 90, height: 50)),
        // A narrow window (a 1-pixel-wide output's crop) on a small object.
        (Size(width: 256, height: 144), Rect(x: 220, y: 60, width: 12, height: 12), Size(width: 2, height: 144)),
    ])
    func followsObject(size: Size, box: Rect, window: Size) throws {
        let image = Self.picture(size.width, size.height, paint: Self.object(in: box))
        let origin = try #require(SmartCrop.origin(for: window, upright: size, choosingOn: image))
        let chosen = Rect(x: origin.x, y: origin.y, width: window.width, height: window.height)
        // On each axis the window holds the object, or (narrower than it) lies within it.
        func holds(_ start: Int, _ length: Int, _ objectStart: Int, _ objectLength: Int) -> Bool {
            length >= objectLength ? start <= objectStart && start + length >= objectStart + objectLength
                : start >= objectStart && start + length <= objectStart + objectLength
        }
        #expect(holds(chosen.x, chosen.width, box.x, box.width) && holds(chosen.y, chosen.height, box.y, box.height),
                "window \(chosen), object \(box)")
        #expect(Self.contains(Rect(x: 0, y: 0, width: size.width, height: size.height), chosen))
    }

    @Test("Each measure alone moves the window: edges in grey, colour without edges, skin tones")
    func eachMeasure() throws {
        let size = Size(width: 240, height: 120), window = Size(width: 120, height: 120)
        let box = Rect(x: 10, y: 40, width: 40, height: 40)
        let inside = { (x: Int, y: Int) in x >= box.x && x < box.x + box.width && y >= box.y && y < box.y + box.height }
        // A grey checkerboard: edges only, no colour.
        let edges = Self.picture(size.width, size.height) { x, y in
            inside(x, y) ? ((x / 4 + y / 4) % 2 == 0 ? (40, 40, 40) : (210, 210, 210)) : nil
        }
        // A flat saturated green: colour only, no edges inside.
        let colour = Self.picture(size.width, size.height) { x, y in inside(x, y) ? (30, 200, 40) : nil }
        // A flat skin tone, little colour spread: the skin rule (Cb 107, Cr 152).
        let skin = Self.picture(size.width, size.height) { x, y in inside(x, y) ? (210, 160, 135) : nil }
        for (name, image) in [("edges", edges), ("colour", colour), ("skin", skin)] {
            let origin = try #require(SmartCrop.origin(for: window, upright: size, choosingOn: image), "\(name)")
            #expect(Self.contains(Rect(x: origin.x, y: origin.y, width: 120, height: 120), box), "\(name): \(origin)")
        }
        // Grey itself, and a grey with a little noise, score nothing.
        let (r, g, b) = (210, 160, 135)
        let y = (77 * r + 150 * g + 29 * b + 128) >> 8
        #expect(SmartCrop.isSkin(y: y, cb: 128 + ((-43 * r - 85 * g + 128 * b + 128) >> 8), cr: 128 + ((128 * r - 107 * g - 21 * b + 128) >> 8)))
        #expect(!SmartCrop.isSkin(y: 128, cb: 128, cr: 128))
        let noisy = Self.picture(64, 64) { x, y in
            let level = UInt8(126 + (x * 7 + y * 13) % 5)
            return (level, level, level)
        }
        #expect(SmartCrop(noisy).scores.allSatisfy { $0 == 0 })
    }

    @Test("Two equal objects either side of the centre: the nearest good window first in scan order, every time")
    func tieBreak() throws {
        // A picture that is its own mirror image: each window on the left scores as its mirror on the
        // right, equally far from the centre, so only the scan order (left first) decides.
        let size = Size(width: 300, height: 100)
        let left = Rect(x: 20, y: 30, width: 40, height: 40)
        let image = Self.picture(size.width, size.height) { x, y in Self.object(in: left)(min(x, size.width - 1 - x), y) }
        let window = Size(width: 100, height: 100)
        let first = try #require(SmartCrop.origin(for: window, upright: size, choosingOn: image))
        #expect(Self.contains(Rect(x: first.x, y: first.y, width: 100, height: 100), left), "\(first)")
        for _ in 0..<3 {
            #expect(SmartCrop.origin(for: window, upright: size, choosingOn: image)! == first)
        }
        // With the left object gone, the right one's window is the mirror of the left one's.
        let rightOnly = Self.picture(size.width, size.height) { x, y in x < 150 ? nil : Self.object(in: left)(size.width - 1 - x, y) }
        let right = try #require(SmartCrop.origin(for: window, upright: size, choosingOn: rightOnly))
        #expect(right.x == size.width - window.width - first.x && right.y == first.y, "\(right) vs \(first)")
    }

    @Test("The summed-area search scores every window as a brute-force sum does", arguments: [(17, 11, 5, 11), (33, 20, 33, 7), (9, 9, 1, 1), (40, 25, 16, 25)])
    func matchesBruteForce(width: Int, height: Int, windowWidth: Int, windowHeight: Int) {
        var generator = SeededGenerator(state: UInt64(width * 1000 + height))
        let image = Self.picture(width, height) { _, _ in
            (UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator),
             UInt8.random(in: 0...255, using: &generator))
        }
        let map = SmartCrop(image)
        let best = map.bestOrigin(for: Size(width: windowWidth, height: windowHeight))
        // Brute force: every window's weighted sum, the band along its edges at half weight.
        let bandX = windowWidth / 8, bandY = windowHeight / 8
        func weighted(_ x0: Int, _ y0: Int) -> Int {
            var total = 0
            for y in y0..<(y0 + windowHeight) {
                for x in x0..<(x0 + windowWidth) {
                    let isInner = x >= x0 + bandX && x < x0 + windowWidth - bandX && y >= y0 + bandY && y < y0 + windowHeight - bandY
                    total += map.scores[y * width + x] * (isInner ? 2 : 1)
                }
            }
            return total
        }
        var top = Int.min
        for y in 0...(height - windowHeight) { for x in 0...(width - windowWidth) { top = max(top, weighted(x, y)) } }
        let chosen = weighted(best.x, best.y)
        #expect(chosen >= top - top / 64 && chosen <= top, "chosen \(chosen), best \(top)")
    }

    @Test("Sobel edges, colour spread and skin are scored as written", arguments: [0])
    func scores(_: Int) {
        // A vertical step from 0 to 200 between columns 1 and 2 of a 4x3 grey picture: at the columns
        // beside it |gx| = 4 × 200 = 800, gy = 0, so (800 − 48) / 8 = 94; the outer columns see nothing.
        let step = Self.picture(4, 3) { x, _ in x >= 2 ? (200, 200, 200) : (0, 0, 0) }
        let row = Array(SmartCrop(step).scores[4..<8])
        #expect(row == [0, 94, 94, 0])
        // Colour spread above the floor: (250 − 10) − 32 = 208 for pure red on a flat picture.
        let red = Self.picture(3, 3) { _, _ in (250, 10, 10) }
        #expect(SmartCrop(red).scores.allSatisfy { $0 == 208 })
    }

    @Test("The window stays inside the picture for any sizes", arguments: [1, 2, 3, 7, 64, 257])
    func staysInside(side: Int) {
        var generator = SeededGenerator(state: UInt64(side))
        for _ in 0..<20 {
            let width = Int.random(in: 1...side, using: &generator), height = Int.random(in: 1...side, using: &generator)
            let image = Self.picture(width, height) { x, y in (x * y) % 7 == 0 ? (250, 0, UInt8(y % 256)) : nil }
            let upright = Size(width: width * Int.random(in: 1...9, using: &generator), height: height * Int.random(in: 1...9, using: &generator))
            let crop = Size(width: Int.random(in: 1...upright.width, using: &generator), height: Int.random(in: 1...upright.height, using: &generator))
            if let origin = SmartCrop.origin(for: crop, upright: upright, choosingOn: image) {
                #expect(origin.x >= 0 && origin.y >= 0 && origin.x + crop.width <= upright.width && origin.y + crop.height <= upright.height,
                        "\(crop) at \(origin) in \(upright)")
            }
            // Windows larger than the picture, or empty, are clamped to it.
            let best = SmartCrop(image).bestOrigin(for: Size(width: width + 5, height: 0))
            #expect(best.x == 0 && best.y >= 0 && best.y < height)
        }
    }

    @Test("The analysis picture keeps the display shape, at most 256 a side, never enlarged")
    func analysisSize() {
        #expect(SmartCrop.analysisSize(display: 1920, 1080) == Size(width: 256, height: 144))
        #expect(SmartCrop.analysisSize(display: 1080, 1920) == Size(width: 144, height: 256))
        #expect(SmartCrop.analysisSize(display: 100, 50) == Size(width: 100, height: 50))
        #expect(SmartCrop.analysisSize(display: 1, 16384) == Size(width: 1, height: 256))
    }
}
