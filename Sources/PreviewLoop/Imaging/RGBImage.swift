/// An RGB24 picture owned by Swift: `height` rows of `bytesPerRow` bytes, top row first, three bytes
/// (red, green, blue) per pixel.
public struct RGBImage: Hashable, Sendable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Bytes from one row to the next: always `width * 3` (rows are tightly packed).
    public var bytesPerRow: Int { width * 3 }
    /// The pixels, `height * bytesPerRow` bytes.
    public var pixels: [UInt8]

    /// A black image of the given size.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` unless both sides are 1 to ``maximumSide``
    ///   pixels.
    public init(width: Int, height: Int) throws(PreviewLoopError) {
        try Self.checkSize(width: width, height: height)
        self.init(uncheckedWidth: width, height: height)
    }

    /// An image over existing RGB24 pixels; `pixels.count` must be `width * height * 3`.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for a side outside 1 to ``maximumSide``, or a
    ///   pixel count that does not match the size.
    public init(width: Int, height: Int, pixels: [UInt8]) throws(PreviewLoopError) {
        try Self.checkSize(width: width, height: height)
        guard pixels.count == width * height * 3 else {
            throw PreviewLoopError(.invalidArgument, "a \(width)x\(height) RGB image needs \(width * height * 3) bytes, not \(pixels.count)")
        }
        self.init(uncheckedWidth: width, height: height, pixels: pixels)
    }

    /// A black image whose size the caller has already checked (a scaler's, a layout's).
    init(uncheckedWidth width: Int, height: Int) {
        self.width = width
        self.height = height
        self.pixels = [UInt8](repeating: 0, count: width * height * 3)
    }

    /// An image over pixels whose count the caller has already checked.
    init(uncheckedWidth width: Int, height: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The largest side an image may have: JPEG's limit, far beyond any preview. Refusing more keeps
    /// `width * height * 4` from overflowing and an absurd request from allocating.
    public static let maximumSide = 65_535

    /// Both sides 1 to ``maximumSide``.
    static func checkSize(width: Int, height: Int) throws(PreviewLoopError) {
        guard (1...maximumSide).contains(width), (1...maximumSide).contains(height) else {
            throw PreviewLoopError(.invalidArgument, "an image needs 1 to \(maximumSide) pixels a side, not \(width)x\(height)")
        }
    }

    /// The image's size.
    public var size: Size { Size(width: width, height: height) }

    /// The red, green and blue values of one pixel.
    public subscript(x: Int, y: Int) -> (red: UInt8, green: UInt8, blue: UInt8) {
        let offset = y * bytesPerRow + x * 3
        return (pixels[offset], pixels[offset + 1], pixels[offset + 2])
    }

    /// Copies `image` into this one with its top-left corner at (`x`, `y`); what falls outside is clipped.
    public mutating func draw(_ image: RGBImage, atX x: Int, y: Int) {
        let left = max(0, x), right = min(width, x + image.width)
        let top = max(0, y), bottom = min(height, y + image.height)
        guard left < right, top < bottom else { return }
        let rowBytes = (right - left) * 3
        let destinationRowBytes = bytesPerRow, sourceRowBytes = image.bytesPerRow
        pixels.withUnsafeMutableBytes { destination in
            image.pixels.withUnsafeBytes { source in
                for row in top..<bottom {
                    let to = destination.baseAddress! + row * destinationRowBytes + left * 3
                    let from = source.baseAddress! + (row - y) * sourceRowBytes + (left - x) * 3
                    to.copyMemory(from: from, byteCount: rowBytes)
                }
            }
        }
    }

    /// Tiles images left to right, top to bottom, `columns` per row, with no gaps; every tile takes the
    /// size of the first image (smaller ones are drawn at their cell's top-left on black).
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for no images, fewer than one column, or a
    ///   result over ``maximumSide`` pixels a side.
    public static func tiled(_ images: [RGBImage], columns: Int) throws(PreviewLoopError) -> RGBImage {
        guard !images.isEmpty, columns > 0 else {
            throw PreviewLoopError(.invalidArgument, "tiling needs images (\(images.count)) and at least one column (\(columns))")
        }
        let cell = images[0].size
        let columns = min(columns, images.count)
        let rows = (images.count + columns - 1) / columns
        var sheet = try RGBImage(width: cell.width * columns, height: cell.height * rows)
        for (index, image) in images.enumerated() {
            sheet.draw(image, atX: (index % columns) * cell.width, y: (index / columns) * cell.height)
        }
        return sheet
    }
}

extension RGBImage: CustomStringConvertible {
    /// One line, without the pixels: `RGBImage(640x360, 691200 bytes)`.
    public var description: String { "RGBImage(\(width)x\(height), \(pixels.count) bytes)" }
}
