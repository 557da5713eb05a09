import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

@Suite("ColorPalette: median cut and Floyd–Steinberg mapping (pure Swift)")
struct PaletteTests {
    /// The picture a palette and its indices show.
    func rebuild(_ indices: [UInt8], _ palette: ColorPalette, like image: RGBImage) -> RGBImage {
        var pixels: [UInt8] = []
        for index in indices {
            let color = palette.colors[Int(index)]
            pixels += [color.red, color.green, color.blue]
        }
        return try! RGBImage(width: image.width, height: image.height, pixels: pixels)
    }

    @Test("Up to 256 well-separated colours come back exactly, with no dithering noise")
    func exactColours() throws {
        var image = try RGBImage(width: 40, height: 30)
        var generator = SystemRandomNumberGenerator()
        // Each colour in its own 8-level cell of the histogram.
        let colours: [(UInt8, UInt8, UInt8)] = (0..<200).map { (index: Int) -> (UInt8, UInt8, UInt8) in
            let red = index % 8 * 32 + 3, green = index / 8 % 5 * 48 + 5, blue = index / 40 * 48 + 7
            return (UInt8(red), UInt8(green), UInt8(blue))
        }
        for pixel in 0..<(image.width * image.height) {
            let colour = colours[Int.random(in: 0..<colours.count, using: &generator)]
            image.pixels[pixel * 3] = colour.0; image.pixels[pixel * 3 + 1] = colour.1; image.pixels[pixel * 3 + 2] = colour.2
        }
        let palette = try ColorPalette(representing: [image], sampleStride: 1)
        #expect(palette.colors.count <= 256)
        #expect(rebuild(palette.indices(for: image), palette, like: image) == image)
    }

    @Test("A smooth gradient keeps its local averages under dithering, and the error stays small")
    func gradient() throws {
        var image = try RGBImage(width: 256, height: 32)
        for y in 0..<32 {
            for x in 0..<256 {
                let offset = (y * 256 + x) * 3
                image.pixels[offset] = UInt8(x)
                image.pixels[offset + 1] = UInt8(255 - x)
                image.pixels[offset + 2] = UInt8(y * 8)
            }
        }
        let palette = try ColorPalette(representing: [image], maximumCount: 16)
        #expect(palette.colors.count == 16)
        let mapped = rebuild(palette.indices(for: image), palette, like: image)
        let original = Compare.channelMeans(image), dithered = Compare.channelMeans(mapped)
        #expect(abs(original.0 - dithered.0) < 1 && abs(original.1 - dithered.1) < 1 && abs(original.2 - dithered.2) < 1)
        // 16 colours for 8192 distinct ones: dithering trades per-pixel error for the right averages.
        #expect(Compare.psnr(mapped, image) > 20)
    }

    @Test("The palette follows the pixels it is given and never exceeds its size")
    func sizes() throws {
        var image = try RGBImage(width: 8, height: 8)
        for index in stride(from: 0, to: image.pixels.count / 2, by: 1) { image.pixels[index] = 255 }
        let palette = try ColorPalette(representing: [image, image], maximumCount: 8, sampleStride: 1)
        #expect(Set(palette.colors) == [PaletteColor(red: 255, green: 255, blue: 255), PaletteColor(red: 0, green: 0, blue: 0)])
        #expect(palette.nearestIndex(red: 250, green: 240, blue: 255) == palette.colors.firstIndex(of: PaletteColor(red: 255, green: 255, blue: 255)))
    }
}
