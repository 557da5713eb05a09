/// A ranked poster candidate as a record carries it (`candidates` of a poster entry): its time, its
/// scores and the score's parts, rounded to six decimals, `score` or `rejection` (as the CLI prints it: `title card`), and `chosen`.
extension PosterRanking: Codable {
    enum CodingKeys: String, CodingKey {
        case time, brightness, contrast, sharpness, uniformity, colourfulness, exposure, typicality, score, rejection, chosen
    }

    /// Encodes the candidate; `score` and `rejection` only when set.
    public func encode(to encoder: any Encoder) throws {
        func rounded(_ value: Double) -> Double { (value * 1e6).rounded() / 1e6 }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(rounded(time), forKey: .time)
        try container.encode(rounded(scores.brightness), forKey: .brightness)
        try container.encode(rounded(scores.contrast), forKey: .contrast)
        try container.encode(rounded(scores.sharpness), forKey: .sharpness)
        try container.encode(rounded(scores.uniformity), forKey: .uniformity)
        try container.encode(rounded(colourfulness), forKey: .colourfulness)
        try container.encode(rounded(exposure), forKey: .exposure)
        try container.encode(rounded(typicality), forKey: .typicality)
        try container.encodeIfPresent(score.map(rounded), forKey: .score)
        try container.encodeIfPresent(rejection?.description, forKey: .rejection)
        try container.encode(isChosen, forKey: .chosen)
    }

    /// Reads a candidate back from a record.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let scores = PosterScores(brightness: try container.decode(Double.self, forKey: .brightness),
                                  contrast: try container.decode(Double.self, forKey: .contrast),
                                  sharpness: try container.decode(Double.self, forKey: .sharpness),
                                  uniformity: try container.decode(Double.self, forKey: .uniformity))
        self.init(time: try container.decode(Double.self, forKey: .time), scores: scores,
                  colourfulness: try container.decode(Double.self, forKey: .colourfulness),
                  exposure: try container.decode(Double.self, forKey: .exposure),
                  typicality: try container.decode(Double.self, forKey: .typicality),
                  score: try container.decodeIfPresent(Double.self, forKey: .score),
                  rejection: try container.decodeIfPresent(String.self, forKey: .rejection)
                      .flatMap { text in PosterRejection.allCases.first { $0.description == text } },
                  isChosen: try container.decode(Bool.self, forKey: .chosen))
    }
}
