import Foundation
import PreviewLoop
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// Runs the built `preview-loop` binary.
private func cli(_ arguments: [String]) throws -> ChildResult {
    try Child.run(TestPaths.cliBinary, arguments)
}

@Suite("CLI: image formats and --quality")
struct ImageFormatCLITests {
    @Test("Extensions pick the format; --quality reaches the options", arguments: [
        ("a.jpg", ImageFileFormat.jpeg), ("a.JPEG", .jpeg), ("a.webp", .webp), ("a.png", .png), ("a.ppm", .ppm), ("a.avif", .avif),
    ])
    func formats(output: String, format: ImageFileFormat) throws {
        guard case .command(let thumb as ThumbCommand) = try CommandLineParser.parse(["thumb", "clip.mp4", "-o", output]) else {
            Issue.record("not a thumb command")
            return
        }
        #expect(thumb.format == format && thumb.quality == nil)
        if format.isLossy {
            guard case .command(let strip as StripCommand) = try CommandLineParser.parse(["strip", "clip.mp4", "-o", output, "-q", "40"]) else {
                Issue.record("not a strip command")
                return
            }
            #expect(strip.quality == 40)
        }
    }

    @Test("--quality is a usage error for lossless outputs and outside 0–100")
    func qualityErrors() {
        #expect(usageError(["thumb", "c.mp4", "-o", "a.png", "--quality", "80"])?.kind == .conflictingOptions("quality", "output"))
        #expect(usageError(["strip", "c.mp4", "-o", "a.ppm", "-q", "80"])?.kind == .conflictingOptions("quality", "output"))
        #expect(usageError(["thumb", "c.mp4", "-o", "a.jpg", "--quality", "101"])?.kind == .invalidValue(option: "quality", value: "101"))
        #expect(usageError(["thumb", "c.mp4", "-o", "a.gif"])?.kind == .unsupportedOutputFormat("a.gif"))
    }

    @Test("thumb and strip write JPEG, WebP and PNG that ffprobe reads",
          arguments: [("thumb.jpg", "mjpeg"), ("thumb.webp", "webp"), ("thumb.png", "png")])
    func writesImages(name: String, codec: String) throws {
        let directory = TestPaths.temporaryDirectory()
        let input = TestPaths.fixture("landscape.mp4")
        let thumb = try cli(["thumb", input, "-o", directory + "/" + name, "--at", "1"])
        #expect(thumb.status == 0, "\(thumb.stderr)")
        #expect(try WebOracle.probe(directory + "/" + name).codec == codec)
        let strip = try cli(["strip", input, "-o", directory + "/strip-" + name, "-n", "4", "-c", "2"])
        #expect(strip.status == 0, "\(strip.stderr)")
        let report = try WebOracle.probe(directory + "/strip-" + name)
        #expect(report.codec == codec && report.width == 320 && report.height == 180)
    }

    @Test("thumb, strip and a batch poster write AVIF that avifdec reads, close to the ffmpeg CLI's frame, the same bytes twice")
    func writesAVIF() throws {
        let directory = TestPaths.temporaryDirectory()
        let input = TestPaths.fixture("landscape.mp4")
        let size = Size(width: 320, height: 180)
        let reference = try Oracle.reference("landscape.mp4", upright: Size(width: 400, height: 300), size: size)
        let frame = reference.images[Oracle.displayedIndex(at: 1, times: reference.times)]
        for name in ["a.avif", "b.avif"] {
            let thumb = try cli(["thumb", input, "-o", directory + "/" + name, "--at", "1", "--size", "320x180"])
            #expect(thumb.status == 0, "\(thumb.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/a.avif")) == Data(contentsOf: URL(fileURLWithPath: directory + "/b.avif")))
        let (decoded, info) = try WebOracle.avifFrame(of: directory + "/a.avif", size: size)
        let psnr = Compare.psnr(decoded, frame)
        #expect(psnr >= 40, "thumb AVIF PSNR \(psnr) dB against ffmpeg's frame")
        #expect(info["Format"] == "YUV444" && info["Color Primaries"] == "1" && info["Matrix Coeffs."] == "1", "\(info)")
        let strip = try cli(["strip", input, "-o", directory + "/strip.avif", "-n", "4", "-c", "2", "-q", "60"])
        #expect(strip.status == 0, "\(strip.stderr)")
        #expect(try WebOracle.avifFrame(of: directory + "/strip.avif", size: Size(width: 320, height: 180)).image.size == size)
        // Refused before any decoding, naming the limit.
        let huge = try cli(["thumb", input, "-o", directory + "/huge.avif", "--size", "16000x9000"])
        #expect(huge.status == 64 && huge.stderr.contains("AVIF pictures are at most 16384x8704"), "\(huge.stderr)")
        // A sheet too tall for AVIF (but not for PNG) is refused once its layout is known, before any
        // frame is decoded: the message is the layout's, not the encoder's.
        let tall = try cli(["sheet", input, "-o", directory + "/tall.avif", "--grid", "2x25", "--width", "1280"])
        #expect(tall.status != 0 && tall.stderr.contains("the sheet would be") && tall.stderr.contains("AVIF pictures are at most"),
                "\(tall.stderr)")
        #expect(tall.stderr.split(separator: "\n").count == 1 && !FileManager.default.fileExists(atPath: directory + "/tall.avif"))
    }
}
