/// A colour with straight (not premultiplied) alpha, 8 bits per channel.
public struct RGBAColor: Hashable, Sendable, CustomStringConvertible {
    /// Red, 0–255.
    public var red: UInt8
    /// Green, 0–255.
    public var green: UInt8
    /// Blue, 0–255.
    public var blue: UInt8
    /// Opacity, 0 (transparent) to 255 (opaque).
    public var alpha: UInt8

    /// Creates a colour; opaque unless `alpha` says otherwise.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Opaque black.
    public static let black = RGBAColor(red: 0, green: 0, blue: 0)
    /// Opaque white.
    public static let white = RGBAColor(red: 255, green: 255, blue: 255)
    /// Fully transparent (black with alpha 0).
    public static let clear = RGBAColor(red: 0, green: 0, blue: 0, alpha: 0)

    /// Whether the colour hides what lies beneath it completely.
    public var isOpaque: Bool { alpha == 255 }

    /// The same colour with a new opacity.
    public func withAlpha(_ alpha: UInt8) -> RGBAColor {
        RGBAColor(red: red, green: green, blue: blue, alpha: alpha)
    }

    /// `#rrggbb`, or `#rrggbbaa` when not opaque: the spelling ``init(parsing:)`` reads.
    public var description: String {
        let channels = isOpaque ? [red, green, blue] : [red, green, blue, alpha]
        return "#" + channels.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    /// Parses `#rgb`, `#rrggbb`, `#rrggbbaa` (the `#` optional, any case) or one of the names `black`,
    /// `white` and `transparent`; `nil` for anything else.
    public init?(parsing text: String) {
        switch text.lowercased() {
        case "black": self = .black; return
        case "white": self = .white; return
        case "transparent", "clear": self = .clear; return
        default: break
        }
        var digits = Substring(text)
        if digits.hasPrefix("#") { digits = digits.dropFirst() }
        guard digits.allSatisfy(\.isHexDigit) else { return nil }
        if digits.count == 3 { digits = Substring(digits.flatMap { [$0, $0] }) }
        guard digits.count == 6 || digits.count == 8 else { return nil }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(red: bytes[0], green: bytes[1], blue: bytes[2], alpha: bytes.count == 4 ? bytes[3] : 255)
    }
}
