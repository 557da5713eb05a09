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

/// Runs the Python reference encoders on a PPM file.
enum PlaceholderOracle {
    struct Result: Codable {
        /// The reference's ThumbHash with the published rounding (halves up), base64.
        var thumbHash: String
        /// The same from the port as published on PyPI (halves to even).
        var thumbHashAsPorted: String
        var blurHash: String
        /// The largest difference, 0–255, between a channel of the average colour the reference
        /// decodes from the ThumbHash and that channel's mean over the hashed picture.
        var thumbHashMeanDifference: Double
        /// The largest difference, on 0–255, between a channel's linear-light mean over the
        /// reference's decode of the BlurHash and over the hashed picture.
        var blurHashLinearMeanDifference: Double
        /// PSNR in dB of the BlurHash's decode against the hashed picture under a Gaussian blur of
        /// radius longest side / 8.
        var blurHashPSNR: Double
        /// `imagehash.phash` of the hashed picture, 16 hex digits.
        var phash: String
    }

    static var folder: String { TestPaths.packageRoot.appendingPathComponent(".build/python-oracles").path }

    static func hash(_ path: String) throws -> Result {
        let result = try Child.tool("python3", ["-c", script, folder, path], killAfter: 240)
        guard result.status == 0 else {
            throw PlaceholderOracleError(message: "the oracle failed (run Scripts/install-deps.sh): \(result.stderr)")
        }
        // The last line: the thumbhash package prints a stray value of its own while decoding.
        let line = result.stdoutText.split(separator: "\n").last ?? ""
        return try JSONDecoder().decode(Result.self, from: Data(line.utf8))
    }

    struct PlaceholderOracleError: Error { var message: String }

    static let script = #"""
import base64, json, math, sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
import blurhash, imagehash, thumbhash
from PIL import Image, ImageFilter, ImageStat
image = Image.open(sys.argv[2]).convert("RGB")
w, h = image.size
rgba = [value for pixel in image.convert("RGBA").getdata() for value in pixel]
# The port rounds with Python's round (halves to even); the published encoder uses Math.round
# (halves up). Both results are reported; the module's own name `round` is swapped for the second.
as_ported = bytes(thumbhash.rgba_to_thumb_hash(w, h, rgba))
thumbhash.round = lambda value: math.floor(value + 0.5)
as_published = bytes(thumbhash.rgba_to_thumb_hash(w, h, rgba))
bh = blurhash.encode(image.copy(), min(4, w), min(3, h))  # it closes the image it is given
def linear(v):
    v /= 255
    return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4
def linear_means(picture):
    pixels = list(picture.getdata())
    return [sum(linear(p[c]) for p in pixels) / len(pixels) * 255 for c in range(3)]
blur_decoded = blurhash.decode(bh, w, h).convert("RGB")
blurred = image.filter(ImageFilter.GaussianBlur(max(w, h) / 8))
a, b = list(blur_decoded.getdata()), list(blurred.getdata())
mse = sum((x - y) ** 2 for p, q in zip(a, b) for x, y in zip(p, q)) / (3 * w * h)
average = thumbhash.thumb_hash_to_average_rgba(list(as_published))
print(json.dumps({
    "thumbHash": base64.b64encode(as_published).decode(),
    "thumbHashAsPorted": base64.b64encode(as_ported).decode(),
    "blurHash": bh,
    "thumbHashMeanDifference": max(abs(x * 255 - y) for x, y in zip(average[:3], ImageStat.Stat(image).mean)),
    "blurHashLinearMeanDifference": max(abs(x - y) for x, y in zip(linear_means(blur_decoded), linear_means(image))),
    "blurHashPSNR": 99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse),
    "phash": str(imagehash.phash(image)),
}))
"""#
}
