import FoundationEssentials

/// One picture of a card's sequence.
public struct CardFrame: Sendable {
    /// The picture, with transparent corners (see ``CardCompositor``).
    public var image: RGBAImage
    /// Seconds from the sequence's start.
    public var time: Double
    /// Its number in the sequence, from 0.
    public var index: Int
    /// Where the sequence is.
    public var phase: CardPhase
    /// The source time (seconds from the stream's start) of the video frame shown, when video shows.
    public var videoSourceTime: Double?
}

/// The poster of a card and where its video starts.
public struct CardPoster: Sendable {
    /// The poster frame, at the card's size.
    public var frame: VideoFrame
    /// Why it was chosen, when chosen automatically; `nil` when its time was given.
    public var choice: PosterChoice?
    /// Where the video starts playing at the tap, seconds from the stream's start: the poster's own
    /// time when chosen automatically (poster and video meet without a jump), the window's start when
    /// the poster's time was given (a poster picked from elsewhere in the clip, like artwork).
    public var videoStart: Double
}

/// What `PreviewCard.render(to:framesPerSecond:quality:maxFrames:flashSafety:)` wrote.
public struct CardSummary: Sendable, Hashable {
    /// The file, or the directory of PNG frames, written.
    public var path: String
    /// The animation format, or `nil` for a directory of PNG frames.
    public var format: AnimationFormat?
    /// The picture size.
    public var size: Size
    /// The frame rate.
    public var framesPerSecond: Int
    /// Pictures written.
    public var frameCount: Int
    /// How long the sequence lasts.
    public var duration: Double
    /// The poster's time in the clip, seconds from the stream's start.
    public var posterTime: Double
    /// Where the video started, seconds from the stream's start.
    public var videoStart: Double
    /// With ``FlashSafety/check``, for an animation: the photosensitive-flash verdicts of its pictures
    /// as a player repeats them (the jump from the last picture back to the poster included); `nil` for
    /// a directory of PNG frames or with ``FlashSafety/off``.
    public var flashes: FlashReport?
    /// With ``AnimationDestination/memory``: the animation's bytes (what a file gets); `nil` for a file
    /// or a directory.
    public var bytes: [UInt8]? = nil
}

/// A preview card rendered headless: the poster (the window's first good frame) with a play button,
/// the reveal (a disc growing from the centre, or a cross-fade), the video playing from the poster's
/// time (or from the window's start when the poster's time is given), and optionally the fade back to the poster; every picture cut to rounded corners.
///
/// ```swift
/// let card = try PreviewCard(source: .file("clip.mp4"), style: CardStyle(size: Size(width: 480, height: 270)))
/// try card.render(to: "card.webp")                  // animated, transparent corners
/// let midReveal = try card.still(at: 1.3).image      // one picture, for a snapshot test
/// ```
///
/// The video plays within the loop window `[windowStart, windowStart + windowLength)`, from
/// ``CardPoster/videoStart``, and wraps back there at the window's (or the clip's) end. The card
/// reads its source twice (once to choose the poster, once to play), so standard input cannot be used.
/// Not thread-safe: use from one thread.
public final class PreviewCard {
    /// The clip.
    public let source: Source
    /// The card's look and timing.
    public let style: CardStyle
    /// Where the loop window starts, seconds from the stream's start (resolved against the video's
    /// duration when given as a percentage).
    public let windowStart: Double
    /// How long the loop window lasts, in seconds (resolved likewise).
    public let windowLength: Double
    /// The compositor for ``style``.
    public let compositor: CardCompositor
    /// The sequence's timing.
    public var timeline: CardTimeline { CardTimeline(style: style) }

    private let threads: Int
    private let sourceOptions: SourceOptions
    private let sampler: FrameSampler
    private let posterTime: Double?
    private var chosenPoster: CardPoster?

    /// Opens `source` for a card.
    ///
    /// What the clip is: size, duration, colours (``VideoInfo/colorWarning`` for Dolby Vision profile 5).
    public var info: VideoInfo { sampler.info }

    /// Opens `source` for a card.
    ///
    /// The window and the poster time may be seconds or percentages of the video's duration, resolved
    /// once against the input opened here.
    ///
    /// - Parameters:
    ///   - source: a file or URL; not standard input, which cannot be read twice (the poster is
    ///     sampled here, the video is decoded again when rendering).
    ///   - style: the card's size, play button, reveal, corner radius and timing (validated here).
    ///   - windowStart: where the hover video's loop window starts (default the stream's start).
    ///   - windowLength: how long the loop window lasts (default 15 s), cut at the clip's end.
    ///   - posterTime: the poster's time in the clip (from the stream's start), or `nil`
    ///     (the default) for the loop window's first good frame.
    ///   - threads: decoder threads, for the poster's sampler and the video's decoder.
    ///   - sourceOptions: timeouts, allowed protocols and limits, used for both openings of the clip.
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for an unusable style or window (a
    ///   percentage of an unknown duration, a start past the end), or standard input; any error of
    ///   opening the source.
    public init(source: Source, style: CardStyle = CardStyle(), windowStart: TimePosition = .zero, windowLength: TimePosition = 15,
                posterTime: TimePosition? = nil, threads: Int = DecodingDefaults.threads, sourceOptions: SourceOptions = .init()) throws(PreviewLoopError) {
        // The hover video is a loop of this window: it is checked, resolved and refused as the loop's is.
        let loopWindow = LoopPlayer.Configuration(windowStart: windowStart, windowLength: windowLength)
        try style.validate()
        try loopWindow.validate()
        try posterTime?.validate("the poster's time")
        if case .standardInput = source {
            throw PreviewLoopError(.invalidArgument, "a card reads its clip twice (poster, then video): give a file or URL, not standard input")
        }
        self.source = source
        self.style = style
        self.threads = threads
        self.sourceOptions = sourceOptions
        compositor = try CardCompositor(style: style)
        sampler = try FrameSampler(source: source, threads: threads, options: sourceOptions)
        let info = sampler.info
        let window = try loopWindow.resolvedWindow(source: source, info: info)
        let poster: Double?
        do throws(PreviewLoopError) {
            poster = try posterTime?.resolved(duration: info.duration, "the poster's time")
        } catch {
            throw PreviewLoopError(error.code, "\(source): \(error.message)")
        }
        self.windowStart = window.start
        self.windowLength = window.length
        self.posterTime = poster
    }

    /// Takes over what another instance opened (the `async` initialiser opens on a thread of its own).
    init(taking other: PreviewCard) {
        source = other.source
        style = other.style
        windowStart = other.windowStart
        windowLength = other.windowLength
        compositor = other.compositor
        threads = other.threads
        sourceOptions = other.sourceOptions
        sampler = other.sampler
        posterTime = other.posterTime
        chosenPoster = other.chosenPoster
    }

    /// The sampler, for the `async` forms.
    var cardSampler: FrameSampler { sampler }

    /// The poster: the loop window's first good frame (see ``FrameSampler/posterFrame(in:size:mode:)-4hyr5``),
    /// or the frame at the given poster time; chosen once.
    public func poster() throws(PreviewLoopError) -> CardPoster {
        if let chosenPoster { return chosenPoster }
        let poster: CardPoster
        if let posterTime {
            poster = CardPoster(frame: try sampler.frame(at: posterTime, size: style.size), choice: nil, videoStart: windowStart)
        } else {
            let choice = try sampler.posterFrame(in: windowStart..<(windowStart + windowLength), size: style.size)
            poster = CardPoster(frame: choice.frame, choice: choice, videoStart: choice.frame.sourceTime)
        }
        chosenPoster = poster
        return poster
    }

    /// The window the video plays in: from where it starts to the loop window's end.
    private func playWindow(from videoStart: Double) -> (start: Double, length: Double) {
        var end = windowStart + windowLength
        if let duration = sampler.info.duration { end = min(end, duration) }
        return (videoStart, max(end - videoStart, sampler.info.frameInterval))
    }

    /// The card at `time` seconds from the sequence's start: one picture, decoding only the frame it shows.
    public func still(at time: Double) throws(PreviewLoopError) -> CardFrame {
        let poster = try poster()
        let phase = timeline.phase(at: time)
        var video: VideoFrame?
        if let videoTime = phase.videoTime {
            let window = playWindow(from: poster.videoStart)
            video = try sampler.frame(at: window.start + videoTime.truncatingRemainder(dividingBy: window.length), size: style.size)
        }
        return CardFrame(image: try compositor.picture(at: phase, poster: poster.frame.image, video: video?.image),
                         time: min(max(0, time), timeline.duration), index: 0, phase: phase,
                         videoSourceTime: video?.sourceTime)
    }

    /// The sequence's pictures at `framesPerSecond`, in order: picture `k` shows the card at `k / fps`;
    /// the last one lasts until the sequence's end (see ``lastFrameDuration(framesPerSecond:)``).
    ///
    /// The video is decoded once, forward, and each picture takes the frame displayed at its instant.
    public func frames(framesPerSecond: Int, _ body: (CardFrame) throws(PreviewLoopError) -> Void) throws(PreviewLoopError) {
        try ValueRanges.check(framesPerSecond: framesPerSecond)
        let poster = try poster()
        let timeline = self.timeline
        let count = Self.frameCount(duration: timeline.duration, framesPerSecond: framesPerSecond)
        var index = 0
        func emit(_ video: VideoFrame?) throws(PreviewLoopError) {
            let time = Double(index) / Double(framesPerSecond)
            let phase = timeline.phase(at: time)
            let image = try compositor.picture(at: phase, poster: poster.frame.image, video: video?.image)
            try body(CardFrame(image: image, time: time, index: index, phase: phase, videoSourceTime: video?.sourceTime))
            index += 1
        }
        // Before the tap: the poster alone.
        while index < count, timeline.phase(at: Double(index) / Double(framesPerSecond)).videoTime == nil { try emit(nil) }
        guard index < count else { return }
        // After it, each picture shows the video frame displayed at its video time, in one forward pass
        // (wrapping at the play window's end).
        let window = playWindow(from: poster.videoStart)
        let loop = try LoopPlayer(source: source, configuration: .init(
            size: style.size, contentMode: .aspectFill, windowStart: TimePosition(.fromSeconds(window.start)),
            windowLength: TimePosition(.fromSeconds(window.length)), threads: threads, sourceOptions: sourceOptions))
        let frameInterval = loop.info.frameInterval
        var previous: VideoFrame?
        var passStart = 0.0, pass = 0
        // Stops the endless run once every picture is out (not an error: `finished` tells it from a cancellation).
        let control = LoopControl()
        var finished = false
        func videoTime(of index: Int) -> Double {
            timeline.phase(at: Double(index) / Double(framesPerSecond)).videoTime ?? 0
        }
        do throws(PreviewLoopError) {
            try loop.run(loops: nil, control: control) { frame throws(PreviewLoopError) in
                if frame.loopIndex != pass, let last = previous {
                    // The pass wrapped at the window's end, or where the clip's last frame stopped showing.
                    passStart += min(window.length, last.presentationTime.seconds + frameInterval)
                    pass = frame.loopIndex
                }
                let arrival = passStart + frame.presentationTime.seconds
                // Every instant before this frame's shows the previous frame (or this one, the first).
                while index < count, videoTime(of: index) < arrival - 1e-6 { try emit(previous ?? frame) }
                previous = frame
                if index >= count {
                    finished = true
                    control.stop()
                }
            }
        } catch where finished && error.code == .cancelled {}
        while index < count, let last = previous { try emit(last) }
    }

    /// How many pictures a sequence of `duration` seconds has at `framesPerSecond`: one per started
    /// frame interval, at least one.
    public static func frameCount(duration: Double, framesPerSecond: Int) -> Int {
        // Clamped: a duration from hostile options must not trap the conversion (the CLI refuses such counts first).
        let count = (duration * Double(framesPerSecond) - 1e-9).rounded(.up)
        return count.isFinite ? max(1, Int(min(count, 1e15))) : 1
    }

    /// How long the last picture lasts, so that the sequence lasts exactly its duration.
    public func lastFrameDuration(framesPerSecond: Int) -> Double {
        let count = Self.frameCount(duration: timeline.duration, framesPerSecond: framesPerSecond)
        return timeline.duration - Double(count - 1) / Double(framesPerSecond)
    }

    /// Writes the sequence: an animation when `path` ends in `.webp`, `.gif` or `.mp4` (looping forever;
    /// WebP and GIF keep the transparent corners unless the style sets a background, MP4 shows the
    /// background, black by default: ``CardStyle/opaqueBackground(for:)``), or else a directory of PNG
    /// frames `card-00001.png`… (created if missing, with transparent corners).
    ///
    /// Files are written whole or not at all. A directory is built beside `path` and swapped in when
    /// complete; an existing directory is replaced only when it holds nothing but `card-NNNNN.png`
    /// files (anything else is refused before rendering), so a failure keeps the old frames and a
    /// shorter re-run leaves no stale ones.
    ///
    /// - Parameters:
    ///   - path: the animation (`.webp`, `.gif`, `.mp4`) or the directory of PNG frames to write.
    ///   - framesPerSecond: the frame rate, 1–120 (default 30).
    ///   - quality: 0–100, or `nil` for the format's default; see ``AnimationWriter``.
    ///   - maxFrames: the most pictures the sequence may have; more throws ``PreviewLoopError/Code/tooLarge``.
    ///   - flashSafety: ``FlashSafety/check`` analyses an animation's pictures (flattened on the style's
    ///     background) for photosensitive flashes as a player repeats them, for ``CardSummary/flashes``;
    ///     the file is written whatever the verdict. ``FlashSafety/off`` (the default) skips it, and so
    ///     does a directory of PNG frames, which does not autoplay. ``FlashSafety/avoid`` throws
    ///     ``PreviewLoopError/Code/invalidArgument``: a card plays from its poster, it has no window to move.
    /// - Throws: ``PreviewLoopError`` for an unusable input, an odd size for MP4, an unwritable output
    ///   or an encoder failure.
    @discardableResult
    public func render(to path: String, framesPerSecond: Int = 30, quality: Int? = nil, maxFrames: Int = .max,
                       flashSafety: FlashSafety = .off) throws(PreviewLoopError) -> CardSummary {
        guard flashSafety != .avoid else {
            throw PreviewLoopError(.invalidArgument, "a card plays from its poster: it has no loop window to move clear of "
                                   + "flashes; check them instead")
        }
        if let format = AnimationFormat(path: path) {
            return try renderAnimation(to: .file(path), format: format, framesPerSecond: framesPerSecond, quality: quality,
                                       maxFrames: maxFrames, flashSafety: flashSafety)
        }
        // Built beside the destination and swapped in whole: the old frames stay until the new set is complete.
        let staged = try StagedDirectory(replacing: path) { StagedDirectory.isNumbered($0, prefix: "card-", suffix: ".png") }
        var names: [String] = []
        do throws(PreviewLoopError) {
            try frames(framesPerSecond: framesPerSecond) { frame throws(PreviewLoopError) in
                guard names.count < maxFrames else {
                    throw PreviewLoopError(.tooLarge, "\(path): the card reached its limit of \(maxFrames) frames")
                }
                let name = "card-\(DecimalText.zeroPadded(frame.index + 1, 5)).png"
                try staged.write(try ImageEncoder.encode(compositor.withBackground(frame.image), as: .png), named: name)
                names.append(name)
            }
            try staged.commit()
        } catch {
            staged.discard()
            throw error
        }
        return CardSummary(path: path, format: nil, size: style.size, framesPerSecond: framesPerSecond,
                           frameCount: names.count, duration: timeline.duration, posterTime: try poster().frame.sourceTime,
                           videoStart: try poster().videoStart, flashes: nil)
    }

    /// Writes the sequence as an animation to a file or to memory; see `render(to:framesPerSecond:…)`
    /// with a path.
    ///
    /// With ``AnimationDestination/memory``, ``CardSummary/bytes`` hold the animation: the bytes a file
    /// of the same format gets.
    ///
    /// - Parameters:
    ///   - destination: the animation's file or memory.
    ///   - format: MP4, animated WebP or GIF; `nil` takes it from a file's extension (required for memory).
    ///   - framesPerSecond: the frame rate, 1–120 (default 30).
    ///   - quality: 0–100, or `nil` for the format's default; see ``AnimationWriter``.
    ///   - maxFrames: the most pictures the sequence may have; more throws ``PreviewLoopError/Code/tooLarge``.
    ///   - flashSafety: ``FlashSafety/check`` fills ``CardSummary/flashes``; `avoid` is refused, as with a path.
    /// - Throws: as the render to a path; ``PreviewLoopError/Code/invalidArgument`` without a format for
    ///   memory or a file whose extension names none; ``PreviewLoopError/Code/tooLarge`` when the file in
    ///   memory would pass ``OutputLimits/defaultAnimationBytes``.
    @discardableResult
    public func render(to destination: AnimationDestination, format: AnimationFormat? = nil, framesPerSecond: Int = 30,
                       quality: Int? = nil, maxFrames: Int = .max, flashSafety: FlashSafety = .off) throws(PreviewLoopError) -> CardSummary {
        guard flashSafety != .avoid else {
            throw PreviewLoopError(.invalidArgument, "a card plays from its poster: it has no loop window to move clear of "
                                   + "flashes; check them instead")
        }
        var resolved = format
        if resolved == nil, case .file(let path) = destination { resolved = AnimationFormat(path: path) }
        guard let resolved else {
            let name = if case .file(let path) = destination { path } else { "a card rendered to memory" }
            throw PreviewLoopError(.invalidArgument, "\(name): give the animation's format (mp4, webp or gif)")
        }
        return try renderAnimation(to: destination, format: resolved, framesPerSecond: framesPerSecond, quality: quality,
                                   maxFrames: maxFrames, flashSafety: flashSafety)
    }

    /// The animation of ``render(to:format:framesPerSecond:quality:maxFrames:flashSafety:)``.
    private func renderAnimation(to destination: AnimationDestination, format: AnimationFormat, framesPerSecond: Int, quality: Int?,
                                 maxFrames: Int, flashSafety: FlashSafety) throws(PreviewLoopError) -> CardSummary {
        let lastDuration = lastFrameDuration(framesPerSecond: framesPerSecond)
        var check = flashSafety == .check ? LoopFlashCheck(framesPerSecond: framesPerSecond) : nil
        let writer = try AnimationWriter(to: destination, format: format, size: style.size, framesPerSecond: framesPerSecond,
                                         quality: quality, background: style.opaqueBackground(for: format),
                                         keepsGIFTransparency: style.background == nil)
        writer.maxFrames = maxFrames
        try frames(framesPerSecond: framesPerSecond) { frame throws(PreviewLoopError) in
            if format == .webp || (format == .gif && style.background == nil) {
                try writer.append(compositor.withBackground(frame.image))
                check?.add(compositor.flattened(frame.image))
            } else {
                let flat = compositor.flattened(frame.image, for: format)
                try writer.append(flat)
                check?.add(flat)
            }
        }
        try writer.finish(lastFrameDuration: .fromSeconds(lastDuration))
        let written = writer.frameCount
        let flashes = check?.report(playTime: Double(written - 1) / Double(framesPerSecond) + lastDuration)
        return CardSummary(path: writer.path, format: format, size: style.size, framesPerSecond: framesPerSecond,
                           frameCount: written, duration: timeline.duration, posterTime: try poster().frame.sourceTime,
                           videoStart: try poster().videoStart, flashes: flashes, bytes: writer.bytes)
    }
}
