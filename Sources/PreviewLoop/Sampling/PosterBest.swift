/// `--at best`: the most representative good frame of a whole clip, from a few keyframes.
extension FrameSampler {
    /// Candidates ``bestPosterFrame(size:mode:)`` samples across the clip.
    static let bestPosterCandidates = 9

    /// The most representative good frame of the whole clip, from a few keyframe decodes.
    ///
    /// Samples the keyframes at or before the middles of 9 equal slices of the
    /// clip (5 % to 95 % of it, so a leader and end credits are a slice each at most), measured on the
    /// small analysis picture. Candidates that are black, white, flat or title cards are rejected;
    /// of the rest the one with the highest
    /// `quality × (0.25 + colourfulness) × (0.5 + 0.5 × exposure) × (0.5 + 0.5 × typicality)` wins,
    /// where exposure is 1 at mid-grey and 0 at black or white, and typicality the mean correlation of
    /// its 8×8 luma layout with the other good candidates' (the clip's usual look, not an outlier).
    /// The winner is decoded again at `size`. Without a known duration (a pipe), or when no candidate
    /// is good, it is the poster of the first 15 s (``posterFrame(in:size:mode:)-4hyr5``).
    public func bestPosterFrame(size: Size, mode: ContentMode = .aspectFill) throws(PreviewLoopError) -> PosterChoice {
        guard size.width > 0, size.height > 0 else { throw PreviewLoopError(.invalidArgument, "output size must be positive") }
        guard let duration = info.duration, duration > 0, decoder.isSeekable, !info.isStillPicture else {
            return try posterFrame(in: 0..<15, size: size, mode: mode)
        }
        let decodedBefore = decoder.decodedFrameCount
        let count = Self.bestPosterCandidates
        let times = (0..<count).map { 0.05 * duration + (Double($0) + 0.5) / Double(count) * 0.9 * duration }
        let analysisSize = PosterAnalysis.analysisSize(output: size, display: info.displaySize, mode: mode)
        let sampled = try frames(at: times, size: analysisSize, mode: PosterAnalysis.analysisMode(for: mode),
                                 accuracy: .keyframe, interval: duration / Double(count))
        // One candidate per keyframe, in time order.
        var seen = Set<Double>()
        let candidates = sampled.filter { seen.insert($0.sourceTime).inserted }.sorted { $0.sourceTime < $1.sourceTime }
        let analyses = candidates.map { PosterAnalysis(time: $0.sourceTime, image: $0.image) }
        var rejected: [PosterCandidate] = []
        var good: [Int] = []
        for (index, analysis) in analyses.enumerated() {
            if let flaw = PosterRules.flaw(of: analysis.scores) {
                rejected.append(PosterCandidate(time: analysis.time, scores: analysis.scores, reason: flaw))
            } else {
                good.append(index)
            }
        }
        guard !good.isEmpty else { return try posterFrame(in: 0..<15, size: size, mode: mode) }
        func score(_ index: Int) -> Double {
            let scores = analyses[index].scores
            let exposure = max(0, 1 - abs(scores.brightness - 0.45) / 0.45)
            let others = good.filter { $0 != index }
            let typicality = others.isEmpty ? 1
                : others.map { analyses[index].correlation(with: analyses[$0]) }.reduce(0, +) / Double(others.count)
            return scores.quality * (0.25 + Self.colourfulness(of: candidates[index].image)) * (0.5 + 0.5 * exposure)
                * (0.5 + 0.5 * max(0, typicality))
        }
        let winner = good.max { score($0) < score($1) }!
        let chosen = try frame(at: analyses[winner].time, size: size, mode: mode, accuracy: .keyframe)
        return PosterChoice(frame: chosen, reason: .bestOfClip, scores: analyses[winner].scores, flaw: nil,
                            rejected: rejected, framesDecoded: decoder.decodedFrameCount - decodedBefore)
    }

    /// Hasler and Süsstrunk's colourfulness of an RGB picture, scaled to about 0–1 (grey 0, a vivid
    /// test pattern about 0.4): √(σ²rg + σ²yb) + 0.3 √(μ²rg + μ²yb), over 255.
    static func colourfulness(of image: RGBImage) -> Double {
        let count = image.width * image.height
        guard count > 0 else { return 0 }
        var sumRG = 0.0, sumYB = 0.0, squaresRG = 0.0, squaresYB = 0.0
        image.pixels.withUnsafeBufferPointer { rgb in
            for index in 0..<count {
                let red = Double(rgb[3 * index]), green = Double(rgb[3 * index + 1]), blue = Double(rgb[3 * index + 2])
                let rg = red - green, yb = 0.5 * (red + green) - blue
                sumRG += rg; sumYB += yb
                squaresRG += rg * rg; squaresYB += yb * yb
            }
        }
        let n = Double(count)
        let meanRG = sumRG / n, meanYB = sumYB / n
        let varianceRG = max(0, squaresRG / n - meanRG * meanRG), varianceYB = max(0, squaresYB / n - meanYB * meanYB)
        return ((varianceRG + varianceYB).squareRoot() + 0.3 * (meanRG * meanRG + meanYB * meanYB).squareRoot()) / 255
    }
}
