import Glibc

/// ThumbHash (Evan Wallace's image placeholder): the picture's lightness as up to 7x7 cosine
/// components and its two colour-difference channels as 3x3, with the average colour and the
/// aspect ratio, packed in about 25 bytes that a page decodes to a blurred picture.
///
/// Written from the published description of the format. The picture here is always opaque, so the
/// alpha channel is never encoded. Rounding follows the description's `Math.round` (halves up).
public enum ThumbHash {
    /// The largest side ThumbHash accepts: a bigger picture is downscaled first
    /// (``ImagePlaceholder/hashedPicture(of:)``).
    public static let maximumSide = 100

    /// The hash bytes of an opaque picture of at most ``maximumSide`` pixels a side.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for a picture larger than that.
    public static func encode(_ image: RGBImage) throws(PreviewLoopError) -> [UInt8] {
        let width = image.width, height = image.height
        guard width <= maximumSide, height <= maximumSide else {
            throw PreviewLoopError(.invalidArgument, "ThumbHash encodes pictures of at most \(maximumSide)x\(maximumSide), not \(width)x\(height)")
        }
        let count = width * height
        // Opaque: alpha is 1 everywhere, each channel is value / 255 and the average is plain.
        var sums = (red: 0.0, green: 0.0, blue: 0.0)
        let unit = 1.0 / 255.0
        for index in 0..<count {
            sums.red += unit * Double(image.pixels[index * 3])
            sums.green += unit * Double(image.pixels[index * 3 + 1])
            sums.blue += unit * Double(image.pixels[index * 3 + 2])
        }
        let lightnessLimit = 7.0
        let longest = Double(max(width, height))
        let lightnessX = max(1, Int(roundHalfUp(lightnessLimit * Double(width) / longest)))
        let lightnessY = max(1, Int(roundHalfUp(lightnessLimit * Double(height) / longest)))

        var lightness = [Double](repeating: 0, count: count)
        var yellowBlue = [Double](repeating: 0, count: count)
        var redGreen = [Double](repeating: 0, count: count)
        for index in 0..<count {
            let red = unit * Double(image.pixels[index * 3])
            let green = unit * Double(image.pixels[index * 3 + 1])
            let blue = unit * Double(image.pixels[index * 3 + 2])
            lightness[index] = (red + green + blue) / 3
            yellowBlue[index] = (red + green) / 2 - blue
            redGreen[index] = red - green
        }
        let l = channel(lightness, width: width, height: height, nx: max(3, lightnessX), ny: max(3, lightnessY))
        let p = channel(yellowBlue, width: width, height: height, nx: 3, ny: 3)
        let q = channel(redGreen, width: width, height: height, nx: 3, ny: 3)

        let isLandscape = width > height
        let header24 = Int(roundHalfUp(63 * l.dc)) | (Int(roundHalfUp(31.5 + 31.5 * p.dc)) << 6)
            | (Int(roundHalfUp(31.5 + 31.5 * q.dc)) << 12) | (Int(roundHalfUp(31 * l.scale)) << 18)
        let header16 = (isLandscape ? lightnessY : lightnessX) | (Int(roundHalfUp(63 * p.scale)) << 3)
            | (Int(roundHalfUp(63 * q.scale)) << 9) | ((isLandscape ? 1 : 0) << 15)
        var hash: [UInt8] = [UInt8(header24 & 255), UInt8((header24 >> 8) & 255), UInt8(header24 >> 16),
                             UInt8(header16 & 255), UInt8(header16 >> 8)]
        var isOdd = false
        for value in l.ac + p.ac + q.ac {
            let nibble = UInt8(Int(roundHalfUp(15 * value)))
            if isOdd { hash[hash.count - 1] |= nibble << 4 } else { hash.append(nibble) }
            isOdd.toggle()
        }
        return hash
    }

    /// One channel's cosine components: the constant term, the others mapped to 0...1 and their
    /// largest magnitude. Components are taken while `cx * ny < nx * (ny - cy)` (a triangle).
    static func channel(_ values: [Double], width: Int, height: Int, nx: Int, ny: Int)
        -> (dc: Double, ac: [Double], scale: Double) {
        var dc = 0.0
        var ac: [Double] = []
        var scale = 0.0
        var fx = [Double](repeating: 0, count: width)
        for cy in 0..<ny {
            var cx = 0
            while cx * ny < nx * (ny - cy) {
                var f = 0.0
                for x in 0..<width { fx[x] = cos(Double.pi / Double(width) * Double(cx) * (Double(x) + 0.5)) }
                for y in 0..<height {
                    let fy = cos(Double.pi / Double(height) * Double(cy) * (Double(y) + 0.5))
                    for x in 0..<width { f += values[x + y * width] * fx[x] * fy }
                }
                f /= Double(width * height)
                if cx > 0 || cy > 0 {
                    ac.append(f)
                    scale = max(scale, abs(f))
                } else {
                    dc = f
                }
                cx += 1
            }
        }
        if scale > 0 {
            for index in ac.indices { ac[index] = 0.5 + 0.5 / scale * ac[index] }
        }
        return (dc, ac, scale)
    }

    /// JavaScript's `Math.round` for the values rounded here (none is negative): the nearest integer,
    /// halves up.
    static func roundHalfUp(_ value: Double) -> Double { value.rounded(.toNearestOrAwayFromZero) }
}
