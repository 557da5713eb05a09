/// Takes stills from a clip at chosen times: the exact frame displayed then, or the nearest keyframe
/// at or before it (decoding nothing else), or whichever of the two the sampling interval allows.
///
/// Holds an open decoder between calls, so sampling several times in increasing order decodes
/// forward instead of seeking when no keyframe lies in between. Not thread-safe: use from one thread.
public final class FrameSampler {
    /// The open decoder (internal so the sampler's extensions, such as the poster search, share it).
    let decoder: VideoDecoder
    /// The last frame taken from the decoder, whose successor it decodes next; `nil` after a seek or
    /// anything else that leaves the decoder elsewhere (the next sample then seeks).
    var position: TimedFrame?

    /// The probed video stream.
    public var info: VideoInfo { decoder.info }

    /// For an `s3://` input or an http(s) one read in ranges, what its reads have cost so far; `nil` for any other input.
    package var remoteReads: RemoteReads? { decoder.input.remoteReads }

    /// Called on the calling thread as ``frames(at:size:mode:accuracy:interval:)-6kqjb`` (and everything built
    /// on it: tile plans, contact sheets) takes each frame, with the frames taken so far in that call and
    /// the number asked for; the last call of each request has both equal. `nil` (the default) for none.
    public var progress: ((_ completed: Int, _ total: Int) -> Void)?

    /// Opens `source` for sampling with `threads` decoder threads.
    public init(source: Source, threads: Int = DecodingDefaults.threads, options: SourceOptions = .init()) throws(PreviewLoopError) {
        guard (1...64).contains(threads) else { throw PreviewLoopError(.invalidArgument, "threads must be between 1 and 64") }
        decoder = try VideoDecoder(source: source, options: options, threads: threads)
    }

    /// Wraps a decoder opened elsewhere (by the `async` initialiser's thread).
    init(decoder: VideoDecoder) {
        self.decoder = decoder
    }

    /// The frame at `seconds` from the stream's start, converted to `size`.
    ///
    /// - Parameters:
    ///   - seconds: the time from the video stream's start (a negative time is taken as 0).
    ///   - size: the output picture's size.
    ///   - mode: how the upright picture fills `size` (aspect-fill by default).
    ///   - accuracy: `.exact` gives the frame displayed at that time; `.keyframe` the nearest
    ///     keyframe at or before it; `.auto` behaves as `.exact` here (it needs an interval, see
    ///     ``frames(at:size:mode:accuracy:interval:)-6kqjb``).
    public func frame(at seconds: Double, size: Size, mode: ContentMode = .aspectFill,
                      accuracy: SeekAccuracy = .exact) throws(PreviewLoopError) -> VideoFrame {
        try frames(at: [seconds], size: size, mode: mode, accuracy: accuracy, interval: 0)[0]
    }

    /// Frames at several times, in the order given.
    ///
    /// - Parameters:
    ///   - times: the times from the video stream's start, in any order (negative times are taken as 0);
    ///     each result's ``VideoFrame/index`` is its time's position here.
    ///   - size: the output pictures' size.
    ///   - mode: how the upright picture fills `size` (aspect-fill by default).
    ///   - accuracy: `.exact` (the default) gives the frames displayed at those times; `.keyframe` the
    ///     nearest keyframes at or before them; `.auto` chooses per sample with `interval`.
    ///   - interval: the spacing of the samples; with `.auto`, the nearest keyframe on either
    ///     side is taken when one lies within half of it, the exact frame otherwise.
    public func frames(at times: [Double], size: Size, mode: ContentMode = .aspectFill,
                       accuracy: SeekAccuracy = .exact, interval: Double) throws(PreviewLoopError) -> [VideoFrame] {
        guard size.width > 0, size.height > 0 else { throw PreviewLoopError(.invalidArgument, "output size must be positive") }
        let scaler = FrameScaler(outputSize: size, mode: mode, for: decoder)
        let clock = ContinuousClock()
        let started = clock.now
        // Keyframe samples are decoded together (the decoder's threads share them out); exact ones
        // in increasing time, so forward decoding is reused; answers come in the caller's order.
        var results = [VideoFrame?](repeating: nil, count: times.count)
        var completed = 0
        var plans = [SamplePlan](repeating: .exact, count: times.count)
        if accuracy != .exact, decoder.isSeekable {
            // An input read in ranges fetches the key packets these samples read several at once
            // (with `.auto`, the keyframes on either side that the plans look for).
            let reach = accuracy == .auto ? interval / 2 + 1e-6 : 0
            decoder.planKeyframeReads(atOrBefore: times.flatMap { [max(0, $0), max(0, $0) + reach] })
        }
        for (index, time) in times.enumerated() { plans[index] = try plan(at: max(0, time), accuracy: accuracy, interval: interval) }
        func convert(_ timed: TimedFrame, index: Int) throws(PreviewLoopError) {
            results[index] = try VideoFrame(converting: timed, with: scaler, sampleAspectRatio: info.sampleAspectRatio,
                                            presentationTime: .fromSeconds(timed.time), index: index, since: started)
            completed += 1
            progress?(completed, times.count)
        }
        let keyed = times.indices.filter { if case .keyframe = plans[$0] { true } else { false } }
        if !keyed.isEmpty {
            position = nil
            let targets = keyed.map { index -> Double in if case .keyframe(let at) = plans[index] { at } else { 0 } }
            // Each keyframe is converted as it comes out of the decoder, then let go.
            try decoder.keyframes(atOrBefore: targets) { (position: Int, frame: TimedFrame) throws(PreviewLoopError) in
                try convert(frame, index: keyed[position])
            }
        }
        for index in times.indices.sorted(by: { times[$0] < times[$1] }) where results[index] == nil {
            guard let timed = try exact(at: max(0, times[index])) else {
                throw PreviewLoopError(.corruptData, "\(decoder.source): no frame could be decoded at \(times[index]) s")
            }
            try convert(timed, index: index)
        }
        for index in times.indices where results[index] == nil {
            throw PreviewLoopError(.corruptData, "\(decoder.source): no frame could be decoded at \(times[index]) s")
        }
        return results.map { $0! }
    }

    /// How one sample is taken.
    private enum SamplePlan {
        /// Decode the frame displayed at the time.
        case exact
        /// Decode the keyframe at or before `at` alone.
        case keyframe(at: Double)
    }

    private func plan(at time: Double, accuracy: SeekAccuracy, interval: Double) throws(PreviewLoopError) -> SamplePlan {
        // A pipe cannot seek: every sample is decoded forward.
        guard decoder.isSeekable else { return .exact }
        switch accuracy {
        case .exact:
            return .exact
        case .keyframe:
            return .keyframe(at: time)
        case .auto:
            // The nearest keyframe on either side, when it lies within half an interval: the tile
            // still shows its own stretch of the span, at a fraction of the decoding. Keyframe times
            // come from demuxing alone (an index gives decode times, not presentation times).
            let tolerance = interval / 2 + 1e-6
            position = nil
            let before = try decoder.keyframeTime(atOrBefore: time)
            let latest = try decoder.keyframeTime(atOrBefore: time + tolerance)
            let candidates = [before, latest].compactMap { $0 }.filter { abs($0 - time) <= tolerance }
            if let nearest = candidates.min(by: { abs($0 - time) < abs($1 - time) }) { return .keyframe(at: nearest) }
            return .exact
        }
    }

    private func exact(at time: Double) throws(PreviewLoopError) -> TimedFrame? {
        let frame = try decoder.frameDisplayed(at: time, current: position)
        position = frame
        return frame
    }
}
