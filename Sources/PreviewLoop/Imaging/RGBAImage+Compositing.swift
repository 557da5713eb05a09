// The compositor: drawing shapes and pictures over an RGBAImage, cutting it with masks, and blending
// two pictures (cross-fade, or through a mask for a reveal). Straight alpha throughout; every blend is
// computed on premultiplied values and stored straight again, rounded to the nearest.

extension RGBAImage {
    /// Paints `shape` in `color` over the picture ("source over"), anti-aliased, with the colour's
    /// alpha multiplied by `opacity` (0–1).
    public mutating func fill(_ shape: Shape, with color: RGBAColor, opacity: Double = 1) {
        let strength = Float(min(1, max(0, opacity))) * Float(color.alpha) / 255
        guard strength > 0 else { return }
        let (columns, rows) = shape.pixelBounds(in: size)
        let rowBytes = bytesPerRow
        let top = (Float(color.red), Float(color.green), Float(color.blue))
        pixels.withUnsafeMutableBufferPointer { buffer in
            for y in rows {
                for x in columns {
                    let alpha = strength * Float(shape.coverage(ofPixelX: x, y: y))
                    guard alpha > 0 else { continue }
                    Self.over(buffer.baseAddress! + y * rowBytes + x * 4, top, alpha)
                }
            }
        }
    }

    /// Draws `image` over this picture ("source over") with its top-left corner at (`x`, `y`) and its
    /// alpha multiplied by `opacity` (0–1); what falls outside is clipped.
    public mutating func draw(_ image: RGBAImage, atX x: Int, y: Int, opacity: Double = 1) {
        let strength = Float(min(1, max(0, opacity))) / 255
        let left = max(0, x), right = min(width, x + image.width)
        let top = max(0, y), bottom = min(height, y + image.height)
        guard left < right, top < bottom, strength > 0 else { return }
        let rowBytes = bytesPerRow, sourceRowBytes = image.bytesPerRow
        pixels.withUnsafeMutableBufferPointer { destination in
            image.pixels.withUnsafeBufferPointer { source in
                for row in top..<bottom {
                    for column in left..<right {
                        let from = source.baseAddress! + (row - y) * sourceRowBytes + (column - x) * 4
                        let alpha = Float(from[3]) * strength
                        guard alpha > 0 else { continue }
                        Self.over(destination.baseAddress! + row * rowBytes + column * 4,
                                  (Float(from[0]), Float(from[1]), Float(from[2])), alpha)
                    }
                }
            }
        }
    }

    /// Multiplies every pixel's alpha by the mask's coverage: what the mask does not cover becomes
    /// transparent (for example the corners outside a rounded rectangle).
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` when the mask's size is not the picture's.
    public mutating func apply(_ mask: CoverageMask) throws(PreviewLoopError) {
        guard mask.size == size else {
            throw PreviewLoopError(.invalidArgument, "the mask is \(mask.size), the picture \(size)")
        }
        pixels.withUnsafeMutableBufferPointer { buffer in
            mask.values.withUnsafeBufferPointer { coverage in
                for pixel in 0..<coverage.count where coverage[pixel] != 255 {
                    let alpha = Int(buffer[pixel * 4 + 3]), covered = Int(coverage[pixel])
                    buffer[pixel * 4 + 3] = UInt8((alpha * covered + 127) / 255)
                }
            }
        }
    }

    /// This picture blended towards `other`: each pixel is `other` in the proportion `amount` (0–1),
    /// times the mask's coverage when there is a mask, and this picture in the rest.
    ///
    /// A cross-fade is `blended(with: next, amount: t)`; a reveal through a shape is
    /// `blended(with: next, through: CoverageMask(shape, size: size))`.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` when `other` or the mask is not of this size.
    public func blended(with other: RGBAImage, through mask: CoverageMask? = nil, amount: Double = 1) throws(PreviewLoopError) -> RGBAImage {
        guard other.size == size, mask.map({ $0.size == size }) ?? true else {
            throw PreviewLoopError(.invalidArgument, "blending \(other.size)\(mask.map { " through a \($0.size) mask" } ?? "") into \(size)")
        }
        let amount = Float(min(1, max(0, amount)))
        var result = self
        result.pixels.withUnsafeMutableBufferPointer { destination in
            other.pixels.withUnsafeBufferPointer { source in
                let weights = mask?.values ?? []
                weights.withUnsafeBufferPointer { coverage in
                    for pixel in 0..<(width * height) {
                        let weight = coverage.isEmpty ? amount : amount * Float(coverage[pixel]) / 255
                        guard weight > 0 else { continue }
                        let to = destination.baseAddress! + pixel * 4, from = source.baseAddress! + pixel * 4
                        if weight >= 1 {
                            to.update(from: from, count: 4)
                            continue
                        }
                        let alphaA = Float(to[3]) * (1 - weight), alphaB = Float(from[3]) * weight
                        let alpha = alphaA + alphaB
                        guard alpha > 0 else {
                            to[3] = 0
                            continue
                        }
                        for channel in 0..<3 {
                            let mixed: Float = (Float(to[channel]) * alphaA + Float(from[channel]) * alphaB) / alpha
                            to[channel] = UInt8(min(255, mixed + 0.5))
                        }
                        to[3] = UInt8(min(255, alpha + 0.5))
                    }
                }
            }
        }
        return result
    }

    /// "Source over" for one pixel: a colour of opacity `alpha` (0–1) over the straight-alpha pixel at `pixel`.
    @inline(__always)
    private static func over(_ pixel: UnsafeMutablePointer<UInt8>, _ color: (Float, Float, Float), _ alpha: Float) {
        let below = Float(pixel[3]) / 255 * (1 - alpha)
        let total = alpha + below
        guard total > 0 else { return }
        let red: Float = (color.0 * alpha + Float(pixel[0]) * below) / total
        let green: Float = (color.1 * alpha + Float(pixel[1]) * below) / total
        let blue: Float = (color.2 * alpha + Float(pixel[2]) * below) / total
        pixel[0] = UInt8(min(255, red + 0.5))
        pixel[1] = UInt8(min(255, green + 0.5))
        pixel[2] = UInt8(min(255, blue + 0.5))
        pixel[3] = UInt8(min(255, total * 255 + 0.5))
    }
}
