/// An image file format PreviewLoop writes, chosen by a file name's extension.
///
/// PPM is written in pure Swift; PNG, JPEG, WebP and AVIF by the encoders of FFmpeg's libavcodec
/// (`png`, `mjpeg`, `libwebp`, `libaom-av1` in libavformat's `avif` container). See ``ImageEncoder``.
public enum ImageFileFormat: String, CaseIterable, Sendable {
    /// Binary PPM (`P6`), 8-bit RGB: lossless, uncompressed.
    case ppm
    /// PNG, 8-bit RGB (`rgb24`): lossless.
    case png
    /// JPEG (JFIF): BT.601 full-range YCbCr 4:4:4 (`yuvj444p`), lossy; quality maps to a fixed
    /// quantizer scale from 31 (quality 0) to 2 (quality 100).
    ///
    /// Chroma is kept at full resolution: previews and sprite tiles are small, and at those sizes 4:2:0
    /// alone costs 5–8 dB on colour edges (about 30 dB at best on a 320x180 test pattern, against 39 dB
    /// for 4:4:4 at the default quality), for files about 1.5 times smaller.
    case jpeg
    /// WebP, lossy (VP8, BT.601 limited-range 4:2:0, the only lossy layout WebP has, made by libwebp
    /// from RGB); quality is libwebp's own 0–100 scale, and 100 means lossless (VP8L, exact pixels).
    case webp
    /// AVIF: one AV1 still picture (libaom, `still-picture`, all-intra) in its HEIF container, 8-bit
    /// full-range BT.709 YCbCr 4:4:4 tagged as BT.709 (CICP 1/1/1, full range): AV1's High profile, the
    /// AVIF Advanced profile (brand `MA1A`), as libavif's `avifenc` writes RGB input by default. Quality
    /// maps to libaom's constant-quality level (`crf`): 63 at quality 0 down to 0 at 100. At most
    /// 16384x8704 and 35,651,584 pixels (AV1 level 6.3, the largest picture an AV1 level allows).
    ///
    /// Full range, because libavif converts limited-range BT.709 through libyuv, whose 6-bit blue
    /// coefficient is clamped: saturated blue then decodes 12 levels dark (measured with Debian's
    /// `avifdec`, even at `crf` 0); 4:4:4, because at the same bytes it is far closer: a 480x270 testsrc2
    /// frame decoded by `avifdec` reads 45.1 dB at 7.9 KB in 4:4:4 (`crf` 20) against 32.6 dB at 7.9 KB
    /// in 4:2:0 (`crf` 9), whose chroma libavif upsamples bilinearly.
    case avif

    /// The extensions that select this format, lower-case, without the dot; the first is the usual one.
    public var fileExtensions: [String] {
        switch self {
        case .ppm: ["ppm"]
        case .png: ["png"]
        case .jpeg: ["jpg", "jpeg"]
        case .webp: ["webp"]
        case .avif: ["avif"]
        }
    }

    /// Whether the format throws detail away, so that a quality setting applies.
    public var isLossy: Bool {
        switch self {
        case .ppm, .png: false
        case .jpeg, .webp, .avif: true
        }
    }

    /// Whether the format keeps transparency (PNG, WebP); the others are flattened on a background.
    public var hasTransparency: Bool {
        self == .png || self == .webp
    }

    /// The quality used when none is given: 85 for JPEG, WebP and AVIF (above 35 dB PSNR on busy test
    /// patterns); `nil` for lossless formats.
    public var defaultQuality: Int? {
        isLossy ? 85 : nil
    }

    /// The format a path's extension names, ignoring case; `nil` for none or an unknown one.
    public init?(path: String) {
        guard let fileExtension = Self.fileExtension(of: path),
              let format = Self.allCases.first(where: { $0.fileExtensions.contains(fileExtension) }) else { return nil }
        self = format
    }

    /// The lower-cased text after the last `.` of the last path component, if there is some.
    ///
    /// A leading dot alone (`.ppm`, a hidden file) is not an extension, as in Foundation.
    public static func fileExtension(of path: String) -> String? {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let fileExtension = name[name.index(after: dot)...]
        return fileExtension.isEmpty ? nil : fileExtension.lowercased()
    }
}

extension ImageFileFormat {
    /// The largest side of a WebP picture, still or animated, in pixels: VP8 and VP8L store 14-bit
    /// dimensions, so libwebp refuses anything larger.
    package static let maxWebPSide = 16383

    /// The largest AVIF picture: AV1 level 6.3's limits (16384 wide, 8704 high, 35,651,584 pixels),
    /// the most any AV1 level lets a decoder be asked for.
    package static let maxAVIF = (width: 16384, height: 8704, pixels: 35_651_584)

    /// libaom's constant-quality level for a quality 0–100, linearly: 63 (worst) at 0 to 0 at 100, 9 at
    /// the default 85.
    package static func avifQuantizer(quality: Int) -> Int {
        ((100 - min(max(quality, 0), 100)) * 63 + 50) / 100
    }
}
