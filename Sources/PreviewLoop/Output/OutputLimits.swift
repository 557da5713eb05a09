/// What the encoders can take and about how much memory making an output holds: the rules every way
/// in checks before any work — the CLI's options (`--max-memory`), batch recipes and the library's
/// callers — so that none of them decodes first and fails, or runs out of memory, later.
public enum OutputLimits {
    /// The memory a job may hold unless told otherwise: 1 GiB (`--max-memory 1024`; a batch recipe's
    /// outputs are held to it too).
    public static let defaultMemoryBytes = 1 << 30

    /// The most bytes an animation written to memory (``AnimationDestination/memory``) may reach unless
    /// told otherwise (``AnimationWriter/maxBytes``): 1 GiB. A file that grows past it stops with
    /// ``PreviewLoopError/Code/tooLarge`` instead of taking more memory.
    public static let defaultAnimationBytes = 1 << 30

    /// FFmpeg's `av_image_check_size`: (W+128)×(H+128) must stay below INT_MAX / 8.
    public static let ffmpegAreaLimit = 268_435_456.0

    /// Why an encoder cannot take a picture of `size`, or `nil` when it can: WebP at most 16383 a side,
    /// JPEG at most 65535, and FFmpeg's encoders (all but the engine's own PPM writer) below
    /// (W+128)×(H+128) = 268,435,456, about 16250×16250.
    public static func encoderRefusal(_ size: Size, webp: Bool, ownEncoder: Bool = false, jpeg: Bool = false) -> String? {
        if webp && (size.width > ImageFileFormat.maxWebPSide || size.height > ImageFileFormat.maxWebPSide) {
            return "WebP pictures are at most \(ImageFileFormat.maxWebPSide) pixels a side"
        }
        if jpeg && (size.width > 65535 || size.height > 65535) {
            return "JPEG pictures are at most 65535 pixels a side"
        }
        if !ownEncoder && (Double(size.width) + 128) * (Double(size.height) + 128) >= ffmpegAreaLimit {
            return "FFmpeg's encoders take pictures with (width+128)×(height+128) below 268435456 (about 16250x16250)"
        }
        return nil
    }

    /// Why an AVIF picture of `size` is refused, or `nil`: AV1 level 6.3's limits (16384 wide, 8704
    /// high, 35,651,584 pixels), checked before any encoding; an AVIF that size takes libaom about 15 s.
    public static func avifRefusal(_ size: Size) -> String? {
        let most = ImageFileFormat.maxAVIF
        guard size.width > most.width || size.height > most.height || size.width * size.height > most.pixels else { return nil }
        return "AVIF pictures are at most \(most.width)x\(most.height) and \(most.pixels) pixels (AV1 level 6.3)"
    }

    /// Why `format`'s encoder cannot take a still of `size`, or `nil` when it can: each format's own
    /// limit (``encoderRefusal(_:webp:ownEncoder:jpeg:)``, ``avifRefusal(_:)``).
    public static func encoderRefusal(_ size: Size, format: ImageFileFormat) -> String? {
        if format == .avif, let refusal = avifRefusal(size) { return refusal }
        return encoderRefusal(size, webp: format == .webp, ownEncoder: format == .ppm, jpeg: format == .jpeg)
    }

    /// Bytes an animation encoder holds at `size`, besides the pictures handed to it. x264 (`veryfast`)
    /// keeps about 16 frames in flight (10 of lookahead, 3 B-frames, its reference, the one being
    /// coded), each with its half-pel planes and a quarter-size copy: about 88 bytes a pixel, measured
    /// as the peak of `render --size 4096x4096 --length 3` less the rest (1.87 GB). libwebp's animation
    /// encoder keeps a few ARGB candidates: about 24 bytes a pixel. GIF is written whole at the end
    /// from the frames held (counted by the caller).
    public static func encoderBytes(_ size: Size, format: AnimationFormat) -> Double {
        let area = Double(size.width) * Double(size.height)
        switch format {
        case .mp4: return 88 * area
        case .webp: return 24 * area
        case .gif: return 0
        }
    }

    /// Bytes an animation of `frames` frames at `size` takes once encoded, at most, at its format's
    /// default quality: what a render to ``AnimationDestination/memory`` holds besides its pictures and
    /// encoder. Measured on the worst picture for the encoders, grey noise (`Benchmarks/animation-size.sh`):
    /// 640x640 at 30 fps for 10 s made 20.4 MB of MP4, 54.5 MB of WebP and 95.2 MB of GIF, that is
    /// 0.17, 0.44 and 0.77 bytes a pixel a frame; this allows 0.25, 0.6 and 0.8. Real clips take far
    /// less, and a higher quality on noise more, up to ``defaultAnimationBytes``.
    public static func encodedAnimationBytes(frames: Double, size: Size, format: AnimationFormat) -> Double {
        let perPixel = switch format {
        case .mp4: 0.25
        case .webp: 0.6
        case .gif: 0.8
        }
        return perPixel * frames * Double(size.width) * Double(size.height)
    }

    /// Bytes of the pictures a render of `frames` frames at `size` holds besides its encoder: six RGBA
    /// pictures in flight (decoded, converted, held for the encoder), and every frame for a GIF.
    public static func renderBytes(frames: Double, size: Size, format: AnimationFormat) -> Double {
        let area = Double(size.width) * Double(size.height)
        return 6 * 4 * area + (format == .gif ? frames * 3 * area : 0) + encoderBytes(size, format: format)
    }

    /// Bytes a still of `size` holds while it is made and encoded: four RGBA pictures, and for AVIF
    /// libaom's own: about 14 bytes a pixel, measured as the peak of `thumb --size 4096x4096 -o x.avif`
    /// less that of the same `.jpg` (458 MB against 228 MB).
    public static func stillBytes(_ size: Size, format: ImageFileFormat = .jpeg) -> Double {
        (16 + stillEncoderBytesPerPixel(format)) * Double(size.width) * Double(size.height)
    }

    /// Bytes a pixel the still encoder of `format` holds besides the picture handed to it: 14 for AVIF
    /// (libaom), 0 for the others (counted in the pictures).
    public static func stillEncoderBytesPerPixel(_ format: ImageFileFormat) -> Double {
        format == .avif ? 14 : 0
    }
}
