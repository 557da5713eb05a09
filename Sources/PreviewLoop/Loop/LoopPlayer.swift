import Synchronization

/// Which clock paces a loop's frames.
public enum LoopClock: String, Sendable, CaseIterable {
    /// As fast as decoding allows (for tools, thumbnails, tests).
    case offline
    /// Each frame is handed over at its due wall time, like a player: `t0 + (earlier passes' length)
    /// + presentationTime`.
    case realtime
}

/// A muted, aspect-filled video loop: plays the window `[start, start + length)` of a clip's best video
/// stream again and again, delivering upright RGB24 frames of a fixed size.
///
/// Audio and subtitle streams are discarded at the demuxer and never decoded. Each pass delivers
/// every frame whose presentation time lies in the window, beginning with the frame displayed at the
/// window's start; a clip that ends before the window does wraps at its real end.
///
/// ```swift
/// let loop = try LoopPlayer(source: .file("clip.mp4"),
///                            configuration: .init(size: Size(width: 320, height: 180)))
/// for try await frame in loop.frames(loops: 2) {
///     use(frame.pixels, frame.presentationTime, frame.loopIndex)
/// }
/// ```
public final class LoopPlayer: Sendable {
    /// How a loop plays.
    ///
    /// The defaults are the playing loop's, as `preview-loop loop` and `wall` have them: 320x180 and a
    /// 15 s window that starts again every 15 s (the card's preview length). A hover preview *file*, as
    /// `render` writes it, is shorter and larger: give `size: Size(width: 480, height: 270)` and
    /// `windowLength: .seconds(3)` for render's defaults.
    public struct Configuration: Sendable, Hashable {
        /// The output frame size (default 320x180).
        public var size: Size
        /// How the picture fills the frame (default aspect-fill).
        public var contentMode: ContentMode
        /// The window's start, from the stream's own start (default 0): seconds, or a percentage of the
        /// video's duration, resolved once against the open input (see ``LoopPlayer/windowStart``).
        public var windowStart: TimePosition
        /// The window's length (default 15 s): seconds, or a percentage of the video's duration.
        public var windowLength: TimePosition
        /// Where the window ends instead, when given (default none): a time from the stream's own start
        /// in seconds or a percentage of the video's duration, after ``windowStart``. It replaces
        /// ``windowLength`` and is resolved with the start, once, from the open input — so a loop point
        /// given as a percentage works from standard input too.
        public var windowEnd: TimePosition?
        /// Offline (as fast as possible, the default) or realtime pacing.
        public var clock: LoopClock
        /// FFmpeg decoder threads (default 2).
        public var threads: Int
        /// Timeouts for opening and reading the source.
        public var sourceOptions: SourceOptions
        /// The most memory, in bytes, spent keeping the first pass's converted frames so that later
        /// passes replay them with no seek and no decode (default 256 MiB; 0 disables). A window whose
        /// frames do not fit is decoded again on every pass.
        public var frameCacheLimit: Int

        /// Creates a configuration; every parameter has the documented default.
        public init(size: Size = Size(width: 320, height: 180), contentMode: ContentMode = .aspectFill,
                    windowStart: TimePosition = .zero, windowLength: TimePosition = .seconds(15),
                    windowEnd: TimePosition? = nil, clock: LoopClock = .offline, threads: Int = DecodingDefaults.threads, sourceOptions: SourceOptions = .init(),
                    frameCacheLimit: Int = 256 << 20) {
            self.size = size
            self.contentMode = contentMode
            self.windowStart = windowStart
            self.windowLength = windowLength
            self.windowEnd = windowEnd
            self.clock = clock
            self.threads = threads
            self.sourceOptions = sourceOptions
            self.frameCacheLimit = frameCacheLimit
        }
    }

    /// What the loop plays.
    public let source: Source
    /// How it plays: the configuration given, with its window resolved to seconds (and its size to
    /// pixels when a size request was given).
    public let configuration: Configuration
    /// Where the window starts, from the stream's own start: the configuration's start resolved
    /// against the video's duration.
    public let windowStart: Duration
    /// How long the window lasts: the configuration's length resolved against the video's duration
    /// (a clip that ends first wraps at its real end).
    public let windowLength: Duration
    /// The probed video stream.
    public let info: VideoInfo

    /// Opens and probes `source`, checking the configuration against it.
    ///
    /// A window given as a percentage is resolved here, once, against the video's duration from the
    /// input just opened (so it works from standard input too).
    ///
    /// - Parameters:
    ///   - source: the clip: a file, an `http(s)` URL, bytes in memory or standard input (read by the
    ///     first run only: a second run of the same player throws `invalidArgument`).
    ///   - configuration: the output size and content mode, the window, the clock, the frame cache
    ///     limit, decoder threads and the source's options.
    ///   - sizeRequest: when given, replaces the configuration's size once the source's display size is
    ///     known (one side keeping its shape, its own size, or a box turned for a portrait source).
    ///   - evenSize: round a computed side of `sizeRequest` to an even number (H.264 4:2:0).
    /// - Throws: ``PreviewLoopError`` when the input cannot be used, the window is empty or lies past
    ///   its end, or is a percentage of a clip whose duration is unknown.
    public convenience init(source: Source, configuration: Configuration = .init(), sizeRequest: SizeRequest? = nil,
                            evenSize: Bool = false) throws(PreviewLoopError) {
        try self.init(source: source, configuration: configuration,
                      resolvingSize: sizeRequest.map { request in { request.resolved(display: $0, even: evenSize) } })
    }

    /// Opens `source` with the output size `resolvingSize` gives for its upright display size, or the
    /// configuration's size when it is `nil`.
    init(source: Source, configuration: Configuration, resolvingSize: ((Size) -> Size)?) throws(PreviewLoopError) {
        try configuration.validate()
        let decoder = try VideoDecoder(source: source, options: configuration.sourceOptions, threads: configuration.threads)
        let window = try configuration.resolvedWindow(source: source, info: decoder.info)
        var configuration = configuration
        configuration.windowStart = .seconds(window.start)
        configuration.windowLength = .seconds(window.length)
        configuration.windowEnd = nil
        if let resolvingSize { configuration.size = resolvingSize(decoder.info.displaySize) }
        self.source = source
        self.configuration = configuration
        self.windowStart = .seconds(window.start)
        self.windowLength = .seconds(window.length)
        self.info = decoder.info
        self.prepared = Mutex(UncheckedTransfer(decoder))
    }

    /// Takes over what another instance opened (the `async` initialiser opens on a thread of its own).
    init(taking other: LoopPlayer) {
        source = other.source
        configuration = other.configuration
        windowStart = other.windowStart
        windowLength = other.windowLength
        info = other.info
        prepared = Mutex(other.prepared.withLock { slot in
            defer { slot = nil }
            return slot
        })
    }

    /// The decoder opened by `init`, handed to the first run (a pipe can only be opened once).
    private let prepared: Mutex<UncheckedTransfer<VideoDecoder>?>

    /// The decoder for a run: the one opened by `init` the first time, a new one after that.
    private func takeDecoder(control: LoopControl) throws(PreviewLoopError) -> VideoDecoder {
        if let decoder = prepared.withLock({ slot -> UncheckedTransfer<VideoDecoder>? in
            let taken = slot
            slot = nil
            return taken
        }) {
            control.adopt(decoder.value.interrupter)
            CancellationScope.current?.register(decoder.value.interrupter)
            return decoder.value
        }
        if case .standardInput = source {
            throw PreviewLoopError(.invalidArgument, "\(source): standard input can only be played once per LoopPlayer")
        }
        return try VideoDecoder(source: source, options: configuration.sourceOptions,
                                threads: configuration.threads, interrupter: control.interrupter)
    }

    /// The loop's frames as an `AsyncSequence`; `loops` passes, or until cancelled when `nil`.
    public func frames(loops: Int? = 1) -> LoopPlayer.Frames {
        LoopPlayer.Frames(loop: self, loops: loops)
    }

    /// Runs the loop on a thread of its own, calling `onFrame` on that thread for each frame and then
    /// `onCompletion` once (with `nil` after the last pass or after ``LoopPlayer/Handle/stop()``).
    ///
    /// - Parameters:
    ///   - loops: the number of passes, or `nil` to run until stopped.
    ///   - onFrame: called with each frame, in order, on the loop's thread; the next frame waits for it
    ///     to return (and, with the realtime clock, for its due time).
    ///   - onCompletion: called once on the loop's thread when the loop ends: `nil` after the last pass
    ///     or a stop, the error otherwise.
    @discardableResult
    public func start(loops: Int? = 1, onFrame: @escaping @Sendable (VideoFrame) -> Void,
                      onCompletion: @escaping @Sendable (PreviewLoopError?) -> Void = { _ in }) -> LoopPlayer.Handle {
        start(loops: loops, onFrame: { frame, _ in onFrame(frame) }, onCompletion: onCompletion)
    }

    func start(loops: Int?, onFrame: @escaping @Sendable (VideoFrame, LoopControl) -> Void,
               onCompletion: @escaping @Sendable (PreviewLoopError?) -> Void) -> LoopPlayer.Handle {
        let control = LoopControl()
        let handle = LoopPlayer.Handle(control: control)
        let body: @Sendable () -> Void = { [self] in
            var failure: PreviewLoopError?
            do throws(PreviewLoopError) {
                try self.run(loops: loops, control: control) { frame in onFrame(frame, control) }
            } catch where error.code == .cancelled && control.isStopped {
                failure = nil
            } catch {
                failure = error
            }
            onCompletion(failure)
            handle.finish(failure)
        }
        do {
            try NamedThread.detach(name: "PreviewLoop", body)
        } catch {
            let failure = PreviewLoopError(error.code, "\(source): \(error.message)")
            onCompletion(failure)
            handle.finish(failure)
        }
        return handle
    }

    /// Runs the loop on the calling thread, handing each frame to `body`; returns after `loops` passes
    /// (never, when `nil`, unless `body` throws).
    public func run(loops: Int? = 1, _ body: (VideoFrame) throws(PreviewLoopError) -> Void) throws(PreviewLoopError) {
        try run(loops: loops, control: LoopControl(), body)
    }

    /// `windowStart` and `windowLength` replace the configured ones (a render decoding past its out
    /// point, or searching around its start).
    func run(loops: Int?, control: LoopControl, windowStart: Duration? = nil, windowLength: Duration? = nil,
             _ body: (VideoFrame) throws(PreviewLoopError) -> Void) throws(PreviewLoopError) {
        let decoder = try takeDecoder(control: control)
        // A smart crop keeps the window of the loop's first frame for every pass.
        let scaler = FrameScaler(outputSize: configuration.size, mode: configuration.contentMode, for: decoder, holdsSmartCrop: true)
        let sar = decoder.info.sampleAspectRatio
        let frameBytes = configuration.size.area * 3
        // Only worth keeping frames when a later pass will replay them.
        let cacheableFrames = loops == 1 ? 0 : configuration.frameCacheLimit / max(1, frameBytes)
        // Decoding runs on a thread of its own, a few frames ahead of conversion and delivery here;
        // in realtime, far enough ahead (8 frames) to hide the seek back at the wrap.
        let isRealtime = configuration.clock == .realtime
        let pipe = FramePipe<LoopEvent>(capacity: isRealtime ? 8 : 2)
        let schedule = LoopSchedule(decoder: decoder, windowStart: windowStart ?? self.windowStart,
                                    windowLength: windowLength ?? self.windowLength, loops: loops,
                                    cacheableFrames: cacheableFrames)
        let transfer = UncheckedTransfer(schedule)
        let producer: NamedThread
        do {
            producer = try NamedThread(name: "PreviewLoop decode") { transfer.value.produce(into: pipe) }
        } catch {
            control.frameTap.close()
            throw PreviewLoopError(error.code, "\(source): \(error.message)")
        }
        defer {
            pipe.close(discardingItems: true)
            control.cancelIO()
            producer.join()
            control.frameTap.close()
        }

        let clock = ContinuousClock()
        // Like a player, the clock starts when the first frame is ready to show.
        var startInstant = clock.now
        var hasStarted = false
        var passOffset = Duration.zero
        // Pass 0's converted frames, kept for the passes after it.
        var cache: [VideoFrame] = []
        var cacheLength = Duration.zero
        // A frame that would be shown more than one frame interval late is skipped and counted.
        let frameInterval = Duration.fromSeconds(decoder.info.frameInterval)
        var dropped = 0

        /// Hands `frame` over at its due time (realtime), with the hand-over timings filled in.
        func deliver(_ converted: VideoFrame) throws(PreviewLoopError) {
            var frame = converted
            var lateness: Duration?
            if !hasStarted {
                startInstant = clock.now - frame.presentationTime
                hasStarted = true
            }
            if isRealtime {
                let due = startInstant + passOffset + frame.presentationTime
                if due.duration(to: clock.now) > frameInterval {
                    dropped += 1
                    return
                }
                guard control.sleep(until: due) else { throw PreviewLoopError(.cancelled, "\(source): stopped") }
                lateness = max(.zero, due.duration(to: clock.now))
            }
            frame.timings.wallTime = startInstant.duration(to: clock.now)
            frame.timings.lateness = lateness
            frame.timings.droppedBefore = dropped
            dropped = 0
            control.frameTap.presented(frame)
            try body(frame)
            if control.isStopped { throw PreviewLoopError(.cancelled, "\(source): stopped") }
        }

        while let event = pipe.take() {
            switch event {
            case .frame(let timed, let pass, let index, let presentation):
                let frame = try VideoFrame(converting: timed, with: scaler, sampleAspectRatio: sar, presentationTime: presentation,
                                           loopIndex: pass, index: index, since: startInstant)
                if pass == 0 && cache.count < cacheableFrames { cache.append(frame) }
                try deliver(frame)
            case .passEnd(let pass, let length):
                // The pass wraps at the window's end, or at the clip's real end when that comes first.
                passOffset += length
                if pass == 0 { cacheLength = length }
            case .replayFirstPass:
                // The first pass fit in the frame cache: later passes need no seek and no decode.
                var pass = 1
                while loops.map({ pass < $0 }) ?? true {
                    for (index, cached) in cache.enumerated() {
                        var frame = cached
                        frame.loopIndex = pass
                        frame.index = index
                        frame.timings.decode = .zero
                        frame.timings.conversion = .zero
                        try deliver(frame)
                    }
                    passOffset += cacheLength
                    pass += 1
                }
            case .failed(let error):
                throw error
            }
        }
    }
}

extension LoopPlayer.Configuration {
    /// Checks what can be checked before the input is opened: a size, a window that is not negative
    /// or empty when given in seconds, a thread count.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` otherwise.
    package func validate() throws(PreviewLoopError) {
        guard size.width > 0, size.height > 0, size.width <= RGBImage.maximumSide, size.height <= RGBImage.maximumSide else {
            throw PreviewLoopError(.invalidArgument, "output size \(size) must be positive and at most \(RGBImage.maximumSide) a side")
        }
        try windowStart.validate("the window's start")
        try windowLength.validate("the window's length")
        if case .seconds(let length) = windowLength, length <= 0 {
            throw PreviewLoopError(.invalidArgument, "the loop window needs a length > 0")
        }
        if let windowEnd {
            try windowEnd.validate("the window's end")
            // Comparable before opening only when both are the same kind (resolvedWindow checks the rest).
            switch (windowStart, windowEnd) {
            case (.seconds(let start), .seconds(let end)) where end <= start, (.percent(let start), .percent(let end)) where end <= start:
                throw PreviewLoopError(.invalidArgument, "the window's end (\(windowEnd)) must come after its start (\(windowStart))")
            default:
                break
            }
        }
        guard (1...64).contains(threads) else {
            throw PreviewLoopError(.invalidArgument, "threads must be between 1 and 64")
        }
    }

    /// The window in seconds for the clip `info` describes: percentages of the video's duration
    /// resolved, and an end turned into a length; the length is not cut at the clip's end (a pass wraps
    /// there by itself).
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for a percentage of an unknown duration, an
    ///   empty window, an end not after the start, or a window starting at or past the end of a clip
    ///   that is not a still picture.
    package func resolvedWindow(source: Source, info: VideoInfo) throws(PreviewLoopError) -> (start: Double, length: Double) {
        let start: Double, length: Double
        do throws(PreviewLoopError) {
            start = try windowStart.resolved(duration: info.duration, "the window's start")
            if let windowEnd {
                let end = try windowEnd.resolved(duration: info.duration, "the window's end")
                guard end > start else {
                    throw PreviewLoopError(.invalidArgument, "the window's end (\(windowEnd) = \(DecimalText.fixed(end, 3)) s) "
                                           + "must come after its start (\(DecimalText.fixed(start, 3)) s)")
                }
                length = end - start
            } else {
                length = try windowLength.resolved(duration: info.duration, "the window's length")
            }
        } catch {
            throw PreviewLoopError(error.code, "\(source): \(error.message)")
        }
        guard length > 0 else {
            throw PreviewLoopError(.invalidArgument, "\(source): the loop window is empty (\(windowLength) of the clip)")
        }
        if let duration = info.duration, start >= duration, !info.isStillPicture {
            throw PreviewLoopError(.invalidArgument, "\(source): the window starts at \(DecimalText.fixed(start, 3)) s, "
                                   + "past the end of the clip (\(DecimalText.fixed(duration, 3)) s)")
        }
        return (start, length)
    }
}
