import PreviewLoop

/// Deterministic pictures for the placeholder and perceptual-hash tests.
package enum PlaceholderPictures {
    /// A diagonal colour gradient: red across, green down, blue against both.
    package static func gradient(width: Int, height: Int) throws -> RGBImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let index = (y * width + x) * 3
                pixels[index] = UInt8(x * 255 / max(width - 1, 1))
                pixels[index + 1] = UInt8(y * 255 / max(height - 1, 1))
                pixels[index + 2] = UInt8(255 - (x + y) * 255 / max(width + height - 2, 1))
            }
        }
        return try RGBImage(width: width, height: height, pixels: pixels)
    }

    /// Seeded noise over three vertical bars (red, grey, blue).
    package static func noisyBars(width: Int, height: Int, seed: UInt64 = 7) throws -> RGBImage {
        var generator = SeededGenerator(state: seed)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let bars: [(Int, Int, Int)] = [(200, 40, 40), (128, 128, 128), (30, 60, 210)]
        for y in 0..<height {
            for x in 0..<width {
                let bar = bars[min(2, x * 3 / width)]
                let index = (y * width + x) * 3
                for (offset, base) in [bar.0, bar.1, bar.2].enumerated() {
                    let noise = Int(generator.next() % 61) - 30
                    pixels[index + offset] = UInt8(max(0, min(255, base + noise)))
                }
            }
        }
        return try RGBImage(width: width, height: height, pixels: pixels)
    }
}
