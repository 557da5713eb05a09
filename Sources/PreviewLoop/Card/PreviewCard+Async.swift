/// The `async` forms of the card's blocking calls: each runs on a thread of its own, and cancelling the
/// awaiting task interrupts its I/O and decoding and throws ``PreviewLoopError/Code/cancelled`` (a
/// cancelled render leaves no file or directory). Use one card from one caller at a time.
extension PreviewCard {
    /// Opens the clip off the calling thread; see ``init(source:style:windowStart:windowLength:posterTime:threads:sourceOptions:)``.
    public convenience init(source: Source, style: CardStyle = CardStyle(), windowStart: TimePosition = .zero, windowLength: TimePosition = 15,
                            posterTime: TimePosition? = nil, threads: Int = 2, sourceOptions: SourceOptions = .init()) async throws(PreviewLoopError) {
        let opened = try await BlockingCall.run("PreviewLoop open") { () throws(PreviewLoopError) in
            UncheckedTransfer(try PreviewCard(source: source, style: style, windowStart: windowStart, windowLength: windowLength,
                                              posterTime: posterTime, threads: threads, sourceOptions: sourceOptions))
        }
        self.init(taking: opened.value)
    }

    /// Runs `body` with this card on a thread of its own, its inputs cancelled with the task.
    private func detached<T>(_ body: @escaping (PreviewCard) throws(PreviewLoopError) -> T) async throws(PreviewLoopError) -> T {
        // The caller is suspended until the thread is done: the card has one user at a time.
        let card = UncheckedTransfer(self), work = UncheckedTransfer(body)
        let result = try await BlockingCall.run("PreviewLoop card") { () throws(PreviewLoopError) in
            CancellationScope.current?.register(card.value.cardSampler.decoder.interrupter)
            return UncheckedTransfer(try work.value(card.value))
        }
        return result.value
    }

    /// The poster; see ``poster()``.
    public func poster() async throws(PreviewLoopError) -> CardPoster {
        try await detached { card throws(PreviewLoopError) in try card.poster() }
    }

    /// The card at `time`; see ``still(at:)``.
    public func still(at time: Double) async throws(PreviewLoopError) -> CardFrame {
        try await detached { card throws(PreviewLoopError) in try card.still(at: time) }
    }

    /// Writes the sequence; see `render(to:framesPerSecond:quality:maxFrames:flashSafety:)`.
    ///
    /// - Parameters:
    ///   - path: the animation (`.webp`, `.gif`, `.mp4`) or the directory of PNG frames to write.
    ///   - framesPerSecond: the frame rate, 1–120 (default 30).
    ///   - quality: 0–100, or `nil` for the format's default.
    ///   - maxFrames: the most pictures the sequence may have.
    ///   - flashSafety: ``FlashSafety/check`` fills ``CardSummary/flashes`` for an animation; `off` (the default) does not.
    @discardableResult
    public func render(to path: String, framesPerSecond: Int = 30, quality: Int? = nil, maxFrames: Int = .max,
                       flashSafety: FlashSafety = .off) async throws(PreviewLoopError) -> CardSummary {
        try await detached { card throws(PreviewLoopError) in
            try card.render(to: path, framesPerSecond: framesPerSecond, quality: quality, maxFrames: maxFrames, flashSafety: flashSafety)
        }
    }

    /// Writes the sequence as an animation to a file or to memory, off the calling thread; see the
    /// blocking `render(to:format:…)` with an ``AnimationDestination``.
    @discardableResult
    public func render(to destination: AnimationDestination, format: AnimationFormat? = nil, framesPerSecond: Int = 30,
                       quality: Int? = nil, maxFrames: Int = .max, flashSafety: FlashSafety = .off) async throws(PreviewLoopError) -> CardSummary {
        try await detached { card throws(PreviewLoopError) in
            try card.render(to: destination, format: format, framesPerSecond: framesPerSecond, quality: quality, maxFrames: maxFrames,
                            flashSafety: flashSafety)
        }
    }
}
