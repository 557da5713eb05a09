import Foundation

/// Runs the Python reference encoders on a PPM file.
package enum PlaceholderOracle {
    package struct Result: Codable, Sendable {
        /// The reference's ThumbHash with the published rounding (halves up), base64.
        package var thumbHash: String
        /// The same from the port as published on PyPI (halves to even).
        package var thumbHashAsPorted: String
        package var blurHash: String
        /// The largest difference, 0–255, between a channel of the average colour the reference
        /// decodes from the ThumbHash and that channel's mean over the hashed picture.
        package var thumbHashMeanDifference: Double
        /// The largest difference, on 0–255, between a channel's linear-light mean over the
        /// reference's decode of the BlurHash and over the hashed picture.
        package var blurHashLinearMeanDifference: Double
        /// PSNR in dB of the BlurHash's decode against the hashed picture under a Gaussian blur of
        /// radius longest side / 8.
        package var blurHashPSNR: Double
        /// `imagehash.phash` of the hashed picture, 16 hex digits.
        package var phash: String
    }

    package static var folder: String { TestPaths.packageRoot.appendingPathComponent(".build/python-oracles").path }

    package static func hash(_ path: String) throws -> Result {
        let result = try Child.tool("python3", ["-c", script, folder, path], killAfter: 240)
        guard result.status == 0 else {
            throw PlaceholderOracleError(message: "the oracle failed (run Scripts/install-deps.sh): \(result.stderr)")
        }
        // The last line: the thumbhash package prints a stray value of its own while decoding.
        let line = result.stdoutText.split(separator: "\n").last ?? ""
        return try JSONDecoder().decode(Result.self, from: Data(line.utf8))
    }

    package struct PlaceholderOracleError: Error {
        package var message: String
        package init(message: String) { self.message = message }
    }

    /// `str(imagehash.phash(image))` of the picture in a file Pillow reads (PPM, PNG), 16 hex digits.
    package static func phash(_ path: String) throws -> String {
        let script = "import sys, warnings; warnings.simplefilter('ignore'); sys.path.insert(0, sys.argv[1]); "
            + "import imagehash; from PIL import Image; print(imagehash.phash(Image.open(sys.argv[2]).convert('RGB')))"
        let result = try Child.tool("python3", ["-c", script, folder, path], killAfter: 240)
        guard result.status == 0 else {
            throw PlaceholderOracleError(message: "the oracle failed (run Scripts/install-deps.sh): \(result.stderr)")
        }
        return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

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
