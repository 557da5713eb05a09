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
    public struct Configuration: Sendable, Hashable {
        /// The output frame size (default 320x180).
        public var size: Size
        /// How the picture fills the frame (default aspect-fill).
        public var contentMode: ContentMode
        /// The window's start, from the stream's own start (default 0).
        public var windowStart: Duration
        /// The window's length (default 15 s).
        public var windowLength: Duration
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
                    windowStart: Duration = .zero, windowLength: Duration = .seconds(15),
                    clock: LoopClock = .offline, threads: Int = DecodingDefaults.threads, sourceOptions: SourceOptions = .init(),
                    frameCacheLimit: Int = 256 << 20) {
            self.size = size
            self.contentMode = contentMode
            self.windowStart = windowStart
            self.windowLength = windowLength
            self.clock = clock
            self.threads = threads
            self.sourceOptions = sourceOptions
            self.frameCacheLimit = frameCacheLimit
        }
    }

    /// What the loop plays.
    public let source: Source
    /// How it plays.
    public let configuration: Configuration
    /// The probed video stream.
    public let info: VideoInfo

    /// Opens and probes `source`, checking the configuration against it.
    ///
    /// - Parameters:
    ///   - sizeRequest: when given, replaces the configuration's size once the source's display size is
    ///     known (one side keeping its shape, its own size, or a box turned for a portrait source).
    ///   - evenSize: round a computed side of `sizeRequest` to an even number (H.264 4:2:0).
    /// - Throws: ``PreviewLoopError`` when the input cannot be used or the window lies past its end.
    public init(source: Source, configuration: Configuration = .init(), sizeRequest: SizeRequest? = nil,
                evenSize: Bool = false) throws(PreviewLoopError) {
        guard configuration.size.width > 0, configuration.size.height > 0 else {
            throw PreviewLoopError(.invalidArgument, "output size \(configuration.size) must be positive")
        }
        guard configuration.windowLength > .zero, configuration.windowStart >= .zero else {
            throw PreviewLoopError(.invalidArgument, "the loop window needs a start ≥ 0 and a length > 0")
        }
        guard (1...64).contains(configuration.threads) else {
            throw PreviewLoopError(.invalidArgument, "threads must be between 1 and 64")
        }
        let decoder = try VideoDecoder(source: source, options: configuration.sourceOptions, threads: configuration.threads)
        if let duration = decoder.info.duration, configuration.windowStart.seconds >= duration, !decoder.info.isStillPicture {
            throw PreviewLoopError(.invalidArgument, "\(source): the window starts at \(DecimalText.fixed(configuration.windowStart.seconds, 3)) s, "
                                   + "past the end of the clip (\(DecimalText.fixed(duration, 3)) s)")
        }
        var configuration = configuration
        if let sizeRequest { configuration.size = sizeRequest.resolved(display: decoder.info.displaySize, even: evenSize) }
        self.source = source
        self.configuration = configuration
        self.info = decoder.info
        self.prepared = Mutex(UncheckedTransfer(decoder))
    }

    /// Takes over what another instance opened (the `async` initialiser opens on a thread of its own).
    init(taking other: LoopPlayer) {
        source = other.source
        configuration = other.configuration
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
    public func frames(loops: Int? = 1) -> PreviewLoopFrames {
        PreviewLoopFrames(loop: self, loops: loops)
    }

    /// Runs the loop on a thread of its own, calling `onFrame` on that thread for each frame and then
    /// `onCompletion` once (with `nil` after the last pass or after ``PreviewLoopHandle/stop()``).
    ///
    /// - Parameter loops: the number of passes, or `nil` to run until stopped.
    @discardableResult
    public func start(loops: Int? = 1, onFrame: @escaping @Sendable (VideoFrame) -> Void,
                      onCompletion: @escaping @Sendable (PreviewLoopError?) -> Void = { _ in }) -> PreviewLoopHandle {
        start(loops: loops, onFrame: { frame, _ in onFrame(frame) }, onCompletion: onCompletion)
    }

    func start(loops: Int?, onFrame: @escaping @Sendable (VideoFrame, LoopControl) -> Void,
               onCompletion: @escaping @Sendable (PreviewLoopError?) -> Void) -> PreviewLoopHandle {
        let control = LoopControl()
        let handle = PreviewLoopHandle(control: control)
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

    /// `windowLength` replaces the configured one (a render decoding past its out point).
    func run(loops: Int?, control: LoopControl, windowLength: Duration? = nil,
             _ body: (VideoFrame) throws(PreviewLoopError) -> Void) throws(PreviewLoopError) {
        let decoder = try takeDecoder(control: control)
        let scaler = FrameScaler(outputSize: configuration.size, mode: configuration.contentMode, for: decoder)
        let sar = decoder.info.sampleAspectRatio
        let frameBytes = configuration.size.area * 3
        // Only worth keeping frames when a later pass will replay them.
        let cacheableFrames = loops == 1 ? 0 : configuration.frameCacheLimit / max(1, frameBytes)
        // Decoding runs on a thread of its own, a few frames ahead of conversion and delivery here;
        // in realtime, far enough ahead (8 frames) to hide the seek back at the wrap.
        let isRealtime = configuration.clock == .realtime
        let pipe = FramePipe<LoopEvent>(capacity: isRealtime ? 8 : 2)
        let schedule = LoopSchedule(decoder: decoder, windowStart: configuration.windowStart,
                                    windowLength: windowLength ?? configuration.windowLength, loops: loops,
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
        var cache: [CachedFrame] = []
        var cacheLength = Duration.zero
        // A frame that would be shown more than one frame interval late is skipped and counted.
        let frameInterval = Duration.fromSeconds(decoder.info.frameInterval)
        var dropped = 0

        func deliver(_ image: RGBImage, presentation: Duration, sourceTime: Double, pass: Int, index: Int,
                     decode: Duration, conversion: Duration, isKeyframe: Bool) throws(PreviewLoopError) {
            var lateness: Duration?
            if !hasStarted {
                startInstant = clock.now - presentation
                hasStarted = true
            }
            if isRealtime {
                let due = startInstant + passOffset + presentation
                if due.duration(to: clock.now) > frameInterval {
                    dropped += 1
                    return
                }
                guard control.sleep(until: due) else { throw PreviewLoopError(.cancelled, "\(source): stopped") }
                lateness = max(.zero, due.duration(to: clock.now))
            }
            let frame = VideoFrame(image: image, presentationTime: presentation, sourceTime: sourceTime,
                                   loopIndex: pass, index: index,
                                   timings: FrameTimings(decode: decode, conversion: conversion,
                                                         wallTime: startInstant.duration(to: clock.now), lateness: lateness,
                                                         droppedBefore: dropped),
                                   isKeyframe: isKeyframe)
            dropped = 0
            control.frameTap.presented(frame)
            try body(frame)
            if control.isStopped { throw PreviewLoopError(.cancelled, "\(source): stopped") }
        }

        while let event = pipe.take() {
            switch event {
            case .frame(let timed, let pass, let index, let presentation):
                let converted = clock.now
                let image = try scaler.image(from: timed.frame, sampleAspectRatio: sar)
                let conversion = clock.now - converted
                if pass == 0 && cache.count < cacheableFrames {
                    cache.append(CachedFrame(image: image, presentation: presentation, sourceTime: timed.time, isKeyframe: timed.isKeyframe))
                }
                try deliver(image, presentation: presentation, sourceTime: timed.time, pass: pass, index: index,
                            decode: timed.decodeTime, conversion: conversion, isKeyframe: timed.isKeyframe)
            case .passEnd(let pass, let length):
                // The pass wraps at the window's end, or at the clip's real end when that comes first.
                passOffset += length
                if pass == 0 { cacheLength = length }
            case .replayFirstPass:
                // The first pass fit in the frame cache: later passes need no seek and no decode.
                var pass = 1
                while loops.map({ pass < $0 }) ?? true {
                    for (index, cached) in cache.enumerated() {
                        try deliver(cached.image, presentation: cached.presentation, sourceTime: cached.sourceTime,
                                    pass: pass, index: index, decode: .zero, conversion: .zero, isKeyframe: cached.isKeyframe)
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

/// A converted frame kept from the first pass for the passes after it.
struct CachedFrame {
    var image: RGBImage
    var presentation: Duration
    var sourceTime: Double
    var isKeyframe: Bool
}

/// Hands a value that is not `Sendable` to another thread that becomes its only user.
///
/// `@unchecked Sendable`: the sender gives up every reference when it wraps the value.
struct UncheckedTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
