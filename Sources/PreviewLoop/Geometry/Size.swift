/// A size in whole pixels, such as an output frame's width and height.
public struct Size: Hashable, Sendable, CustomStringConvertible {
    /// The width in pixels.
    public var width: Int
    /// The height in pixels.
    public var height: Int

    /// Creates a size from a width and a height in pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The number of pixels, `width * height`.
    public var area: Int { width * height }

    /// The same size with width and height exchanged (a quarter turn).
    public var transposed: Size { Size(width: height, height: width) }

    /// `WxH`, the spelling the CLI's `--size` accepts.
    public var description: String { "\(width)x\(height)" }

    /// Parses `WxH` (for example `320x180`); both sides must be positive integers no larger than 16384.
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
              (1...16384).contains(w), (1...16384).contains(h) else { return nil }
        self.init(width: w, height: h)
    }
}

/// A rectangle in whole pixels: an origin (top-left) and a size.
public struct Rect: Hashable, Sendable, CustomStringConvertible {
    /// The left edge, in pixels.
    public var x: Int
    /// The top edge, in pixels.
    public var y: Int
    /// The width, in pixels.
    public var width: Int
    /// The height, in pixels.
    public var height: Int

    /// Creates a rectangle from its origin and size.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The rectangle's size.
    public var size: Size { Size(width: width, height: height) }

    /// `WxH+X+Y`.
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// An exact ratio of two integers, such as a sample aspect ratio or a frame rate.
public struct Rational: Hashable, Sendable, CustomStringConvertible {
    /// The numerator.
    public var numerator: Int
    /// The denominator.
    public var denominator: Int

    /// Creates a ratio; a zero denominator makes the ratio undefined (see ``isDefined``).
    public init(_ numerator: Int, _ denominator: Int) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// Whether both terms are positive, i.e. the ratio is usable.
    public var isDefined: Bool { numerator > 0 && denominator > 0 }

    /// The ratio as a floating-point value, or `nil` when undefined.
    public var doubleValue: Double? { isDefined ? Double(numerator) / Double(denominator) : nil }

    /// `N:D`, as `ffprobe` prints aspect ratios.
    public var description: String { "\(numerator):\(denominator)" }
}
