import Foundation
import PreviewLoop
import PreviewLoopTestSupport

/// HDR test clips made on the fly with the `ffmpeg` CLI (zimg's `zscale` for the colour, x265 for the
/// HEVC Main 10 stream and its HDR10 metadata), their SDR originals, and the exact-inverse ceiling.
enum HDRClips {
    /// SDR BT.709 content of three kinds: natural-ish (testsrc2), saturated bars, gradients.
    static let contents: [String: String] = [
        "testsrc2": "testsrc2=size=320x180:rate=25",
        "smptehdbars": "smptehdbars=size=320x180:rate=25",
        "gradients": "gradients=size=320x180:rate=25:speed=0.05:c0=0x2060c0:c1=0xe0a020:c2=0x20c040:c3=0xc02040:nb_colors=4:seed=7",
    ]
    static let size = Size(width: 320, height: 180)
    static let frameCount = 10

    /// The SDR original as 4:2:0 BT.709 limited range (what a camera or encoder would hand on): drawn in
    /// RGB and converted with the BT.709 matrix, so its colours lie inside BT.709.
    static func sdrChain(_ content: String) -> String {
        "\(contents[content]!),format=rgb24,scale=out_color_matrix=bt709:out_range=tv:flags=bicubic+accurate_rnd,format=yuv420p"
    }

    /// `zscale` from the SDR original to `transfer` (smpte2084 or arib-std-b67) in BT.2020, 10-bit, with
    /// SDR white at HDR reference white: npl=203 makes linear 1.0 (SDR white) 203 cd/m².
    static func toHDR(_ transfer: String) -> String {
        "zscale=tin=bt709:min=bt709:pin=bt709:rin=tv:t=\(transfer):p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le"
    }

    /// The exact inverse: the same `zscale` chain backwards (no tone curve), then RGB as the original's.
    static func ceilingFilter(_ transfer: String) -> String {
        "zscale=tin=\(transfer):pin=bt2020:min=bt2020nc:rin=tv:t=bt709:p=bt709:m=bt709:r=tv:npl=203,format=yuv420p,"
            + rgbFilter
    }

    /// 4:2:0 BT.709 → RGB24 as the engine converts SDR (bicubic, full chroma interpolation).
    static let rgbFilter = "scale=in_color_matrix=bt709:in_range=tv:flags=bicubic+full_chroma_int+accurate_rnd,format=rgb24"

    /// Encodes `filter` output (from a lavfi `source`) as HEVC Main 10 with the given x265 parameters.
    static func encode(source: String, filter: String, transfer: String, x265: String, frames: Int, to path: String,
                       lossless: Bool = false) throws {
        let params = "log-level=error:pools=1:frame-threads=1:repeat-headers=1:colorprim=bt2020:transfer=\(transfer)"
            + ":colormatrix=bt2020nc" + (lossless ? ":lossless=1" : "") + x265
        let result = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", source, "-vf", filter,
                                             "-frames:v", String(frames), "-c:v", "libx265", "-preset", "fast",
                                             "-crf", "18", "-pix_fmt", "yuv420p10le", "-x265-params", params, path])
        guard result.status == 0 else { throw OracleError(message: "ffmpeg failed: \(result.stderr)") }
    }

    /// A round-trip clip: `content` through `toHDR(transfer)`; PQ ones carry HDR10 metadata (a 1000 cd/m²
    /// mastering display, MaxCLL 1000, MaxFALL 400 — what a grading suite writes by default).
    static func roundTripClip(_ content: String, transfer: String, in directory: String) throws -> String {
        let path = "\(directory)/\(content)-\(transfer).mp4"
        let metadata = transfer == "smpte2084"
            ? ":hdr10=1:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400" : ""
        try encode(source: sdrChain(content), filter: toHDR(transfer), transfer: transfer, x265: metadata,
                   frames: frameCount, to: path)
        return path
    }

    /// The SDR original's frames as RGB24.
    static func originals(_ content: String) throws -> [RGBImage] {
        let result = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-f", "lavfi", "-i", sdrChain(content), "-vf", rgbFilter,
                                             "-frames:v", String(frameCount), "-f", "rawvideo", "-"])
        guard result.status == 0 else { throw OracleError(message: "ffmpeg failed: \(result.stderr)") }
        let bytes = [UInt8](result.stdout), frameBytes = size.area * 3
        return try (0..<(bytes.count / frameBytes)).map {
            try RGBImage(width: size.width, height: size.height, pixels: Array(bytes[$0 * frameBytes..<($0 + 1) * frameBytes]))
        }
    }

    /// A PQ grey ramp, left to right, linear in light from 0 to `peak` cd/m², `width`x64, lossless, with
    /// MaxCLL `maxCLL` and a mastering display of `peak`.
    static func rampClip(peak: Double, maxCLL: Int, width: Int = 640, in directory: String) throws -> String {
        let path = "\(directory)/ramp-\(Int(peak))-\(maxCLL).mp4"
        // PQ of L = peak * X / (W - 1) cd/m², into 10-bit limited-range luma; chroma neutral.
        let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128
        let c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
        let y = "pow(\(peak / 10000)*X/(W-1)\\,\(m1))"
        let pq = "pow((\(c1)+\(c2)*\(y))/(1+\(c3)*\(y))\\,\(m2))"
        let filter = "format=yuv444p10le,geq=lum='64+876*\(pq)':cb=512:cr=512,format=yuv420p10le"
        let metadata = ":hdr10=1:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)"
            + "L(\(Int(peak) * 10000),1):max-cll=\(maxCLL),\(maxCLL / 4)"
        try encode(source: "color=c=black:size=\(width)x64:rate=25", filter: filter, transfer: "smpte2084", x265: metadata,
                   frames: 2, to: path, lossless: true)
        return path
    }

    /// Mean HSV saturation, (max − min) / max over pixels that are not black.
    static func meanSaturation(_ image: RGBImage) -> Double {
        var sum = 0.0, count = 0
        for index in stride(from: 0, to: image.pixels.count, by: 3) {
            let r = Int(image.pixels[index]), g = Int(image.pixels[index + 1]), b = Int(image.pixels[index + 2])
            let high = max(r, g, b), low = min(r, g, b)
            guard high > 8 else { continue }
            sum += Double(high - low) / Double(high)
            count += 1
        }
        return count == 0 ? 0 : sum / Double(count)
    }
}
