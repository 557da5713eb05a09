import Foundation
import PreviewLoop

/// Checks on web outputs made with real decoders (the ffmpeg/ffprobe CLIs, libwebp's tools), never ours.
package enum WebOracle {
    /// The first frame of an image or video file, decoded by the ffmpeg CLI to RGB24.
    ///
    /// The YCbCr → RGB step uses full chroma interpolation and accurate rounding, as the engine's own
    /// conversion and `Oracle.aspectFillFilter` do: ffmpeg's default flags share one chroma sample between
    /// two RGB pixels, which alone costs ~6 dB on testsrc2's colour edges (measured: a 4:2:0 round trip
    /// with no compression at all reads 30 dB with the default flags, 36 dB with these). `plain` decodes
    /// with the default flags instead, for reporting.
    package static func firstFrame(of path: String, size: Size, plain: Bool = false) throws -> RGBImage {
        let flags = plain ? [] : ["-sws_flags", "bicubic+full_chroma_int+accurate_rnd"]
        let result = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-i", path, "-frames:v", "1"] + flags
                                      + ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        guard result.status == 0, result.stdout.count == size.area * 3 else {
            throw OracleError(message: "ffmpeg decoded \(result.stdout.count) bytes of \(path): \(result.stderr)")
        }
        return try RGBImage(width: size.width, height: size.height, pixels: [UInt8](result.stdout))
    }

    /// An AVIF file decoded by libavif's own `avifdec` (Debian's `libavif-bin`, its AV1 decoder dav1d,
    /// its YCbCr → RGB step bilinear chroma upsampling with the file's CICP matrix) to 8-bit RGB, and what
    /// its `--info` says of the file: `Format`, `Range`, `Bit Depth`, `Color Primaries`, `Transfer Char.`,
    /// `Matrix Coeffs.` and so on, by name.
    package static func avifFrame(of path: String, size: Size) throws -> (image: RGBImage, info: [String: String]) {
        let png = path + ".avifdec.png"
        defer { try? FileManager.default.removeItem(atPath: png) }
        let decoded = try Child.tool("avifdec", ["--depth", "8", path, png])
        guard decoded.status == 0 else {
            throw OracleError(message: "avifdec could not decode \(path): \(decoded.stderr) \(String(decoding: decoded.stdout, as: UTF8.self))")
        }
        let described = try Child.tool("avifdec", ["--info", path])
        var info: [String: String] = [:]
        for line in String(decoding: described.stdout, as: UTF8.self).split(separator: "\n") {
            // ` * Color Primaries: 1`
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let name = parts[0].split(separator: "*", maxSplits: 1).last else { continue }
            info[name.trimmingCharacters(in: .whitespaces)] = parts[1].trimmingCharacters(in: .whitespaces)
        }
        return (try firstFrame(of: png, size: size), info)
    }

    /// A still WebP decoded by libwebp's own `dwebp` (its default "fancy" chroma upsampling) to RGB.
    package static func dwebpFrame(of path: String, size: Size) throws -> RGBImage {
        let png = path + ".dwebp.png"
        defer { try? FileManager.default.removeItem(atPath: png) }
        let decoded = try Child.tool("dwebp", ["-quiet", path, "-o", png])
        guard decoded.status == 0 else { throw OracleError(message: "dwebp could not decode \(path): \(decoded.stderr)") }
        return try firstFrame(of: png, size: size)
    }

    /// ffprobe's description of the first video stream (and whether the file has audio).
    package struct StreamReport {
        package var codec: String
        package var width: Int
        package var height: Int
        package var pixelFormat: String
        package var colorRange: String
        package var frameCount: Int?
        package var frameRate: Double?
        package var averageFrameRate: Double?
        package var duration: Double?
        package var streamTypes: [String]
    }

    package static func probe(_ path: String, countFrames: Bool = false) throws -> StreamReport {
        var arguments = ["-v", "error", "-show_entries",
                         "stream=codec_type,codec_name,width,height,pix_fmt,color_range,nb_read_frames,r_frame_rate,avg_frame_rate,duration:format=duration",
                         "-of", "json", path]
        if countFrames { arguments.insert("-count_frames", at: 2) }
        let result = try Child.tool("ffprobe", arguments)
        let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        guard let streams = json?["streams"] as? [[String: Any]],
              let video = streams.first(where: { $0["codec_type"] as? String == "video" }) else {
            throw OracleError(message: "ffprobe found no video stream in \(path): \(result.stderr)")
        }
        func rate(_ key: String) -> Double? {
            guard let text = video[key] as? String else { return nil }
            let parts = text.split(separator: "/").compactMap { Double($0) }
            return parts.count == 2 && parts[1] != 0 ? parts[0] / parts[1] : nil
        }
        let format = json?["format"] as? [String: Any]
        return StreamReport(codec: video["codec_name"] as? String ?? "", width: video["width"] as? Int ?? 0,
                            height: video["height"] as? Int ?? 0, pixelFormat: video["pix_fmt"] as? String ?? "",
                            colorRange: video["color_range"] as? String ?? "",
                            frameCount: (video["nb_read_frames"] as? String).flatMap { Int($0) },
                            frameRate: rate("r_frame_rate"), averageFrameRate: rate("avg_frame_rate"),
                            duration: (video["duration"] as? String ?? format?["duration"] as? String).flatMap { Double($0) },
                            streamTypes: streams.compactMap { $0["codec_type"] as? String })
    }
}
