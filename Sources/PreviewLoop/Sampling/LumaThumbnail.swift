/// A 16x16 picture of the luma (BT.601 weights) of a frame, each cell the mean of the pixels it covers.
/// The distances between them are what `--pick scenes` decides with.
public struct LumaThumbnail: Hashable, Sendable {
    /// Cells a side.
    public static let side = 16
    /// `side`² cell means, 0–255, row by row.
    public var cells: [Double]

    /// The thumbnail of `image` (stretched: the cells cover the whole picture).
    public init(_ image: RGBImage) {
        let side = Self.side
        var cells = [Double](repeating: 0, count: side * side)
        guard image.width > 0, image.height > 0 else { self.cells = cells; return }
        for cellY in 0..<side {
            let y0 = min(image.height - 1, cellY * image.height / side)
            let y1 = max(y0 + 1, min(image.height, (cellY + 1) * image.height / side))
            for cellX in 0..<side {
                let x0 = min(image.width - 1, cellX * image.width / side)
                let x1 = max(x0 + 1, min(image.width, (cellX + 1) * image.width / side))
                var sum = 0
                for y in y0..<y1 {
                    var offset = y * image.bytesPerRow + x0 * 3
                    for _ in x0..<x1 {
                        sum += 77 * Int(image.pixels[offset]) + 150 * Int(image.pixels[offset + 1])
                            + 29 * Int(image.pixels[offset + 2])
                        offset += 3
                    }
                }
                cells[cellY * side + cellX] = Double(sum) / Double(256 * (y1 - y0) * (x1 - x0))
            }
        }
        self.cells = cells
    }

    /// The thumbnail of an 8-bit luma plane, read straight from a decoded frame: each cell the mean of
    /// every `step`-th pixel of every `step`-th row it covers (no scaling, no colour conversion);
    /// limited-range values are stretched to 0–255 so the scores match ``init(_:)``'s.
    init(luma plane: UnsafePointer<UInt8>, bytesPerRow: Int, width: Int, height: Int, step: Int, limitedRange: Bool) {
        let side = Self.side
        var cells = [Double](repeating: 0, count: side * side)
        for cellY in 0..<side {
            let y0 = min(height - 1, cellY * height / side)
            let y1 = max(y0 + 1, min(height, (cellY + 1) * height / side))
            for cellX in 0..<side {
                let x0 = min(width - 1, cellX * width / side)
                let x1 = max(x0 + 1, min(width, (cellX + 1) * width / side))
                var sum = 0, count = 0
                var y = y0
                while y < y1 {
                    let row = plane + y * bytesPerRow
                    var x = x0
                    while x < x1 { sum += Int(row[x]); count += 1; x += step }
                    y += step
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
