/// What callers ask a decoder about its input, so that none reaches through it to the demuxer.
extension VideoDecoder {
    /// What is being decoded.
    var source: Source { input.source }

    /// The limits and choices the input was opened with.
    var options: SourceOptions { input.options }

    /// Whether the input can seek at all (a pipe cannot).
    var isSeekable: Bool { input.isSeekable }

    /// Times (seconds from the start) of the keyframes the demuxer's index knows, sorted; empty when
    /// the container has no index.
    func indexedKeyframeTimes() -> [Double] { input.indexedKeyframeTimes() }
}
