import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// ``PerceptualHash`` and ``PosterRanking`` without decoding: the hash's text form, distances, the
/// stated result on a flat picture, and the ranking rules on synthetic scores. Equality with
/// `imagehash.phash` is checked in `PerceptualHashOracleTests` (it runs Python).
@Suite("Perceptual hashes and poster rankings")
struct PerceptualHashTests {
    @Test func hexRoundTrip() throws {
        let hash = PerceptualHash(bits: 0x00f0_0000_0000_0a01)
        #expect(hash.description == "00f0000000000a01")
        #expect(PerceptualHash(hex: "00F0000000000A01") == hash)
        for bad in ["", "00f0000000000a0", "00f0000000000a011", "+0f0000000000a01", "00f0000000000a0g", "0x0000000000000a"] {
            #expect(PerceptualHash(hex: bad) == nil, "\(bad)")
        }
    }

    @Test func distanceCountsDifferingBits() {
        let a = PerceptualHash(bits: 0b1011), b = PerceptualHash(bits: 0b0110)
        #expect(a.distance(to: b) == 3)
        #expect(a.distance(to: a) == 0)
        #expect(PerceptualHash(bits: 0).distance(to: PerceptualHash(bits: .max)) == 64)
    }

    @Test("A picture of one colour hashes to its constant term alone (black: nothing), whatever its size")
    func flatPicture() throws {
        for (width, height, value) in [(1, 1, UInt8(200)), (50, 50, 0), (640, 360, 128), (32, 32, 255), (7, 900, 1)] {
            let image = try RGBImage(width: width, height: height, pixels: [UInt8](repeating: value, count: width * height * 3))
            #expect(PerceptualHash(image).description == (value == 0 ? "0000000000000000" : "8000000000000000"),
                    "\(width)x\(height) at \(value)")
        }
    }

    @Test("Half dark, half light: the hash has half its bits set and its mirror image differs")
    func halves() throws {
        func halves(_ leftDark: Bool) throws -> RGBImage {
            var pixels = [UInt8](repeating: 0, count: 64 * 64 * 3)
            for y in 0..<64 {
                for x in 0..<64 where (x < 32) != leftDark {
                    pixels[(y * 64 + x) * 3] = 255; pixels[(y * 64 + x) * 3 + 1] = 255; pixels[(y * 64 + x) * 3 + 2] = 255
                }
            }
            return try RGBImage(width: 64, height: 64, pixels: pixels)
        }
        let left = PerceptualHash(try halves(true)), right = PerceptualHash(try halves(false))
        // Of 64 coefficients, those above the median: at most half.
        #expect(left.bits.nonzeroBitCount <= 32)
        #expect(left.distance(to: right) > 0)
    }

    @Test("A picture and a scaled copy of it are a few bits apart; two different pictures are not")
    func scaledCopies() throws {
        // Blocks of 40x30 pixels in seeded levels: structure a downscale keeps (pixel noise, the other
        // picture, it does not).
        var generator = SeededGenerator(state: 17)
        let levels = (0..<48).map { _ in UInt8(generator.next() % 256) }
        var blocks = [UInt8](repeating: 0, count: 320 * 180 * 3)
        for y in 0..<180 {
            for x in 0..<320 {
                let level = levels[(y / 30) * 8 + x / 40]
                blocks[(y * 320 + x) * 3] = level; blocks[(y * 320 + x) * 3 + 1] = level / 2; blocks[(y * 320 + x) * 3 + 2] = 255 - level
            }
        }
        let picture = try RGBImage(width: 320, height: 180, pixels: blocks)
        let other = try PlaceholderPictures.noisyBars(width: 320, height: 180)
        // The same picture at half size, each pixel the mean of four.
        var half = [UInt8](repeating: 0, count: 160 * 90 * 3)
        for y in 0..<90 {
            for x in 0..<160 {
                for channel in 0..<3 {
                    var sum = 0
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] { sum += Int(picture.pixels[((2 * y + dy) * 320 + 2 * x + dx) * 3 + channel]) }
                    half[(y * 160 + x) * 3 + channel] = UInt8((sum + 2) / 4)
                }
            }
        }
        let small = try RGBImage(width: 160, height: 90, pixels: half)
        #expect(PerceptualHash(picture).distance(to: PerceptualHash(small)) <= 4)
        #expect(PerceptualHash(picture).distance(to: PerceptualHash(other)) > 16)
    }

    // MARK: - Poster ranking

    static func analysis(_ time: Double, brightness: Double, contrast: Double, sharpness: Double, uniformity: Double = 0.15,
                         layout: [Double]) -> PosterAnalysis {
        PosterAnalysis(time: time, scores: PosterScores(brightness: brightness, contrast: contrast, sharpness: sharpness,
                                                        uniformity: uniformity), layout: layout)
    }

    static let rising = (0..<64).map { Double($0) / 64 }
    static let falling = (0..<64).map { 1 - Double($0) / 64 }

    @Test("Good candidates come first by score, by the documented product; rejected ones after, in time order")
    func rankingRules() throws {
        let analyses = [
            Self.analysis(1, brightness: 0.02, contrast: 0.001, sharpness: 0.0001, uniformity: 1, layout: Self.rising), // black
            Self.analysis(2, brightness: 0.45, contrast: 0.20, sharpness: 0.02, layout: Self.rising),
            Self.analysis(3, brightness: 0.45, contrast: 0.25, sharpness: 0.03, layout: Self.rising),
            Self.analysis(4, brightness: 0.05, contrast: 0.06, sharpness: 0.01, uniformity: 0.97, layout: Self.falling), // title card
            Self.analysis(5, brightness: 0.80, contrast: 0.25, sharpness: 0.03, layout: Self.falling),
        ]
        let colourfulness = [0, 0.3, 0.3, 0, 0.3]
        let ranking = PosterRanking.rank(analyses, colourfulness: colourfulness)
        #expect(ranking.map(\.time) == [3, 2, 5, 1, 4])
        #expect(ranking.map(\.rejection) == [nil, nil, nil, .black, .titleCard])
        #expect(!ranking.contains { $0.isChosen })
        for candidate in ranking {
            let exposure = max(0, 1 - abs(candidate.scores.brightness - 0.45) / 0.45)
            #expect(abs(candidate.exposure - exposure) < 1e-12)
            guard let score = candidate.score else {
                #expect(candidate.rejection == PosterRules.flaw(of: candidate.scores))
                continue
            }
            let expected = (candidate.scores.contrast * candidate.scores.sharpness).squareRoot() * (0.25 + candidate.colourfulness)
                * (0.5 + 0.5 * candidate.exposure) * (0.5 + 0.5 * max(0, candidate.typicality))
            #expect(abs(score - expected) < 1e-12)
        }
        // Typicality: the mean correlation with the other good ones (+1, −1 for the mirrored layout).
        #expect(abs(ranking[0].typicality - 0) < 1e-9)
        #expect(abs(ranking[2].typicality - -1) < 1e-9)
    }

    @Test("Equal scores keep time order; a lone good candidate is fully typical")
    func rankingTies() {
        let same = [Self.analysis(1, brightness: 0.45, contrast: 0.2, sharpness: 0.02, layout: Self.rising),
                    Self.analysis(2, brightness: 0.45, contrast: 0.2, sharpness: 0.02, layout: Self.rising)]
        #expect(PosterRanking.rank(same, colourfulness: [0.1, 0.1]).map(\.time) == [1, 2])
        let lone = PosterRanking.rank([same[0]], colourfulness: [0.1])
        #expect(lone.first?.typicality == 1)
    }
}
