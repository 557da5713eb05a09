/// One colour of a palette.
public struct PaletteColor: Hashable, Sendable {
    /// Red, 0–255.
    public var red: UInt8
    /// Green, 0–255.
    public var green: UInt8
    /// Blue, 0–255.
    public var blue: UInt8

    /// Creates a colour.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }
}

/// Up to 256 colours chosen for a set of images, and the mapping of images onto them, as GIF needs.
///
/// The colours come from a variance-minimising median cut over a histogram of the images' pixels
/// (5 bits a channel, with each cell's exact mean kept), refined by two rounds of k-means; images
/// are mapped with Floyd–Steinberg error diffusion in serpentine order. Pure Swift.
public struct ColorPalette: Hashable, Sendable {
    /// The colours, at most 256.
    public private(set) var colors: [PaletteColor]

    /// A palette of the given colours (1 to 256 of them).
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for none or more than 256.
    public init(colors: [PaletteColor]) throws(PreviewLoopError) {
        guard (1...256).contains(colors.count) else {
            throw PreviewLoopError(.invalidArgument, "a palette has 1 to 256 colours, not \(colors.count)")
        }
        self.colors = colors
    }

    /// Chooses at most `maximumCount` colours that represent `images` well.
    ///
    /// - Parameters:
    ///   - images: the pictures the palette is for (for an animated GIF, all of its frames); at least one.
    ///   - maximumCount: the most colours, 1 to 256 (fewer when the pictures hold fewer).
    ///   - sampleStride: every `sampleStride`-th pixel of every `sampleStride`-th row is counted
    ///     (2 by default: a quarter of the pixels, plenty for a histogram and four times faster).
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for no images, a `maximumCount` outside 1 to
    ///   256 or a `sampleStride` below 1.
    public init(representing images: [RGBImage], maximumCount: Int = 256, sampleStride: Int = 2) throws(PreviewLoopError) {
        guard !images.isEmpty, (1...256).contains(maximumCount), sampleStride > 0 else {
            throw PreviewLoopError(.invalidArgument, "a palette needs images (\(images.count)), a colour count from 1 to 256 "
                + "(\(maximumCount)) and a sample stride of at least 1 (\(sampleStride))")
        }
        var histogram = Histogram()
        for image in images { histogram.add(image, stride: sampleStride) }
        var boxes = [histogram.box(of: histogram.occupiedCells)]
        while boxes.count < maximumCount {
            guard let widest = boxes.indices.filter({ boxes[$0].cells.count > 1 })
                .max(by: { boxes[$0].squaredError < boxes[$1].squaredError }),
                  boxes[widest].squaredError > 0 else { break }
            let (low, high) = histogram.split(boxes[widest])
            boxes[widest] = low
            boxes.append(high)
        }
        var means = boxes.map(\.mean)
        for _ in 0..<2 { means = histogram.refine(means) }
        colors = means.map { PaletteColor(red: UInt8($0.0.rounded()), green: UInt8($0.1.rounded()), blue: UInt8($0.2.rounded())) }
    }

    /// The index of the colour nearest to (`red`, `green`, `blue`) in squared RGB distance.
    public func nearestIndex(red: Int, green: Int, blue: Int) -> Int {
        var best = 0, bestDistance = Int.max
        for (index, color) in colors.enumerated() {
            let dr = red - Int(color.red), dg = green - Int(color.green), db = blue - Int(color.blue)
            let distance = dr * dr + dg * dg + db * db
            if distance < bestDistance {
                best = index
                bestDistance = distance
            }
        }
        return best
    }

    /// One palette index per pixel of `image`, row by row, with Floyd–Steinberg error diffusion
    /// (serpentine; the diffused value is clamped to 0–255 so errors cannot pile up on saturated areas).
    public func indices(for image: RGBImage) -> [UInt8] {
        var mapper = PaletteMapper(palette: self)
        return mapper.indices(for: image)
    }
}

/// Maps images onto a palette with Floyd–Steinberg dithering, caching nearest-colour answers per
/// 6-bit-a-channel cell (the cell's centre decides) across all the images it maps.
struct PaletteMapper {
    let palette: ColorPalette
    private let reds: [Int], greens: [Int], blues: [Int]
    private var cache = [UInt16](repeating: .max, count: 1 << 18)

    init(palette: ColorPalette) {
        self.palette = palette
        reds = palette.colors.map { Int($0.red) }
        greens = palette.colors.map { Int($0.green) }
        blues = palette.colors.map { Int($0.blue) }
    }

    /// One palette index per pixel, row by row; see ``ColorPalette/indices(for:)``.
    mutating func indices(for image: RGBImage) -> [UInt8] {
        let width = image.width, height = image.height
        var result = [UInt8](repeating: 0, count: width * height)
        // Errors carried to this row and the next, in 1/16 units, with one guard cell each side.
        var rows = [Int](repeating: 0, count: (width + 2) * 3 * 2)
        let (reds, greens, blues) = (self.reds, self.greens, self.blues)
        cache.withUnsafeMutableBufferPointer { cache in
            reds.withUnsafeBufferPointer { reds in
                greens.withUnsafeBufferPointer { greens in
                    blues.withUnsafeBufferPointer { blues in
                        image.pixels.withUnsafeBufferPointer { pixels in
                            result.withUnsafeMutableBufferPointer { output in
                                rows.withUnsafeMutableBufferPointer { rows in
                                    var current = rows.baseAddress!, next = rows.baseAddress! + (width + 2) * 3
                                    var ahead = 3
                                    /// Floyd–Steinberg: 7/16 ahead, 3/16 behind below, 5/16 below, 1/16 ahead below.
                                    func spread(_ error: Int, at position: Int) {
                                        current[position + ahead] += error * 7
                                        next[position - ahead] += error * 3
                                        next[position] += error * 5
                                        next[position + ahead] += error
                                    }
                                    for y in 0..<height {
                                        let leftToRight = y % 2 == 0
                                        ahead = leftToRight ? 3 : -3
                                        for step in 0..<width {
                                            let x = leftToRight ? step : width - 1 - step
                                            let offset = (y * width + x) * 3, cell = (x + 1) * 3
                                            let red = min(255, max(0, Int(pixels[offset]) + current[cell] / 16))
                                            let green = min(255, max(0, Int(pixels[offset + 1]) + current[cell + 1] / 16))
                                            let blue = min(255, max(0, Int(pixels[offset + 2]) + current[cell + 2] / 16))
                                            let key = (red >> 2) << 12 | (green >> 2) << 6 | (blue >> 2)
                                            var index = Int(cache[key])
                                            if index == Int(UInt16.max) {
                                                index = Self.nearest(red & ~3 | 2, green & ~3 | 2, blue & ~3 | 2, reds, greens, blues)
                                                cache[key] = UInt16(index)
                                            }
                                            output[y * width + x] = UInt8(index)
                                            spread(red - reds[index], at: cell)
                                            spread(green - greens[index], at: cell + 1)
                                            spread(blue - blues[index], at: cell + 2)
                                        }
                                        swap(&current, &next)
                                        next.update(repeating: 0, count: (width + 2) * 3)
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return result
    }

    private static func nearest(_ red: Int, _ green: Int, _ blue: Int, _ reds: UnsafeBufferPointer<Int>,
                                _ greens: UnsafeBufferPointer<Int>, _ blues: UnsafeBufferPointer<Int>) -> Int {
        var best = 0, bestDistance = Int.max
        for index in 0..<reds.count {
            let dr = red - reds[index], dg = green - greens[index], db = blue - blues[index]
            let distance = dr * dr + dg * dg + db * db
            if distance < bestDistance {
                best = index
                bestDistance = distance
            }
        }
        return best
    }
}

/// A set of histogram cells with their pixel count and sums, as the median cut splits them.
private struct ColorBox {
    var cells: [Int]
    var count = 0
    var sums = (0.0, 0.0, 0.0)
    var squares = (0.0, 0.0, 0.0)

    /// Per-channel variance times the count: how much colour the box's mean loses.
    var channelErrors: (Double, Double, Double) {
        guard count > 0 else { return (0, 0, 0) }
        let n = Double(count)
        return (squares.0 - sums.0 * sums.0 / n, squares.1 - sums.1 * sums.1 / n, squares.2 - sums.2 * sums.2 / n)
    }

    var squaredError: Double {
        let errors = channelErrors
        return errors.0 + errors.1 + errors.2
    }

    var mean: (Double, Double, Double) {
        let n = Double(max(1, count))
        return (sums.0 / n, sums.1 / n, sums.2 / n)
    }
}

/// Pixel counts, sums and sums of squares per 5-bit-a-channel RGB cell.
private struct Histogram {
    static let cellCount = 1 << 15
    var counts = [Int](repeating: 0, count: cellCount)
    var sums = [Double](repeating: 0, count: cellCount * 3)
    var squares = [Double](repeating: 0, count: cellCount * 3)

    static func cell(_ red: UInt8, _ green: UInt8, _ blue: UInt8) -> Int {
        Int(red >> 3) << 10 | Int(green >> 3) << 5 | Int(blue >> 3)
    }

    mutating func add(_ image: RGBImage, stride: Int) {
        image.pixels.withUnsafeBufferPointer { pixels in
            for y in Swift.stride(from: 0, to: image.height, by: stride) {
                for x in Swift.stride(from: 0, to: image.width, by: stride) {
                    let offset = (y * image.width + x) * 3
                    let red = pixels[offset], green = pixels[offset + 1], blue = pixels[offset + 2]
                    let cell = Self.cell(red, green, blue)
                    counts[cell] += 1
                    let r = Double(red), g = Double(green), b = Double(blue)
                    sums[cell * 3] += r; sums[cell * 3 + 1] += g; sums[cell * 3 + 2] += b
                    squares[cell * 3] += r * r; squares[cell * 3 + 1] += g * g; squares[cell * 3 + 2] += b * b
                }
            }
        }
    }

    var occupiedCells: [Int] { counts.indices.filter { counts[$0] > 0 } }

    func box(of cells: [Int]) -> ColorBox {
        var box = ColorBox(cells: cells)
        for cell in cells { add(cell, to: &box) }
        return box
    }

    func add(_ cell: Int, to box: inout ColorBox) {
        box.count += counts[cell]
        box.sums.0 += sums[cell * 3]; box.sums.1 += sums[cell * 3 + 1]; box.sums.2 += sums[cell * 3 + 2]
        box.squares.0 += squares[cell * 3]; box.squares.1 += squares[cell * 3 + 1]; box.squares.2 += squares[cell * 3 + 2]
    }

    /// Splits a box across its widest channel where the two halves lose the least colour.
    func split(_ box: ColorBox) -> (ColorBox, ColorBox) {
        let errors = box.channelErrors
        let channel = errors.0 >= errors.1 && errors.0 >= errors.2 ? 0 : (errors.1 >= errors.2 ? 1 : 2)
        let shift = 10 - 5 * channel
        let sorted = box.cells.sorted { ($0 >> shift) & 31 < ($1 >> shift) & 31 }
        var low = ColorBox(cells: []), best = (error: Double.infinity, at: 1)
        for position in 0..<(sorted.count - 1) {
            add(sorted[position], to: &low)
            var high = box
            high.count -= low.count
            high.sums = (box.sums.0 - low.sums.0, box.sums.1 - low.sums.1, box.sums.2 - low.sums.2)
            high.squares = (box.squares.0 - low.squares.0, box.squares.1 - low.squares.1, box.squares.2 - low.squares.2)
            let error = low.squaredError + high.squaredError
            if error < best.error { best = (error, position + 1) }
        }
        return (self.box(of: Array(sorted[..<best.at])), self.box(of: Array(sorted[best.at...])))
    }

    /// One k-means round: every occupied cell joins its nearest colour, which moves to its members' mean.
    func refine(_ means: [(Double, Double, Double)]) -> [(Double, Double, Double)] {
        typealias Total = (count: Double, red: Double, green: Double, blue: Double)
        var totals = [Total](repeating: (0, 0, 0, 0), count: means.count)
        for cell in occupiedCells {
            let n = Double(counts[cell])
            let red = sums[cell * 3] / n, green = sums[cell * 3 + 1] / n, blue = sums[cell * 3 + 2] / n
            var best = 0, bestDistance = Double.infinity
            for (index, mean) in means.enumerated() {
                let distance = (red - mean.0) * (red - mean.0) + (green - mean.1) * (green - mean.1) + (blue - mean.2) * (blue - mean.2)
                if distance < bestDistance {
                    best = index
                    bestDistance = distance
                }
            }
            totals[best].count += n
            totals[best].red += sums[cell * 3]; totals[best].green += sums[cell * 3 + 1]; totals[best].blue += sums[cell * 3 + 2]
        }
        return means.indices.map { index in
            let total = totals[index]
            return total.count > 0 ? (total.red / total.count, total.green / total.count, total.blue / total.count) : means[index]
        }
    }
}
