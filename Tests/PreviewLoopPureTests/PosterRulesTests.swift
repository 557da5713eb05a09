import Testing
@testable import PreviewLoop

// The poster rules and the search on synthetic scores: no decoding (the fixtures' suites are in
// PreviewLoopTests/PosterFrameTests.swift).

/// A coarse 8×8 luma layout for scene `scene` (a fixed pseudo-random pattern per scene) at `gain`:
/// the same scene at a lower gain is what a fade looks like to the layout.
private func layout(scene: Int, gain: Double = 1) -> [Double] {
    var state = UInt64(scene * 7919 + 17)
    return (0..<64).map { _ in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Double(state >> 40) / Double(1 << 24) * gain
    }
}

/// A candidate with given scores, showing `scene`.
private func candidate(_ time: Double, _ brightness: Double, _ contrast: Double, _ sharpness: Double,
                       scene: Int = 0, gain: Double = 1) -> PosterAnalysis {
    PosterAnalysis(time: time, scores: PosterScores(brightness: brightness, contrast: contrast, sharpness: sharpness),
                   layout: layout(scene: scene, gain: gain))
}

/// Well-exposed, sharp content (the scores `testsrc2` measures).
private func good(_ time: Double, scene: Int = 0) -> PosterAnalysis { candidate(time, 0.49, 0.25, 0.044, scene: scene) }

/// Times every ⅛ s from `from` up to (not including) `to`.
private func steps(from: Double, to: Double) -> [Double] {
    stride(from: from, to: to - 1e-9, by: PosterRules.candidateStep).map { $0 }
}

@Suite("Poster frame: rules and search on synthetic scores")
struct PosterRulesTests {
    @Test("On its own a frame is rejected only for showing one colour (or no edge); a dim scene passes")
    func absoluteRules() {
        #expect(PosterRules.flaw(of: PosterScores(brightness: 0, contrast: 0, sharpness: 0)) == .black)
        #expect(PosterRules.flaw(of: PosterScores(brightness: 0.06, contrast: 0.01, sharpness: 0.003)) == .black)
        #expect(PosterRules.flaw(of: PosterScores(brightness: 0.97, contrast: 0.005, sharpness: 0.001)) == .white)
        #expect(PosterRules.flaw(of: PosterScores(brightness: 0.29, contrast: 0, sharpness: 0)) == .flat)
        // A smooth gradient card: contrast, but no edge anywhere.
        #expect(PosterRules.flaw(of: PosterScores(brightness: 0.4, contrast: 0.12, sharpness: 0.0004)) == .flat)
        // A night scene at 12 % of full level, and ordinary content.
        #expect(PosterRules.flaw(of: PosterScores(brightness: 0.05, contrast: 0.03, sharpness: 0.004)) == nil)
        #expect(PosterRules.flaw(of: PosterScores(brightness: 0.49, contrast: 0.25, sharpness: 0.044)) == nil)
    }

    @Test("A fade in progress is rejected; the same numbers across a cut are not")
    func fading() {
        let dim = candidate(0, 0.2, 0.1, 0.017, scene: 1, gain: 0.4)
        #expect(PosterRules.flaw(of: dim, followedBy: [good(0.5, scene: 1)]) == .fading)
        #expect(PosterRules.flaw(of: dim, followedBy: [good(0.5, scene: 2)]) == nil)
        // 95 % of the contrast to come is within the natural variation of steady footage.
        let nearlyThere = candidate(0, 0.47, 0.2375, 0.042, scene: 1)
        #expect(PosterRules.flaw(of: nearlyThere, followedBy: [good(0.5, scene: 1)]) == nil)
    }

    @Test("Blur is told from a fade by acuity, and wins over the small contrast loss it brings")
    func blurred() {
        // Strong blur: sharpness down 5×, contrast down 12 % (past the fade threshold on its own).
        let soft = candidate(0, 0.48, 0.22, 0.009, scene: 3)
        #expect(PosterRules.flaw(of: soft, followedBy: [good(0.8, scene: 3)]) == .blurred)
        #expect(PosterRules.flaw(of: soft, followedBy: [good(0.8, scene: 4)]) == nil)
        // A fade lowers sharpness with contrast: acuity stays, so it is a fade, not blur.
        let faded = candidate(0, 0.1, 0.05, 0.0088, scene: 3, gain: 0.2)
        #expect(PosterRules.flaw(of: faded, followedBy: [good(0.8, scene: 3)]) == .fading)
        // Steady footage: sharpness varying by 15 % is not blur.
        #expect(PosterRules.flaw(of: candidate(0, 0.49, 0.25, 0.038, scene: 3), followedBy: [good(0.8, scene: 3)]) == nil)
    }

    @Test("A dim frame followed by a far brighter picture is a dark leader; a night scene that stays dark is not")
    func dark() {
        let grainyBlack = candidate(0, 0.03, 0.025, 0.01, scene: 5)
        #expect(PosterRules.flaw(of: grainyBlack, followedBy: [good(0.5, scene: 6)]) == .dark)
        let night = candidate(0, 0.05, 0.03, 0.004, scene: 7)
        #expect(PosterRules.flaw(of: night, followedBy: [candidate(0.5, 0.052, 0.031, 0.0042, scene: 7)]) == nil)
        #expect(PosterRules.flaw(of: night, followedBy: []) == nil)
    }

    @Test("A good first frame is chosen only once a second of look-ahead is in, and then at once")
    func waitsForLookAhead() {
        var search = PosterSearch(window: 0..<15)
        for time in steps(from: 0, to: 1) {
            search.add(good(time))
            #expect(search.chosen == nil && search.needsMore, "decided at \(time) s, before the look-ahead")
        }
        search.add(good(1.0))
        #expect(search.chosen == 0 && !search.needsMore)
        #expect(search.outcome?.reason == .firstGoodFrame && search.outcome?.flaw == nil)
        #expect(search.passedOver.isEmpty)
    }

    @Test("A keyframe a second or more on confirms a good first frame; a fade, blur, dark leader or cut does not")
    func confirmedByKeyframe() {
        func confirms(_ first: PosterAnalysis, _ key: PosterAnalysis) -> Bool {
            var search = PosterSearch(window: 0..<15)
            search.add(first)
            let before = (head: search.head, chosen: search.chosen, needsMore: search.needsMore)
            let accepted = search.confirmFirst(by: key)
            // Accepted: decided, the first frame, nothing passed over. Refused: nothing changed.
            #expect(accepted == (search.chosen == 0 && !search.needsMore))
            if accepted { #expect(search.outcome?.reason == .firstGoodFrame && search.passedOver.isEmpty) }
            if !accepted {
                #expect(search.candidates.count == 1 && search.head == before.head && search.chosen == before.chosen
                        && search.needsMore == before.needsMore)
            }
            return accepted
        }
        #expect(confirms(good(0, scene: 1), good(2, scene: 1)))
        #expect(confirms(good(0, scene: 1), good(1, scene: 1)))
        // A keyframe inside the look-ahead says nothing about the rest of the second.
        #expect(!confirms(good(0, scene: 1), good(0.5, scene: 1)))
        // Another scene at the keyframe: the second between must be looked at.
        #expect(!confirms(good(0, scene: 1), good(2, scene: 2)))
        // A fade, a blur, a dark leader still in progress at the first frame show at the keyframe.
        #expect(!confirms(candidate(0, 0.2, 0.1, 0.017, scene: 1, gain: 0.4), good(2, scene: 1)))
        #expect(!confirms(candidate(0, 0.48, 0.22, 0.009, scene: 1), good(2, scene: 1)))
        #expect(!confirms(candidate(0, 0.03, 0.025, 0.01, scene: 1), good(2, scene: 1)))
        // A frame with a flaw of its own is never confirmed.
        #expect(!confirms(candidate(0, 0.05, 0.005, 0.001, scene: 1), good(2, scene: 1)))
        // Only the first frame, before anything else is in.
        var later = PosterSearch(window: 0..<15)
        later.add(good(0, scene: 1))
        later.add(good(0.125, scene: 1))
        #expect(!later.confirmFirst(by: good(2, scene: 1)) && later.chosen == nil)
    }

    @Test("In a fade the likeliest poster is the newest frame until the picture settles, then the poster itself")
    func provisionalInFade() {
        var search = PosterSearch(window: 0..<15)
        var settled: Int?
        for (index, time) in steps(from: 0, to: 2.01).enumerated() {
            let level = min(1, 0.1 + 1.2 * time)
            search.add(candidate(time, 0.49 * level, 0.25 * level, 0.044 * level, scene: 11, gain: level))
            if level >= PosterRules.fadeContrastRatio && settled == nil { settled = index }
            // The provisional poster is looked for after the head (the head is held anyway).
            if search.chosen == nil && index > search.head && (settled ?? index) > search.head {
                #expect(search.provisional == (settled ?? index), "at \(time) s")
            }
        }
        #expect(search.chosen != nil && search.chosen == settled)
    }

    @Test("Frames rejected on their own are let go at once; the first good frame after them is chosen")
    func leader() {
        var search = PosterSearch(window: 0..<15)
        let leader = steps(from: 0, to: 1)
        for time in leader {
            search.add(candidate(time, 0, 0, 0))
            #expect(search.undecided.subtracting(search.best.map { [$0] } ?? []).isEmpty, "a black frame is still held")
        }
        for time in steps(from: 1, to: 2.01) { search.add(good(time, scene: 8)) }
        #expect(search.outcome?.index == leader.count)
        #expect(search.passedOver.map(\.time) == leader)
        #expect(search.passedOver.allSatisfy { $0.reason == .black })
    }

    @Test("When nothing passes, the best-scoring window frame is returned with its own flaw")
    func bestAvailable() {
        var search = PosterSearch(window: 0..<1)
        // Edgeless cards of rising contrast: all flat, the last the best.
        let times = steps(from: 0, to: 1)
        for (index, time) in times.enumerated() { search.add(candidate(time, 0.4, 0.01 * Double(index + 1), 0.001, scene: 9)) }
        #expect(search.needsMore)
        search.finish()
        #expect(search.outcome?.reason == .bestAvailable)
        #expect(search.outcome?.index == times.count - 1)
        #expect(search.outcome?.flaw == .flat)
        #expect(search.passedOver.count == times.count - 1)
    }

    @Test("A fade longer than the window: compared with frames past its end, the poster still comes from inside")
    func windowShorterThanFade() {
        var search = PosterSearch(window: 0..<0.5)
        for time in steps(from: 0, to: 2.5) where search.needsMore {
            let level = min(1, 0.2 + time / 2)
            search.add(candidate(time, 0.49 * level, 0.25 * level, 0.044 * level, scene: 10, gain: level))
        }
        #expect(!search.needsMore, "the search went on after every window frame was judged")
        search.finish()
        #expect(search.outcome?.reason == .bestAvailable)
        #expect(search.outcome?.flaw == .fading)
        #expect(search.outcome.map { search.candidates[$0.index].time } == 0.375)
        #expect(search.passedOver.allSatisfy { $0.reason == .fading && $0.time < 0.5 })
    }

    @Test("A window with one candidate that fails gives it as the only frame")
    func onlyFrame() {
        var search = PosterSearch(window: 0..<0.1)
        search.add(candidate(0, 0, 0, 0))
        search.add(good(0.125))
        search.finish()
        #expect(search.outcome?.index == 0 && search.outcome?.reason == .onlyFrame && search.outcome?.flaw == .black)
        #expect(search.passedOver.isEmpty)
    }
}
