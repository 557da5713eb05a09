import Testing
@testable import PreviewLoop

/// Keyframe steps over a leader, on synthetic frames: which candidates the search is given, in which
/// order, for frames taken in display order.
@Suite("Poster keyframe steps")
struct PosterKeyframeStepsTests {
    /// Frames at 8 fps (every frame a ⅛ s candidate) for `seconds`, keyframes at `keyframes`; `bad`
    /// are the times with a flaw of their own. Returns the times given to the search.
    static func accepted(keyframes: Set<Double>, bad: Set<Double>, seconds: Double = 3, stopAt: Int? = nil) -> [Double] {
        var steps = PosterKeyframeSteps<Double>()
        var accepted: [Double] = []
        let accept: (Double) -> Bool = { time in
            accepted.append(time)
            return bad.contains(time)
        }
        for index in 0..<Int(seconds * 8) {
            let time = Double(index) / 8
            steps.take(.init(time: time, isKeyframe: keyframes.contains(time), isCandidate: true, item: time),
                       hold: { $0 }, accept: accept)
        }
        steps.finish(hold: { $0 }, accept: accept)
        return accepted
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
}
