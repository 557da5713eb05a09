import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// An image whose every pixel is distinct: pixel `k` (row-major) is `(k, k ^ 0x5A, 255 - k)` mod 256,
/// offset by `seed`.
private func distinctImage(width: Int, height: Int, seed: Int = 0) -> RGBImage {
    var pixels: [UInt8] = []
    for k in 0..<(width * height) {
        let v = k + seed
        pixels += [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v ^ 0x5A), UInt8(truncatingIfNeeded: 255 - v)]
    }
    return try! RGBImage(width: width, height: height, pixels: pixels)
}

/// Whether two pixels are equal.
private func same(_ a: (red: UInt8, green: UInt8, blue: UInt8), _ b: (UInt8, UInt8, UInt8)) -> Bool {
    a.red == b.0 && a.green == b.1 && a.blue == b.2
}

/// Binary PPM: the exact header, round trips, comments, and malformed files.
@Suite("PPM")
struct PPMTests {
    @Test("The header is exactly `P6\\nW H\\n255\\n`, then the raster")
    func header() throws {
        let image = try RGBImage(width: 2, height: 1, pixels: [1, 2, 3, 250, 251, 252])
        #expect(PPM.encode(image) == Array("P6\n2 1\n255\n".utf8) + [1, 2, 3, 250, 251, 252])
    }

    @Test("decode(encode(x)) == x for random images",
          arguments: [(1, 1), (2, 1), (3, 2), (17, 5), (64, 1), (1, 64), (320, 180)])
    func roundTrip(width: Int, height: Int) throws {
        var generator = SeededGenerator(state: UInt64(width * 1000 + height))
        let pixels = (0..<(width * height * 3)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let image = try RGBImage(width: width, height: height, pixels: pixels)
        let bytes = PPM.encode(image)
        #expect(bytes.count == "P6\n\(width) \(height)\n255\n".utf8.count + width * height * 3)
        #expect(try PPM.decode(bytes) == image)
    }

    @Test("Comments and other whitespace in the header are accepted", arguments: [
        "P6\n# c\n2 1\n255\n", "P6 2 1 255\n", "P6\n# one\n# two\n2\t1\r\n255\n", "P6\n2 # width\n1\n255\n", "P6\n2 1\n255 ",
    ])
    func comments(header: String) throws {
        let raster: [UInt8] = [10, 20, 30, 40, 50, 60]
        let image = try PPM.decode(Array(header.utf8) + raster)
        #expect(try image == RGBImage(width: 2, height: 1, pixels: raster))
    }

    @Test("Malformed files are rejected with invalidArgument", arguments: [
        Array("P3\n2 1\n255\n1 2 3 4 5 6\n".utf8),
        Array("P6\n2 1\n65535\n".utf8) + [UInt8](repeating: 0, count: 12),
        Array("P6\n2 1\n15\n".utf8) + [UInt8](repeating: 0, count: 6),
        Array("P6\n2 1\n255\n".utf8) + [1, 2, 3, 4, 5],
        Array("P6\n2 1\n255\n".utf8),
        Array("P6\n2 1\n255".utf8),
        Array("P6\n0 1\n255\n".utf8),
        Array("P6\n2 0\n255\n".utf8) + [1, 2, 3],
        Array("P6\n-2 1\n255\n".utf8) + [UInt8](repeating: 0, count: 6),
        Array("P6\nx 1\n255\n".utf8) + [UInt8](repeating: 0, count: 6),
        Array("P6\n999999999 1\n255\n".utf8),
        Array("P5\n2 1\n255\n".utf8) + [1, 2],
        Array("P6".utf8), [], Array("GIF89a".utf8),
    ])
    func rejects(bytes: [UInt8]) {
        let error = #expect(throws: PreviewLoopError.self) { try PPM.decode(bytes) }
        #expect(error?.code == .invalidArgument)
    }
}

/// `RGBImage`: drawing with clipping, and tiling into sheets.
@Suite("RGB image")
struct RGBImageTests {
    @Test("Five 2x2 images in three columns make a 6x4 sheet with the unused cell black")
    func tiled() throws {
        let colours: [(UInt8, UInt8, UInt8)] = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (0, 255, 255)]
        let images = try colours.map { c in try RGBImage(width: 2, height: 2, pixels: [c.0, c.1, c.2].repeated(4)) }
        let sheet = try RGBImage.tiled(images, columns: 3)
        #expect(sheet.size == Size(width: 6, height: 4))
        for x in 0..<6 { for y in 0..<4 {
            let cell = (y / 2) * 3 + x / 2
            let expected = cell < 5 ? colours[cell] : (0, 0, 0)
            #expect(same(sheet[x, y], expected), "pixel (\(x), \(y)) of cell \(cell)")
        } }
    }

    @Test("More columns than images: one row as wide as the images")
    func fewerImagesThanColumns() throws {
        let images = [distinctImage(width: 3, height: 2), distinctImage(width: 3, height: 2, seed: 50)]
        let sheet = try RGBImage.tiled(images, columns: 5)
        #expect(sheet.size == Size(width: 6, height: 2))
        for x in 0..<6 { for y in 0..<2 {
            #expect(same(sheet[x, y], images[x / 3][x % 3, y]))
        } }
    }

    @Test("Smaller tiles sit at their cell's top-left on black")
    func smallerTiles() throws {
        let big = distinctImage(width: 3, height: 3), small = distinctImage(width: 1, height: 2, seed: 100)
        let sheet = try RGBImage.tiled([big, small], columns: 2)
        #expect(sheet.size == Size(width: 6, height: 3))
        for x in 3..<6 { for y in 0..<3 {
            let expected = x == 3 && y < 2 ? small[0, y] : (0, 0, 0)
            #expect(same(sheet[x, y], expected), "(\(x), \(y))")
        } }
    }

    @Test("draw copies the overlapping part and clips the rest", arguments: Array(-5...6), Array(-4...5))
    func draw(atX ox: Int, y oy: Int) {
        let base = distinctImage(width: 4, height: 3, seed: 200)
        let stamp = distinctImage(width: 3, height: 2)
        var canvas = base
        canvas.draw(stamp, atX: ox, y: oy)
        for x in 0..<4 { for y in 0..<3 {
            let (sx, sy) = (x - ox, y - oy)
            let inside = (0..<3).contains(sx) && (0..<2).contains(sy)
            let expected = inside ? stamp[sx, sy] : base[x, y]
            #expect(same(canvas[x, y], (expected.red, expected.green, expected.blue)), "at (\(ox), \(oy)): pixel (\(x), \(y))")
        } }
    }

    @Test("Subscript reads red, green, blue at row-major offsets")
    func subscriptReads() throws {
        let image = try RGBImage(width: 2, height: 2, pixels: Array(0..<12))
        #expect(same(image[1, 0], (3, 4, 5)) && same(image[0, 1], (6, 7, 8)) && same(image[1, 1], (9, 10, 11)))
        #expect(try image.bytesPerRow == 6 && RGBImage(width: 3, height: 2).pixels == [UInt8](repeating: 0, count: 18))
    }
}

/// `FrameScaler.orient`: turning a scaled RGB24 picture into place, against ``OrientationModel``.
@Suite("Orienting pixels")
struct OrientTests {
    @Test("orient writes the upright picture at the placement and nothing else", arguments: Orientation.allCases,
          [Size(width: 4, height: 3), Size(width: 1, height: 5), Size(width: 3, height: 3), Size(width: 1, height: 1), Size(width: 6, height: 2)])
    func orient(orientation: Orientation, scaled: Size) {
        let source = distinctImage(width: scaled.width, height: scaled.height)
        let upright = OrientationModel.uprightSize(orientation, scaled)
        let canvas = Size(width: upright.width + 3, height: upright.height + 2)
        let placement = Rect(x: 2, y: 1, width: upright.width, height: upright.height)
        let sentinel: UInt8 = 0xEE
        var output = [UInt8](repeating: sentinel, count: canvas.area * 3)
        source.pixels.withUnsafeBufferPointer { from in
            output.withUnsafeMutableBufferPointer { to in
                FrameScaler.orient(from.baseAddress!, size: scaled, orientation: orientation,
                                   into: to.baseAddress!, rowBytes: canvas.width * 3, at: placement)
            }
        }
        var expected = [UInt8](repeating: sentinel, count: canvas.area * 3)
        for x in 0..<upright.width { for y in 0..<upright.height {
            let d = OrientationModel.decodedPixel(orientation, x: x, y: y, w: scaled.width, h: scaled.height)
            let pixel = source[d.x, d.y]
            let offset = ((placement.y + y) * canvas.width + placement.x + x) * 3
            expected[offset] = pixel.red
            expected[offset + 1] = pixel.green
            expected[offset + 2] = pixel.blue
        } }
        #expect(output == expected, "\(orientation) of \(scaled)")
    }
}

private extension Array {
    /// The array repeated `count` times.
    func repeated(_ count: Int) -> [Element] { (0..<count).flatMap { _ in self } }
}
