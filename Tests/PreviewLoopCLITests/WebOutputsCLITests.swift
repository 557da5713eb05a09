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
        ("a.jpg", ImageFileFormat.jpeg), ("a.JPEG", .jpeg), ("a.webp", .webp), ("a.png", .png), ("a.ppm", .ppm),
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
}
