import Glibc

/// One picture as the flash analysis sees it: box-averaged in linear light down to at most
/// ``maximumSide`` cells on its longer side, each cell's relative luminance and red state.
///
/// Pixels are taken as sRGB (what the engine's frames hold, HDR input included: it is tone mapped to
/// BT.709 SDR before it gets here). Each byte is linearised with the sRGB transfer function (WCAG 2.2:
/// `c / 12.92` up to 0.04045, else `((c + 0.055) / 1.055) ^ 2.4`), then `f × f` blocks are averaged, `f`
/// the smallest whole factor that brings the longer side to ``maximumSide`` or less (the right and bottom
/// pixels that do not fill a block are left out). Averaging linear values gives each cell the light it
/// sends, so a pattern finer than a cell counts by its mean: a fine checkerboard that inverts does not
/// flash here.
public struct FlashSample: Sendable, Hashable {
    /// The longest side of the analysis picture, in cells: frames are reduced to at most this many cells
    /// across and down (480x270 → 96x54; 270x480 → 54x96).
    public static let maximumSide = 96

    /// The size a clip whose upright picture is `display` is decoded at for analysis: the whole picture
    /// scaled so that its longer side is ``maximumSide`` pixels, or its own size when that is smaller
    /// (never enlarged), each side rounded and at least one pixel. The shape is kept as closely as whole
    /// pixels allow, and no analysis picture has more pixels than the source nor more than 96 × 96:
    /// 1920x1080 → 96x54, 1080x1920 → 54x96, 16x4000 → 1x96, 2x2 → 2x2.
    static func analysisSize(display: Size) -> Size {
        let width = Double(max(1, display.width)), height = Double(max(1, display.height))
        let scale = min(1, Double(maximumSide) / max(width, height))
        return Size(width: max(1, Int((width * scale).rounded())), height: max(1, Int((height * scale).rounded())))
    }

    /// Cells across.
    public let width: Int
    /// Cells down.
    public let height: Int
    /// Each cell's mean linear red, green and blue (0–1), row by row, three values a cell.
    let linear: [Float]

    /// Reduces `image` to its analysis cells.
    public init(_ image: RGBImage) {
        let factor = max(1, (max(image.width, image.height) + Self.maximumSide - 1) / Self.maximumSide)
        let width = max(1, image.width / factor), height = max(1, image.height / factor)
        let blockX = min(factor, image.width), blockY = min(factor, image.height)
        var linear = [Float](repeating: 0, count: width * height * 3)
        let table = Self.linearTable
        let scale = 1 / Float(blockX * blockY)
        image.pixels.withUnsafeBufferPointer { pixels in
            table.withUnsafeBufferPointer { table in
                linear.withUnsafeMutableBufferPointer { cells in
                    for row in 0..<height {
                        for column in 0..<width {
                            var red: Float = 0, green: Float = 0, blue: Float = 0
                            for y in row * blockY..<(row + 1) * blockY {
                                var offset = (y * image.width + column * blockX) * 3
                                for _ in 0..<blockX {
                                    red += table[Int(pixels[offset])]
                                    green += table[Int(pixels[offset + 1])]
                                    blue += table[Int(pixels[offset + 2])]
                                    offset += 3
                                }
                            }
                            let cell = (row * width + column) * 3
                            cells[cell] = red * scale
                            cells[cell + 1] = green * scale
                            cells[cell + 2] = blue * scale
                        }
                    }
                }
            }
        }
        self.width = width
        self.height = height
        self.linear = linear
    }

    /// The linear value of each sRGB byte.
    static let linearTable: [Float] = (0..<256).map { byte in
        let value = Double(byte) / 255
        return Float(value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4))
    }

    /// The relative luminance of cell `index`: `0.2126 R + 0.7152 G + 0.0722 B` of its linear values.
    func luminance(_ index: Int) -> Float {
        0.2126 * linear[index * 3] + 0.7152 * linear[index * 3 + 1] + 0.0722 * linear[index * 3 + 2]
    }

    /// The red state of cell `index`.
    func redState(_ index: Int) -> RedState {
        RedState(red: linear[index * 3], green: linear[index * 3 + 1], blue: linear[index * 3 + 2])
    }
}

/// A cell's colour as the red-flash rule reads it: its red proportion `R / (R + G + B)`, its red excess
/// `R − G − B` and its CIE 1976 UCS chromaticity (u′, v′), all from linear sRGB.
struct RedState: Sendable, Hashable {
    /// `R / (R + G + B)`; 0 for black.
    var proportion: Float
    /// `max(0, R − G − B)`.
    var excess: Float
    /// CIE 1976 u′ (the D65 white point's for black, which has no chromaticity).
    var u: Float
    /// CIE 1976 v′.
    var v: Float

    /// The D65 white point in CIE 1976 UCS: what black and near-black are given.
    static let whitePoint: (u: Float, v: Float) = (0.1978, 0.4683)

    init(red: Float, green: Float, blue: Float) {
        let sum = red + green + blue
        proportion = sum > 0 ? red / sum : 0
        excess = max(0, red - green - blue)
        // Linear sRGB (BT.709 primaries, D65) to CIE XYZ.
        let x = 0.4124564 * red + 0.3575761 * green + 0.1804375 * blue
        let y = 0.2126729 * red + 0.7151522 * green + 0.0721750 * blue
        let z = 0.0193339 * red + 0.1191920 * green + 0.9503041 * blue
        let denominator = x + 15 * y + 3 * z
        if denominator > 1e-6 {
            u = 4 * x / denominator
            v = 9 * y / denominator
        } else {
            (u, v) = Self.whitePoint
        }
    }

    /// Whether the state is a saturated red: `R / (R + G + B) ≥ 0.8`.
    var isSaturatedRed: Bool { proportion >= 0.8 }

    /// The distance to `other` in the CIE 1976 UCS chromaticity diagram.
    func chromaticityDistance(to other: RedState) -> Float {
        ((u - other.u) * (u - other.u) + (v - other.v) * (v - other.v)).squareRoot()
    }

    /// Whether going between this state and `other` is a transition involving a saturated red: one of
    /// the two is a saturated red, they lie more than 0.2 apart in the CIE 1976 UCS diagram (WCAG 2.2),
    /// and their red excess differs by more than 20 / 320 (WCAG 2.0's `(R − G − B) × 320` step, which keeps
    /// the unstable chromaticity of near-black pictures from counting).
    func isRedTransition(to other: RedState) -> Bool {
        (isSaturatedRed || other.isSaturatedRed) && chromaticityDistance(to: other) > 0.2
            && abs(excess - other.excess) * 320 > 20
    }
}
