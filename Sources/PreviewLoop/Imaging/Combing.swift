/// How combed (interlaced-looking) a picture is.
///
/// On BT.709 luma (BT.709 weights, `LumaWeights.bt709`): the energy (sum of squares) of the differences between adjacent lines, divided by
/// the energy of the differences between lines two apart. Two fields from different instants make
/// adjacent lines differ where things move while lines of one field stay alike: combed pictures score
/// well above 1. A progressive picture, whose detail changes smoothly from line to line, scores below
/// 1 (about 0.25–0.6 on natural and test pictures); a flat picture scores 0.
public enum Combing {
    /// The combing score of `image`.
    public static func score(_ image: RGBImage) -> Double {
        guard image.height >= 3 else { return 0 }
        // Luma × 256: the ratio is the same in any unit.
        let luma = LumaPlane(image, weights: .bt709).values.map(Double.init)
        var adjacent = 0.0, twoApart = 0.0
        let width = image.width
        for row in 0..<(image.height - 2) {
            for column in 0..<width {
                let y0 = luma[row * width + column], y1 = luma[(row + 1) * width + column], y2 = luma[(row + 2) * width + column]
                adjacent += (y0 - y1) * (y0 - y1)
                twoApart += (y0 - y2) * (y0 - y2)
            }
        }
        return twoApart > 0 ? adjacent / twoApart : (adjacent > 0 ? .infinity : 0)
    }
}
