import Foundation
import PreviewLoop
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

@Suite("CLI: render and sprites parsing")
struct WebOutputParsingTests {
    @Test func renderDefaultsAndOptions() throws {
        #expect(try CommandLineParser.parse(["render", "c.mp4", "-o", "p.mp4"])
                == .command(RenderCommand(source: .init(input: "c.mp4"), output: "p.mp4", format: .mp4)))
        let parsed = try CommandLineParser.parse(["render", "c.mp4", "-o", "p.GIF", "--start", "10%", "--length", "2.5",
                                                  "-s", "81x45", "--fps", "10", "--fit", "fit", "--threads", "1"])
        #expect(parsed == .command(RenderCommand(source: .init(input: "c.mp4", threads: 1), output: "p.GIF", format: .gif, start: .percent(10),
                                                length: .seconds(2.5), size: .exact(Size(width: 81, height: 45)), framesPerSecond: 10,
                                                contentMode: .aspectFit)))
        guard case .command(let webp as RenderCommand) = try CommandLineParser.parse(["render", "c.mp4", "-o", "p.webp", "-q", "60"]) else {
            Issue.record("not a render command")
            return
        }
        #expect(webp.format == .webp && webp.quality == 60)
    }

    @Test func renderErrors() {
        #expect(usageError(["render", "c.mp4", "-o", "p.mp4", "-s", "481x270"])?.kind == .invalidValue(option: "size", value: "481x270"))
        #expect(usageError(["render", "c.mp4", "-o", "p.gif", "-q", "50"])?.kind == .conflictingOptions("quality", "output"))
        #expect(usageError(["render", "c.mp4", "-o", "p.avi"])?.kind == .unsupportedOutputFormat("p.avi"))
        #expect(usageError(["render", "c.mp4", "-o", "p.mp4", "--fps", "0"])?.kind == .invalidValue(option: "fps", value: "0"))
        #expect(usageError(["render", "c.mp4"])?.kind == .missingOption("output"))
    }

    @Test func spritesDefaultsAndOptions() throws {
        #expect(try CommandLineParser.parse(["sprites", "c.mp4", "-o", "out"])
                == .command(SpritesCommand(source: .init(input: "c.mp4"), outputDirectory: "out")))
        let parsed = try CommandLineParser.parse(["sprites", "c.mp4", "-o", "out", "--every", "1:30", "--grid", "4x3",
                                                  "--format", "webp", "--accuracy", "keyframe", "-q", "70", "-s", "128x72"])
        #expect(parsed == .command(SpritesCommand(source: .init(input: "c.mp4"), outputDirectory: "out", every: .every(90), size: .exact(Size(width: 128, height: 72)),
                                                  columns: 4, rows: 3, format: .webp, accuracy: .keyframe, quality: 70)))
    }

    @Test func spritesErrors() {
        #expect(usageError(["sprites", "c.mp4", "-o", "o", "--every", "10%"])?.kind == .invalidValue(option: "every", value: "10%"))
        #expect(usageError(["sprites", "c.mp4", "-o", "o", "--every", "0"])?.kind == .invalidValue(option: "every", value: "0"))
        #expect(usageError(["sprites", "c.mp4", "-o", "o", "--grid", "0x3"])?.kind == .invalidValue(option: "grid", value: "0x3"))
        #expect(usageError(["sprites", "c.mp4", "-o", "o", "--format", "png"])?.kind == .invalidValue(option: "format", value: "png"))
        #expect(usageError(["sprites", "c.mp4", "-o", "o", "--grid", "100x10", "-s", "170x90"])?.kind == .conflictingOptions("grid", "size"))
        #expect(usageError(["sprites", "c.mp4", "-o", "o", "--grid", "100x10"]) == nil, "16000 pixels wide is allowed")
        #expect(usageError(["sprites", "c.mp4"])?.kind == .missingOption("output"))
    }
}
