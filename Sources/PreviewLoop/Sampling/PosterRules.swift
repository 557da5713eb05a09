/// What makes a frame unfit to be the poster: the thresholds and the two kinds of test, on one frame
/// alone and against the frames that follow it. Pure functions of ``PosterScores``; no decoding.
///
/// Absolute tests only reject what has nothing to show — a picture of (nearly) one colour — so a dim
/// scene is never thrown out for being dim. Everything else is judged relative to what the window
/// holds next: a frame is unfit when a frame within the next second shows the same scene clearly
/// better (a fade or a focus pull still in progress), or is many times brighter (a dark leader).
/// When no frame of the window passes, the search falls back on the best-scoring one.
enum PosterRules {
    /// Frames after a candidate that it is compared with, in seconds: long enough to see a one-second
    /// fade or focus pull through, short enough that a clip which starts well costs about a second
    /// of decoding.
    static let lookAhead = 1.0
    /// Spacing of candidates from the window's start, in seconds: the poster lands within this of the
    /// end of a leader, fade or slate.
    static let candidateStep = 0.125
    /// How far past the look-ahead a keyframe may lie and still settle a candidate on its own
    /// (``PosterSearch/confirmFirst(by:)``, ``PosterSearch/confirm(_:by:)``): keyframes 1–10 s apart
    /// cover streaming encodes (1–4 s) and x264's default GOP at 25 fps and up (250 frames). A keyframe
    /// that shows another scene settles nothing, and the search decodes the second after the frame.
    static let confirmingKeyframeReach = 9.0
    /// How far after a candidate bad on its own the next keyframe may lie and still be stepped to
    /// (``PosterKeyframeSteps``): streaming encodes put keyframes 2 s apart, phones 1 s; the poster after
    /// a leader then lands at most this much later than the first good ⅛ s step would.
    static let keyframeStepReach = 2.0

    /// Below this contrast (luma standard deviation, about 5 levels of 255) a picture is one colour:
    /// compression noise and film grain stay under it, a dim scene with anything in it goes above.
    static let flatContrast = 0.02
    /// Below this sharpness a picture has no edges at all: a smooth gradient or a vignetted card
    /// (dim content at 12 % level still measures about 0.003, sharp content about 0.03).
    static let flatSharpness = 0.0015
    /// A flat picture at or under this brightness is black (limited-range black decodes to 0).
    static let blackBrightness = 0.10
    /// A flat picture at or over this brightness is white.
    static let whiteBrightness = 0.90

    /// A frame is mid-fade when a same-scene frame within the look-ahead has more contrast than this
    /// times its own (i.e. it has under 90 %). Steady footage varies by a few percent (`testsrc2` by
    /// under 2 %), a one-second linear fade by 12.5 % every candidate step.
    static let fadeContrastRatio = 0.9
    /// A frame is blurred when a same-scene frame within the look-ahead has more than twice its
    /// ``PosterScores/acuity`` (sharpness for its contrast, so a fade does not count as blur).
    /// Steady footage varies by under 25 %; a strong blur or an unfinished focus pull by 3–5×.
    static let blurAcuityRatio = 0.5
    /// A dim frame (at or under ``blackBrightness``) is too dark when a frame within the look-ahead,
    /// of any scene, has four times its brightness and four times its contrast: a dark leader or
    /// grainy black before the picture. A night scene that stays dark is never rejected by this.
    static let darkRatio = 0.25
    /// Two frames show the same scene when the correlation of their 8×8 luma layouts is at least
    /// this. Frames a second apart in moving footage correlate above 0.9; across a cut rarely above 0.5.
    static let sameSceneCorrelation = 0.75

    /// At or above this ``PosterScores/uniformity`` a picture that is not flat is a title card: one
    /// colour over at least 85 % of it, with text or a logo on the rest (measured: text on black 0.98,
    /// end credits 0.97; footage 0.12–0.21, a night scene at 12 % level 0.21).
    static let titleCardUniformity = 0.85

    /// Whether the frames after a candidate (two at least) show its scene holding steady: each shows the
    /// same scene with at most 3 % more contrast and 5 % more acuity (a fade or blur that is still
    /// lifting, even too slowly to fail yet, does not). Only decides when a later keyframe is
    /// worth decoding to settle the candidate early (``PosterSearch/settledSoFar``).
    static func isSteady(_ candidate: PosterAnalysis, followedBy followers: [PosterAnalysis]) -> Bool {
        guard followers.count >= 2 else { return false }
        return followers.allSatisfy { follower in
            candidate.showsSameScene(as: follower, threshold: sameSceneCorrelation)
                && follower.scores.contrast * 0.97 <= candidate.scores.contrast
                && follower.scores.acuity * 0.95 <= candidate.scores.acuity
        }
    }

    /// What is wrong with a frame on its own, if anything: black, white, flat or a title card.
    static func flaw(of scores: PosterScores) -> PosterRejection? {
        guard scores.contrast < flatContrast || scores.sharpness < flatSharpness else {
            return scores.uniformity >= titleCardUniformity ? .titleCard : nil
        }
        if scores.brightness <= blackBrightness { return .black }
        if scores.brightness >= whiteBrightness { return .white }
        return .flat
    }

    /// What is wrong with a frame given the frames that follow it within ``lookAhead``, if anything:
    /// blurred, fading or dark, in that order of precedence. Blur lowers contrast a little too (about
    /// 10 % for a strong one), so a frame whose acuity gives it away is called blurred, not fading;
    /// a fade from black is called a fade, not dark.
    static func flaw(of candidate: PosterAnalysis, followedBy followers: some Sequence<PosterAnalysis>) -> PosterRejection? {
        let own = candidate.scores
        var isFading = false, isDark = false
        for follower in followers {
            let next = follower.scores
            let sameScene = candidate.showsSameScene(as: follower, threshold: sameSceneCorrelation)
            if sameScene && own.acuity < next.acuity * blurAcuityRatio { return .blurred }
            if sameScene && own.contrast < next.contrast * fadeContrastRatio { isFading = true }
            if own.brightness <= blackBrightness && own.brightness <= next.brightness * darkRatio
                && own.contrast <= next.contrast * darkRatio { isDark = true }
        }
        if isFading { return .fading }
        if isDark { return .dark }
        return nil
    }
}

/// The poster search's candidate grid: the first frame at or after each ``PosterRules/candidateStep``
/// from the window's start. One arithmetic for both uses — taking candidates from frames in order, and
/// telling a decoder which frames it may skip.
struct PosterCandidateGrid {
    /// The window's start, in seconds.
    let start: Double
    /// The next step not yet taken (step 0 is the first frame, taken by the search itself).
    private var step = 1

    init(start: Double) { self.start = start }

    /// The index of the last step at or before `time`, to a microsecond (0 before the first).
    private func steps(through time: Double) -> Int {
        Int(((time - start + 1e-6) / PosterRules.candidateStep).rounded(.down))
    }

    /// Whether the frame at `time` (frames arriving in order) is the first at or after a step not yet
    /// taken; if so, the steps up to it are taken.
    mutating func takes(_ time: Double) -> Bool {
        let reached = steps(through: time)
        guard reached >= step else { return false }
        step = reached + 1
        return true
    }

    /// How much later than one frame interval after a step a frame may come and still count as the
    /// first at or after it: timestamps rounded to a container's time base, and frame rates a little
    /// uneven, stay well inside a quarter of an interval.
    static let intervalAllowance = 1.25

    /// Whether a frame at `time` could be taken, for frames `interval` apart: the frame displayed at
    /// the start, and after it only one within an interval (and ``intervalAllowance``) after a step
    /// can be the first at or after it; the second frame after a step is left out unless the first came
    /// within a quarter interval of it (over-including is harmless). The frames after the start
    /// before the first step are never candidates (step 0 is the start's own frame).
    func mayTake(_ time: Double, interval: Double) -> Bool {
        guard time - start > 1e-6 else { return true }
        let step = steps(through: time)
        guard step > 0 else { return false }
        let sinceStep = time - start - Double(step) * PosterRules.candidateStep
        return sinceStep < Self.intervalAllowance * interval
    }
}


/// Keyframe steps: after a candidate with a flaw of its own (black, white, flat, a title card), when the
/// next keyframe comes within ``PosterRules/keyframeStepReach`` of it and inside the window, the
/// candidates before that keyframe are skipped and the keyframe is the next candidate. A keyframe
/// reached so that passes on its own is first compared with the first keyframe 1–2 s after it: when
/// that one shows it fading, blurred or dark, it is rejected for that and the step goes on to that
/// keyframe. A leader, and a fade after it, is then crossed a keyframe at a time, each decoded alone,
/// instead of frame by frame; where no keyframe comes within reach, the candidates count as they came.
///
/// Frames are taken in display order, and the outcome depends only on which frames are candidates and
/// which are keyframes, so a search that decodes every frame (a pipe) and one that seeks to the
/// keyframes the index lists make the same choice. Pure: the closures do the judging.
struct PosterKeyframeSteps<Item> {
    /// A frame that is a candidate on the grid, a keyframe inside the window, or both.
    struct Entry {
        var time: Double
        var isKeyframe: Bool
        var isCandidate: Bool
        var item: Item
    }

    /// What the steps wait for.
    enum Mode {
        /// After a candidate with a flaw of its own (at `since`): the next keyframe within
        /// ``PosterRules/keyframeStepReach``.
        case step(since: Double)
        /// After a keyframe stepped to that passed on its own (at `since`): the first keyframe at least
        /// ``PosterRules/lookAhead`` and at most ``PosterRules/keyframeStepReach`` after it, to compare
        /// it with (keyframes before are frames like any other).
        case check(since: Double, stepped: Item)
    }

    /// The closures the steps call, in display order.
    struct Judge<E: Error> {
        /// Adds an item to the search as a candidate (`stepped`: reached by a step); returns whether
        /// it has a flaw of its own.
        var accept: (_ item: Item, _ stepped: Bool) throws(E) -> Bool
        /// Whether `keyframe` shows `stepped` (the last candidate accepted) fading, blurred or dark;
        /// if so the search records that rejection.
        var rejects: (_ stepped: Item, _ keyframe: Item) throws(E) -> Bool
        /// Trims an item that waits (drops a decoded picture).
        var hold: (Item) -> Item
    }

    /// What the steps wait for, if anything; while they wait, later candidates are held.
    private(set) var mode: Mode?
    /// The candidates held meanwhile, in time order.
    private(set) var held: [Entry] = []

    /// The time the current wait began.
    var since: Double? {
        switch mode {
        case .step(let since)?, .check(let since, _)?: since
        case nil: nil
        }
    }

    /// The last time a keyframe may end the current wait.
    var reach: Double? { since.map { $0 + PosterRules.keyframeStepReach } }

    /// Whether a keyframe at `time` ends the current wait (when within ``reach``).
    private func ends(at time: Double) -> Bool {
        switch mode {
        case .step?: true
        case .check(let since, _)?: time >= since + PosterRules.lookAhead - 1e-9
        case nil: false
        }
    }

    /// Takes the next frame in display order.
    mutating func take<E: Error>(_ entry: Entry, _ judge: Judge<E>) throws(E) {
        if let mode, let reach {
            if entry.time <= reach + 1e-9 {
                if entry.isKeyframe && ends(at: entry.time) {
                    switch mode {
                    case .step:
                        // The first keyframe within reach: the candidates before it are skipped.
                        held.removeAll()
                        try admitStepped(entry, judge)
                    case .check(_, let stepped):
                        if try judge.rejects(stepped, entry.item) {
                            held.removeAll()
                            try admitStepped(entry, judge)
                        } else {
                            try release(judge)
                            try take(entry, judge)
                        }
                    }
                } else if entry.isCandidate {
                    var waiting = entry
                    waiting.item = judge.hold(entry.item)
                    held.append(waiting)
                }
                return
            }
            // No keyframe within reach: what was held counts after all, then this frame.
            try release(judge)
            try take(entry, judge)
            return
        }
        guard entry.isCandidate else { return }
        if try judge.accept(entry.item, false) { mode = .step(since: entry.time) }
    }

    /// The frames ended (or the search stopped reading): every held candidate counts, in order.
    mutating func finish<E: Error>(_ judge: Judge<E>) throws(E) {
        while mode != nil || !held.isEmpty {
            try release(judge)
        }
    }

    private mutating func admitStepped<E: Error>(_ entry: Entry, _ judge: Judge<E>) throws(E) {
        mode = try judge.accept(entry.item, true) ? .step(since: entry.time) : .check(since: entry.time, stepped: judge.hold(entry.item))
    }

    private mutating func release<E: Error>(_ judge: Judge<E>) throws(E) {
        mode = nil
        let waiting = held
        held = []
        for entry in waiting {
            try take(entry, judge)
        }
    }
}
