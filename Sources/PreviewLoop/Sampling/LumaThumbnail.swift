/// A 16x16 picture of the luma (BT.601 weights, `LumaWeights.bt601`) of a frame, each cell the mean of the pixels it covers.
/// The distances between them are what `--pick scenes` decides with.
public struct LumaThumbnail: Hashable, Sendable {
    /// Cells a side.
    public static let side = 16
    /// `side`² cell means, 0–255, row by row.
    public var cells: [Double]

    /// The thumbnail of `image` (stretched: the cells cover the whole picture).
    public init(_ image: RGBImage) {
        cells = LumaPlane(image, weights: .bt601).cellMeans(columns: Self.side, rows: Self.side)
    }

    /// The thumbnail of an 8-bit luma plane, read straight from a decoded frame: each cell the mean of
    /// every `step`-th pixel of every `step`-th row it covers (no scaling, no colour conversion);
    /// limited-range values are stretched to 0–255 so the scores match ``init(_:)``'s.
    init(luma plane: UnsafePointer<UInt8>, bytesPerRow: Int, width: Int, height: Int, step: Int, limitedRange: Bool) {
        let side = Self.side
        var cells = [Double](repeating: 0, count: side * side)
        for cellY in 0..<side {
            let rows = LumaPlane.cellRange(cellY, of: side, over: height)
            for cellX in 0..<side {
                let columns = LumaPlane.cellRange(cellX, of: side, over: width)
                var sum = 0, count = 0
                for y in stride(from: rows.lowerBound, to: rows.upperBound, by: step) {
                    let row = plane + y * bytesPerRow
                    for x in stride(from: columns.lowerBound, to: columns.upperBound, by: step) { sum += Int(row[x]); count += 1 }
                }
                let mean = Double(sum) / Double(count)
                cells[cellY * side + cellX] = limitedRange ? min(255, max(0, (mean - 16) * 255 / 219)) : mean
            }
        }
        self.cells = cells
    }

    /// The mean of the cells.
    public var mean: Double { cells.reduce(0, +) / Double(cells.count) }

    /// The cut score: the mean absolute difference of the cells, 0–255 (brightness changes count).
    public func difference(from other: LumaThumbnail) -> Double {
        zip(cells, other.cells).reduce(0) { $0 + abs($1.0 - $1.1) } / Double(cells.count)
    }

    /// The duplicate distance: the mean absolute difference of the cells after each thumbnail's own
    /// mean is taken away (so the same shot a little brighter or darker is still the same shot), 0–255.
    public func normalisedDifference(from other: LumaThumbnail) -> Double {
        let shift = mean - other.mean
        return zip(cells, other.cells).reduce(0) { $0 + abs($1.0 - $1.1 - shift) } / Double(cells.count)
    }
}
