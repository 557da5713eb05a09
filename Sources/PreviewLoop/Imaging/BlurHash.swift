import Glibc

/// BlurHash (Wolt's image placeholder): the picture's linear-light RGB as a few cosine components,
/// written as base-83 text that a page decodes to a blurred picture.
///
/// Written from the published description of the format, in 32-bit floats with the reference
/// encoder's conversions, so equal pixels give the reference's string.
public enum BlurHash {
    /// The components ``ImagePlaceholder`` asks for: 4 across, 3 down (a 28-character string).
    public static let placeholderComponents = (x: 4, y: 3)

    /// The BlurHash text of a picture.
    ///
    /// - Parameters:
    ///   - image: the picture to encode (encoded as it is: hand it a small downscale).
    ///   - xComponents: cosine components across, 1 to 9.
    ///   - yComponents: cosine components down, 1 to 9.
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for a component count outside 1 to 9.
    public static func encode(_ image: RGBImage, xComponents: Int, yComponents: Int) throws(PreviewLoopError) -> String {
        guard (1...9).contains(xComponents), (1...9).contains(yComponents) else {
            throw PreviewLoopError(.invalidArgument, "BlurHash takes 1 to 9 components a side, not \(xComponents)x\(yComponents)")
        }
        var factors: [(Float, Float, Float)] = []
        for y in 0..<yComponents {
            for x in 0..<xComponents {
                factors.append(basisProduct(image, x: x, y: y))
            }
        }
        let dc = factors[0]
        let ac = factors.dropFirst()
        var text = ""
        append(&text, (xComponents - 1) + (yComponents - 1) * 9, digits: 1)
        var maximum: Float = 1
        if ac.isEmpty {
            append(&text, 0, digits: 1)
        } else {
            var actual: Float = 0
            for factor in ac { actual = max(actual, abs(factor.0), abs(factor.1), abs(factor.2)) }
            let quantised = Int(max(0, min(82, Float(Double(actual * 166) - 0.5).rounded(.down))))
            maximum = (Float(quantised) + 1) / 166
            append(&text, quantised, digits: 1)
        }
        append(&text, (sRGB(dc.0) << 16) + (sRGB(dc.1) << 8) + sRGB(dc.2), digits: 4)
        for factor in ac {
            append(&text, quantise(factor.0, maximum) * 19 * 19 + quantise(factor.1, maximum) * 19 + quantise(factor.2, maximum), digits: 2)
        }
        return text
    }

    /// The picture's linear RGB weighted by one cosine basis function, summed in image order.
    static func basisProduct(_ image: RGBImage, x component: Int, y row: Int) -> (Float, Float, Float) {
        let width = image.width, height = image.height
        var red: Float = 0, green: Float = 0, blue: Float = 0
        var across = [Float](repeating: 0, count: width)
        for x in 0..<width { across[x] = cos(Float(Double.pi * Double(component) * Double(x) / Double(width))) }
        image.pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<height {
                let down = cos(Float(Double.pi * Double(row) * Double(y) / Double(height)))
                for x in 0..<width {
                    let basis = across[x] * down
                    let index = (y * width + x) * 3
                    red += basis * linear[Int(pixels[index])]
                    green += basis * linear[Int(pixels[index + 1])]
                    blue += basis * linear[Int(pixels[index + 2])]
                }
            }
        }
        let normalisation: Float = component == 0 && row == 0 ? 1 : 2
        let scale = normalisation / Float(width * height)
        return (red * scale, green * scale, blue * scale)
    }

    /// sRGB byte → linear light, for each byte value.
    static let linear: [Float] = (0...255).map { value in
        let v = Float(value) / 255
        if Double(v) <= 0.04045 { return Float(Double(v) / 12.92) }
        return pow(Float((Double(v) + 0.055) / 1.055), Float(2.4))
    }

    /// Linear light → sRGB byte, clamped.
    static func sRGB(_ value: Float) -> Int {
        let v = max(0, min(1, value))
        if Double(v) <= 0.0031308 { return Int(Double(v) * 12.92 * 255 + 0.5) }
        return Int((1.055 * Double(pow(v, Float(Double(1) / 2.4))) - 0.055) * 255 + 0.5)
    }

    /// An AC component on 0...18: the signed square root of its share of the maximum.
    static func quantise(_ value: Float, _ maximum: Float) -> Int {
        let share = value / maximum
        let root = Float(sign: share.sign, exponent: 0, significand: 1) * pow(abs(share), Float(0.5))
        return Int(max(0, min(18, Float(Double(root * 9) + 9.5).rounded(.down))))
    }

    /// The base-83 alphabet.
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    /// Appends `value` as `digits` base-83 digits, most significant first.
    static func append(_ text: inout String, _ value: Int, digits: Int) {
        var divisor = 1
        for _ in 1..<max(digits, 1) { divisor *= 83 }
        for _ in 0..<digits {
            text.append(alphabet[(value / divisor) % 83])
            divisor /= 83
        }
    }
}
