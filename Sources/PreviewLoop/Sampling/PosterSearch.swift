/// The poster search's bookkeeping, apart from decoding: candidates come in time order, each window
/// candidate is judged as soon as the frames it must be compared with are in, and the search ends at
/// the first that passes. Pure, so every path is tested on synthetic scores.
struct PosterSearch {
    /// Where the poster may come from, in seconds from the stream's start; later candidates are only
    /// compared with.
    let window: Range<Double>
    /// The candidates so far, in time order.
    private(set) var candidates: [PosterAnalysis] = []
    /// Why each judged candidate was rejected (by index); candidates not in it are unjudged or chosen.
    private(set) var rejections: [Int: PosterRejection] = [:]
    /// The index of the first candidate that passed, once found.
    private(set) var chosen: Int?
    /// The index of the window candidate with the highest ``PosterScores/quality`` so far (the first
    /// of equals): the fallback when none passes.
    private(set) var best: Int?
    /// The first window candidate not yet judged.
    private(set) var head = 0
    private var hasEnded = false
    /// Rejections decided before the look-ahead is in (a keyframe step's comparison with the next
    /// keyframe, ``PosterKeyframeSteps``), by index.
    private var decided: [Int: PosterRejection] = [:]

    /// A search over `window`.
    init(window: Range<Double>) {
        self.window = window
    }

    /// Whether a candidate at `time` belongs to the window (and so may become the poster).
    func isInWindow(_ time: Double) -> Bool { time < window.upperBound }

    /// Whether more candidates could still change the outcome.
    var needsMore: Bool {
        guard chosen == nil, !hasEnded else { return false }
        // Every window candidate was judged and rejected; later frames cannot be the poster.
        if head < candidates.count && !isInWindow(candidates[head].time) { return false }
        return true
    }

    /// Frames after this time are of no use (the last window candidate compares with a second past it).
    var horizon: Double { window.upperBound + PosterRules.lookAhead }

    /// Adds the next candidate (later than every earlier one) and judges what can be judged.
    mutating func add(_ candidate: PosterAnalysis) {
        precondition(candidates.last.map { $0.time < candidate.time } ?? true, "candidates come in time order")
        candidates.append(candidate)
        let index = candidates.count - 1
        if isInWindow(candidate.time) && best.map({ candidate.scores.quality > candidates[$0].scores.quality }) ?? true {
            best = index
        }
        judge()
    }

    /// Accepts the window's first frame without the frames of the second after it, when a later frame
    /// (`later`, at least ``PosterRules/lookAhead`` after it: a keyframe, decoded alone) shows the same
    /// scene and nothing better: the first frame has no flaw of its own, and against `later` it is not
    /// blurred, fading or dark. A fade, focus pull or dark leader still in progress at the first frame
    /// has brightened, sharpened or gained contrast by then, so it still fails here. Returns whether it
    /// was accepted; when it was not (a flaw, another scene, or nothing to judge), nothing changes and
    /// the search goes on frame by frame.
    mutating func confirmFirst(by later: PosterAnalysis) -> Bool {
        guard chosen == nil, head == 0, candidates.count == 1, isInWindow(candidates[0].time) else { return false }
        let first = candidates[0]
        guard later.time >= first.time + PosterRules.lookAhead - 1e-9,
              PosterRules.flaw(of: first.scores) == nil,
              first.showsSameScene(as: later, threshold: PosterRules.sameSceneCorrelation),
              PosterRules.flaw(of: first, followedBy: [later]) == nil else { return false }
        chosen = 0
        return true
    }

    /// The first window candidate from the head that passes against every candidate that has come in
    /// since, when at least one has and the picture has held steady since (``PosterRules/isSteady(_:followedBy:)``:
    /// a fade or blur still lifting slowly would only fail against the keyframe); every candidate before
    /// it already fails.
    /// A later keyframe may settle it (``confirm(_:by:)``) before its second is decoded.
    var settledSoFar: Int? {
        guard chosen == nil else { return nil }
        for index in candidates.indices.dropFirst(head) where isInWindow(candidates[index].time) {
            let candidate = candidates[index]
            guard decided[index] == nil, PosterRules.flaw(of: candidate.scores) == nil else { continue }
            let followers = followers(of: index)
            guard PosterRules.flaw(of: candidate, followedBy: followers) == nil else { continue }
            return !followers.isEmpty && PosterRules.isSteady(candidate, followedBy: followers) ? index : nil
        }
        return nil
    }

    /// Accepts candidate `index` (``settledSoFar``) without the rest of its second, when `later` (at
    /// least ``PosterRules/lookAhead`` after it: a keyframe, decoded alone) shows the same scene and,
    /// with the candidates that came in after it, nothing better — as ``confirmFirst(by:)`` does for the
    /// window's first frame. The candidates before it are rejected for what the frames so far show.
    /// Returns whether it was accepted; when it was not, nothing changes.
    mutating func confirm(_ index: Int, by later: PosterAnalysis) -> Bool {
        guard chosen == nil, index >= head, index < candidates.count, isInWindow(candidates[index].time) else { return false }
        let candidate = candidates[index]
        guard later.time >= candidate.time + PosterRules.lookAhead - 1e-9, decided[index] == nil,
              PosterRules.flaw(of: candidate.scores) == nil,
              candidate.showsSameScene(as: later, threshold: PosterRules.sameSceneCorrelation),
              PosterRules.flaw(of: candidate, followedBy: followers(of: index) + [later]) == nil else { return false }
        var earlier: [Int: PosterRejection] = [:]
        for before in head..<index where isInWindow(candidates[before].time) {
            guard let flaw = decided[before] ?? PosterRules.flaw(of: candidates[before].scores)
                    ?? PosterRules.flaw(of: candidates[before], followedBy: followers(of: before)) else { return false }
            earlier[before] = flaw
        }
        rejections.merge(earlier) { _, new in new }
        head = index
        chosen = index
        return true
    }

    /// The candidates after `index` within its look-ahead, as far as they have come in.
    private func followers(of index: Int) -> [PosterAnalysis] {
        let reach = candidates[index].time + PosterRules.lookAhead
        return Array(candidates[(index + 1)...].prefix { $0.time <= reach + 1e-9 })
    }

    /// Rejects the unjudged candidate `index` for `flaw` shown by a frame outside the candidates (a
    /// keyframe stepped to, compared with the next keyframe).
    mutating func reject(_ index: Int, as flaw: PosterRejection) {
        guard chosen == nil, index >= head, index < candidates.count else { return }
        decided[index] = flaw
        judge()
    }

    /// The input ended (or the horizon was reached): judges the rest with the frames there are.
    mutating func finish() {
        hasEnded = true
        judge()
    }

    /// Judges candidates from the head while their look-ahead is complete, stopping at the first that
    /// passes.
    private mutating func judge() {
        while chosen == nil, head < candidates.count, isInWindow(candidates[head].time) {
            let candidate = candidates[head]
            if let flaw = decided[head] ?? PosterRules.flaw(of: candidate.scores) {
                rejections[head] = flaw
                head += 1
                continue
            }
            let reach = candidate.time + PosterRules.lookAhead
            guard hasEnded || candidates[candidates.count - 1].time >= reach - 1e-9 else { return }
            let followers = candidates[(head + 1)...].prefix { $0.time <= reach + 1e-9 }
            if let flaw = PosterRules.flaw(of: candidate, followedBy: followers) {
                rejections[head] = flaw
                head += 1
                continue
            }
            chosen = head
        }
    }

    /// The indices whose frames may still become the poster: the unjudged window candidates and the
    /// best so far.
    var undecided: Set<Int> {
        var indices = Set(candidates.indices.dropFirst(head).filter { isInWindow(candidates[$0].time) && decided[$0] == nil })
        if let chosen { indices = [chosen] }
        if let best, chosen == nil { indices.insert(best) }
        return indices
    }

    /// The first window candidate after the head that passes against the frames seen so far: the
    /// likeliest poster should the head fail. Flaws only ever appear as frames come in (each test is
    /// "some frame that follows is clearly better"), so the poster is never before it; in a fade or
    /// after a blur it is the newest candidate until the picture settles, then the poster itself.
    var provisional: Int? {
        guard chosen == nil else { return nil }
        for index in candidates.indices.dropFirst(head + 1) where isInWindow(candidates[index].time) {
            let candidate = candidates[index]
            guard decided[index] == nil, PosterRules.flaw(of: candidate.scores) == nil else { continue }
            let reach = candidate.time + PosterRules.lookAhead
            let followers = candidates[(index + 1)...].prefix { $0.time <= reach + 1e-9 }
            if PosterRules.flaw(of: candidate, followedBy: followers) == nil { return index }
        }
        return nil
    }

    /// The poster's index, why, and (for a fallback) what is wrong with it; `nil` when the window had
    /// no candidate. Call after ``finish()`` or once ``needsMore`` is false.
    var outcome: (index: Int, reason: PosterReason, flaw: PosterRejection?)? {
        if let chosen { return (chosen, .firstGoodFrame, nil) }
        guard let best else { return nil }
        let inWindow = candidates.indices.filter { isInWindow(candidates[$0].time) }
        return (best, inWindow.count == 1 ? .onlyFrame : .bestAvailable, rejections[best])
    }

    /// The window candidates passed over, in time order, with why: those before the poster, or for a
    /// fallback every other one.
    var passedOver: [PosterCandidate] {
        guard let outcome else { return [] }
        return candidates.indices.compactMap { index in
            guard index != outcome.index, let flaw = rejections[index], isInWindow(candidates[index].time) else { return nil }
            return PosterCandidate(time: candidates[index].time, scores: candidates[index].scores, reason: flaw)
        }
    }
}
