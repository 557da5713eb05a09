import Glibc

/// A 64-bit perceptual hash (pHash) of a picture: pictures that look alike — the same frame encoded
/// at another bitrate or size — have hashes a few bits apart (``distance(to:)``), unrelated pictures
/// about 32.
///
/// The algorithm of PyPI's `imagehash.phash` (version 4.3.2, on Pillow): the picture reduced to grey
/// with ITU-R 601 weights in 16-bit fixed point (`(19595 R + 38470 G + 7471 B + 32768) >> 16`, as
/// Pillow's `convert("L")`), resized to 32x32 with Pillow's Lanczos filter (support 3, widened by the
/// reduction factor, coefficients in 22-bit fixed point, each pass rounded and clipped to 0–255; the
/// vertical pass first when the height shrinks by more than twice as many pixels as the width, as
/// Pillow 13 orders them), a 2-D DCT-II of that, and of its top-left 8x8 coefficients (the
/// lowest frequencies, the constant term included) each bit set when the coefficient is above their
/// median (the mean of the two middle values). Bits run row by row, the first the most significant,
/// so ``description`` is the 16 hex digits `str(imagehash.phash(image))` prints.
///
/// Equal to the reference bit for bit on the same pixels (checked against `imagehash` 4.3.2 on
/// Pillow 13 by `PerceptualHashOracleTests`). A picture of one colour has AC coefficients of exactly 0
/// in the reference; here a coefficient under 10⁻⁹ counts as 0 so that rounding cannot make it differ,
/// and such a picture hashes to `8000000000000000` (black, whose constant term is 0 too, to
/// `0000000000000000`), as in the reference. Pillow before 13 always resized horizontally first, so
/// with it a picture whose height shrinks by more than twice as many pixels as its width may differ
/// by a few bits.
public struct PerceptualHash: Hashable, Sendable, CustomStringConvertible {
    /// The 64 bits, the top-left DCT coefficient's the most significant.
    public var bits: UInt64

    /// The side of the grey picture the DCT runs on.
    public static let reducedSide = 32
    /// The side of the block of lowest frequencies that gives the bits.
    public static let blockSide = 8

    /// A hash already computed.
    public init(bits: UInt64) {
        self.bits = bits
    }

    /// The hash of 16 hex digits (either case), as ``description`` writes it; `nil` for anything else.
    public init?(hex: String) {
        guard hex.utf8.count == 16, hex.allSatisfy(\.isHexDigit), let value = UInt64(hex, radix: 16) else { return nil }
        bits = value
    }

    /// The hash of a picture of any size (at least 1x1).
    public init(_ image: RGBImage) {
        let grey = Self.reducedGrey(image)
        let side = Self.reducedSide, block = Self.blockSide
        let cosines = Self.cosines
        // DCT-II along the columns (axis 0), then along the rows, of the 8 lowest frequencies only:
        // X[k] = Σ x[n] cos(π k (2n + 1) / 2N) (SciPy's unnormalised type II has a factor 2 more,
        // which leaves the comparison with the median alone).
        var columns = [Double](repeating: 0, count: block * side)  // [k][x]: frequency k down column x
        for k in 0..<block {
            for x in 0..<side {
                var sum = 0.0
                for y in 0..<side { sum += Double(grey[y * side + x]) * cosines[k * side + y] }
                columns[k * side + x] = sum
            }
        }
        var coefficients = [Double](repeating: 0, count: block * block)
        for k in 0..<block {
            for l in 0..<block {
                var sum = 0.0
                for x in 0..<side { sum += columns[k * side + x] * cosines[l * side + x] }
                coefficients[k * block + l] = abs(sum) < Self.noise ? 0 : sum
            }
        }
        let sorted = coefficients.sorted()
        let median = (sorted[block * block / 2 - 1] + sorted[block * block / 2]) / 2
        var bits: UInt64 = 0
        for coefficient in coefficients { bits = bits << 1 | (coefficient > median ? 1 : 0) }
        self.bits = bits
    }

    /// The hash of the part of `image` inside `region` (a tile of a sheet), cut to the picture; the
    /// whole picture when nothing of `region` lies in it.
    public init(_ image: RGBImage, region: Rect) {
        let left = max(0, region.x), top = max(0, region.y)
        let right = min(image.width, region.x + region.width), bottom = min(image.height, region.y + region.height)
        guard right > left, bottom > top else {
            self.init(image)
            return
        }
        var pixels = [UInt8]()
        pixels.reserveCapacity((right - left) * (bottom - top) * 3)
        for row in top..<bottom { pixels += image.pixels[((row * image.width + left) * 3)..<((row * image.width + right) * 3)] }
        self.init(RGBImage(uncheckedWidth: right - left, height: bottom - top, pixels: pixels))
    }

    /// The number of bits that differ, 0 (alike) to 64.
    public func distance(to other: PerceptualHash) -> Int { (bits ^ other.bits).nonzeroBitCount }

    /// The 16 lowercase hex digits, zero-padded (`imagehash`'s `str`).
    public var description: String {
        let digits = String(bits, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Coefficients smaller than this are rounding noise of a flat picture (the smallest real one of a
    /// picture with any detail is above 10⁻³).
    static let noise = 1e-9

    /// cos(π k (2n + 1) / 2N) for k below 8, n below 32, row k.
    private static let cosines: [Double] = (0..<blockSide).flatMap { k in
        (0..<reducedSide).map { n in cos(Double.pi * Double(k) * Double(2 * n + 1) / Double(2 * reducedSide)) }
    }

    /// The picture in grey at 32x32, as Pillow's `convert("L").resize((32, 32), LANCZOS)` makes it.
    static func reducedGrey(_ image: RGBImage) -> [UInt8] {
        let width = image.width, height = image.height
        var grey = [UInt8](repeating: 0, count: width * height)
        image.pixels.withUnsafeBufferPointer { rgb in
            for index in 0..<(width * height) {
                let value = Int(rgb[3 * index]) * 19595 + Int(rgb[3 * index + 1]) * 38470 + Int(rgb[3 * index + 2]) * 7471 + 0x8000
                grey[index] = UInt8(value >> 16)
            }
        }
        let side = reducedSide
        var rows = height, columns = width
        // Pillow resamples only along an axis whose size changes, one pass an axis, each rounded to
        // 8 bits; the vertical pass comes first when the height shrinks by more than twice as many
        // pixels as the width does (Pillow 13; the horizontal one always came first before).
        func horizontal() {
            let filter = LanczosCoefficients(input: columns, output: side)
            var out = [UInt8](repeating: 0, count: side * rows)
            for row in 0..<rows {
                for column in 0..<side { out[row * side + column] = filter.apply(column) { grey[row * columns + $0] } }
            }
            grey = out
            columns = side
        }
        func vertical() {
            let filter = LanczosCoefficients(input: rows, output: side)
            var out = [UInt8](repeating: 0, count: columns * side)
            for row in 0..<side {
                for column in 0..<columns { out[row * columns + column] = filter.apply(row) { grey[$0 * columns + column] } }
            }
            grey = out
            rows = side
        }
        if height > side && height - side > 2 * (width - side) {
            vertical()
            if width != side { horizontal() }
        } else {
            if width != side { horizontal() }
            if height != side { vertical() }
        }
        return grey
    }
}

/// Pillow's Lanczos resampling weights along one axis (`precompute_coeffs` and
/// `normalize_coeffs_8bpc` of its `Resample.c`, re-derived): for each output sample, the first input
/// it reads and one 22-bit fixed-point weight per input it reads.
private struct LanczosCoefficients {
    /// Fixed-point precision of the weights (32 − 8 − 2 bits: 8 for the value, 2 of headroom).
    static let precisionBits = 22
    /// For each output sample: the first input sample and the weights from it on.
    var taps: [(first: Int, weights: [Int])]

    init(input: Int, output: Int) {
        let scale = Double(input) / Double(output)
        let filterScale = max(1, scale)
        let support = 3 * filterScale
        let inverseScale = 1 / filterScale
        func lanczos(_ x: Double) -> Double {
            guard x >= -3, x < 3 else { return 0 }
            func sinc(_ x: Double) -> Double { x == 0 ? 1 : sin(x * Double.pi) / (x * Double.pi) }
            return sinc(x) * sinc(x / 3)
        }
        taps = (0..<output).map { index in
            let center = (Double(index) + 0.5) * scale
            // C's (int) conversion truncates toward zero; the values are clamped after.
            let first = max(0, Int(center - support + 0.5))
            let end = min(input, Int(center + support + 0.5))
            let raw = (first..<max(first, end)).map { lanczos((Double($0) - center + 0.5) * inverseScale) }
            let total = raw.reduce(0, +)
            let unit = Double(1 << Self.precisionBits)
            let weights = raw.map { weight -> Int in
                let normalised = total != 0 ? weight / total : weight
                return normalised < 0 ? Int(-0.5 + normalised * unit) : Int(0.5 + normalised * unit)
            }
            return (first, weights)
        }
    }

    /// Output sample `index` from the inputs `value(i)`: rounded, clipped to 0–255.
    func apply(_ index: Int, _ value: (Int) -> UInt8) -> UInt8 {
        let tap = taps[index]
        var sum = 1 << (Self.precisionBits - 1)
        for (offset, weight) in tap.weights.enumerated() { sum += Int(value(tap.first + offset)) * weight }
        return UInt8(clamping: sum >> Self.precisionBits)
    }
}
