/// One candidate of ``FrameSampler/bestPosterFrame(size:mode:)-42f28`` as the search scored it: the
/// numbers it compared, so a pick can be explained.
///
/// A good candidate's ``score`` is
/// `quality × (0.25 + colourfulness) × (0.5 + 0.5 × exposure) × (0.5 + 0.5 × max(0, typicality))`; a
/// rejected one (black, white, flat or a title card, judged on ``scores`` alone as `thumb` judges every candidate) has
/// no score and its ``rejection``.
public struct PosterRanking: Sendable, Hashable {
    /// Its time in seconds from the stream's start (the keyframe sampled).
    public var time: Double
    /// Brightness, contrast, sharpness and uniformity, measured on the analysis picture.
    public var scores: PosterScores
    /// Hasler and Süsstrunk's colourfulness over 255: grey 0, a vivid test pattern about 0.4.
    public var colourfulness: Double
    /// 1 at mid-grey brightness (0.45), falling linearly to 0 at black (0) and at 0.9 and above.
    public var exposure: Double
    /// The mean correlation, −1 to 1, of its 8×8 luma layout with the other good candidates' (1 when it
    /// is the only good one; 0 for a rejected one, which is not compared).
    public var typicality: Double
    /// The product above; `nil` for a rejected candidate.
    public var score: Double?
    /// Why it could not be the poster; `nil` for a good candidate.
    public var rejection: PosterRejection?
    /// Whether it is the frame chosen.
    public var isChosen: Bool

    /// Creates a ranked candidate.
    public init(time: Double, scores: PosterScores, colourfulness: Double, exposure: Double, typicality: Double,
                score: Double?, rejection: PosterRejection?, isChosen: Bool) {
        self.time = time
        self.scores = scores
        self.colourfulness = colourfulness
        self.exposure = exposure
        self.typicality = typicality
        self.score = score
        self.rejection = rejection
        self.isChosen = isChosen
    }

    /// The exposure of a brightness: 1 at 0.45, 0 at 0 and from 0.9 up.
    static func exposure(brightness: Double) -> Double { max(0, 1 - abs(brightness - 0.45) / 0.45) }

    /// The score of a good candidate from its parts.
    static func score(quality: Double, colourfulness: Double, exposure: Double, typicality: Double) -> Double {
        quality * (0.25 + colourfulness) * (0.5 + 0.5 * exposure) * (0.5 + 0.5 * max(0, typicality))
    }

    /// Ranks analysed candidates (in time order; `colourfulness` in the same order): the good ones by
    /// score, highest first (the earlier of equal scores first), then the rejected ones in time order.
    /// The first is the pick when any is good; nothing is marked chosen here.
    static func rank(_ analyses: [PosterAnalysis], colourfulness: [Double]) -> [PosterRanking] {
        let rejections = analyses.map { PosterRules.flaw(of: $0.scores) }
        let good = analyses.indices.filter { rejections[$0] == nil }
        var ranked = analyses.indices.map { index -> (index: Int, ranking: PosterRanking) in
            let analysis = analyses[index]
            let exposure = exposure(brightness: analysis.scores.brightness)
            guard rejections[index] == nil else {
                return (index, PosterRanking(time: analysis.time, scores: analysis.scores, colourfulness: colourfulness[index],
                                             exposure: exposure, typicality: 0, score: nil, rejection: rejections[index],
                                             isChosen: false))
            }
            let others = good.filter { $0 != index }
            let typicality = others.isEmpty ? 1
                : others.map { analysis.correlation(with: analyses[$0]) }.reduce(0, +) / Double(others.count)
            let score = score(quality: analysis.scores.quality, colourfulness: colourfulness[index], exposure: exposure,
                              typicality: typicality)
            return (index, PosterRanking(time: analysis.time, scores: analysis.scores, colourfulness: colourfulness[index],
                                         exposure: exposure, typicality: typicality, score: score, rejection: nil,
                                         isChosen: false))
        }
        ranked.sort { a, b in
            switch (a.ranking.score, b.ranking.score) {
            case let (x?, y?): return x != y ? x > y : a.index < b.index
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return a.index < b.index
            }
        }
        return ranked.map(\.ranking)
    }
}
