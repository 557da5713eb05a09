import Foundation
import PreviewLoop

/// Locates fixtures and tools relative to this file, never the working directory.
package enum TestPaths {
    /// The package's root: the nearest folder above this file (in `Tests/PreviewLoopTestSupport/`)
    /// holding `Package.swift`.
    package static let packageRoot: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
            precondition(folder.path != "/", "no Package.swift above \(#filePath)")
            folder = folder.deletingLastPathComponent()
        }
        return folder
    }()

    package static func fixture(_ name: String) -> String {
        packageRoot.appendingPathComponent("Fixtures").appendingPathComponent(name).path
    }

    /// The `preview-loop` binary `swift build` put next to the test bundle.
    package static var cliBinary: String {
        let debug = packageRoot.appendingPathComponent(".build/debug/preview-loop").path
        return debug
    }

    /// A new empty temporary directory.
    package static func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "previewloop-tests-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Batch recipes for tests about something other than the recipe's outputs (resume, shards, locks,
/// failures, names): the default recipe renders sprites and a hover MP4 for every clip, which such
/// tests pay for without looking at.
package enum TestRecipes {
    /// A recipe file (in a folder of its own) making only the poster.
    package static let posterOnly: String = {
        let path = TestPaths.temporaryDirectory() + "/poster-only.json"
        try! #"{"poster":{}}"#.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }()
}

/// The `ffmpeg` and `ffprobe` CLIs used as oracles.
package enum Oracle {
    /// Every frame of a clip as ffmpeg shows it (autorotated), passed through `filter`, as RGB24 images.
    package static func frames(of path: String, filter: String, size: Size) throws -> [RGBImage] {
        let result = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-i", path, "-an", "-sn", "-vf", filter,
                                            "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        guard result.status == 0 else { throw OracleError(message: "ffmpeg failed: \(result.stderr)") }
        let frameBytes = size.width * size.height * 3
        let count = result.stdout.count / frameBytes
        let bytes = [UInt8](result.stdout)
        return try (0..<count).map { index in
            try RGBImage(width: size.width, height: size.height, pixels: Array(bytes[index * frameBytes..<(index + 1) * frameBytes]))
        }
    }

    /// Presentation times (seconds from the video stream's start) of every decoded frame, per ffprobe.
    package static func frameTimes(of path: String) throws -> [Double] {
        let result = try Child.tool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                             "frame=best_effort_timestamp_time", "-of", "csv=p=0", path])
        let start = try streamStart(of: path)
        return result.stdoutText.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ",", with: "")) }
            .map { $0 - start }
    }

    /// Presentation times (seconds from the video stream's start) of the keyframes, per ffprobe.
    package static func keyframeTimes(of path: String) throws -> [Double] {
        let result = try Child.tool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                             "frame=key_frame,best_effort_timestamp_time", "-of", "csv=p=0", path])
        let start = try streamStart(of: path)
        return result.stdoutText.split(separator: "\n").compactMap { line -> Double? in
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count >= 2, fields[0] == "1", let time = Double(fields[1]) else { return nil }
            return time - start
        }
    }

    package static func streamStart(of path: String) throws -> Double {
        let result = try Child.tool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=start_time",
                                             "-of", "csv=p=0", path])
        // MPEG-TS prints the value once per program and stream: take the first.
        let first = result.stdoutText.split(separator: "\n").first { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
        return Double(first.replacingOccurrences(of: ",", with: "").trimmingCharacters(in: .whitespaces)) ?? 0
    }

    /// The exact centred aspect-fill crop of the upright picture as an ffmpeg filter, computed here
    /// independently of the engine: crop in upright pixels from the display aspect, then scale with a
    /// good filter (bicubic, full chroma interpolation, accurate rounding). FFmpeg's default `scale`
    /// flags share chroma between pixel pairs, a ~6 dB error of its own on sharp colour edges.
    package static func aspectFillFilter(uprightWidth: Int, uprightHeight: Int, sampleAspect: Double, output: Size) -> String {
        let displayWidth = Double(uprightWidth) * sampleAspect, displayHeight = Double(uprightHeight)
        let targetAspect = Double(output.width) / Double(output.height)
        var cropWidth = Double(uprightWidth), cropHeight = Double(uprightHeight)
        if displayWidth / displayHeight > targetAspect {
            cropWidth = displayHeight * targetAspect / sampleAspect
        } else {
            cropHeight = displayWidth / targetAspect
        }
        let cw = min(uprightWidth, max(1, Int(cropWidth.rounded()))), ch = min(uprightHeight, max(1, Int(cropHeight.rounded())))
        return "crop=\(cw):\(ch):\((uprightWidth - cw) / 2):\((uprightHeight - ch) / 2):exact=1,scale=\(output.width):\(output.height):flags=bicubic+full_chroma_int+accurate_rnd,setsar=1"
    }
}

package struct OracleError: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }
    package init(message: String) { self.message = message }
}

/// Image comparison.
package enum Compare {
    /// Peak signal-to-noise ratio in dB over all channels (infinity for identical images).
    package static func psnr(_ a: RGBImage, _ b: RGBImage) -> Double {
        psnr(a.pixels, b.pixels)
    }

    /// PSNR in dB of two equally long runs of 8-bit samples (infinity when identical).
    package static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count)
        var sum = 0.0
        for index in 0..<a.count {
            let d = Double(a[index]) - Double(b[index])
            sum += d * d
        }
        let mse = sum / Double(a.count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    /// PSNR in dB of the BT.709 luma (`0.2126 R + 0.7152 G + 0.0722 B`) of two images: what a 4:2:0
    /// format keeps at full resolution, so its fidelity apart from the chroma subsampling it mandates.
    package static func lumaPSNR(_ a: RGBImage, _ b: RGBImage) -> Double {
        precondition(a.pixels.count == b.pixels.count)
        var sum = 0.0
        for index in stride(from: 0, to: a.pixels.count, by: 3) {
            let ya = 0.2126 * Double(a.pixels[index]) + 0.7152 * Double(a.pixels[index + 1]) + 0.0722 * Double(a.pixels[index + 2])
            let yb = 0.2126 * Double(b.pixels[index]) + 0.7152 * Double(b.pixels[index + 1]) + 0.0722 * Double(b.pixels[index + 2])
            sum += (ya - yb) * (ya - yb)
        }
        let mse = sum / Double(a.pixels.count / 3)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    /// Mean of each channel.
    package static func channelMeans(_ image: RGBImage) -> (Double, Double, Double) {
        var sums = (0.0, 0.0, 0.0)
        for index in stride(from: 0, to: image.pixels.count, by: 3) {
            sums.0 += Double(image.pixels[index]); sums.1 += Double(image.pixels[index + 1]); sums.2 += Double(image.pixels[index + 2])
        }
        let n = Double(image.pixels.count / 3)
        return (sums.0 / n, sums.1 / n, sums.2 / n)
    }

    /// The index of the image most similar to `image`, with its PSNR.
    package static func best(_ image: RGBImage, among candidates: [RGBImage]) -> (index: Int, psnr: Double) {
        var best = (index: -1, psnr: -Double.infinity)
        for (index, candidate) in candidates.enumerated() {
            let value = psnr(image, candidate)
            if value > best.psnr { best = (index, value) }
        }
        return best
    }
}
