/// A stretch of a clip in seconds from the video stream's start, resolved against the clip's
/// duration: a strip's span, a loop window.
package struct SampleSpan: Equatable, Sendable {
    /// The first second of the span.
    package var start: Double
    /// The span's length in seconds, above zero.
    package var length: Double

    package init(start: Double, length: Double) {
        self.start = start
        self.length = length
    }

    /// The window from `start` for `length`, cut at the end of the clip when the duration is known.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` when a percentage needs the unknown
    ///   duration, or when the window is empty or starts at or past the end.
    package static func window(start: TimePosition, length: TimePosition, duration: Double?) throws(PreviewLoopError) -> SampleSpan {
        let startSeconds = try start.resolved(duration: duration, "the window's start")
        var lengthSeconds = try length.resolved(duration: duration, "the window's length")
        if let duration {
            guard startSeconds < duration else {
                throw PreviewLoopError(.invalidArgument, "the window starts at \(DecimalText.fixed(startSeconds, 3)) s, "
                    + "at or past the end of the clip (\(DecimalText.fixed(duration, 3)) s)")
            }
            lengthSeconds = min(lengthSeconds, duration - startSeconds)
        }
        guard lengthSeconds > 0 else {
            throw PreviewLoopError(.invalidArgument, "the window is empty")
        }
        return SampleSpan(start: startSeconds, length: lengthSeconds)
    }

    /// The whole clip.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` when the duration is unknown or 0.
    package static func wholeClip(duration: Double?) throws(PreviewLoopError) -> SampleSpan {
        guard let duration else {
            throw PreviewLoopError(.invalidArgument, "sampling the whole clip needs its duration, which is unknown; "
                + "sample a window instead")
        }
        guard duration > 0 else {
            throw PreviewLoopError(.invalidArgument, "the clip's duration is 0, there is nothing to sample")
        }
        return SampleSpan(start: 0, length: duration)
    }

    /// `count` times at the middles of equal slices: `start + (i + 0.5) * length / count`.
    package func sampleTimes(count: Int) -> [Double] {
        (0..<count).map { start + (Double($0) + 0.5) * length / Double(count) }
    }

    /// The length of one of `count` equal slices, the sampling interval.
    package func interval(count: Int) -> Double {
        length / Double(count)
    }
}
