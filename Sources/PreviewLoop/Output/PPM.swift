/// Binary PPM (`P6`, maxval 255): the simplest lossless image file, written and read in pure Swift.
public enum PPM {
    /// The file bytes for an image: the `P6` header, then the RGB24 rows.
    public static func encode(_ image: RGBImage) -> [UInt8] {
        var bytes = Array("P6\n\(image.width) \(image.height)\n255\n".utf8)
        bytes.reserveCapacity(bytes.count + image.pixels.count)
        bytes.append(contentsOf: image.pixels)
        return bytes
    }

    /// Reads a binary PPM with maxval 255 (comments in the header allowed).
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` when the bytes are not such a file.
    public static func decode(_ bytes: [UInt8]) throws(PreviewLoopError) -> RGBImage {
        var position = 0
        func fail() -> PreviewLoopError { PreviewLoopError(.invalidArgument, "not a binary PPM (P6, maxval 255) image") }
        func skipSpaceAndComments() {
            while position < bytes.count {
                if bytes[position] == UInt8(ascii: "#") {
                    while position < bytes.count && bytes[position] != UInt8(ascii: "\n") { position += 1 }
                } else if [9, 10, 13, 32].contains(bytes[position]) {
                    position += 1
                } else { return }
            }
        }
        func number() throws(PreviewLoopError) -> Int {
            skipSpaceAndComments()
            let start = position
            while position < bytes.count, (48...57).contains(bytes[position]) { position += 1 }
            guard position > start, position - start < 9 else { throw fail() }
            return Int(String(decoding: bytes[start..<position], as: UTF8.self))!
        }
        guard bytes.count > 2, bytes[0] == UInt8(ascii: "P"), bytes[1] == UInt8(ascii: "6") else { throw fail() }
        position = 2
        let width = try number(), height = try number(), maxValue = try number()
        guard width > 0, height > 0, width <= RGBImage.maximumSide, height <= RGBImage.maximumSide, maxValue == 255,
              position < bytes.count else { throw fail() }
        position += 1    // the single whitespace byte before the raster
        let count = width * height * 3
        guard bytes.count - position >= count else { throw fail() }
        return RGBImage(uncheckedWidth: width, height: height, pixels: Array(bytes[position..<position + count]))
    }
}
