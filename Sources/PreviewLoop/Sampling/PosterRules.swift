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

    /// Whether a frame at `time` could be taken, for frames `interval` apart: only one within an
    /// interval and a half after a step can be the first at or after it (over-including is harmless).
    func mayTake(_ time: Double, interval: Double) -> Bool {
        guard time - start > 1e-6 else { return true }
        let sinceStep = time - start - Double(steps(through: time)) * PosterRules.candidateStep
        return sinceStep < 1.5 * interval
    }
}

