/// A looping-video file format for hover previews, chosen by a file name's extension.
///
/// Every format is written by FFmpeg's own encoder and muxer through libavcodec and libavformat.
public enum AnimationFormat: String, CaseIterable, Sendable {
    /// MP4 with H.264 (libx264, `veryfast` preset, High profile, `yuv420p`, BT.709 limited range,
    /// tagged), `+faststart` so `moov` precedes `mdat`, no audio track. Needs an even width and height.
    case mp4
    /// Animated WebP (libwebp_anim), looping forever: lossy VP8 frames, or lossless ones at quality 100.
    case webp
    /// Animated GIF (FFmpeg's gif encoder), looping forever, with one 256-colour palette computed for
    /// the whole clip and Floyd–Steinberg dithering.
    case gif

    /// The extensions that select this format, lower-case, without the dot.
    public var fileExtensions: [String] {
        switch self {
        case .mp4: ["mp4", "m4v"]
        case .webp: ["webp"]
        case .gif: ["gif"]
        }
    }

    /// Whether a quality setting applies (GIF has a fixed palette size and no quality).
    public var hasQuality: Bool { self != .gif }

    /// The quality used when none is given: 75, which is x264's usual CRF 23 and libwebp's default.
    public var defaultQuality: Int? { hasQuality ? 75 : nil }

    /// Whether the format needs an even width and height (H.264 in 4:2:0).
    public var needsEvenSize: Bool { self == .mp4 }

    /// The format a path's extension names, ignoring case; `nil` for none or an unknown one.
    public init?(path: String) {
        guard let fileExtension = ImageFileFormat.fileExtension(of: path),
              let format = Self.allCases.first(where: { $0.fileExtensions.contains(fileExtension) }) else { return nil }
        self = format
    }

    /// libwebp's settings for a quality: lossy at that quality below 100; lossless (VP8L, the exact
    /// pixels) at 100, since lossy WebP's own 4:2:0 conversion tops out near 33 dB on saturated colour
    /// edges however high its quality (measured on testsrc2 at 480x270: 33.2 dB at lossy quality 100).
    static func webpOptions(quality: Int) -> [String: String] {
        quality >= 100 ? ["lossless": "1", "quality": "75"] : ["quality": String(quality), "lossless": "0"]
    }

    /// x264's constant rate factor for a quality: 51 at 10 and below, down to 18 at 100 (27 at 75).
    ///
    /// MP4 is encoded with x264's macroblock tree off (see ``AnimationWriter``), which at the same
    /// CRF spends about half as many bytes again; these CRFs, 4 above the macroblock tree's usual
    /// scale, give about the same size and quality (testsrc2-like footage at 480x270: 150 KB and
    /// 41.5 dB PSNR at CRF 27 without it, 145 KB and 41.8 dB at CRF 23 with it).
    public static func constantRateFactor(quality: Int) -> Int {
        min(51, Int((55 - Double(min(max(quality, 0), 100)) * 0.37).rounded()))
    }
}
