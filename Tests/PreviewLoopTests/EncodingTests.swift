import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

@Suite("Image encoders: PNG, JPEG and WebP through libavcodec, checked with ffmpeg")
struct EncodingTests {
    /// The hover-preview size. WebP's lossy layout is always 4:2:0, which caps a testsrc2 frame near
    /// 30 dB at 320x180 whatever the quality (downscaled colour edges); at 480x270 it reaches 35 dB.
    static let size = Size(width: 480, height: 270)

    /// An engine frame of the landscape fixture: testsrc2, sharp edges and saturated colours.
    static func engineFrame(at seconds: Double = 1.48) throws -> RGBImage {
        try FrameSampler(source: .file(TestPaths.fixture("landscape.mp4"))).frame(at: seconds, size: size).image
    }

    static func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let path = TestPaths.temporaryDirectory() + "/" + name
        try AtomicFile.write(bytes, to: path)
        return path
    }

    @Test("Lossless formats decode to exactly the engine's pixels", arguments: [ImageFileFormat.png, .ppm])
    func lossless(format: ImageFileFormat) throws {
        let image = try Self.engineFrame()
        let path = try Self.write(try ImageEncoder.encode(image, as: format), "still." + format.fileExtensions[0])
        let report = try WebOracle.probe(path)
        #expect(report.codec == (format == .png ? "png" : "ppm"))
        #expect(report.pixelFormat == "rgb24")
        #expect(try WebOracle.firstFrame(of: path, size: Self.size) == image)
    }

    @Test("JPEG is full-range BT.601 4:4:4 and matches at 35 dB or more with the right colours")
    func jpeg() throws {
        let image = try Self.engineFrame()
        let path = try Self.write(try ImageEncoder.encode(image, as: .jpeg), "still.jpg")
        let report = try WebOracle.probe(path)
        #expect(report.codec == "mjpeg")
        #expect(report.pixelFormat == "yuvj444p")
        #expect(report.width == Self.size.width && report.height == Self.size.height)
        let decoded = try WebOracle.firstFrame(of: path, size: Self.size)
        let psnr = Compare.psnr(decoded, image)
        #expect(psnr >= 35, "JPEG PSNR \(psnr) dB")
        expectSameColours(decoded, image)
    }

    @Test("WebP is lossy VP8 and matches at 35 dB or more with the right colours")
    func webp() throws {
        let image = try Self.engineFrame()
        let path = try Self.write(try ImageEncoder.encode(image, as: .webp), "still.webp")
        #expect(try WebOracle.probe(path).codec == "webp")
        let decoded = try WebOracle.firstFrame(of: path, size: Self.size)
        let psnr = Compare.psnr(decoded, image)
        #expect(psnr >= 35, "WebP PSNR \(psnr) dB")
        expectSameColours(decoded, image)
    }

    @Test("WebP at quality 100 is lossless: the exact pixels, decoded by ffmpeg")
    func webpLossless() throws {
        let image = try Self.engineFrame()
        let path = try Self.write(try ImageEncoder.encode(image, as: .webp, quality: 100), "lossless.webp")
        #expect(try WebOracle.firstFrame(of: path, size: Self.size) == image)
    }

    @Test("Quality trades size for fidelity", arguments: [ImageFileFormat.jpeg, .webp])
    func qualityOrdersSizeAndFidelity(format: ImageFileFormat) throws {
        let image = try Self.engineFrame()
        var previous: (bytes: Int, psnr: Double)?
        for quality in [10, 50, 95] {
            let path = try Self.write(try ImageEncoder.encode(image, as: format, quality: quality), "q\(quality)." + format.fileExtensions[0])
            let bytes = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
            let psnr = Compare.psnr(try WebOracle.firstFrame(of: path, size: Self.size), image)
            if let previous {
                #expect(bytes > previous.bytes && psnr > previous.psnr, "\(format) quality \(quality): \(bytes) B, \(psnr) dB")
            }
            previous = (bytes, psnr)
        }
    }

    @Test("JPEG quality maps onto MJPEG's quantizer scale 31…2")
    func jpegQuantizer() {
        #expect(ImageEncoder.jpegQuantizer(quality: 0) == 31)
        #expect(ImageEncoder.jpegQuantizer(quality: 100) == 2)
        #expect(ImageEncoder.jpegQuantizer(quality: 85) == 6)
        let scale = (0...100).map { ImageEncoder.jpegQuantizer(quality: $0) }
        #expect(zip(scale, scale.dropFirst()).allSatisfy { $0 >= $1 })
    }

    @Test("A quality outside 0–100 is an invalid argument", arguments: [-1, 101])
    func invalidQuality(quality: Int) throws {
        let image = try RGBImage(width: 8, height: 8)
        let error = #expect(throws: PreviewLoopError.self) { try ImageEncoder.encode(image, as: .jpeg, quality: quality) }
        #expect(error?.code == .invalidArgument)
    }

    @Test("Odd sizes and tiny pictures encode in every format", arguments: ImageFileFormat.allCases)
    func oddSizes(format: ImageFileFormat) throws {
        for size in [Size(width: 1, height: 1), Size(width: 33, height: 17)] {
            var image = try RGBImage(width: size.width, height: size.height)
            for index in image.pixels.indices { image.pixels[index] = UInt8(truncatingIfNeeded: index * 7) }
            let path = try Self.write(try ImageEncoder.encode(image, as: format), "odd." + format.fileExtensions[0])
            let decoded = try WebOracle.firstFrame(of: path, size: size)
            #expect(decoded.size == size)
        }
    }

    @Test("File extensions pick formats, ignoring case")
    func extensions() {
        #expect(ImageFileFormat(path: "a/b.JPG") == .jpeg)
        #expect(ImageFileFormat(path: "b.jpeg") == .jpeg)
        #expect(ImageFileFormat(path: "b.webp") == .webp)
        #expect(ImageFileFormat(path: "b.png") == .png)
        #expect(ImageFileFormat(path: "b.ppm") == .ppm)
        #expect(ImageFileFormat(path: "b.AVIF") == .avif)
        #expect(ImageFileFormat(path: "b.gif") == nil)
        #expect(ImageFileFormat(path: ".png") == nil)
    }
}

/// Per-channel means within 2 levels: no swapped channels, no range or matrix mix-up.
func expectSameColours(_ decoded: RGBImage, _ original: RGBImage, tolerance: Double = 2,
                       sourceLocation: SourceLocation = #_sourceLocation) {
    let a = Compare.channelMeans(decoded), b = Compare.channelMeans(original)
    #expect(abs(a.0 - b.0) <= tolerance && abs(a.1 - b.1) <= tolerance && abs(a.2 - b.2) <= tolerance,
            "channel means \(a) vs \(b)", sourceLocation: sourceLocation)
}
