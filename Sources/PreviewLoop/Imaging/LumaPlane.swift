/// Which luma a measure reads: the weights of R, G and B, in 1/256ths (each set sums to 256).
///
/// Two weightings, each where its measure was calibrated:
/// - ``bt601`` (77, 150, 29): the poster scores and the scene-cut and duplicate distances. Their
///   thresholds (``PosterRules``, ``ScenePickSettings``) were set on these weights; BT.709's put more
///   weight on green, so the same thresholds would move (a red-to-blue cut scores about 20 % lower).
/// - ``bt709`` (54, 183, 19): the loop seam and the combing score, which compare pictures as the
///   output shows them (the engine's pictures are BT.709 RGB).
enum LumaWeights: Sendable, Hashable {
    /// Y′ = (77 R + 150 G + 29 B) / 256.
    case bt601
    /// Y′ = (54 R + 183 G + 19 B) / 256.
    case bt709

    /// The weights of R, G and B, in 1/256ths.
    var weights: (red: Int32, green: Int32, blue: Int32) {
        switch self {
        case .bt601: (77, 150, 29)
        case .bt709: (54, 183, 19)
        }
    }
}

/// The luma of an RGB picture, pixel for pixel, scaled by 256 (0…65,280, so sub-level gradients
/// survive), and the grids measures reduce it to: the one luma reduction of the engine (poster scores,
/// scene and duplicate thumbnails, seam thumbnails, combing).
struct LumaPlane: Sendable {
    let width: Int
    let height: Int
    /// Luma × 256, row by row.
    let values: [Int32]

    init(_ image: RGBImage, weights: LumaWeights) {
        let (red, green, blue) = weights.weights
        let count = image.width * image.height
        var values = [Int32](repeating: 0, count: count)
        image.pixels.withUnsafeBufferPointer { rgb in
            values.withUnsafeMutableBufferPointer { y in
                for index in 0..<count {
                    y[index] = Int32(rgb[3 * index]) * red + Int32(rgb[3 * index + 1]) * green + Int32(rgb[3 * index + 2]) * blue
                }
            }
        }
        width = image.width
        height = image.height
        self.values = values
    }

    /// The rows (or columns) of cell `index` of `cells` over `length` pixels: equal slices, each at
    /// least one pixel, the last pixel repeated when the picture has fewer pixels than cells.
    static func cellRange(_ index: Int, of cells: Int, over length: Int) -> Range<Int> {
        let start = min(length - 1, index * length / cells)
        return start..<max(start + 1, min(length, (index + 1) * length / cells))
    }

    /// The mean luma (0–255) of each cell of a `columns` × `rows` grid stretched over the picture, row
    /// by row; zeros for an empty picture.
    func cellMeans(columns: Int, rows: Int) -> [Double] {
        var means = [Double](repeating: 0, count: columns * rows)
        guard width > 0, height > 0 else { return means }
        values.withUnsafeBufferPointer { y in
            for cellY in 0..<rows {
                let rowRange = Self.cellRange(cellY, of: rows, over: height)
                for cellX in 0..<columns {
                    let columnRange = Self.cellRange(cellX, of: columns, over: width)
                    var sum = 0
                    for row in rowRange {
                        for column in columnRange { sum += Int(y[row * width + column]) }
                    }
                    means[cellY * columns + cellX] = Double(sum) / Double(256 * rowRange.count * columnRange.count)
                }
            }
        }
        return means
    }

    /// The picture box-averaged by `factor` (whole blocks only: a remainder at the right and bottom is
    /// dropped), at least 1x1: its width, height and luma (0–255) row by row.
    func boxAveraged(by factor: Int) -> (width: Int, height: Int, luma: [Float]) {
        let factor = max(1, factor)
        let outWidth = max(1, width / factor), outHeight = max(1, height / factor)
        let blockX = min(factor, width), blockY = min(factor, height)
        var luma = [Float](repeating: 0, count: outWidth * outHeight)
        values.withUnsafeBufferPointer { y in
            for row in 0..<outHeight {
                for column in 0..<outWidth {
                    var sum = 0
                    for line in row * blockY..<(row + 1) * blockY {
                        let start = line * width + column * blockX
                        for index in start..<start + blockX { sum += Int(y[index]) }
                    }
                    luma[row * outWidth + column] = Float(sum) / Float(256 * blockX * blockY)
                }
            }
        }
        return (outWidth, outHeight, luma)
    }
}
