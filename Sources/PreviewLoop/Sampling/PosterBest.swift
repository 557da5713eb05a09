/// `--at best`: the most representative good frame of a whole clip, from a few keyframes.
extension FrameSampler {
    /// The keyframes ``bestPosterFrame(size:mode:)-42f28`` samples across a clip: the most its
    /// ``PosterChoice/ranking`` lists (fewer when slices share a keyframe).
    public static let bestPosterCandidates = 9

    /// The most representative good frame of the whole clip, from a few keyframe decodes.
    ///
    /// Samples the keyframes at or before the middles of 9 equal slices of the
    /// clip (5 % to 95 % of it, so a leader and end credits are a slice each at most), measured on the
    /// small analysis picture. Candidates that are black, white, flat or title cards are rejected;
    /// of the rest the one with the highest
    /// `quality × (0.25 + colourfulness) × (0.5 + 0.5 × exposure) × (0.5 + 0.5 × max(0, typicality))` wins,
    /// where exposure is 1 at mid-grey and 0 at black or white, and typicality the mean correlation of
    /// its 8×8 luma layout with the other good candidates' (the clip's usual look, not an outlier).
    /// The winner is decoded again at `size`. Without a known duration (a pipe), or when no candidate
    /// is good, it is the poster of the first 15 s (``posterFrame(in:size:mode:)-4hyr5``).
    /// ``PosterChoice/ranking`` lists every candidate with the numbers it was ranked by
    /// (``PosterRanking``), best first.
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
        var ranking = PosterRanking.rank(analyses, colourfulness: candidates.map { Self.colourfulness(of: $0.image) })
        let rejected = ranking.filter { $0.rejection != nil }.sorted { $0.time < $1.time }
            .map { PosterCandidate(time: $0.time, scores: $0.scores, reason: $0.rejection!) }
        guard let winner = ranking.first, winner.rejection == nil else {
            var fallback = try posterFrame(in: 0..<15, size: size, mode: mode)
            fallback.ranking = ranking
            return fallback
        }
        ranking[0].isChosen = true
        let chosen = try frame(at: winner.time, size: size, mode: mode, accuracy: .keyframe)
        return PosterChoice(frame: chosen, reason: .bestOfClip, scores: winner.scores, flaw: nil,
                            rejected: rejected, framesDecoded: decoder.decodedFrameCount - decodedBefore, ranking: ranking)
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
