/// What ``LoopPlayer/render(to:format:framesPerSecond:quality:encoderThreads:)`` wrote.
public struct RenderSummary: Sendable, Hashable {
    /// The file written.
    public var path: String
    /// Its format.
    public var format: AnimationFormat
    /// The picture size.
    public var size: Size
    /// The constant frame rate.
    public var framesPerSecond: Int
    /// Frames in the file.
    public var frameCount: Int
    /// How long one play of the file lasts: the window, or less where the clip ends first.
    public var duration: Duration
    /// Source frames the pass decoded.
    public var sourceFrameCount: Int

    /// Creates a summary.
    public init(path: String, format: AnimationFormat, size: Size, framesPerSecond: Int, frameCount: Int,
                duration: Duration, sourceFrameCount: Int) {
        self.path = path
        self.format = format
        self.size = size
        self.framesPerSecond = framesPerSecond
        self.frameCount = frameCount
        self.duration = duration
        self.sourceFrameCount = sourceFrameCount
    }
}

extension LoopPlayer {
    /// Renders one pass of the loop window as a file that loops cleanly when a browser repeats it:
    /// muted, aspect-filled to the configured size, at a constant frame rate, its first frame the one
    /// displayed at the window's start and its last lasting until the window's end.
    ///
    /// Each output frame at `start + k / framesPerSecond` is the source frame displayed then (frames are
    /// repeated or skipped to fit the rate). The file is written beside `path` under a temporary name
    /// and renamed into place at the end; a failure leaves nothing. GIF keeps the pass's frames in memory
    /// (its palette is computed from all of them), about `frames × width × height × 3` bytes.
    ///
    /// - Parameters:
    ///   - format: the file format, or `nil` to take it from `path`'s extension.
    ///   - quality: 0–100, or `nil` for the format's default; see ``AnimationWriter``.
    ///   - encoderThreads: encoder threads, 0 to let the encoder choose.
    ///   - maxFrames: the most frames the file may get (repeats included); more throws ``PreviewLoopError/Code/tooLarge``.
    /// - Throws: ``PreviewLoopError`` for an unusable input, an unknown extension, an odd size for MP4,
    ///   an unwritable output, or an encoder failure.
    @discardableResult
    public func render(to path: String, format: AnimationFormat? = nil, framesPerSecond: Int = 15, quality: Int? = nil,
                       encoderThreads: Int = 0, maxFrames: Int = .max) throws(PreviewLoopError) -> RenderSummary {
        guard let format = format ?? AnimationFormat(path: path) else {
            throw PreviewLoopError(.invalidArgument, "\(path): cannot tell a video format from the extension; use "
                + AnimationFormat.allCases.flatMap(\.fileExtensions).map { "." + $0 }.joined(separator: ", "))
        }
        let writer = try AnimationWriter(path: path, format: format, size: configuration.size,
                                         framesPerSecond: framesPerSecond, quality: quality, threads: encoderThreads)
        writer.maxFrames = maxFrames
        var resampler = ConstantRateResampler(framesPerSecond: framesPerSecond)
        var current: RGBImage?
        var times: [Double] = []
        try run(loops: 1) { frame throws(PreviewLoopError) in
            let time = frame.presentationTime.seconds
            let count = resampler.advance(to: time)
            // The first frame is the one displayed at the window's start: it fills any instant before it.
            for _ in 0..<count { try writer.append(current ?? frame.image) }
            current = frame.image
            times.append(time)
        }
        guard let last = current, let lastTime = times.last else {
            throw PreviewLoopError(.corruptData, "\(source): no frame could be decoded in the loop window")
        }
        // The pass ends at the window's end, or where the clip's last frame stops showing.
        let frameInterval = info.frameRate?.doubleValue.flatMap { $0 > 0 ? 1 / $0 : nil }
            ?? (times.count > 1 ? lastTime - times[times.count - 2] : 1 / Double(framesPerSecond))
        let length = min(windowLength.seconds, lastTime + frameInterval)
        let (remaining, lastDuration) = resampler.finish(length: length)
        for _ in 0..<remaining { try writer.append(last) }
        try writer.finish(lastFrameDuration: .fromSeconds(lastDuration))
        let playTime = Double(writer.frameCount - 1) / Double(framesPerSecond) + lastDuration
        return RenderSummary(path: path, format: format, size: configuration.size, framesPerSecond: framesPerSecond,
                             frameCount: writer.frameCount, duration: .fromSeconds(playTime), sourceFrameCount: times.count)
    }
}
