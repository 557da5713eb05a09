/// An RGBA picture owned by Swift: `height` rows of `width` pixels, top row first, four bytes (red,
/// green, blue, alpha) per pixel, with straight (not premultiplied) alpha.
///
/// The compositor's canvas: overlays, masks and cross-fades work on it (see `RGBAImage+Compositing`),
/// and ``flattened(on:)`` turns it into an ``RGBImage`` for formats without transparency.
public struct RGBAImage: Hashable, Sendable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Bytes from one row to the next: always `width * 4`.
    public var bytesPerRow: Int { width * 4 }
    /// The pixels, `height * bytesPerRow` bytes.
    public var pixels: [UInt8]

    /// An image of the given size filled with one colour (transparent by default).
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` unless both sides are 1 to
    ///   ``RGBImage/maximumSide`` pixels.
    public init(width: Int, height: Int, color: RGBAColor = .clear) throws(PreviewLoopError) {
        try RGBImage.checkSize(width: width, height: height)
        self.init(uncheckedWidth: width, height: height, color: color)
    }

    /// An image whose size the caller has already checked, filled with one colour.
    init(uncheckedWidth width: Int, height: Int, color: RGBAColor = .clear) {
        self.width = width
        self.height = height
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        if color != .clear {
            pixels.withUnsafeMutableBufferPointer { buffer in
                for offset in stride(from: 0, to: buffer.count, by: 4) {
                    buffer[offset] = color.red
                    buffer[offset + 1] = color.green
                    buffer[offset + 2] = color.blue
                    buffer[offset + 3] = color.alpha
                }
            }
        }
        self.pixels = pixels
    }

    /// An image over existing RGBA pixels; `pixels.count` must be `width * height * 4`.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for a side outside 1 to
    ///   ``RGBImage/maximumSide``, or a pixel count that does not match the size.
    public init(width: Int, height: Int, pixels: [UInt8]) throws(PreviewLoopError) {
        try RGBImage.checkSize(width: width, height: height)
        guard pixels.count == width * height * 4 else {
            throw PreviewLoopError(.invalidArgument, "a \(width)x\(height) RGBA image needs \(width * height * 4) bytes, not \(pixels.count)")
        }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The same picture, fully opaque.
    public init(_ image: RGBImage) {
        width = image.width
        height = image.height
        var pixels = [UInt8](repeating: 255, count: image.width * image.height * 4)
        pixels.withUnsafeMutableBufferPointer { destination in
            image.pixels.withUnsafeBufferPointer { source in
                for pixel in 0..<(image.width * image.height) {
                    destination[pixel * 4] = source[pixel * 3]
                    destination[pixel * 4 + 1] = source[pixel * 3 + 1]
                    destination[pixel * 4 + 2] = source[pixel * 3 + 2]
                }
            }
        }
        self.pixels = pixels
    }

    /// The image's size.
    public var size: Size { Size(width: width, height: height) }

    /// The colour of one pixel.
    public subscript(x: Int, y: Int) -> RGBAColor {
        let offset = y * bytesPerRow + x * 4
        return RGBAColor(red: pixels[offset], green: pixels[offset + 1], blue: pixels[offset + 2], alpha: pixels[offset + 3])
    }

    /// Whether every pixel is opaque.
    public var isOpaque: Bool {
        pixels.withUnsafeBufferPointer { buffer in
            stride(from: 3, to: buffer.count, by: 4).allSatisfy { buffer[$0] == 255 }
        }
    }

    /// The picture seen over `background` (whose own alpha is ignored: the result is opaque).
    public func flattened(on background: RGBAColor) -> RGBImage {
        var result = [UInt8](repeating: 0, count: width * height * 3)
        let back = (Int(background.red), Int(background.green), Int(background.blue))
        result.withUnsafeMutableBufferPointer { destination in
            pixels.withUnsafeBufferPointer { source in
                for pixel in 0..<(width * height) {
                    let alpha = Int(source[pixel * 4 + 3])
                    let inverse = 255 - alpha
                    destination[pixel * 3] = UInt8((Int(source[pixel * 4]) * alpha + back.0 * inverse + 127) / 255)
                    destination[pixel * 3 + 1] = UInt8((Int(source[pixel * 4 + 1]) * alpha + back.1 * inverse + 127) / 255)
                    destination[pixel * 3 + 2] = UInt8((Int(source[pixel * 4 + 2]) * alpha + back.2 * inverse + 127) / 255)
                }
            }
        }
        return RGBImage(uncheckedWidth: width, height: height, pixels: result)
    }
}

extension RGBAImage: CustomStringConvertible {
    /// One line, without the pixels: `RGBAImage(640x360, 921600 bytes)`.
    public var description: String { "RGBAImage(\(width)x\(height), \(pixels.count) bytes)" }
}
