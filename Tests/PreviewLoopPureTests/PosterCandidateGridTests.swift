import Testing
@testable import PreviewLoop

/// The poster search's candidate grid: taking the first frame at or after each ⅛ s step, and telling
/// a skipping decoder which frames may be taken — one arithmetic, so the two cannot disagree.
@Suite("Poster candidate grid")
struct PosterCandidateGridTests {
    @Test("Takes exactly the first frame at or after each step; every taken frame is one a skipping decoder keeps",
          arguments: [(24.0, 0.0), (25.0, 0.0), (30000.0 / 1001, 0.0), (30.0, 1.37), (60.0, 0.5), (8.0, 0.0), (5.0, 2.25)] as [(Double, Double)])
    func grid(rate: Double, start: Double) {
        let interval = 1 / rate
        let times = (0..<Int(rate * 3)).map { start + Double($0) * interval }
        var grid = PosterCandidateGrid(start: start)
        var taken: [Double] = []
        for time in times.dropFirst() where grid.takes(time) { taken.append(time) }
        // Brute force: for each step k ≥ 1, the first frame at or after it (frames past the first only).
        var expected: [Double] = []
        var step = 1
        while start + Double(step) * PosterRules.candidateStep <= times.last! + 1e-9 {
            let due = start + Double(step) * PosterRules.candidateStep
            if let first = times.dropFirst().first(where: { $0 >= due - 1e-6 }), expected.last != first { expected.append(first) }
            step += 1
        }
        #expect(taken == expected, "\(rate) fps from \(start)")
        let check = PosterCandidateGrid(start: start)
        for time in taken { #expect(check.mayTake(time, interval: interval), "\(time) at \(rate) fps") }
        // With frames far apart, every frame may be taken; with frames close together, most are skipped.
        let kept = times.filter { check.mayTake($0, interval: interval) }.count
        if interval >= PosterRules.candidateStep { #expect(kept == times.count) }
        if rate >= 29 { #expect(kept < times.count / 2, "\(kept) of \(times.count)") }
    }

    @Test("A skipping decoder keeps the start's frame, no frame before the first step, and at most two frames a step",
          arguments: [(25.0, 0.0), (30000.0 / 1001, 0.0), (60.0, 0.5), (24.0, 1.37)] as [(Double, Double)])
    func skipsBetweenSteps(rate: Double, start: Double) {
        let interval = 1 / rate
        let times = (0..<Int(rate * 3)).map { start + Double($0) * interval }
        let check = PosterCandidateGrid(start: start)
        #expect(check.mayTake(start, interval: interval))
        // Between the start's frame and the first step: frames a decoder holds back before it gives out the first.
        for time in times.dropFirst() where time < start + PosterRules.candidateStep - 1e-6 {
            #expect(!check.mayTake(time, interval: interval), "\(time) at \(rate) fps")
        }
        var perStep: [Int: Int] = [:]
        for time in times.dropFirst() where check.mayTake(time, interval: interval) {
            let step = Int(((time - start + 1e-6) / PosterRules.candidateStep).rounded(.down))
            let since = time - start - Double(step) * PosterRules.candidateStep
            #expect(since < PosterCandidateGrid.intervalAllowance * interval, "\(time) at \(rate) fps")
            perStep[step, default: 0] += 1
        }
        #expect(perStep.values.allSatisfy { $0 <= 2 }, "\(perStep) at \(rate) fps")
    }
}
