/// What ``LoopPlayer/render(to:format:framesPerSecond:quality:encoderThreads:maxFrames:loopPoint:seam:flashSafety:progress:)-(String,_,_,_,_,_,_,_,_,_)`` wrote.
public struct RenderSummary: Sendable, Hashable {
    /// The file written; empty for ``AnimationDestination/memory``.
    public var path: String
    /// With ``AnimationDestination/memory``: the animation's bytes (what a file gets); `nil` for a file.
    public var bytes: [UInt8]?
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
    /// How visible the wrap from the last frame to the first is (see ``SeamMeasure``).
    public var seam: SeamMeasure
    /// How long the crossfade at the seam lasts (zero for a cut).
    public var crossfade: Duration
    /// With ``FlashSafety/check``: the photosensitive-flash verdicts of the frames written, played on
    /// repeat through the seam (times from the start of the first play); `nil` with ``FlashSafety/off``.
    public var flashes: FlashReport?
    /// With ``FlashSafety/avoid``: where the window was asked to start and where the file's loop starts;
    /// `nil` otherwise.
    public var flashAvoidance: FlashAvoidance?

    /// Creates a summary.
    public init(path: String, format: AnimationFormat, size: Size, framesPerSecond: Int, frameCount: Int,
                duration: Duration, sourceFrameCount: Int,
                seam: SeamMeasure = .init(seamDifference: 0, medianDifference: 0), crossfade: Duration = .zero) {
        self.seam = seam
        self.crossfade = crossfade
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
    ///   - path: the file to write (`.mp4`, `.webp` or `.gif` when `format` is `nil`); its directory must
    ///     exist.
    ///   - format: the file format, or `nil` to take it from `path`'s extension.
    ///   - framesPerSecond: the file's constant frame rate, 1–120 (default 15).
    ///   - quality: 0–100, or `nil` for the format's default; see ``AnimationWriter``.
    ///   - encoderThreads: encoder threads, 1 by default: a fixed count keeps the file byte-identical on
    ///     every machine and under any load (0 lets the encoder choose from the cores, and the bytes follow).
    ///   - maxFrames: the most frames the file may get (repeats included); more throws ``PreviewLoopError/Code/tooLarge``.
    ///   - loopPoint: where the loop ends: at the window's length (``LoopEnd/length``), or ``LoopEnd/auto``
    ///     (searched within ±25 % of it for the picture most like the first; the window is then decoded that
    ///     much further). A time (``LoopEnd/at(_:)``) is the player's window end
    ///     (``LoopPlayer/Configuration/windowEnd``), not a render's: it is refused here.
    ///   - seam: a plain cut, or a ``LoopSeam/crossfade(_:)`` over the loop's start (decoded past the out
    ///     point). With either, the pass's frames are held in memory until the out point is known, and
    ///     they count against `maxFrames`.
    ///   - flashSafety: ``FlashSafety/check`` analyses the frames written for photosensitive flashes
    ///     (WCAG 2.3.1), as a player repeats them: the pass, then the loop again through its seam, for
    ///     ``RenderSummary/flashes``; the file is written whatever the verdict. ``FlashSafety/avoid``
    ///     first moves the window to the nearest start (within ``FlashAvoidance/searchReach``) whose
    ///     loop, judged as a cut at the window's length, is below an extended failure, reading the clip
    ///     once, and says where in ``RenderSummary/flashAvoidance``; the frames written are then checked
    ///     as with `check`. ``FlashSafety/off`` (the default) skips it.
    ///   - progress: called on the calling thread after each source frame with the file's frames made
    ///     so far and the number expected (the window, cut at the clip's end, at `framesPerSecond`); last
    ///     with both equal to the frames written, once the file is complete.
    /// - Throws: ``PreviewLoopError`` for an unusable input, an unknown extension, an odd size for MP4,
    ///   an unwritable output, a crossfade not shorter than the window, a loop end at a time, or an encoder
    ///   failure; ``PreviewLoopError/Code/unsafeFlashes`` with ``FlashSafety/avoid`` when no window is safe.
    @discardableResult
    public func render(to path: String, format: AnimationFormat? = nil, framesPerSecond: Int = 15, quality: Int? = nil,
                       encoderThreads: Int = AnimationWriter.defaultThreads, maxFrames: Int = .max, loopPoint: LoopEnd = .length, seam: LoopSeam = .cut,
                       flashSafety: FlashSafety = .off,
                       progress: (_ completed: Int, _ total: Int) -> Void = { _, _ in }) throws(PreviewLoopError) -> RenderSummary {
        try render(to: .file(path), format: format, framesPerSecond: framesPerSecond, quality: quality, encoderThreads: encoderThreads,
                   maxFrames: maxFrames, loopPoint: loopPoint, seam: seam, flashSafety: flashSafety, progress: progress)
    }

    /// Renders one pass of the loop window to a file or to memory; see `render(to:format:…)` with a path
    /// for what the file holds and every parameter.
    ///
    /// With ``AnimationDestination/memory`` the summary's ``RenderSummary/bytes`` hold the file, the same
    /// bytes a file destination gets; `format` is then required.
    ///
    /// - Throws: as the render to a path; ``PreviewLoopError/Code/invalidArgument`` for memory without a
    ///   format; ``PreviewLoopError/Code/tooLarge`` when the file in memory would pass
    ///   ``OutputLimits/defaultAnimationBytes``.
    @discardableResult
    public func render(to destination: AnimationDestination, format: AnimationFormat? = nil, framesPerSecond: Int = 15,
                       quality: Int? = nil, encoderThreads: Int = AnimationWriter.defaultThreads, maxFrames: Int = .max,
                       loopPoint: LoopEnd = .length, seam: LoopSeam = .cut, flashSafety: FlashSafety = .off,
                       progress: (_ completed: Int, _ total: Int) -> Void = { _, _ in }) throws(PreviewLoopError) -> RenderSummary {
        let path: String
        switch destination {
        case .file(let file): path = file
        case .memory:
            guard let format else {
                throw PreviewLoopError(.invalidArgument, "an animation rendered to memory needs its format (mp4, webp or gif)")
            }
            path = destination.name(format: format)
        }
        guard let format = format ?? AnimationFormat(path: path) else {
            throw PreviewLoopError(.invalidArgument, "\(path): cannot tell a video format from the extension; use "
                + AnimationFormat.allCases.flatMap(\.fileExtensions).map { "." + $0 }.joined(separator: ", "))
        }
        if case .at(let time) = loopPoint {
            throw PreviewLoopError(.invalidArgument, "a loop end at a time (\(time)) is the window's end: set it in the "
                                   + "player's configuration (windowEnd) and render with .length or .auto")
        }
        let window = windowLength.seconds
        var fade = 0.0
        if case .crossfade(let duration) = seam {
            fade = duration.seconds
            guard fade > 0, fade < window else {
                throw PreviewLoopError(.invalidArgument, "the crossfade (\(DecimalText.fixed(fade, 3)) s) must be above 0 "
                                       + "and shorter than the window (\(DecimalText.fixed(window, 3)) s)")
            }
        }
        if flashSafety == .avoid {
            return try renderAvoidingFlashes(to: destination, format: format, framesPerSecond: framesPerSecond, quality: quality,
                                             encoderThreads: encoderThreads, maxFrames: maxFrames, loopPoint: loopPoint,
                                             fade: fade, progress: progress)
        }
        let isSeamed = loopPoint == .auto || fade > 0
        let decodeLength = isSeamed ? window * (loopPoint == .auto ? 1 + LoopEnd.searchFraction : 1) + fade : window
        let writer = try AnimationWriter(to: destination, format: format, size: configuration.size,
                                         framesPerSecond: framesPerSecond, quality: quality, threads: encoderThreads)
        writer.maxFrames = maxFrames
        var resampler = ConstantRateResampler(framesPerSecond: framesPerSecond)
        var current: RGBImage?
        var times: [Double] = []
        var meter = SeamMeter()
        var flashCheck = flashSafety == .check ? LoopFlashCheck(framesPerSecond: framesPerSecond) : nil
        var held: [RGBImage] = []
        var made = 0
        func write(_ image: RGBImage) throws(PreviewLoopError) {
            try writer.append(image)
            meter.add(image)
            flashCheck?.add(image)
        }
        func emit(_ image: RGBImage) throws(PreviewLoopError) {
            made += 1
            guard isSeamed else {
                try write(image)
                return
            }
            guard held.count < maxFrames else {
                throw PreviewLoopError(.tooLarge, "\(path): more than \(maxFrames) frames would be held to find the loop's seam")
            }
            held.append(image)
        }
        let start = windowStart.seconds
        let expectedLength = info.duration.map { min(windowLength.seconds, max(0, $0 - start)) }
            ?? windowLength.seconds
        let expected = max(1, Int((expectedLength * Double(framesPerSecond)).rounded(.up)))
        try run(loops: 1, control: LoopControl(), windowLength: .fromSeconds(decodeLength)) { frame throws(PreviewLoopError) in
            let time = frame.presentationTime.seconds
            let count = resampler.advance(to: time)
            // The first frame is the one displayed at the window's start: it fills any instant before it.
            for _ in 0..<count { try emit(current ?? frame.image) }
            current = frame.image
            times.append(time)
            progress(min(made, expected), max(expected, made))
        }
        guard let last = current, let lastTime = times.last else {
            throw PreviewLoopError(.corruptData, "\(source): no frame could be decoded in the loop window")
        }
        // The pass ends at the window's end, or where the clip's last frame stops showing.
        let frameInterval = info.frameInterval(orElse: times.count > 1 ? lastTime - times[times.count - 2] : 1 / Double(framesPerSecond))
        let length = min(decodeLength, lastTime + frameInterval)
        let (remaining, finalDuration) = resampler.finish(length: length)
        var lastDuration = finalDuration
        for _ in 0..<remaining { try emit(last) }
        var crossfade = Duration.zero
        if isSeamed {
            let target = max(1, Int((window * Double(framesPerSecond) - 1e-6).rounded(.up)))
            let plan = LoopSeamPlan.plan(thumbnails: held.map(SeamThumbnail.init), target: target, loopPoint: loopPoint,
                                         crossfade: fade > 0 ? max(1, Int((fade * Double(framesPerSecond)).rounded())) : 0)
            for index in 0..<plan.frameCount {
                try write(plan.frame(index, of: held))
            }
            held = []
            // Whole frames: a seamed loop's last frame lasts one interval, unless the clip was that short.
            if plan.frameCount < resampler.outputCount { lastDuration = 1 / Double(framesPerSecond) }
            crossfade = .fromSeconds(Double(plan.crossfadeFrames) / Double(framesPerSecond))
        }
        try writer.finish(lastFrameDuration: .fromSeconds(lastDuration))
        progress(writer.frameCount, writer.frameCount)
        let playTime = Double(writer.frameCount - 1) / Double(framesPerSecond) + lastDuration
        var summary = RenderSummary(path: writer.path, format: format, size: configuration.size, framesPerSecond: framesPerSecond,
                                    frameCount: writer.frameCount, duration: .fromSeconds(playTime), sourceFrameCount: times.count,
                                    seam: meter.measure, crossfade: crossfade)
        summary.bytes = writer.bytes
        summary.flashes = flashCheck?.report(playTime: playTime)
        return summary
    }
}

/// Measures a loop's seam as its frames are written: one small luma picture at a time, keeping the
/// first, the previous and the consecutive differences.
struct SeamMeter {
    private var first: SeamThumbnail?
    private var previous: SeamThumbnail?
    private var steps: [Double] = []

    /// The next frame of the loop.
    mutating func add(_ image: RGBImage) {
        let thumbnail = SeamThumbnail(image)
        if let previous { steps.append(previous.difference(to: thumbnail)) }
        if first == nil { first = thumbnail }
        previous = thumbnail
    }

    /// The seam of the frames so far.
    var measure: SeamMeasure {
        guard let first, let previous, !steps.isEmpty else { return SeamMeasure(seamDifference: 0, medianDifference: 0) }
        let sorted = steps.sorted(), middle = sorted.count / 2
        let median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        return SeamMeasure(seamDifference: previous.difference(to: first), medianDifference: median)
    }
}
