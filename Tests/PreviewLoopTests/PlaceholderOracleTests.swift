import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// ``ImagePlaceholder`` against the reference encoders from PyPI (`thumbhash`, `blurhash-python`,
/// installed in `.build/python-oracles` by `Scripts/install-deps.sh`): the picture the Swift code
/// hashes (``ImagePlaceholder/hashedPicture(of:)``) is written as a PPM, Python hashes the same
/// pixels, and the strings must be equal. Python also decodes both hashes back to pictures of the
/// hashed size; each must keep the picture's mean colour and look like its blurred self.
@Suite("Placeholders match the reference encoders")
struct PlaceholderOracleTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var image: @Sendable () throws -> RGBImage
        /// 1x1 (200, 30, 90): red − green is 2/3, so the colour term 31.5 + 31.5 × 2/3 is 52.5.
        var hasExactHalf = false
        /// BlurHash's 4x3 cosines cannot draw the fixtures' sharp colour bars: 12–14 dB there.
        var minimumPSNR = 20.0
        var testDescription: String { name }

        init(name: String, hasExactHalf: Bool = false, minimumPSNR: Double = 20,
             image: @escaping @Sendable () throws -> RGBImage) {
            self.name = name
            self.hasExactHalf = hasExactHalf
            self.minimumPSNR = minimumPSNR
            self.image = image
        }
    }

    static let cases: [Case] = [
        Case(name: "gradient 160x90 (downscaled to 100x56)") { try PlaceholderPictures.gradient(width: 160, height: 90) },
        Case(name: "noise and bars 64x64 (hashed as is)") { try PlaceholderPictures.noisyBars(width: 64, height: 64) },
        Case(name: "portrait 45x99") { try PlaceholderPictures.gradient(width: 45, height: 99) },
        Case(name: "landscape.mp4 poster 320x180", minimumPSNR: 12) {
            let sampler = try FrameSampler(source: .file(TestPaths.fixture("landscape.mp4")))
            return try sampler.posterFrame(in: 0..<4, size: Size(width: 320, height: 180)).frame.image
        },
        Case(name: "portrait-phone.mp4 poster 180x320", minimumPSNR: 10) {
            let sampler = try FrameSampler(source: .file(TestPaths.fixture("portrait-phone.mp4")))
            return try sampler.posterFrame(in: 0..<4, size: Size(width: 180, height: 320)).frame.image
        },
        Case(name: "1x1", hasExactHalf: true) { try RGBImage(width: 1, height: 1, pixels: [200, 30, 90]) },
        Case(name: "black 50x50") { try RGBImage(width: 50, height: 50) },
        Case(name: "white 120x120") { try RGBImage(width: 120, height: 120, pixels: [UInt8](repeating: 255, count: 120 * 120 * 3)) },
        Case(name: "strip 16000x10 (downscaled to 100x1)") { try PlaceholderPictures.gradient(width: 16000, height: 10) },
    ]

    @Test(arguments: cases)
    func equalsTheReference(_ item: Case) throws {
        let image = try item.image()
        let placeholder = ImagePlaceholder(image)
        let hashed = ImagePlaceholder.hashedPicture(of: image)
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/hashed.ppm"
        try Data(PPM.encode(hashed)).write(to: URL(fileURLWithPath: path))
        let reference = try PlaceholderOracle.hash(path)
        #expect(placeholder.thumbHash == reference.thumbHash)
        // The port rounds halves to even; only a picture with a coefficient on an exact half differs.
        if !item.hasExactHalf { #expect(placeholder.thumbHash == reference.thumbHashAsPorted) }
        #expect(placeholder.blurHash == reference.blurHash)
        // Decoded by the references, the hashes keep the picture's mean and look like it blurred.
        // (The PyPI ThumbHash port's full decoder returns a flat picture; its average is used.)
        #expect(reference.thumbHashMeanDifference <= 6, "\(reference)")
        #expect(reference.blurHashLinearMeanDifference <= 6)
        #expect(reference.blurHashPSNR >= item.minimumPSNR, "\(reference)")
    }
}
