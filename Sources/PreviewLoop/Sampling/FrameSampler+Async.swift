/// The `async` forms of the sampler's calls: each runs on a thread of its own (never on the
/// cooperative pool), and cancelling the awaiting task interrupts its I/O and decoding and throws
/// ``PreviewLoopError/Code/cancelled`` (see <doc:ErrorsAndCancellation>).
///
/// A sampler is still used by one caller at a time: await one call before starting the next. After a
/// cancelled call the sampler stays cancelled (every later call throws ``PreviewLoopError/Code/cancelled``);
/// open a new one.
extension FrameSampler {
    /// Opens `source` for sampling, off the calling thread; see ``init(source:threads:options:)``.
    public convenience init(source: Source, threads: Int = 2, options: SourceOptions = .init()) async throws(PreviewLoopError) {
        guard (1...64).contains(threads) else { throw PreviewLoopError(.invalidArgument, "threads must be between 1 and 64") }
        let decoder = try await BlockingCall.run("PreviewLoop open") { () throws(PreviewLoopError) in
            UncheckedTransfer(try VideoDecoder(source: source, options: options, threads: threads))
        }
        self.init(decoder: decoder.value)
    }

    /// Runs `body` with this sampler on a thread of its own, its decoder cancelled with the task.
    func detached<T>(_ body: @escaping (FrameSampler) throws(PreviewLoopError) -> T) async throws(PreviewLoopError) -> T {
        // The caller is suspended until the thread is done: the sampler has one user at a time.
        let sampler = UncheckedTransfer(self), work = UncheckedTransfer(body)
        let result = try await BlockingCall.run("PreviewLoop call") { () throws(PreviewLoopError) in
            CancellationScope.current?.register(sampler.value.decoder.interrupter)
            return UncheckedTransfer(try work.value(sampler.value))
        }
        return result.value
    }

    /// The frame at `seconds`; see ``frame(at:size:mode:accuracy:)``.
    public func frame(at seconds: Double, size: Size, mode: ContentMode = .aspectFill,
                      accuracy: SeekAccuracy = .exact) async throws(PreviewLoopError) -> VideoFrame {
        try await detached { sampler throws(PreviewLoopError) in try sampler.frame(at: seconds, size: size, mode: mode, accuracy: accuracy) }
    }

    /// Frames at several times; see ``frames(at:size:mode:accuracy:interval:)``.
    public func frames(at times: [Double], size: Size, mode: ContentMode = .aspectFill,
                       accuracy: SeekAccuracy = .exact, interval: Double) async throws(PreviewLoopError) -> [VideoFrame] {
        try await detached { sampler throws(PreviewLoopError) in
            try sampler.frames(at: times, size: size, mode: mode, accuracy: accuracy, interval: interval)
        }
    }

    /// The window's poster frame; see ``posterFrame(in:size:mode:)``.
    public func posterFrame(in window: Range<Double>, size: Size, mode: ContentMode = .aspectFill) async throws(PreviewLoopError) -> PosterChoice {
        try await detached { sampler throws(PreviewLoopError) in try sampler.posterFrame(in: window, size: size, mode: mode) }
    }

    /// The poster frame of a window off the calling thread; see ``posterFrame(start:length:size:mode:)``.
    public func posterFrame(start: TimePosition = .seconds(0), length: Double = 15, size: SizeRequest,
                            mode: ContentMode = .aspectFill) async throws(PreviewLoopError) -> PosterChoice {
        try await detached { sampler throws(PreviewLoopError) in
            try sampler.posterFrame(start: start, length: length, size: size, mode: mode)
        }
    }

    /// The clip's best poster frame; see ``bestPosterFrame(size:mode:)``.
    public func bestPosterFrame(size: Size, mode: ContentMode = .aspectFill) async throws(PreviewLoopError) -> PosterChoice {
        try await detached { sampler throws(PreviewLoopError) in try sampler.bestPosterFrame(size: size, mode: mode) }
    }
}

extension MediaProbe {
    /// Describes `source` off the calling thread; cancelling the task interrupts the open and throws
    /// ``PreviewLoopError/Code/cancelled``. See ``probe(_:options:)``.
    public static func probe(_ source: Source, options: SourceOptions = .init()) async throws(PreviewLoopError) -> VideoInfo {
        try await BlockingCall.run("PreviewLoop probe") { () throws(PreviewLoopError) in try probe(source, options: options) }
    }
}
