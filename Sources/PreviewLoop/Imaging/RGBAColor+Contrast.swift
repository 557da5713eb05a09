import Glibc

// Luminance and contrast as WCAG 2 defines them, for choosing colours that stay visible (the card's
// play button over any poster).

extension RGBAColor {
    /// The colour's relative luminance as WCAG 2 defines it (its alpha ignored): the sRGB channels
    /// made linear, weighted 0.2126 red, 0.7152 green, 0.0722 blue; 0 for black, 1 for white.
    public var relativeLuminance: Double {
        Self.relativeLuminance(red: red, green: green, blue: blue)
    }

    /// The relative luminance of an sRGB pixel (see ``relativeLuminance``).
    static func relativeLuminance(red: UInt8, green: UInt8, blue: UInt8) -> Double {
        let linear = Self.linearChannel
        return 0.2126 * linear[Int(red)] + 0.7152 * linear[Int(green)] + 0.0722 * linear[Int(blue)]
    }

    /// The contrast ratio of two relative luminances as WCAG 2 defines it: (lighter + 0.05) ÷ (darker
    /// + 0.05), from 1 (the same) to 21 (black and white). WCAG asks 3:1 of a control's boundary and of
    /// large text, 4.5:1 of other text.
    public static func contrastRatio(_ first: Double, _ second: Double) -> Double {
        (max(first, second) + 0.05) / (min(first, second) + 0.05)
    }

    /// Each 8-bit sRGB value made linear (IEC 61966-2-1: below 0.04045 ÷ 12.92, else ((v + 0.055) ÷ 1.055)^2.4).
    static let linearChannel: [Double] = (0...255).map { byte in
        let value = Double(byte) / 255
        return value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }
}
