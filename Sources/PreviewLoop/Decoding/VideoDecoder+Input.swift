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

extension VideoDecoder {
    /// The first frame a loop shows from `target` (``frameDisplayed(at:current:)``), which must lie
    /// before `windowEnd`: a frame outside the window is never delivered.
    ///
    /// - Throws: `.corruptData` on the first pass (`.decodingFailed` on a later one) when no frame can be
    ///   decoded; `.invalidArgument` naming the window when the stream's first frame comes after it.
    func firstFrame(at target: Double, windowStart: Double, windowEnd: Double, isFirstPass: Bool) throws(PreviewLoopError) -> TimedFrame {
        guard let first = try frameDisplayed(at: target) else {
            throw PreviewLoopError(isFirstPass ? .corruptData : .decodingFailed, "\(source): no frame could be decoded in the loop window")
        }
        if first.time >= windowEnd - 1e-9 {
            throw PreviewLoopError(.invalidArgument, "\(source): no frame in the loop window "
                + "(\(DecimalText.fixed(windowStart, 3))–\(DecimalText.fixed(windowEnd, 3)) s); the first frame after it is "
                + "at \(DecimalText.fixed(first.time, 3)) s")
        }
        return first
    }
}
