internal import PreviewLoopFFmpeg

/// Writes RGB pictures at a constant frame rate as a looping MP4, animated WebP or GIF file.
///
/// Frame `k` is shown at `k / framesPerSecond` seconds and lasts `1 / framesPerSecond`, except the last,
/// whose duration ``finish(lastFrameDuration:)`` may set, so that a browser repeating the file loops at
/// the right moment. The file is written to a temporary name beside `path` and renamed over it by
/// `finish`; a failure, or a writer released without `finish`, leaves nothing behind. Written to
/// ``AnimationDestination/memory`` instead, the same bytes are in ``bytes`` once finished.
///
/// Not thread-safe: use from one thread.
///
/// ```swift
/// let writer = try AnimationWriter(path: "preview.mp4", format: .mp4, size: Size(width: 480, height: 270),
///                                  framesPerSecond: 15)
/// for image in images { try writer.append(image) }
/// try writer.finish()
/// ```
public final class AnimationWriter {
    /// The file being written; empty when the destination is ``AnimationDestination/memory``.
    public let path: String
    /// Where the animation goes: a file (``path``), or memory (``bytes``).
    public let destination: AnimationDestination
    /// With ``AnimationDestination/memory``: the finished file's bytes, the same as written to a file,
    /// once ``finish(lastFrameDuration:)`` returned; `nil` before, or for a file.
    public private(set) var bytes: [UInt8]?
    /// With ``AnimationDestination/memory``: the most bytes the file may reach (by default
    /// ``OutputLimits/defaultAnimationBytes``); growing past it throws ``PreviewLoopError/Code/tooLarge``.
    public var maxBytes = OutputLimits.defaultAnimationBytes {
        didSet { stream?.output.memoryLimit = maxBytes }
    }
    /// How errors name the output: the path, or the animation in memory.
    let name: String
    /// Its format.
    public let format: AnimationFormat
    /// The size every picture must have.
    public let size: Size
    /// The constant frame rate.
    public let framesPerSecond: Int
    /// How many pictures were appended so far.
    public private(set) var frameCount = 0
    /// The most pictures ``append(_:)-(RGBImage)`` accepts: the job bound that also counts frames
    /// repeated or replayed from memory; one more throws ``PreviewLoopError/Code/tooLarge``.
    public var maxFrames = Int.max
    /// The encoder threads every writer uses unless told otherwise: one, a count that does not depend
    /// on the machine, so the same frames give the same bytes on any machine, CPU affinity or load
    /// (x264 with its automatic count takes 1.5 × the CPUs the process may use, and its output follows
    /// the count). Batch, render and card all encode with it.
    public static let defaultThreads = 1

    private let quality: Int?
    private let threads: Int
    /// Encoder time-base units per second: frame `k` has the timestamp `k * ticksPerSecond / fps`.
    private let ticksPerSecond: Int64
    private var stream: EncodedStream?
    private var converter: PictureConverter?
    private var picture: DecodedFrame?
    /// What lies under translucent pictures in formats without transparency (MP4, GIF).
    public let background: RGBAColor
    /// The latest picture, held back until the next one (or `finish`) fixes its duration.
    private var held: HeldPicture?
    /// Every picture, for GIF: the palette is computed from the whole clip before the first frame.
    private var gifImages: [RGBImage] = []
    /// For each GIF picture, which pixels are transparent (alpha below half), when it had any and
    /// ``keepsGIFTransparency``; `nil` for an opaque picture.
    private var gifMasks: [[Bool]?] = []
    /// Whether translucent pictures keep their transparency in GIF (pixels under half opacity become
    /// GIF's one transparent index) instead of being flattened on ``background``.
    public let keepsGIFTransparency: Bool
    /// Whether `finish` ran (successfully or not): the writer takes nothing more after it.
    private var isFinished = false
    /// The ``BlockingCall`` this writer was made in, if any: a cancelled task stops the encoding at the
    /// next picture (an x264 frame can take tens of milliseconds, and a render at 120 fps writes several
    /// per source frame), not at the next decoded frame or at the end.
    private let scope = CancellationScope.current

    /// Prepares a writer; nothing is visible at `path` until ``finish(lastFrameDuration:)``.
    ///
    /// The same as `init(to: .file(path), …)`.
    ///
    /// - Parameters:
    ///   - path: the file to write; its directory must exist and be writable.
    ///   - format: MP4, animated WebP or GIF (not taken from `path`'s extension).
    ///   - size: every picture's size (an appended picture of another size throws).
    ///   - framesPerSecond: the constant frame rate, 1–120: picture `k` shows at `k / framesPerSecond` s.
    ///   - quality: 0 (smallest) to 100 (best), or `nil` for the format's ``AnimationFormat/defaultQuality``;
    ///     MP4 maps it to x264's CRF (``AnimationFormat/constantRateFactor(quality:)``), WebP uses it as
    ///     libwebp's quality; GIF has none and ignores it.
    ///   - threads: encoder threads (default 1). The bytes are the same on every machine and under any load
    ///     only for a fixed count: 0 lets the encoder choose from the machine's cores (x264 takes 1.5 × the
    ///     CPUs this process may use), so the file then differs between machines, CPU affinities and cgroups.
    ///   - background: what translucent pictures (``append(_:)-(RGBAImage)``) are flattened on in MP4
    ///     and GIF; animated WebP keeps their transparency.
    ///   - keepsGIFTransparency: for GIF, keep translucent pictures' transparency instead: pixels under
    ///     half opacity become the transparent index, the rest are flattened on mid grey (an edge that
    ///     suits light and dark pages alike).
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for a frame rate outside 1–120, a quality
    ///   outside 0–100, an odd size for MP4 or a size over 16383 for WebP;
    ///   ``PreviewLoopError/Code/outputNotWritable`` when the directory cannot be written.
    public convenience init(path: String, format: AnimationFormat, size: Size, framesPerSecond: Int, quality: Int? = nil,
                            threads: Int = AnimationWriter.defaultThreads, background: RGBAColor = .white,
                            keepsGIFTransparency: Bool = false) throws(PreviewLoopError) {
        try self.init(to: .file(path), format: format, size: size, framesPerSecond: framesPerSecond, quality: quality,
                      threads: threads, background: background, keepsGIFTransparency: keepsGIFTransparency)
    }

    /// Prepares a writer to a file or to memory; see ``init(path:format:size:framesPerSecond:quality:threads:background:keepsGIFTransparency:)``.
    ///
    /// With ``AnimationDestination/memory``, ``finish(lastFrameDuration:)`` leaves the file's bytes in
    /// ``bytes``: the bytes a file destination gets, byte for byte, held in memory up to ``maxBytes``.
    ///
    /// - Throws: as ``init(path:format:size:framesPerSecond:quality:threads:background:keepsGIFTransparency:)``.
    public init(to destination: AnimationDestination, format: AnimationFormat, size: Size, framesPerSecond: Int, quality: Int? = nil,
                threads: Int = AnimationWriter.defaultThreads, background: RGBAColor = .white, keepsGIFTransparency: Bool = false) throws(PreviewLoopError) {
        let name = destination.name(format: format)
        let path = if case .file(let file) = destination { file } else { "" }
        try ValueRanges.check(framesPerSecond: framesPerSecond)
        guard size.width > 0, size.height > 0 else { throw PreviewLoopError(.invalidArgument, "the size \(size) must be positive") }
        if format.needsEvenSize && (size.width % 2 != 0 || size.height % 2 != 0) {
            throw PreviewLoopError(.invalidArgument, "\(name): H.264 in 4:2:0 needs an even width and height, not \(size)")
        }
        if format == .webp && (size.width > ImageFileFormat.maxWebPSide || size.height > ImageFileFormat.maxWebPSide) {
            throw PreviewLoopError(.invalidArgument, "\(name): WebP pictures are at most \(ImageFileFormat.maxWebPSide) pixels a side, not \(size)")
        }
        if let quality, !ValueRanges.quality.contains(quality) {
            throw PreviewLoopError(.invalidArgument, "quality must be between 0 and 100, not \(quality)")
        }
        self.path = path
        self.destination = destination
        self.name = name
        self.format = format
        self.size = size
        self.framesPerSecond = framesPerSecond
        self.quality = quality ?? format.defaultQuality
        self.threads = threads
        self.background = background
        self.keepsGIFTransparency = keepsGIFTransparency
        ticksPerSecond = format == .mp4 ? Int64(framesPerSecond) * 1000 : Int64(framesPerSecond)
        if format != .gif {
            // Opened now, so that a directory that cannot be written fails before any decoding.
            stream = try EncodedStream(writer: self, finalDelay: nil)
            let target: ConversionTarget = format == .mp4 ? .video : .argb
            (converter, picture) = try ffmpeg { () throws(FFmpegFailure) in
                (try PictureConverter(width: size.width, height: size.height, target: target),
                 try DecodedFrame(width: size.width, height: size.height, layout: target.pixelLayout))
            }
        }
    }

    /// Adds the next picture, shown `1 / framesPerSecond` after the previous one.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` after ``finish(lastFrameDuration:)``;
    ///   ``PreviewLoopError/Code/encodingFailed`` when the encoder fails.
    public func append(_ image: RGBImage) throws(PreviewLoopError) {
        try append(.opaque(image))
    }

    /// Adds the next picture, which may be translucent: animated WebP keeps its alpha, MP4 and GIF
    /// show it over ``background``.
    ///
    /// - Throws: as ``append(_:)-(RGBImage)``.
    public func append(_ image: RGBAImage) throws(PreviewLoopError) {
        if format == .gif && keepsGIFTransparency && !image.isOpaque {
            try append(.opaque(image.flattened(on: Self.gifEdgeBackground)))
            gifMasks[gifMasks.count - 1] = stride(from: 3, to: image.pixels.count, by: 4).map { image.pixels[$0] < 128 }
            return
        }
        try append(format == .webp && !image.isOpaque ? .translucent(image) : .opaque(image.flattened(on: background)))
    }

    /// What the half-opaque edge pixels of a GIF that keeps transparency are flattened on: mid grey.
    static let gifEdgeBackground = RGBAColor(red: 128, green: 128, blue: 128)

    /// Throws ``PreviewLoopError/Code/cancelled`` once the call's task is cancelled.
    private func checkCancelled() throws(PreviewLoopError) {
        if scope?.isCancelled == true { throw PreviewLoopError(.cancelled, "\(name): cancelled") }
    }

    private func append(_ picture: HeldPicture) throws(PreviewLoopError) {
        try checkCancelled()
        guard picture.size == size else {
            throw PreviewLoopError(.invalidArgument, "\(name): every picture must be \(size), not \(picture.size)")
        }
        guard !isFinished else { throw PreviewLoopError(.invalidArgument, "\(name): the animation is already finished") }
        guard frameCount < maxFrames else {
            throw PreviewLoopError(.tooLarge, "\(name): the animation reached its limit of \(maxFrames) frames")
        }
        if format == .gif, case .opaque(let image) = picture {
            gifImages.append(image)
            gifMasks.append(nil)
        } else if let previous = held {
            try encode(previous, index: frameCount - 1, duration: ticksPerSecond / Int64(framesPerSecond))
        }
        held = picture
        frameCount += 1
    }

    /// Encodes what is left, writes the file and renames it into place (or, for memory, leaves its
    /// bytes in ``bytes``).
    ///
    /// - Parameter lastFrameDuration: how long the last picture is shown, at most one frame interval
    ///   (`nil`: a whole interval). MP4 and GIF honour it (GIF to the hundredth of a second); animated
    ///   WebP gives its last frame the average frame duration, as libwebp does.
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` when no picture was appended or `finish` ran
    ///   before.
    public func finish(lastFrameDuration: Duration? = nil) throws(PreviewLoopError) {
        guard !isFinished else { throw PreviewLoopError(.invalidArgument, "\(name): the animation is already finished") }
        isFinished = true
        try checkCancelled()
        guard let last = held else { throw PreviewLoopError(.invalidArgument, "\(name): an animation needs at least one picture") }
        let interval = 1 / Double(framesPerSecond)
        let lastSeconds = min(interval, max(0.001, lastFrameDuration?.seconds ?? interval))
        if format == .gif {
            try writeGIF(finalDelay: max(1, Int((lastSeconds * 100).rounded())))
        } else {
            try encode(last, index: frameCount - 1, duration: max(1, Int64((lastSeconds * Double(ticksPerSecond)).rounded())))
            bytes = try stream?.finish()
        }
        held = nil
    }

    private func encode(_ held: HeldPicture, index: Int, duration: Int64) throws(PreviewLoopError) {
        guard let stream, let converter, let picture else { return }
        try ffmpeg { () throws(FFmpegFailure) in
            try picture.makeWritable()
            switch held {
            case .opaque(let image):
                try converter.convert(rgb: image.pixels, bytesPerRow: image.bytesPerRow, width: image.width, height: image.height,
                                      into: picture)
            case .translucent(let image):
                picture.fill(bgraFromRGBA: image.pixels, bytesPerRow: image.bytesPerRow, width: image.width, height: image.height)
            }
        }
        picture.presentationTimestamp = Int64(index) * ticksPerSecond / Int64(framesPerSecond)
        stream.durations[picture.presentationTimestamp] = duration
        try stream.encode(picture)
    }

    /// The per-channel change (of 255) under which a GIF pixel keeps its previous frame's index: above
    /// decoded video's noise in still areas, below what the eye notices through a 256-colour dither.
    static let gifStaticTolerance = 6

    private func writeGIF(finalDelay: Int) throws(PreviewLoopError) {
        // 255 colours: one index stays free for the encoder's transparent "unchanged" pixels.
        // With transparency, that index (255) is the transparent one, marked by alpha 0 in the palette.
        let palette = try ColorPalette(representing: gifImages, maximumCount: 255)
        let transparentIndex: Int? = gifMasks.contains { $0 != nil } ? 255 : nil
        var mapper = PaletteMapper(palette: palette)
        var stable = StableIndices(tolerance: Self.gifStaticTolerance)
        let stream = try EncodedStream(writer: self, finalDelay: finalDelay)
        let picture = try ffmpeg { () throws(FFmpegFailure) in try DecodedFrame(width: size.width, height: size.height, layout: .pal8) }
        // The palette as ARGB words, opaque except the transparent index (alpha 0: how FFmpeg's `gif`
        // encoder learns it).
        var words = (0..<256).map { index -> UInt32 in
            let color = index < palette.colors.count ? palette.colors[index] : PaletteColor(red: 0, green: 0, blue: 0)
            return 0xFF00_0000 | UInt32(color.red) << 16 | UInt32(color.green) << 8 | UInt32(color.blue)
        }
        if let transparentIndex { words[transparentIndex] = 0 }
        for (index, image) in gifImages.enumerated() {
            try checkCancelled()
            try ffmpeg { () throws(FFmpegFailure) in try picture.makeWritable() }
            var indices = stable.indices(mapper.indices(for: image), for: image)
            if let transparentIndex, let mask = gifMasks[index] {
                for pixel in indices.indices where mask[pixel] { indices[pixel] = UInt8(transparentIndex) }
            }
            picture.fill(indices: indices, width: size.width, palette: words)
            picture.presentationTimestamp = Int64(index)
            stream.durations[Int64(index)] = 1
            try stream.encode(picture)
        }
        gifImages = []
        gifMasks = []
        bytes = try stream.finish()
    }

    /// The encoder and muxer settings for this writer's format.
    fileprivate func settings(needsGlobalHeader: Bool) -> (EncoderSettings, muxer: String, options: [String: String]) {
        var settings = EncoderSettings(encoderName: "", width: size.width, height: size.height, pixelLayout: .yuv420p)
        settings.ticksPerSecond = Int(ticksPerSecond)
        settings.framesPerSecond = framesPerSecond
        settings.threads = threads
        settings.needsGlobalHeader = needsGlobalHeader
        let quality = quality ?? 75
        switch format {
        case .mp4:
            settings.encoderName = "libx264"
            settings.colorRange = .limited
            settings.colorTags = .bt709
            // The macroblock tree off: x264's AVX-512 code for it (Debian's x264 164) reads memory it
            // never wrote, so the same frames gave different bytes run to run in a busy process and
            // other bytes again on a CPU without AVX-512. The CRF scale makes up its bytes.
            settings.options = ["preset": "veryfast", "crf": String(AnimationFormat.constantRateFactor(quality: quality)),
                                "x264-params": "mbtree=0"]
            return (settings, "mp4", ["movflags": "+faststart"])
        case .webp:
            settings.encoderName = "libwebp_anim"
            settings.pixelLayout = ConversionTarget.argb.pixelLayout
            settings.options = AnimationFormat.webpOptions(quality: quality)
            return (settings, "webp", ["loop": "0"])
        case .gif:
            settings.encoderName = "gif"
            settings.pixelLayout = .pal8
            return (settings, "gif", ["loop": "0"])
        }
    }
}

/// A picture waiting to be encoded: opaque RGB, or RGBA whose alpha the format keeps (animated WebP).
private enum HeldPicture {
    case opaque(RGBImage)
    case translucent(RGBAImage)

    var size: Size {
        switch self {
        case .opaque(let image): image.size
        case .translucent(let image): image.size
        }
    }
}

/// An opened encoder feeding an opened muxer, with each frame's display duration by timestamp. For a
/// file, the muxer writes a temporary beside the destination (``PendingFile``), renamed over it by
/// ``finish()``; released unfinished, the temporary is removed. For memory, it writes a file in memory
/// whose bytes ``finish()`` returns.
private final class EncodedStream {
    let file: PendingFile?
    let encoder: EncoderContext
    let output: OutputContext
    /// Display durations in the encoder's time base, by presentation timestamp.
    var durations: [Int64: Int64] = [:]

    init(writer: AnimationWriter, finalDelay: Int?) throws(PreviewLoopError) {
        let muxer = writer.settings(needsGlobalHeader: false).muxer
        switch writer.destination {
        case .file(let path):
            let file = try PendingFile(path: path)
            self.file = file
            output = try ffmpeg { () throws(FFmpegFailure) in
                try OutputContext(path: FilePathBytes.cString(file.temporaryPath), displayName: path, muxer: muxer)
            }
        case .memory:
            file = nil
            output = try ffmpeg { () throws(FFmpegFailure) in
                try OutputContext(memory: writer.name, muxer: muxer, limit: writer.maxBytes)
            }
        }
        var (settings, _, options) = writer.settings(needsGlobalHeader: output.needsGlobalHeader)
        encoder = try ffmpeg { () throws(FFmpegFailure) in try EncoderContext(settings) }
        if let finalDelay { options["final_delay"] = String(finalDelay) }
        try ffmpeg { () throws(FFmpegFailure) in try output.start(with: encoder, options: options) }
    }

    func encode(_ picture: DecodedFrame?) throws(PreviewLoopError) {
        try ffmpeg { () throws(FFmpegFailure) in
            try encoder.encode(picture) { (packet: Packet) throws(FFmpegFailure) in
                if let duration = durations.removeValue(forKey: packet.rawPresentationTimestamp) { packet.duration = duration }
                try output.write(packet, from: encoder)
            }
        }
    }

    /// Flushes the encoder and finishes the file: renamed into place, or its bytes returned (memory).
    func finish() throws(PreviewLoopError) -> [UInt8]? {
        try encode(nil)
        guard let file else {
            return try ffmpeg { () throws(FFmpegFailure) in try output.finishInMemory() }
        }
        try ffmpeg { () throws(FFmpegFailure) in try output.finish() }
        try file.commit()
        return nil
    }
}
