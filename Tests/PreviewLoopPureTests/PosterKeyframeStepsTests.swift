import Testing
@testable import PreviewLoop

/// Keyframe steps over a leader, on synthetic frames: which candidates the search is given, in which
/// order, for frames taken in display order.
@Suite("Poster keyframe steps")
struct PosterKeyframeStepsTests {
    /// Frames at 8 fps (every frame a ⅛ s candidate) for `seconds`, keyframes at `keyframes`; `bad`
    /// are the times with a flaw of their own, `fading` the keyframes a later keyframe shows fading
    /// (when compared with it). Returns the times given to the search and those rejected by a keyframe.
    static func run(keyframes: Set<Double>, bad: Set<Double>, fading: Set<Double> = [],
                    seconds: Double = 3) -> (accepted: [Double], rejected: [Double]) {
        var steps = PosterKeyframeSteps<Double>()
        var accepted: [Double] = [], rejected: [Double] = []
        let judge = PosterKeyframeSteps<Double>.Judge<Never>(
            accept: { time, _ in
                accepted.append(time)
                return bad.contains(time)
            },
            rejects: { stepped, _ in
                guard fading.contains(stepped) else { return false }
                rejected.append(stepped)
                return true
            },
            hold: { $0 })
        for index in 0..<Int(seconds * 8) {
            let time = Double(index) / 8
            steps.take(.init(time: time, isKeyframe: keyframes.contains(time), isCandidate: true, item: time), judge)
        }
        steps.finish(judge)
        return (accepted, rejected)
    }

    static func accepted(keyframes: Set<Double>, bad: Set<Double>, seconds: Double = 3) -> [Double] {
        run(keyframes: keyframes, bad: bad, seconds: seconds).accepted
    }

    @Test("A leader bad on its own is stepped over to the next keyframe within two seconds; the frames between are never judged")
    func stepsToKeyframe() {
        #expect(Self.accepted(keyframes: [0, 1, 2], bad: [0]) == [0] + (8..<24).map { Double($0) / 8 })
        #expect(Self.accepted(keyframes: [0, 2], bad: [0]) == [0] + (16..<24).map { Double($0) / 8 })
        // Two keyframes of title card, then the picture.
        #expect(Self.accepted(keyframes: [0, 1, 2], bad: [0, 1]).prefix(3) == [0, 1, 2])
    }

    @Test("Without a keyframe within two seconds, every candidate counts, in order")
    func noKeyframeInReach() {
        let all = (0..<24).map { Double($0) / 8 }
        #expect(Self.accepted(keyframes: [0, 2.125], bad: [0]) == all)
        #expect(Self.accepted(keyframes: [0], bad: [0]) == all)
        // A frame that is not bad on its own (the start of a fade) begins no step.
        #expect(Self.accepted(keyframes: [0, 0.5, 1], bad: []) == all)
    }

    @Test("A held candidate bad on its own begins its own step when the first finds no keyframe")
    func chainedSteps() {
        // 0 is black, no keyframe by 2.0; 0.125 is black too, and a keyframe comes at 2.125.
        let times = Self.accepted(keyframes: [0, 2.125], bad: [0, 0.125])
        #expect(times == [0, 0.125] + (17..<24).map { Double($0) / 8 })
    }

    @Test("Frames that end inside a step: the held candidates count")
    func endsInsideStep() {
        #expect(Self.accepted(keyframes: [0], bad: [0], seconds: 0.5) == [0, 0.125, 0.25, 0.375])
    }

    @Test("A keyframe stepped to that the first keyframe 1–2 s after it shows fading is rejected, and the step goes on to that keyframe")
    func fadeAfterLeader() {
        // Black at 0, a fade: the keyframe at 0.25 fades against the one at 1.5, which is settled.
        let run = Self.run(keyframes: [0, 0.25, 1.5, 2.75], bad: [0], fading: [0.25])
        #expect(run.accepted == [0, 0.25] + (12..<24).map { Double($0) / 8 }, "\(run.accepted)")
        #expect(run.rejected == [0.25])
        // A keyframe less than a second after the one stepped to is not compared; one that does not
        // reject it leaves the candidates after it to count, in order.
        let kept = Self.run(keyframes: [0, 0.25, 1], bad: [0], fading: [0.25])
        #expect(kept.accepted == [0] + (2..<24).map { Double($0) / 8 } && kept.rejected.isEmpty, "\(kept.accepted)")
        // A good start is never compared this way: only keyframes reached by a step are.
        let good = Self.run(keyframes: [0, 1.5, 2], bad: [], fading: [0, 1.5])
        #expect(good.accepted == (0..<24).map { Double($0) / 8 } && good.rejected.isEmpty)
    }
}
