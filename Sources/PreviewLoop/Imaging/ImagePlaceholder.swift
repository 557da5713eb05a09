import FoundationEssentials

/// What a page can paint before an image arrives: a ThumbHash, a BlurHash and the dominant colour,
/// all computed from one small downscale of the picture (``hashedPicture(of:)``).
public struct ImagePlaceholder: Hashable, Sendable {
    /// The ThumbHash bytes in standard base64 with padding (about 36 characters).
    public var thumbHash: String
    /// The BlurHash with 4x3 components (``BlurHash/placeholderComponents``, 28 characters); fewer on
    /// a side of the hashed picture shorter than that (a 1x1 picture: 1x1, its colour exactly; a
    /// 100x1 strip: 4x1), where more would only repeat the constant term.
    public var blurHash: String
    /// The most common colour: the mean of the pixels in the fullest bucket of a histogram with 8
    /// levels per channel (512 buckets; the first bucket in red-green-blue order wins a tie). Opaque;
    /// its `description` is `#rrggbb`.
    public var dominantColor: RGBAColor

    /// Placeholders already computed (read back from a record).
    public init(thumbHash: String, blurHash: String, dominantColor: RGBAColor) {
        self.thumbHash = thumbHash
        self.blurHash = blurHash
        self.dominantColor = dominantColor
    }

    /// The placeholders of a picture of any size.
    public init(_ image: RGBImage) {
        let small = Self.hashedPicture(of: image)
        // The downscale fits ThumbHash's limit and 4x3 is within BlurHash's: neither can throw.
        let thumb = (try? ThumbHash.encode(small)) ?? []
        thumbHash = Data(thumb).base64EncodedString()
        blurHash = (try? BlurHash.encode(small, xComponents: min(BlurHash.placeholderComponents.x, small.width),
                                         yComponents: min(BlurHash.placeholderComponents.y, small.height))) ?? ""
        dominantColor = Self.dominantColor(of: small)
    }

    /// The longest side of the picture the placeholders are computed from.
    public static let hashedSide = ThumbHash.maximumSide

    /// The picture the placeholders are computed from: the image itself when neither side exceeds
    /// ``hashedSide``, else the image shrunk to fit ``hashedSide`` × ``hashedSide`` keeping its shape
    /// (the short side rounded, at least 1 pixel), each pixel the rounded mean of the source pixels
    /// whose columns and rows fall in it (a box filter on whole pixels).
    public static func hashedPicture(of image: RGBImage) -> RGBImage {
        let longest = max(image.width, image.height)
        guard longest > hashedSide else { return image }
        func scaled(_ side: Int) -> Int { max(1, min(hashedSide, (side * hashedSide * 2 + longest) / (longest * 2))) }
        let width = scaled(image.width), height = scaled(image.height)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        image.pixels.withUnsafeBufferPointer { source in
            for y in 0..<height {
                let top = y * image.height / height, bottom = (y + 1) * image.height / height
                for x in 0..<width {
                    let left = x * image.width / width, right = (x + 1) * image.width / width
                    var sums = (0, 0, 0)
                    for row in top..<bottom {
                        var index = (row * image.width + left) * 3
                        for _ in left..<right {
                            sums.0 += Int(source[index])
                            sums.1 += Int(source[index + 1])
                            sums.2 += Int(source[index + 2])
                            index += 3
                        }
                    }
                    let count = (bottom - top) * (right - left)
                    let out = (y * width + x) * 3
                    pixels[out] = UInt8((sums.0 + count / 2) / count)
                    pixels[out + 1] = UInt8((sums.1 + count / 2) / count)
                    pixels[out + 2] = UInt8((sums.2 + count / 2) / count)
                }
            }
        }
        return RGBImage(uncheckedWidth: width, height: height, pixels: pixels)
    }

    /// The mean colour of the fullest of 512 buckets (each channel's top 3 bits).
    static func dominantColor(of image: RGBImage) -> RGBAColor {
        var counts = [Int](repeating: 0, count: 512)
        var sums = [(Int, Int, Int)](repeating: (0, 0, 0), count: 512)
        let pixels = image.pixels
        for index in stride(from: 0, to: pixels.count, by: 3) {
            let red = Int(pixels[index]), green = Int(pixels[index + 1]), blue = Int(pixels[index + 2])
            let bucket = (red >> 5) << 6 | (green >> 5) << 3 | blue >> 5
            counts[bucket] += 1
            sums[bucket].0 += red
            sums[bucket].1 += green
            sums[bucket].2 += blue
        }
        var best = 0
        for bucket in counts.indices where counts[bucket] > counts[best] { best = bucket }
        let count = max(counts[best], 1)
        return RGBAColor(red: UInt8((sums[best].0 + count / 2) / count), green: UInt8((sums[best].1 + count / 2) / count),
                         blue: UInt8((sums[best].2 + count / 2) / count))
    }
}
