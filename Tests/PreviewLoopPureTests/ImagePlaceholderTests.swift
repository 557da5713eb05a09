import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// ``ImagePlaceholder`` without the oracles: the downscale, the dominant colour, the stated results
/// on degenerate pictures and the refusals. Equality with the reference encoders is checked in
/// `PlaceholderOracleTests` (it runs Python).
@Suite("Image placeholders")
struct ImagePlaceholderTests {
    static func uniform(_ width: Int, _ height: Int, _ color: [UInt8]) throws -> RGBImage {
        try RGBImage(width: width, height: height, pixels: [UInt8]((0..<(width * height)).flatMap { _ in color }))
    }

    /// BlurHash of a black picture with 4x3 components: size flag `L`, maximum `0`, the colour in four
    /// digits, then eleven zero AC components (`fQ`: 9 × 19² + 9 × 19 + 9 in base 83).
    static let flatACs = String(repeating: "fQ", count: 11)

    @Test func blackPicture() throws {
        let placeholder = ImagePlaceholder(try RGBImage(width: 50, height: 50))
        #expect(placeholder.blurHash == "L00000" + Self.flatACs)
        #expect(placeholder.dominantColor.description == "#000000")
        let bytes = try #require(Data(base64Encoded: placeholder.thumbHash))
        #expect(bytes[0] & 63 == 0)  // lightness 0
        #expect(bytes.count == 5 + 19)  // header, then 27 lightness and 2 × 5 colour terms, two per byte
    }

    @Test func whitePicture() throws {
        let placeholder = ImagePlaceholder(try Self.uniform(120, 120, [255, 255, 255]))
        // The colour 0xFFFFFF is `TSUA`. BlurHash's basis cos(πix/w) is not centred on the pixels, so
        // a flat picture keeps small odd AC terms (the reference encoder gives the same string).
        #expect(placeholder.blurHash.hasPrefix("L"))
        #expect(placeholder.blurHash.dropFirst(2).prefix(4) == "TSUA")
        #expect(placeholder.dominantColor.description == "#ffffff")
        let bytes = try #require(Data(base64Encoded: placeholder.thumbHash))
        #expect(bytes[0] & 63 == 63)  // lightness 1
    }

    @Test func onePixel() throws {
        let placeholder = ImagePlaceholder(try RGBImage(width: 1, height: 1, pixels: [200, 30, 90]))
        // One component each way: size flag 0, maximum 0, the colour exactly.
        #expect(placeholder.blurHash.count == 6)
        #expect(placeholder.blurHash.hasPrefix("00"))
        #expect(placeholder.dominantColor == RGBAColor(red: 200, green: 30, blue: 90))
        #expect(Data(base64Encoded: placeholder.thumbHash) != nil)
    }

    @Test func veryWideStrip() throws {
        let strip = try PlaceholderPictures.gradient(width: 16000, height: 10)
        let hashed = ImagePlaceholder.hashedPicture(of: strip)
        #expect(hashed.size == Size(width: 100, height: 1))
        let placeholder = ImagePlaceholder(strip)
        // 4x1 components: size flag 3, then the maximum, the colour and three AC components.
        #expect(placeholder.blurHash.count == 2 + 4 + 3 * 2)
        #expect(placeholder.blurHash.hasPrefix("3"))
        let bytes = try #require(Data(base64Encoded: placeholder.thumbHash))
        #expect(bytes[4] & 0x80 != 0)  // landscape
    }

    @Test(arguments: [(160, 90, 100, 56), (90, 160, 56, 100), (100, 100, 100, 100), (64, 30, 64, 30), (101, 1, 100, 1),
                      (1, 16000, 1, 100)])
    func hashedPictureSize(_ width: Int, _ height: Int, _ expectedWidth: Int, _ expectedHeight: Int) throws {
        let image = try RGBImage(width: width, height: height)
        #expect(ImagePlaceholder.hashedPicture(of: image).size == Size(width: expectedWidth, height: expectedHeight))
    }

    @Test func hashedPictureIsTheBoxMean() throws {
        // A 200x200 checkerboard of black and white pixels: every 2x2 box averages to 127.5, rounded 128.
        var pixels = [UInt8](repeating: 0, count: 200 * 200 * 3)
        for y in 0..<200 { for x in 0..<200 where (x + y) % 2 == 0 { for c in 0..<3 { pixels[(y * 200 + x) * 3 + c] = 255 } } }
        let hashed = ImagePlaceholder.hashedPicture(of: try RGBImage(width: 200, height: 200, pixels: pixels))
        #expect(hashed.size == Size(width: 100, height: 100))
        #expect(hashed.pixels.allSatisfy { $0 == 128 })
    }

    @Test func dominantColorIsTheFullestBucketsMean() throws {
        // 60% reds around (240, 20, 20), 40% blue: the mean would be purple; the dominant colour is
        // the mean of the reds.
        var pixels: [UInt8] = []
        for index in 0..<100 {
            pixels += index < 60 ? [UInt8(236 + index % 8), 20, 20] : [10, 20, 250]
        }
        let placeholder = ImagePlaceholder(try RGBImage(width: 10, height: 10, pixels: pixels))
        // Reds 236…243 seven times, then 236…239: mean 239.37 → 239.
        #expect(placeholder.dominantColor == RGBAColor(red: 239, green: 20, blue: 20))
    }

    @Test func dominantColorTieGoesToTheFirstBucket() throws {
        let pixels: [UInt8] = [250, 250, 250, 5, 5, 5]
        let placeholder = ImagePlaceholder(try RGBImage(width: 2, height: 1, pixels: pixels))
        #expect(placeholder.dominantColor.description == "#050505")
    }

    @Test func encodersRefuseWhatTheyCannotEncode() throws {
        #expect(throws: PreviewLoopError.self) { try ThumbHash.encode(try RGBImage(width: 101, height: 10)) }
        let image = try RGBImage(width: 4, height: 4)
        #expect(throws: PreviewLoopError.self) { try BlurHash.encode(image, xComponents: 0, yComponents: 3) }
        #expect(throws: PreviewLoopError.self) { try BlurHash.encode(image, xComponents: 4, yComponents: 10) }
    }

    @Test func recordCarriesThePlaceholders() throws {
        var output = BatchRecord.Output(kind: "poster", path: "a/poster.jpg", bytes: 10)
        let placeholder = ImagePlaceholder(try PlaceholderPictures.gradient(width: 32, height: 18))
        output.placeholder = placeholder
        #expect(output.placeholder == placeholder)
        let json = JSONValue.line(output)
        #expect(json.contains("\"thumbhash\":\"\(placeholder.thumbHash.replacingOccurrences(of: "/", with: "\\/"))\"")
                || json.contains("\"thumbhash\":\"\(placeholder.thumbHash)\""))
        #expect(json.contains("\"blurhash\":"))
        #expect(json.contains("\"dominant_color\":\"\(placeholder.dominantColor)\""))
    }
}
