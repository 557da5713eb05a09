internal import PreviewLoopFFmpeg

/// Encodes ``RGBImage``s as image files in memory: PPM in pure Swift, PNG, JPEG, WebP and AVIF with
/// the encoders of FFmpeg's libavcodec (AVIF in libavformat's `avif` container; no other dependency).
///
/// ```swift
/// let poster = try ImageEncoder.encode(frame.image, as: .jpeg, quality: 85)   // the bytes
/// try ImageEncoder.write(frame.image, as: .jpeg, quality: 85, to: "poster.jpg") // or a file
/// ```
public enum ImageEncoder {
    /// Encodes `image` and writes it to `path` whole or not at all: to a hidden temporary file beside
    /// it, then renamed into place, so a reader never sees a partial file and a failure leaves what was
    /// at `path` as it was.
    ///
    /// - Throws: what ``encode(_:as:quality:)`` throws; ``PreviewLoopError/Code/outputNotWritable`` when the
    ///   file cannot be written.
    public static func write(_ image: RGBImage, as format: ImageFileFormat, quality: Int? = nil, to path: String) throws(PreviewLoopError) {
        try AtomicFile.write(try encode(image, as: format, quality: quality), to: path)
    }

    /// The file bytes of `image` in `format`.
    ///
    /// - Parameters:
    ///   - image: the picture to encode.
    ///   - format: PPM, PNG, JPEG, WebP or AVIF.
    ///   - quality: 0 (smallest) to 100 (best) for lossy formats; `nil` for the format's
    ///     ``ImageFileFormat/defaultQuality``. Lossless formats (PPM, PNG) ignore it.
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for a quality outside 0–100 or a picture
    ///   larger than the format allows; ``PreviewLoopError/Code/encodingFailed`` when FFmpeg fails.
    public static func encode(_ image: RGBImage, as format: ImageFileFormat, quality: Int? = nil) throws(PreviewLoopError) -> [UInt8] {
        let quality = try Self.quality(quality, for: format)
        switch format {
        case .ppm:
            return PPM.encode(image)
        case .png:
            return try encodeRows(image.pixels, bytesPerRow: image.bytesPerRow, size: image.size,
                                  settings: settings(.png, "png", image.size, .rgb24, options: ["pred": "paeth"]))
        case .jpeg:
            var settings = settings(.jpeg, "mjpeg", image.size, ConversionTarget.jpeg.pixelLayout)
            settings.colorRange = .full
            settings.colorTags = .bt601Matrix
            settings.fixedQuantizer = jpegQuantizer(quality: quality ?? 85)
            return try encodeConverted(image, settings: settings, target: .jpeg)
        case .webp:
            guard image.width <= ImageFileFormat.maxWebPSide, image.height <= ImageFileFormat.maxWebPSide else {
                throw PreviewLoopError(.invalidArgument, "WebP pictures are at most \(ImageFileFormat.maxWebPSide) pixels a side, not \(image.size)")
            }
            let settings = settings(.webp, "libwebp", image.size, ConversionTarget.argb.pixelLayout,
                                    options: AnimationFormat.webpOptions(quality: quality ?? 85))
            return try encodeConverted(image, settings: settings, target: .argb)
        case .avif:
            if let refusal = OutputLimits.avifRefusal(image.size) { throw PreviewLoopError(.invalidArgument, refusal + ", not \(image.size)") }
            return try encodeAVIF(image, quality: quality ?? 85)
        }
    }

    /// libaom's settings for an AVIF still, each pinned so that the bytes depend on the picture and the
    /// quality only: one thread (libaom's tiles and rows split work by thread count, which changes the
    /// bytes), `still-picture` (the reduced still-picture sequence header AVIF uses), `allintra` usage and
    /// speed 6 (libavif's default speed: a 1920x1080 picture in about 0.4 s on one core).
    static func avifSettings(_ size: Size, quality: Int) -> EncoderSettings {
        var settings = EncoderSettings(encoderName: "libaom-av1", width: size.width, height: size.height,
                                       pixelLayout: ConversionTarget.avif.pixelLayout,
                                       options: ["still-picture": "1", "usage": "allintra", "cpu-used": "6",
                                                 "crf": String(ImageFileFormat.avifQuantizer(quality: quality))])
        settings.colorRange = .full
        settings.colorTags = .bt709
        settings.threads = 1
        return settings
    }

    private static func encodeAVIF(_ image: RGBImage, quality: Int) throws(PreviewLoopError) -> [UInt8] {
        try ffmpeg { () throws(FFmpegFailure) in
            try EncoderContext.encodeContained(avifSettings(image.size, quality: quality), muxer: "avif", displayName: "AVIF") {
                (frame: DecodedFrame) throws(FFmpegFailure) in
                try PictureConverter(width: image.width, height: image.height, target: .avif)
                    .convert(rgb: image.pixels, bytesPerRow: image.bytesPerRow, width: image.width, height: image.height, into: frame)
            }
        }
    }

    /// The file bytes of `image`, which may be translucent, in `format`.
    ///
    /// PNG (8-bit RGBA) and WebP (lossy colour with a lossless alpha plane) keep the transparency; an
    /// opaque picture is written exactly as its ``RGBImage`` would be. PPM and JPEG have no alpha: the
    /// picture is flattened on `background` first.
    ///
    /// - Throws: as ``encode(_:as:quality:)``.
    public static func encode(_ image: RGBAImage, as format: ImageFileFormat, quality: Int? = nil,
                              background: RGBAColor = .white) throws(PreviewLoopError) -> [UInt8] {
        guard format.hasTransparency, !image.isOpaque else {
            return try encode(image.flattened(on: background), as: format, quality: quality)
        }
        let quality = try Self.quality(quality, for: format)
        if format == .webp {
            guard image.width <= ImageFileFormat.maxWebPSide, image.height <= ImageFileFormat.maxWebPSide else {
                throw PreviewLoopError(.invalidArgument, "WebP pictures are at most \(ImageFileFormat.maxWebPSide) pixels a side, not \(image.size)")
            }
            let settings = settings(.webp, "libwebp", image.size, .bgra, options: AnimationFormat.webpOptions(quality: quality ?? 85))
            return try ffmpeg { () throws(FFmpegFailure) in
                let encoder = try EncoderContext(settings)
                let frame = try DecodedFrame(width: image.size.width, height: image.size.height, layout: .bgra)
                frame.fill(bgraFromRGBA: image.pixels, bytesPerRow: image.bytesPerRow, width: image.width, height: image.height)
                return try encoder.encodeStill(frame)
            }
        }
        return try encodeRows(image.pixels, bytesPerRow: image.bytesPerRow, size: image.size,
                              settings: settings(.png, "png", image.size, .rgba, options: ["pred": "paeth"]))
    }

    /// The MJPEG quantizer scale for a quality: 31 at 0 down to 2 at 100, as `-q:v` counts.
    public static func jpegQuantizer(quality: Int) -> Int {
        31 - Int((Double(min(max(quality, 0), 100)) * 29 / 100).rounded())
    }

    /// The quality to use: the given one checked to lie in 0–100, or the format's default.
    static func quality(_ quality: Int?, for format: ImageFileFormat) throws(PreviewLoopError) -> Int? {
        guard let quality else { return format.defaultQuality }
        guard ValueRanges.quality.contains(quality) else {
            throw PreviewLoopError(.invalidArgument, "quality must be between 0 and 100, not \(quality)")
        }
        return format.isLossy ? quality : nil
    }

    private static func settings(_ format: ImageFileFormat, _ encoder: String, _ size: Size, _ layout: PixelLayout,
                                 options: [String: String] = [:]) -> EncoderSettings {
        EncoderSettings(encoderName: encoder, width: size.width, height: size.height, pixelLayout: layout, options: options)
    }

    /// Encodes packed rows already in the encoder's layout (RGB24 or RGBA).
    private static func encodeRows(_ pixels: [UInt8], bytesPerRow: Int, size: Size,
                                   settings: EncoderSettings) throws(PreviewLoopError) -> [UInt8] {
        try ffmpeg { () throws(FFmpegFailure) in
            let encoder = try EncoderContext(settings)
            let frame = try DecodedFrame(width: size.width, height: size.height, layout: settings.pixelLayout)
            frame.fill(rows: pixels, bytesPerRow: bytesPerRow, height: size.height)
            return try encoder.encodeStill(frame)
        }
    }

    private static func encodeConverted(_ image: RGBImage, settings: EncoderSettings, target: ConversionTarget) throws(PreviewLoopError) -> [UInt8] {
        try ffmpeg { () throws(FFmpegFailure) in
            let encoder = try EncoderContext(settings)
            let frame = try DecodedFrame(width: image.size.width, height: image.size.height, layout: target.pixelLayout)
            try PictureConverter(width: image.width, height: image.height, target: target)
                .convert(rgb: image.pixels, bytesPerRow: image.bytesPerRow, width: image.width, height: image.height, into: frame)
            return try encoder.encodeStill(frame)
        }
    }
}
