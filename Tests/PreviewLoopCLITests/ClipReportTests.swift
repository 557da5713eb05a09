import Foundation
import Glibc
import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs
import Testing
import PreviewLoopTestSupport

/// `--json` on the single-clip commands: one batch record on standard output.
@Suite("--json: single-clip commands print the batch record")
struct ClipReportTests {
    /// Runs the CLI and parses its standard output as one JSON object.
    private static func record(_ arguments: [String]) throws -> (result: ChildResult, record: [String: Any]) {
        let result = try Child.run(TestPaths.cliBinary, arguments)
        let lines = result.stdoutText.split(separator: "\n")
        #expect(lines.count == 1, "one line of JSON expected: \(result.stdoutText)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdoutText.utf8)) as? [String: Any],
                                  "\(result.stdoutText) \(result.stderr)")
        return (result, object)
    }

    /// What every `ok` record has: its command, the clip's metadata, timings, and outputs that exist with
    /// the sizes the record gives.
    private static func checkOK(_ record: [String: Any], _ result: ChildResult, command: String,
                                file: String = "landscape.mp4") throws -> [[String: Any]] {
        #expect(result.status == 0, "\(result.stderr)")
        #expect(record["type"] as? String == "clip")
        #expect(record["status"] as? String == "ok")
        #expect(record["command"] as? String == command)
        #expect(record["input"] as? String == TestPaths.fixture(file))
        #expect(record["reason"] == nil && record["permanence"] == nil)
        let clip = try #require(record["clip"] as? [String: Any])
        #expect((clip["duration"] as? Double ?? 0) > 0)
        #expect((clip["width"] as? Int ?? 0) > 0 && (clip["height"] as? Int ?? 0) > 0)
        #expect(clip["codec"] as? String == (file == "vp9.webm" ? "vp9" : "h264"))
        #expect(clip["rotation"] is Int)
        #expect(clip["hdr"] as? String == "SDR")
        let timings = try #require(record["timings"] as? [String: Double])
        #expect(timings["open_ms"] != nil && (timings["total_ms"] ?? 0) >= (timings["open_ms"] ?? 0))
        let outputs = try #require(record["outputs"] as? [[String: Any]])
        #expect(!outputs.isEmpty)
        for output in outputs {
            let path = try #require(output["path"] as? String)
            let bytes = try #require(output["bytes"] as? Int)
            #expect(bytes > 0, "\(path)")
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory))
            if !isDirectory.boolValue {
                #expect((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) == bytes, "\(path)")
            }
        }
        return outputs
    }

    @Test("thumb --json: the image entry carries the placeholders of the pixels written")
    func thumbPlaceholders() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (arguments, kind) in [([String](), "poster"), (["--at", "1.5"], "frame")] {
            let path = directory + "/\(kind).ppm"
            let (result, record) = try Self.record(["thumb", TestPaths.fixture("landscape.mp4"), "-o", path, "--json"] + arguments)
            let outputs = try Self.checkOK(record, result, command: "thumb")
            #expect(outputs.first?["kind"] as? String == kind)
            let written = try PPM.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
            let expected = ImagePlaceholder(written)
            #expect(outputs.first?["thumbhash"] as? String == expected.thumbHash)
            #expect(outputs.first?["blurhash"] as? String == expected.blurHash)
            #expect(outputs.first?["dominant_color"] as? String == expected.dominantColor.description)
        }
    }

    @Test("thumb, strip, sheet, sprites, render, card and loop: --json parses, status ok, outputs with their sizes and choices")
    func everyCommand() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = TestPaths.fixture("landscape.mp4")

        var (result, record) = try Self.record(["thumb", clip, "-o", directory + "/poster.jpg", "--json"])
        var outputs = try Self.checkOK(record, result, command: "thumb")
        #expect(outputs.map { $0["kind"] as? String } == ["poster"])
        #expect(outputs[0]["time"] is Double && (outputs[0]["choice"] as? String)?.isEmpty == false)
        #expect(outputs[0]["width"] as? Int == 320 && outputs[0]["height"] as? Int == 180)

        (result, record) = try Self.record(["thumb", clip, "-o", directory + "/at.png", "--at", "1.5", "--json"])
        outputs = try Self.checkOK(record, result, command: "thumb")
        #expect(outputs.map { $0["kind"] as? String } == ["frame"])
        #expect(abs((outputs[0]["time"] as? Double ?? 0) - 1.5) < 0.05)

        (result, record) = try Self.record(["strip", clip, "-o", directory + "/strip.jpg", "-n", "4", "--json"])
        outputs = try Self.checkOK(record, result, command: "strip")
        #expect(outputs[0]["kind"] as? String == "strip" && outputs[0]["tiles"] as? Int == 4)
        let plan = try #require(outputs[0]["plan"] as? [String: Any])
        #expect((plan["tiles"] as? [Any])?.count == 4 && plan["pick"] as? String == "even")

        (result, record) = try Self.record(["sheet", clip, "-o", directory + "/sheet.png", "--grid", "2x2", "--width", "320", "--json"])
        outputs = try Self.checkOK(record, result, command: "sheet")
        #expect(outputs[0]["kind"] as? String == "sheet" && outputs[0]["tiles"] as? Int == 4)

        (result, record) = try Self.record(["sprites", clip, "-o", directory + "/sprites", "--every", "1", "--grid", "2x2", "--json"])
        outputs = try Self.checkOK(record, result, command: "sprites")
        #expect(outputs.first?["kind"] as? String == "webvtt")
        let sheets = outputs.filter { $0["kind"] as? String == "sprite_sheet" }
        #expect(sheets.count >= 1 && sheets.count == outputs.count - 1)
        #expect((outputs[0]["tiles"] as? Int ?? 0) > 0 && (outputs[0]["duration"] as? Double ?? 0) > 0)

        (result, record) = try Self.record(["render", clip, "-o", directory + "/hover.mp4", "--length", "1", "--json"])
        outputs = try Self.checkOK(record, result, command: "render")
        #expect(outputs[0]["kind"] as? String == "hover" && (outputs[0]["frames"] as? Int ?? 0) > 0)
        #expect(abs((outputs[0]["duration"] as? Double ?? 0) - 1) < 0.1)

        (result, record) = try Self.record(["card", clip, "-o", directory + "/card.png", "--json"])
        outputs = try Self.checkOK(record, result, command: "card")
        #expect(outputs[0]["kind"] as? String == "card" && (outputs[0]["choice"] as? String)?.hasPrefix("poster: ") == true)

        (result, record) = try Self.record(["loop", clip, "--length", "1", "--log", directory + "/log.csv",
                                            "--frames", directory + "/frames", "--size", "64x36", "--json"])
        outputs = try Self.checkOK(record, result, command: "loop")
        #expect(outputs.map { $0["kind"] as? String } == ["timing_log", "loop_frames"])
        #expect((outputs[1]["frames"] as? Int ?? 0) > 0)
    }

    @Test("A missing or corrupt input with --json: a failed record with its reason, permanent; the Error: line; no output")
    func failures() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cases: [(input: String, reason: String)] = [
            (directory + "/missing.mp4", "input_not_found"),
            (TestPaths.fixture("not-video.txt"), "not_media_file"),
        ]
        for (input, reason) in cases {
            for arguments in [["thumb", input, "-o", directory + "/t.jpg"], ["strip", input, "-o", directory + "/s.jpg"],
                              ["sprites", input, "-o", directory + "/sprites"], ["render", input, "-o", directory + "/r.mp4"],
                              ["card", input, "-o", directory + "/c.webp"], ["sheet", input, "-o", directory + "/sh.png"],
                              ["loop", input]] {
                let (result, record) = try Self.record(arguments + ["--json"])
                #expect(result.status == 1, "\(arguments)")
                #expect(result.stderr.hasPrefix("Error: ") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
                #expect(record["status"] as? String == "failed")
                #expect(record["reason"] as? String == reason, "\(arguments): \(record)")
                #expect(record["permanence"] as? String == "permanent")
                #expect((record["message"] as? String)?.isEmpty == false)
                #expect(record["command"] as? String == arguments[0])
                #expect((record["outputs"] as? [Any])?.isEmpty == true)
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    @Test("Never ok with a missing or empty output: the record fails instead")
    func neverOKWithoutOutput() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let report = ClipReport(command: Subcommand(ThumbCommand.self), input: "clip.mp4")
        #expect(throws: PreviewLoopError.self) { try report.record() }   // nothing written
        _ = FileManager.default.createFile(atPath: directory + "/empty.jpg", contents: Data())
        report.add(ClipReport.output("poster", directory + "/empty.jpg"))
        #expect(throws: PreviewLoopError.self) { try report.record() }
        let missing = ClipReport(command: Subcommand(RenderCommand.self), input: "clip.mp4")
        missing.add(ClipReport.output("hover", directory + "/gone.mp4"))
        do {
            _ = try missing.record()
            Issue.record("a missing output was reported ok")
        } catch {
            #expect(error.code == .outputNotWritable)
            #expect(missing.failure(error).status == .failed)
            #expect(missing.failure(error).permanence == .transient)
        }
        _ = FileManager.default.createFile(atPath: directory + "/full.jpg", contents: Data([1, 2, 3]))
        let full = ClipReport(command: Subcommand(ThumbCommand.self), input: "clip.mp4")
        full.add(ClipReport.output("poster", directory + "/full.jpg"))
        #expect(try full.record().outputs.first?.bytes == 3)
    }

    @Test("--json is declared once and offered by every single-clip command")
    func declaredOnce() throws {
        for command in ([ThumbCommand.self, StripCommand.self, SheetCommand.self, SpritesCommand.self, RenderCommand.self, CardCommand.self, LoopCommand.self] as [any ParsableCommand.Type]).map(Subcommand.init) {
            #expect(command.declarations.filter { $0.spec.name == "json" }.count == 1, "\(command)")
        }
        #expect(throws: UsageError.self) { try CommandLineParser.parse(["loop", "clip.mp4", "--log", "-", "--json"]) }
    }
}
