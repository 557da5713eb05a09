import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// ``PerceptualHash`` against PyPI's `imagehash.phash` (4.3.2 on Pillow, installed in
/// `.build/python-oracles` by `Scripts/install-deps.sh`): the picture is written as a PPM, Python
/// opens it and hashes it, and the 64 bits must be the same. Pictures of every shape: smaller than
/// 32x32 (upscaled), exactly 32x32 (not resized), larger, very wide, and decoded fixture frames.
@Suite("pHash matches imagehash.phash")
struct PerceptualHashOracleTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var image: @Sendable () throws -> RGBImage
        var testDescription: String { name }
    }

    static func frame(_ fixture: String, at time: Double, _ width: Int, _ height: Int) throws -> RGBImage {
        let sampler = try FrameSampler(source: .file(TestPaths.fixture(fixture)))
        return try sampler.frame(at: time, size: Size(width: width, height: height)).image
    }

    static let cases: [Case] = [
        Case(name: "gradient 160x90") { try PlaceholderPictures.gradient(width: 160, height: 90) },
        Case(name: "noise and bars 32x32 (not resized)") { try PlaceholderPictures.noisyBars(width: 32, height: 32) },
        Case(name: "noise and bars 64x64") { try PlaceholderPictures.noisyBars(width: 64, height: 64, seed: 3) },
        Case(name: "portrait 45x99") { try PlaceholderPictures.gradient(width: 45, height: 99) },
        Case(name: "small 7x5 (upscaled)") { try PlaceholderPictures.noisyBars(width: 7, height: 5, seed: 11) },
        Case(name: "strip 4000x10") { try PlaceholderPictures.noisyBars(width: 4000, height: 10, seed: 5) },
        Case(name: "landscape.mp4 at 1 s, 320x180") { try frame("landscape.mp4", at: 1, 320, 180) },
        Case(name: "landscape.mp4 at 3 s, 1280x720") { try frame("landscape.mp4", at: 3, 1280, 720) },
        Case(name: "portrait-phone.mp4 at 1 s, 180x320") { try frame("portrait-phone.mp4", at: 1, 180, 320) },
        Case(name: "card.mp4 at 2 s, 333x187") { try frame("card.mp4", at: 2, 333, 187) },
        Case(name: "black 50x50") { try RGBImage(width: 50, height: 50) },
        Case(name: "grey 640x360") { try RGBImage(width: 640, height: 360, pixels: [UInt8](repeating: 128, count: 640 * 360 * 3)) },
        Case(name: "1x1") { try RGBImage(width: 1, height: 1, pixels: [200, 30, 90]) },
    ]

    @Test(arguments: cases)
    func equalsTheReference(_ item: Case) throws {
        let image = try item.image()
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/picture.ppm"
        try Data(PPM.encode(image)).write(to: URL(fileURLWithPath: path))
        let reference = try PlaceholderOracle.phash(path)
        let ours = PerceptualHash(image)
        #expect(ours.description == reference, "distance \(PerceptualHash(hex: reference).map(ours.distance) ?? -1)")
    }
}
