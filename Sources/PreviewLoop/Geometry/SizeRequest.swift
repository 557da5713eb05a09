/// An output size as asked for: exact, one side with the source's shape, the source's own size, or a
/// default box that turns with the source.
///
/// Pure geometry: ``resolved(display:even:)`` turns it into pixels once the source's display size (after
/// rotation and sample aspect) is known.
public enum SizeRequest: Hashable, Sendable, CustomStringConvertible {
    /// Exactly this size (`320x180`).
    case exact(Size)
    /// This width; the height keeps the source's display aspect (`320`, `320x`, `320x-1`, `320x0`).
    case width(Int)
    /// This height; the width keeps the source's display aspect (`x180`, `-1x180`, `0x180`).
    case height(Int)
    /// The source's display size (`source`).
    case source
    /// The default: this box for a landscape or square source, the same box turned for a portrait one.
    case orientedBox(Size)

    /// The largest side accepted anywhere.
    public static let maximumSide = 16384

    /// Parses `WxH`, `W`, `Wx`, `xH`, `Wx-1`, `-1xH`, `Wx0`, `0xH` or `source`; each given side 1 to 16384.
    public init?(parsing text: String) {
        let lowered = text.lowercased()
        if lowered == "source" { self = .source; return }
        func side(_ part: Substring) -> Int? {
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(part),
                  (1...Self.maximumSide).contains(value) else { return nil }
            return value
        }
        func unset(_ part: Substring) -> Bool { part.isEmpty || part == "-1" || part == "0" }
        let parts = lowered.split(separator: "x", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            guard let width = side(parts[0]) else { return nil }
            self = .width(width)
        case 2:
            if let width = side(parts[0]), let height = side(parts[1]) {
                self = .exact(Size(width: width, height: height))
            } else if let width = side(parts[0]), unset(parts[1]) {
                self = .width(width)
            } else if unset(parts[0]), let height = side(parts[1]) {
                self = .height(height)
            } else {
                return nil
            }
        default:
            return nil
        }
    }

    /// `320x180`, `320x-1`, `-1x180`, `source`, or the box for the default.
    public var description: String {
        switch self {
        case .exact(let size), .orientedBox(let size): size.description
        case .width(let width): "\(width)x-1"
        case .height(let height): "-1x\(height)"
        case .source: "source"
        }
    }

    /// Whether the request is an explicit width and height.
    public var exactSize: Size? {
        if case .exact(let size) = self { size } else { nil }
    }

    /// The size in pixels for a source whose upright picture is `display` (square pixels).
    ///
    /// - Parameters:
    ///   - display: the source's upright display size (rotation and sample aspect ratio applied).
    ///   - even: round a computed side to an even number (H.264 4:2:0); an explicit side is kept.
    public func resolved(display: Size, even: Bool = false) -> Size {
        let displayWidth = Double(max(1, display.width)), displayHeight = Double(max(1, display.height))
        func computed(_ value: Double) -> Int {
            let limited = min(Double(Self.maximumSide), max(1, value))
            guard even else { return max(1, Int(limited.rounded())) }
            return max(2, Int((limited / 2).rounded()) * 2)
        }
        switch self {
        case .exact(let size):
            return size
        case .width(let width):
            return Size(width: width, height: computed(Double(width) * displayHeight / displayWidth))
        case .height(let height):
            return Size(width: computed(Double(height) * displayWidth / displayHeight), height: height)
        case .source:
            // Cut to the largest side, keeping the shape.
            let scale = min(1, Double(Self.maximumSide) / max(displayWidth, displayHeight))
            return Size(width: computed(displayWidth * scale), height: computed(displayHeight * scale))
        case .orientedBox(let box):
            let portraitBox = box.height > box.width
            let portraitSource = display.height > display.width
            return portraitBox == portraitSource || display.height == display.width ? box : box.transposed
        }
    }

    /// The request with each side it names multiplied by `factor` (a device pixel ratio) and rounded, at
    /// least 1 pixel; ``source`` stays as it is.
    public func scaled(by factor: Double) -> SizeRequest {
        func side(_ value: Int) -> Int { max(1, Int((Double(value) * factor).rounded())) }
        return switch self {
        case .exact(let size): .exact(Size(width: side(size.width), height: side(size.height)))
        case .orientedBox(let size): .orientedBox(Size(width: side(size.width), height: side(size.height)))
        case .width(let width): .width(side(width))
        case .height(let height): .height(side(height))
        case .source: .source
        }
    }
}
