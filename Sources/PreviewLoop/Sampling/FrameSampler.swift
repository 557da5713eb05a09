/// Takes stills from a clip at chosen times: the exact frame displayed then, or the nearest keyframe
/// at or before it (decoding nothing else), or whichever of the two the sampling interval allows.
///
/// Holds an open decoder between calls, so sampling several times in increasing order decodes
/// forward instead of seeking when no keyframe lies in between. Not thread-safe: use from one thread.
public final class FrameSampler {
    private let decoder: VideoDecoder
    private var position: TimedFrame?

    /// The probed video stream.
    public var info: VideoInfo { decoder.info }

    /// Opens `source` for sampling with `threads` decoder threads.
    public init(source: Source, threads: Int = 2, options: SourceOptions = .init()) throws {
        guard (1...64).contains(threads) else { throw PreviewLoopError(.invalidArgument, "threads must be between 1 and 64") }
        decoder = try VideoDecoder(source: source, options: options, threads: threads)
    }

    /// The frame at `seconds` from the stream's start, converted to `size`.
    ///
    /// - Parameter accuracy: `.exact` gives the frame displayed at that time; `.keyframe` the nearest
    ///   keyframe at or before it; `.auto` behaves as `.exact` here (it needs an interval, see
    ///   ``frames(at:size:mode:accuracy:interval:)``).
    public func frame(at seconds: Double, size: Size, mode: ContentMode = .aspectFill,
                      accuracy: SeekAccuracy = .exact) throws -> VideoFrame {
        try frames(at: [seconds], size: size, mode: mode, accuracy: accuracy, interval: 0)[0]
    }

    /// Frames at several times, in the order given.
    ///
    /// - Parameter interval: the spacing of the samples; with `.auto`, a keyframe is taken when one
    ///   lies within half of it before the time, the exact frame otherwise.
    public func frames(at times: [Double], size: Size, mode: ContentMode = .aspectFill,
                       accuracy: SeekAccuracy = .exact, interval: Double) throws -> [VideoFrame] {
        guard size.width > 0, size.height > 0 else { throw PreviewLoopError(.invalidArgument, "output size must be positive") }
        let scaler = FrameScaler(outputSize: size, mode: mode, orientation: info.orientation)
        let clock = ContinuousClock()
        let started = clock.now
        // Visit in increasing time so forward decoding can be reused; answer in the caller's order.
        let order = times.indices.sorted { times[$0] < times[$1] }
        var results = [VideoFrame?](repeating: nil, count: times.count)
        for index in order {
            let time = max(0, times[index])
            guard let timed = try sample(at: time, accuracy: accuracy, interval: interval) else {
                throw PreviewLoopError(.corruptData, "\(decoder.input.source): no frame could be decoded at \(time) s")
            }
            let converted = clock.now
            let image = try scaler.image(from: timed.frame.pointer, sampleAspectRatio: info.sampleAspectRatio)
            let conversion = clock.now - converted
            results[index] = VideoFrame(image: image, presentationTime: .fromSeconds(timed.time), sourceTime: timed.time,
                                        loopIndex: 0, index: index,
                                        timings: FrameTimings(decode: timed.decodeTime, conversion: conversion,
                                                              wallTime: started.duration(to: clock.now), lateness: nil),
                                        isKeyframe: timed.isKeyframe)
        }
        return results.map { $0! }
    }

    private func sample(at time: Double, accuracy: SeekAccuracy, interval: Double) throws(PreviewLoopError) -> TimedFrame? {
        switch accuracy {
        case .exact:
            return try exact(at: time)
        case .keyframe:
            position = nil
            return try decoder.keyframe(atOrBefore: time)
        case .auto:
            if let indexed = decoder.indexedKeyframe(atOrBefore: time) {
                if time - indexed <= interval / 2 + 1e-6 {
                    position = nil
                    return try decoder.keyframe(atOrBefore: time)
                }
                return try exact(at: time)
            }
            // No index: look at the keyframe (cheap) and fall back to exact when it is too far back.
            position = nil
            if let key = try decoder.keyframe(atOrBefore: time), time - key.time <= interval / 2 + 1e-6 { return key }
            return try exact(at: time)
        }
    }

    private func exact(at time: Double) throws(PreviewLoopError) -> TimedFrame? {
        let frame = try decoder.frameDisplayed(at: time, current: position)
        position = frame
        return frame
    }
}

/// Reads what a clip is without decoding it.
public enum MediaProbe {
    /// Opens `source`, picks its best video stream and describes it.
    public static func probe(_ source: Source, options: SourceOptions = .init()) throws -> VideoInfo {
        try MediaInput(source: source, options: options).info
    }
}
