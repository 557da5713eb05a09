import PreviewLoop

/// A stretch of a clip in seconds from the video stream's start, as the commands resolve their
/// `--at`, `--start`, `--length` and `--span` options against the clip's duration.
struct SampleSpan: Equatable, Sendable {
    /// The first second of the span.
    var start: Double
    /// The span's length in seconds, above zero.
    var length: Double

    /// Resolves a window or the whole clip.
    ///
    /// A window is cut at the end of the clip when the duration is known.
    /// - Throws: `PreviewLoopError(.invalidArgument)` when a percentage or `--span all` needs the
    ///   unknown duration, or when the window starts at or past the end.
    static func resolve(_ span: StripSpan, start: TimePosition, length: TimePosition, duration: Double?) throws -> SampleSpan {
        switch span {
        case .all:
            guard let duration else {
                throw PreviewLoopError(.invalidArgument, "'--span all' needs the duration, which is unknown; use '--span window'")
            }
            guard duration > 0 else {
                throw PreviewLoopError(.invalidArgument, "the clip's duration is 0, there is nothing to sample")
            }
            return SampleSpan(start: 0, length: duration)
        case .window:
            let startSeconds = try seconds(start, duration: duration, option: "--start")
            var lengthSeconds = try seconds(length, duration: duration, option: "--length")
            if let duration {
                guard startSeconds < duration else {
                    throw PreviewLoopError(.invalidArgument, "the window starts at \(Format.fixed(startSeconds, 3)) s, "
                        + "at or past the end of the clip (\(Format.fixed(duration, 3)) s)")
                }
                lengthSeconds = min(lengthSeconds, duration - startSeconds)
            }
            guard lengthSeconds > 0 else {
                throw PreviewLoopError(.invalidArgument, "the window is empty")
            }
            return SampleSpan(start: startSeconds, length: lengthSeconds)
        }
    }

    /// A time in seconds; a percentage needs the duration.
    ///
    /// - Throws: `PreviewLoopError(.invalidArgument)` for a percentage when the duration is unknown.
    static func seconds(_ position: TimePosition, duration: Double?, option: String) throws -> Double {
        guard let seconds = position.seconds(duration: duration) else {
            throw PreviewLoopError(.invalidArgument, "'\(option) \(position)' needs the duration, which is unknown; "
                + "give \(option) in seconds")
        }
        return seconds
    }

    /// `count` times at the middles of equal slices: `start + (i + 0.5) * length / count`.
    func sampleTimes(count: Int) -> [Double] {
        (0..<count).map { start + (Double($0) + 0.5) * length / Double(count) }
    }

    /// The length of one of `count` equal slices, the sampling interval.
    func interval(count: Int) -> Double {
        length / Double(count)
    }
}
