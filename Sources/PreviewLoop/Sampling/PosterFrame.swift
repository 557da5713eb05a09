/// Why a frame became the poster.
public enum PosterReason: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// It is the window's first frame that passed every test: poster and video meet without a jump
    /// when it is the window's first frame, and after the leader, fade or slate otherwise.
    case firstGoodFrame
    /// No frame of the window passed; this one has the highest ``PosterScores/quality``.
    case bestAvailable
    /// The window holds a single candidate (a still, a one-frame clip or a very short window), shown
    /// although it did not pass.
    case onlyFrame
    /// ``FrameSampler/bestPosterFrame(size:mode:)-42f28``: the best-scoring good candidate sampled across
    /// the whole clip.
    case bestOfClip

    /// `first good frame`, `best available`, `only frame`, `best of the clip`.
    public var description: String {
        switch self {
        case .bestOfClip: "best of the clip"
        case .firstGoodFrame: "first good frame"
        case .bestAvailable: "best available"
        case .onlyFrame: "only frame"
        }
    }
}

/// What is wrong with a frame as a poster (the thresholds are in the README's "Poster frame" section).
public enum PosterRejection: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Nearly one colour, and dark: a black leader or gap.
    case black
    /// Nearly one colour, and bright: a white flash or blank.
    case white
    /// Nearly one colour (or without any edge) in between: a slate, a colour card.
    case flat
    /// Dim, while a frame within the next second is at least four times as bright and contrasty.
    case dark
    /// The same scene with clearly more contrast follows within a second: a fade still in progress.
    case fading
    /// The same scene with more than twice the ``PosterScores/acuity`` follows within a second: blur
    /// or a focus pull still in progress.
    case blurred
    /// Mostly one colour with a little text or a logo: a title card, a studio ident, credits, black
    /// with subtitles (see ``PosterScores/uniformity``).
    case titleCard

    /// The case's name, as the CLI prints it (`title card`).
    public var description: String { self == .titleCard ? "title card" : rawValue }
}

/// A frame the poster search looked at and passed over.
public struct PosterCandidate: Sendable, Hashable {
    /// Its time in seconds from the stream's start.
    public var time: Double
    /// Its scores.
    public var scores: PosterScores
    /// Why it was passed over.
    public var reason: PosterRejection

    /// Creates a candidate.
    public init(time: Double, scores: PosterScores, reason: PosterRejection) {
        self.time = time
        self.scores = scores
        self.reason = reason
    }
}

/// The frame to show before play, and why it was chosen.
public struct PosterChoice: Sendable {
    /// The poster at the requested size; `sourceTime` is the chosen time, `presentationTime` its
    /// offset from the window's start (0 when the poster is the window's first frame).
    public var frame: VideoFrame
    /// Why this frame.
    public var reason: PosterReason
    /// The frame's scores.
    public var scores: PosterScores
    /// For ``PosterReason/bestAvailable`` and ``PosterReason/onlyFrame``: what is wrong with the frame
    /// itself; `nil` for ``PosterReason/firstGoodFrame``.
    public var flaw: PosterRejection?
    /// The window's candidates passed over, in time order: those before the poster, or every other
    /// one when none passed.
    public var rejected: [PosterCandidate]
    /// Frames decoded to find it (the look-ahead and any decoding from a keyframe before the window
    /// included): the search's cost.
    public var framesDecoded: Int
    /// ``FrameSampler/bestPosterFrame(size:mode:)-42f28``'s candidates across the clip as it scored
    /// them, best first (``PosterRanking``); the chosen one, when it is among them, first and marked.
    /// Empty for a window's poster, and when the whole clip could not be sampled (a pipe).
    public var ranking: [PosterRanking]

    /// The chosen time in seconds from the stream's start.
    public var time: Double { frame.sourceTime }

    /// Creates a choice.
    public init(frame: VideoFrame, reason: PosterReason, scores: PosterScores, flaw: PosterRejection?,
                rejected: [PosterCandidate], framesDecoded: Int, ranking: [PosterRanking] = []) {
        self.frame = frame
        self.reason = reason
        self.scores = scores
        self.flaw = flaw
        self.rejected = rejected
        self.framesDecoded = framesDecoded
        self.ranking = ranking
    }
}

extension PosterChoice: CustomStringConvertible {
    /// One line: the frame, why it was chosen, and the search's cost, as in
    /// `PosterChoice(VideoFrame(640x360 at 1.500 s, loop 0, index 0), first good frame, 2 rejected, 40 frames decoded)`.
    public var description: String {
        "PosterChoice(\(frame), \(reason)\(flaw.map { " (\($0))" } ?? ""), \(rejected.count) rejected, \(framesDecoded) frames decoded)"
    }
}

extension FrameSampler {
    /// The frame to show before the window plays: its first good frame.
    ///
    /// Decodes forward from the window's start (every frame, exactly, reusing the open decoder) and
    /// judges a candidate every ⅛ s, starting with the frame displayed at the window's start. A
    /// candidate is rejected when it is black, white or flat (one colour, no edges), or — compared
    /// with the frames of the following second — mid-fade, blurred or a dark leader (see
    /// ``PosterRejection``). The first candidate that passes is the poster, so a clip that starts
    /// well costs about one second of decoding, and its poster is the window's first frame. On an
    /// input that can seek and whose index lists a keyframe 1–10 s after the first frame, that keyframe,
    /// decoded alone, is compared first: when it shows the same scene and nothing better, the first
    /// frame is the poster at the cost of two frames (a 4K HEVC clip's poster then costs what one
    /// ffmpegthumbnailer run does); otherwise the search decodes the second as above. After a
    /// leader, fade or blur, the first candidate that holds steady against the next few is settled
    /// the same way by a keyframe a second or more after it, instead of by the rest of its second.
    /// Rejections name only what a frame shows relative to the rest, so a scene that is dark
    /// throughout still gives its first frame; when no candidate passes at all, the one with the best
    /// ``PosterScores/quality`` is returned (``PosterReason/bestAvailable``) rather than an error.
    ///
    /// Works on inputs read forward only (standard input), from where they are.
    ///
    /// - Parameters:
    ///   - window: seconds from the stream's start; cut at the clip's end. A negative start counts as 0.
    ///   - size: the poster's size in pixels.
    ///   - mode: how the picture fills `size`; with `.aspectFill` only the part the poster shows is
    ///     judged.
    /// - Throws: `PreviewLoopError(.invalidArgument)` for an empty window, one that starts at or past
    ///   the end, or a size that is not positive; decoding errors as ``frame(at:size:mode:accuracy:)-211il``.
    public func posterFrame(in window: Range<Double>, size: Size, mode: ContentMode = .aspectFill) throws(PreviewLoopError) -> PosterChoice {
        try posterFrame(in: window, size: size, mode: mode,
                        retention: decoder.isSeekable ? .likely : .undecided, decodesEveryFrame: !decoder.isSeekable)
    }

    /// The poster frame of a window given as the commands take it: `start` in seconds or as a share of
    /// the clip, `length` in seconds, and a ``SizeRequest`` resolved against the clip's upright picture,
    /// so a portrait clip gets a portrait poster. See ``posterFrame(in:size:mode:)-4hyr5``.
    ///
    /// ```swift
    /// let choice = try sampler.posterFrame(start: .percent(10), size: .width(480))
    /// ```
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for a start out of range (or a percentage of
    ///   a clip whose duration is unknown) or a length not above 0; what ``posterFrame(in:size:mode:)-4hyr5`` throws.
    public func posterFrame(start: TimePosition = .seconds(0), length: Double = 15, size: SizeRequest,
                            mode: ContentMode = .aspectFill) throws(PreviewLoopError) -> PosterChoice {
        try start.validate("the window's start")
        guard let from = start.seconds(duration: info.duration) else {
            throw PreviewLoopError(.invalidArgument, "a start given as a percentage needs the clip's duration, which is unknown")
        }
        guard length > 0, length.isFinite else {
            throw PreviewLoopError(.invalidArgument, "the window's length must be above 0 s, not \(length)")
        }
        return try posterFrame(in: from..<(from + length), size: size.resolved(display: info.displaySize), mode: mode)
    }

    /// Which decoded candidates the poster search holds on to while it judges.
    enum PosterRetention {
        /// Every candidate that may still become the poster: for inputs read forward only.
        case undecided
        /// The next to judge and the first that passes so far (``PosterSearch/provisional``): at most
        /// two pictures at the output size, not a second's worth. Another that becomes the poster is
        /// decoded again: a fade or blur that does not progress steadily, or the best of a window where
        /// nothing passes (rare: the fallback for a clip with no good frame).
        case likely
        /// None: the poster is always decoded again (tests use it to reach that path every time).
        case none
    }

    /// ``posterFrame(in:size:mode:)`` with a given ``PosterRetention``; `passing` sees
    /// every frame the search decodes and moves past, in decoding order (frames pushed back for a
    /// later reader are not shown), so another output can take its frames from the same decoding.
    ///
    /// - Parameter decodesEveryFrame: `false` lets the decoder skip the frames the search never looks
    ///   at (neither a candidate nor referred to by another frame), so `passing` then sees only some;
    ///   every frame decoded is still exact, but the next read seeks again (a skipped frame cannot be
    ///   decoded from where the search stopped), so only for inputs that can seek.
    ///
    /// - Parameter confirmsWithKeyframe: on an input that can seek, first compare the window's first
    ///   frame with one keyframe a second or more later (``PosterSearch/confirmFirst(by:)``), and
    ///   decode the second between only when that does not settle it; `false` always decodes it.
    func posterFrame(in window: Range<Double>, size: Size, mode: ContentMode, retention: PosterRetention,
                     decodesEveryFrame: Bool = true, confirmsWithKeyframe: Bool = true,
                     passing: (TimedFrame) throws(PreviewLoopError) -> Void = { _ in }) throws(PreviewLoopError) -> PosterChoice {
        guard size.width > 0, size.height > 0 else { throw PreviewLoopError(.invalidArgument, "output size must be positive") }
        guard !window.lowerBound.isNaN, window.lowerBound < .infinity else {
            throw PreviewLoopError(.invalidArgument, "the window must start at a finite time")
        }
        let start = max(0, window.lowerBound)
        var end = window.upperBound
        if let duration = info.duration {
            guard start < duration else {
                throw PreviewLoopError(.invalidArgument, "\(decoder.source): the window starts at \(start) s, "
                    + "at or past the end of the clip (\(duration) s)")
            }
            end = min(end, duration)
        }
        guard end > start else { throw PreviewLoopError(.invalidArgument, "\(decoder.source): the window is empty") }
        let clock = ContinuousClock()
        let started = clock.now
        let decodedBefore = decoder.decodedFrameCount

        let analysisSize = PosterAnalysis.analysisSize(output: size, display: info.displaySize, mode: mode)
        let analyser = FrameScaler(outputSize: analysisSize, mode: PosterAnalysis.analysisMode(for: mode), for: decoder)
        func analyse(_ timed: TimedFrame) throws(PreviewLoopError) -> PosterAnalysis {
            PosterAnalysis(time: timed.time, image: try analyser.image(from: timed.frame,
                                                                       sampleAspectRatio: info.sampleAspectRatio))
        }

        let current = position
        position = nil
        // Whether a keyframe can confirm the first frame (see below); if so, and the window starts on a
        // keyframe, that frame is decoded alone too, so the decoder's reordering delay (the frames after
        // it that it must take in before it gives out the first) is not paid.
        let confirmingReach = (start + PosterRules.lookAhead)...(start + PosterRules.lookAhead + PosterRules.confirmingKeyframeReach)
        let mayConfirm = confirmsWithKeyframe && decoder.isSeekable
            && decoder.indexedKeyframeTime(in: confirmingReach) != nil
        // Whether decoding continues right after `first` (not when it was decoded alone).
        var isPositioned = true
        var decodedAlone: TimedFrame?         // the first frame, however decoded
        if mayConfirm, current == nil, let key = try decoder.indexedKeyframe(in: start...start) {
            decodedAlone = key
            isPositioned = false
        }
        // Frames that are neither candidates nor referred to by another frame need no decoding, from
        // the first frame's own positioning on (the frames the decoder takes in after it, before it gives
        // it out, included).
        if !decodesEveryFrame {
            let interval = decoder.frameInterval, skipGrid = PosterCandidateGrid(start: start)
            decoder.wantedTimes = { time in skipGrid.mayTake(time, interval: interval) }
        }
        defer { decoder.wantedTimes = nil }
        if decodedAlone == nil { decodedAlone = try decoder.frameDisplayed(at: start, current: current) }
        guard let first = decodedAlone else {
            throw PreviewLoopError(.corruptData, "\(decoder.source): no frame could be decoded at \(start) s")
        }
        decodedAlone = nil
        // Where decoding in order resumes (the last frame reached); the frame itself only when the
        // sampler continues from it (a decoded frame held keeps a buffer of the decoder's pool busy).
        var lastTime = first.time
        var last: TimedFrame? = decodesEveryFrame ? first : nil
        func reached(_ frame: TimedFrame) {
            lastTime = frame.time
            if decodesEveryFrame { last = frame }
        }
        if first.time + first.duration < start - 1e-6 {
            // Only when the duration is unknown: the stream may have ended before the window.
            guard let next = try decoder.nextFrame() else {
                throw PreviewLoopError(.invalidArgument, "\(decoder.source): the window starts at \(start) s, "
                    + "after the last frame (at \(first.time) s)")
            }
            decoder.pushBack(next)
        }

        var search = PosterSearch(window: start..<end)
        // The candidates that may still become the poster are held as posters already, at the output
        // size, not as decoded pictures: a decoded frame held keeps its buffer from the decoder's pool
        // (12.4 MB at 4K), so the pool allocates (and the kernel zeroes) fresh ones for the frames that
        // follow. Each poster depends on its frame alone, so one converted now is the one converted later.
        let scaler = FrameScaler(outputSize: size, mode: mode, for: decoder)
        func poster(_ timed: TimedFrame) throws(PreviewLoopError) -> VideoFrame {
            try VideoFrame(converting: timed, with: scaler, sampleAspectRatio: info.sampleAspectRatio,
                           presentationTime: .fromSeconds(max(0, timed.time - start)), index: 0, since: started)
        }
        var kept: [Int: VideoFrame] = [:]
        /// A frame on its way into the search: its analysis, and the frame itself (or, from a pipe,
        /// its poster already) while it may still be needed.
        struct Arrival {
            var analysis: PosterAnalysis
            var timed: TimedFrame?
            var poster: VideoFrame?
        }
        func arrival(_ timed: TimedFrame) throws(PreviewLoopError) -> Arrival {
            // From a pipe a candidate cannot be decoded again: its poster is made as it comes.
            Arrival(analysis: try analyse(timed), timed: timed, poster: retention == .undecided ? try poster(timed) : nil)
        }
        // Adds a candidate; says whether it has a flaw of its own inside the window (a step begins).
        func offer(_ arrival: Arrival) throws(PreviewLoopError) -> Bool {
            search.add(arrival.analysis)
            let index = search.candidates.count - 1
            let undecided = search.undecided, provisional = retention == .likely ? search.provisional : nil
            func keeps(_ index: Int) -> Bool {
                guard undecided.contains(index) else { return false }
                switch retention {
                case .undecided: return true
                case .likely: return index == search.head || index == provisional
                case .none: return false
                }
            }
            kept = kept.filter { index, _ in keeps(index) }
            if keeps(index) {
                if let made = arrival.poster {
                    kept[index] = made
                } else if let timed = arrival.timed {
                    kept[index] = try poster(timed)
                }
            }
            return search.isInWindow(arrival.analysis.time) && PosterRules.flaw(of: arrival.analysis.scores) != nil
        }
        var steps = PosterKeyframeSteps<Arrival>()
        let judge = PosterKeyframeSteps<Arrival>.Judge<PreviewLoopError>(
            accept: { (arrival: Arrival, _: Bool) throws(PreviewLoopError) -> Bool in try offer(arrival) },
            // A keyframe stepped to is rejected when the next keyframe shows it fading, blurred or dark.
            rejects: { stepped, key in
                guard let flaw = PosterRules.flaw(of: stepped.analysis, followedBy: [key.analysis]) else { return false }
                search.reject(search.candidates.count - 1, as: flaw)
                return true
            },
            // A held candidate keeps no decoded picture (it would hold a buffer of the decoder's pool);
            // from a pipe its poster is already made, otherwise it is decoded again if it becomes the poster.
            hold: { Arrival(analysis: $0.analysis, timed: nil, poster: $0.poster) })
        func take(_ timed: TimedFrame, isCandidate: Bool) throws(PreviewLoopError) {
            let isKeyframe = timed.isKeyframe && search.isInWindow(timed.time)
            guard isCandidate || (isKeyframe && steps.mode != nil) else { return }
            try steps.take(.init(time: timed.time, isKeyframe: isKeyframe, isCandidate: isCandidate, item: try arrival(timed)), judge)
        }

        try passing(first)
        try take(first, isCandidate: true)
        // A clip that starts well costs two frames instead of a second of them: the first frame and a
        // keyframe a second or more later, decoded alone. Otherwise the search goes on frame by frame
        // from the first frame, decoded again in order.
        // Besides the first frame's, one keyframe at most is decoded to settle a later candidate early
        // (the first good one after a leader, fade or blur, below): when it shows another scene, that
        // cost is not paid again.
        var hasTriedKeyframe = false
        if mayConfirm, search.needsMore, PosterRules.flaw(of: search.candidates[0].scores) == nil,
           let key = try decoder.indexedKeyframe(in: (first.time + PosterRules.lookAhead)...(confirmingReach.upperBound)) {
            isPositioned = false
            _ = search.confirmFirst(by: try analyse(key))
        }
        // On an input that can seek, a step over a leader goes straight to the keyframe the index lists
        // (decoded alone), not through the frames before it; the frames from a pipe are held instead.
        let stepsByIndex = !decodesEveryFrame && decoder.isSeekable
        var lookedUp: Double?
        var grid = PosterCandidateGrid(start: start)
        do {
            // Every frame after this block is exact again (the chosen frame may be decoded once more below).
            defer { decoder.wantedTimes = nil }
            searching: while search.needsMore {
                if stepsByIndex, let mode = steps.mode, let since = steps.since, lookedUp != since {
                    lookedUp = since
                    switch mode {
                    case .step:
                        // Straight to the next keyframe the index lists within reach, decoded alone.
                        let reach = (since + decoder.frameInterval / 2)...(since + PosterRules.keyframeStepReach)
                        if let time = decoder.indexedKeyframeTime(in: reach), search.isInWindow(time) {
                            isPositioned = false
                        }
                        if !isPositioned, let key = try decoder.indexedKeyframe(in: reach), search.isInWindow(key.time) {
                            reached(key)
                            try take(key, isCandidate: grid.takes(key.time))
                            if steps.mode != nil { continue }
                        }
                    case .check(_, let stepped):
                        // The keyframe stepped to passed on its own: the first keyframe 1–10 s after it,
                        // decoded alone, may show it fading, blurred or dark (within 2 s: a step on),
                        // or settle it as a good start is; otherwise its second is decoded in order.
                        let keyReach = (since + PosterRules.lookAhead)...(since + PosterRules.lookAhead + PosterRules.confirmingKeyframeReach)
                        if decoder.indexedKeyframeTime(in: keyReach) != nil {
                            isPositioned = false
                            if let key = try decoder.indexedKeyframe(in: keyReach) {
                                let keyAnalysis = try analyse(key)
                                if key.time <= since + PosterRules.keyframeStepReach + 1e-9, search.isInWindow(key.time),
                                   PosterRules.flaw(of: stepped.analysis, followedBy: [keyAnalysis]) != nil {
                                    reached(key)
                                    try take(key, isCandidate: grid.takes(key.time))
                                    continue
                                }
                                if confirmsWithKeyframe, !hasTriedKeyframe, let index = search.candidates.indices.last {
                                    hasTriedKeyframe = true
                                    if search.confirm(index, by: keyAnalysis) { break searching }
                                }
                            }
                        }
                        guard search.needsMore else { break searching }
                    }
                }
                if !isPositioned {
                    guard let again = try decoder.frameDisplayed(at: lastTime, current: nil), abs(again.time - lastTime) < 1e-6 else {
                        throw PreviewLoopError(.corruptData, "\(decoder.source): the frame at \(lastTime) s could not be decoded again")
                    }
                    reached(again)
                    isPositioned = true
                }
                guard let next = try decoder.nextFrame() else { break }
                guard next.time <= search.horizon else {
                    decoder.pushBack(next)
                    break
                }
                reached(next)
                try passing(next)
                let isCandidate = grid.takes(next.time)
                let candidates = search.candidates.count
                try take(next, isCandidate: isCandidate)
                guard search.candidates.count > candidates else { continue }
                // After a leader, fade or blur: the first candidate that has passed against the ones after
                // it so far is settled by a keyframe a second or more later, as a good start is, instead
                // of by the rest of its second. When the keyframe does not settle it, decoding resumes
                // where it was.
                guard confirmsWithKeyframe, decoder.isSeekable, !hasTriedKeyframe, steps.since == nil,
                      let settled = search.settledSoFar else { continue }
                let time = search.candidates[settled].time
                let reach = (time + PosterRules.lookAhead)...(time + PosterRules.lookAhead + PosterRules.confirmingKeyframeReach)
                guard decoder.indexedKeyframeTime(in: reach) != nil else { continue }
                hasTriedKeyframe = true
                if let key = try decoder.indexedKeyframe(in: reach), search.confirm(settled, by: try analyse(key)) {
                    isPositioned = false
                    break
                }
                isPositioned = false
            }
        }
        if search.needsMore { try steps.finish(judge) }
        search.finish()
        // A skipped frame is gone from the decoder, a confirming keyframe moved it: the next read must
        // not continue from here.
        position = decodesEveryFrame && isPositioned ? last : nil

        guard let outcome = search.outcome else {
            throw PreviewLoopError(.corruptData, "\(decoder.source): no frame could be decoded at \(start) s")
        }
        var analysis = search.candidates[outcome.index]
        let frame: VideoFrame
        if let held = kept[outcome.index] {
            frame = held
        } else {
            // Decoded again, exactly: the same frame, found by its time.
            guard let again = try decoder.frameDisplayed(at: analysis.time, current: nil) else {
                position = nil
                throw PreviewLoopError(.corruptData, "\(decoder.source): no frame could be decoded at \(analysis.time) s")
            }
            position = again
            if abs(again.time - analysis.time) > 1e-6 { analysis = try analyse(again) }
            frame = try poster(again)
        }
        return PosterChoice(frame: frame, reason: outcome.reason, scores: analysis.scores, flaw: outcome.flaw,
                            rejected: search.passedOver, framesDecoded: decoder.decodedFrameCount - decodedBefore)
    }
}
