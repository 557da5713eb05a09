/// How a candidate poster frame measures: brightness, contrast and sharpness of its luma, taken on a
/// small analysis picture (longest side 160 px) of what the poster shows.
///
/// The analysis picture is the frame scaled by FFmpeg's scaler like any output (so colour range and
/// matrix are honoured), then reduced to luma in Swift: Y′ = (77 R + 150 G + 29 B) / 256, the BT.601
/// weights, kept at 16-bit precision. Measuring at one fixed scale, not the output size, makes the
/// numbers comparable between calls and keeps the cost at about 25,000 pixels a candidate.
///
/// Typical brightness / contrast / sharpness at that scale: `testsrc2` content 0.49 / 0.25 / 0.03;
/// the same under a strong Gaussian blur (σ = 6 px at 320 px wide) 0.49 / 0.22 / 0.0065; a night
/// scene at 12 % of that level 0.06 / 0.03 / 0.003; black, or a card of one colour, 0 contrast and
/// 0 sharpness.
public struct PosterScores: Sendable, Hashable {
    /// Mean luma, 0 (black) to 1 (white).
    public var brightness: Double
    /// Standard deviation of luma, 0 (one flat colour) to 0.5 (half black, half white).
    public var contrast: Double
    /// Mean absolute 4-neighbour Laplacian of luma (|4·centre − left − right − up − down|, luma in 0–1),
    /// over the analysis picture's interior: high where edges are crisp and detail is fine, low where
    /// the picture is blurred, flat or dim. 0 to 4 in theory; sharp video measures a few hundredths.
    public var sharpness: Double
    /// The share of pixels, 0 to 1, whose luma lies within 4 levels (of 255) of the commonest level:
    /// near 1 for a title card, a studio ident or black with subtitles (one colour with a little text
    /// or a logo), about 0.1–0.2 for footage (a dim night scene included).
    public var uniformity: Double

    /// Creates scores.
    public init(brightness: Double, contrast: Double, sharpness: Double, uniformity: Double = 0) {
        self.brightness = brightness
        self.contrast = contrast
        self.sharpness = sharpness
        self.uniformity = uniformity
    }

    /// Sharpness divided by contrast (0 when there is no contrast): how crisp the edges are whatever
    /// the exposure. A fade changes sharpness and contrast together and leaves it alone; blur and an
    /// unfinished focus pull lower it (sharp `testsrc2` measures about 0.13, strongly blurred 0.03).
    public var acuity: Double { contrast > 0 ? sharpness / contrast : 0 }

    /// √(contrast × sharpness), the geometric mean: what ``PosterReason/bestAvailable`` maximises when no
    /// frame passes. Zero for black, white and flat frames; low for faded-down and blurred ones.
    public var quality: Double { (contrast * sharpness).squareRoot() }
}

/// One candidate as the poster search sees it: its time, its scores, and a coarse 8×8 layout of its
/// luma used to tell whether two frames show the same scene.
struct PosterAnalysis: Sendable {
    /// Seconds from the stream's start.
    var time: Double
    /// The frame's scores.
    var scores: PosterScores
    /// Mean luma of each cell of an 8×8 grid over the analysis picture, row by row (0–1).
    var layout: [Double]

    /// The grid's cells per side.
    static let gridSide = 8
    /// The analysis picture's longest side in pixels.
    static let analysisSide = 160
    /// The analysis picture's shortest side in pixels (an extreme aspect ratio is distorted up to it).
    static let minimumSide = gridSide

    /// Creates an analysis from known values (tests build synthetic sequences this way).
    init(time: Double, scores: PosterScores, layout: [Double]) {
        self.time = time
        self.scores = scores
        self.layout = layout
    }

    /// Measures an analysis picture (at least 8×8 pixels).
    init(time: Double, image: RGBImage) {
        self.time = time
        (scores, layout) = Self.measure(image)
    }

    /// The analysis picture's size for a poster of `output` size: the output's shape when the poster
    /// is cropped to fill it (what it shows is what gets judged), else the whole upright picture's.
    static func analysisSize(output: Size, display: Size, mode: ContentMode) -> Size {
        let shape = mode == .aspectFill ? output : display
        let scale = Double(analysisSide) / Double(max(shape.width, shape.height, 1))
        return Size(width: max(minimumSide, Int((Double(shape.width) * scale).rounded())),
                    height: max(minimumSide, Int((Double(shape.height) * scale).rounded())))
    }

    /// How the analysis picture is cut from the frame: as the poster is for aspect-fill; the whole
    /// picture, undistorted, otherwise (letterbox bars are not part of the picture).
    static func analysisMode(for mode: ContentMode) -> ContentMode {
        mode == .aspectFill ? .aspectFill : .stretch
    }

    /// Whether two frames show the same scene: the Pearson correlation of their layouts is at least
    /// `threshold`. Correlation ignores gain and offset, so a frame mid-fade (from black or white)
    /// and a frame mid-focus-pull both correlate with the settled frame, while a cut does not. A
    /// frame of one colour has no layout and matches nothing.
    func showsSameScene(as other: PosterAnalysis, threshold: Double) -> Bool {
        correlation(with: other) >= threshold
    }

    /// The Pearson correlation of the two layouts, −1 to 1; 0 when either is uniform.
    func correlation(with other: PosterAnalysis) -> Double {
        let count = Double(layout.count)
        guard count > 0, layout.count == other.layout.count else { return 0 }
        let meanA = layout.reduce(0, +) / count, meanB = other.layout.reduce(0, +) / count
        var covariance = 0.0, varianceA = 0.0, varianceB = 0.0
        for (a, b) in zip(layout, other.layout) {
            covariance += (a - meanA) * (b - meanB)
            varianceA += (a - meanA) * (a - meanA)
            varianceB += (b - meanB) * (b - meanB)
        }
        // Cells differing by less than about a tenth of a luma level in total are "uniform".
        guard varianceA > 1e-8, varianceB > 1e-8 else { return 0 }
        return covariance / (varianceA * varianceB).squareRoot()
    }

    /// Scores and layout of an RGB24 picture, in one pass for luma and one for the Laplacian.
    private static func measure(_ image: RGBImage) -> (PosterScores, [Double]) {
        let width = image.width, height = image.height, count = width * height
        // Luma scaled by 256: 0…65,280, so sub-level gradients (smooth cards, dim scenes) survive.
        let unit = 255.0 * 256.0
        let plane = LumaPlane(image, weights: .bt601)
        var sum: Int64 = 0, sumOfSquares: Int64 = 0
        var histogram = [Int](repeating: 0, count: 256)
        for value in plane.values {
            histogram[Int(value >> 8)] += 1
            sum += Int64(value)
            sumOfSquares += Int64(value) * Int64(value)
        }
        let mean = Double(sum) / Double(count)
        let variance = max(0, Double(sumOfSquares) / Double(count) - mean * mean)
        var laplacianSum: Int64 = 0
        plane.values.withUnsafeBufferPointer { y in
            guard width >= 3 && height >= 3 else { return }
            for row in 1..<(height - 1) {
                let centre = row * width
                for column in 1..<(width - 1) {
                    let at = centre + column
                    let value = 4 * y[at] - y[at - 1] - y[at + 1] - y[at - width] - y[at + width]
                    laplacianSum += Int64(abs(value))
                }
            }
        }
        let layout = plane.cellMeans(columns: gridSide, rows: gridSide).map { $0 / 255 }
        let interior = max(1, (width - 2) * (height - 2))
        let mode = histogram.indices.max { histogram[$0] < histogram[$1] } ?? 0
        let nearMode = histogram[max(0, mode - 4)...min(255, mode + 4)].reduce(0, +)
        let scores = PosterScores(brightness: mean / unit, contrast: variance.squareRoot() / unit,
                                  sharpness: Double(laplacianSum) / Double(interior) / unit,
                                  uniformity: Double(nearMode) / Double(max(1, count)))
        return (scores, layout)
    }
}
