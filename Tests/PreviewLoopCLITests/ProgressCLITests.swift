import Foundation
import PreviewLoop
import Synchronization
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// Runs the built `preview-loop` binary (standard error is a pipe: not a terminal).
private func cli(_ arguments: [String]) throws -> ChildResult {
    try Child.run(TestPaths.cliBinary, arguments)
}

/// The percents of `label:` progress lines, in order.
private func percents(in stderr: String, label: String) -> [Int] {
    stderr.split(separator: "\n").compactMap { line -> Int? in
        guard line.hasPrefix("\(label): "), let sign = line.firstIndex(of: "%") else { return nil }
        return Int(line[line.index(line.startIndex, offsetBy: label.count + 2)..<sign])
    }
}

@Suite("Progress: --progress, --quiet and the display")
struct ProgressTests {
    @Test("--progress and --quiet parse, are shared, and contradict each other")
    func parsing() throws {
        guard case .command(let render as RenderCommand) = try CommandLineParser.parse(["render", "c.mp4", "-o", "p.mp4", "--progress"]) else {
            Issue.record("not a render command")
            return
        }
        #expect(render.reporting.forcesProgress && !render.reporting.isQuiet)
        guard case .command(let strip as StripCommand) = try CommandLineParser.parse(["strip", "c.mp4", "-o", "s.png", "--quiet"]) else {
            Issue.record("not a strip command")
            return
        }
        #expect(strip.reporting.isQuiet)
        for command in ["render", "strip", "sheet", "sprites", "loop"] {
            let output = command == "sprites" ? "dir" : command == "render" ? "p.mp4" : "a.png"
            let arguments = command == "loop" ? ["loop", "c.mp4"] : [command, "c.mp4", "-o", output]
            #expect(usageError(arguments + ["--progress", "--quiet"])?.kind == .conflictingOptions("progress", "quiet"), "\(command)")
        }
        // thumb is one frame: --quiet, but no progress to show.
        #expect(usageError(["thumb", "c.mp4", "-o", "a.png", "--quiet"]) == nil)
        #expect(usageError(["thumb", "c.mp4", "-o", "a.png", "--progress"]) != nil)
        guard case .command(let batch as BatchCommand) = try CommandLineParser.parse(["batch", "m.jsonl", "-o", "out", "--progress"]) else {
            Issue.record("not a batch command")
            return
        }
        #expect(batch.isMachineProgress)
    }

    @Test("The style: terminal without flags, lines only with --progress, nothing with --quiet")
    func style() {
        var options = ReportingOptions()
        #expect(options.progressStyle(isTerminal: true) == .terminal)
        #expect(options.progressStyle(isTerminal: false) == .off)
        options.forcesProgress = true
        #expect(options.progressStyle(isTerminal: false) == .lines)
        #expect(options.progressStyle(isTerminal: true) == .terminal)
        options = ReportingOptions()
        options.isQuiet = true
        #expect(options.progressStyle(isTerminal: true) == .off)
    }

    @Test("Line text: percent, count, rate, ETA; the final line the time taken")
    func lineText() {
        #expect(ProgressDisplay.line(label: "render", unit: "frames", rateUnit: "fps", completed: 120, total: 270, percent: 44,
                                     fraction: 120.0 / 270, elapsed: 2, isFinal: false)
                == "render: 44% 120/270 frames, 60.0 fps, ETA 0:03")
        #expect(ProgressDisplay.line(label: "loop", unit: "frames", rateUnit: "fps", completed: 50, total: nil, percent: nil,
                                     fraction: nil, elapsed: 0.5, isFinal: false) == "loop: 50 frames, 100.0 fps")
        #expect(ProgressDisplay.line(label: "sheet", unit: "frames", rateUnit: "frames/s", completed: 16, total: 16, percent: 100,
                                     fraction: 1, elapsed: 4, isFinal: true) == "sheet: 100% 16/16 frames, 4.0 frames/s, 4.0 s")
        #expect(ProgressDisplay.clockText(5) == "0:05" && ProgressDisplay.clockText(754) == "12:34"
                && ProgressDisplay.clockText(3723) == "1:02:03")
    }

    @Test("Lines are monotonic, below 100% until the end, and end with 100%; a terminal line is redrawn and closed")
    func displayLines() {
        let written = Mutex<[String]>([])
        let lines = ProgressDisplay(label: "job", unit: "frames", rateUnit: "fps", style: .lines) { text in
            written.withLock { $0.append(text) }
        }
        // A percent that goes back (a re-estimated total) is never shown lower.
        for (done, total) in [(1, 10), (9, 10), (10, 10), (10, 30)] { lines.update(completed: done, total: total) }
        lines.finish(completed: 30, total: 30)
        lines.update(completed: 31, total: 30)
        let shown = written.withLock { $0 }
        #expect(shown.allSatisfy { $0.hasSuffix("\n") && !$0.contains("\r") })
        let values = percents(in: shown.joined(), label: "job")
        #expect(values.last == 100 && values.dropLast().allSatisfy { $0 < 100 })
        #expect(values == values.sorted())
        #expect(shown.count >= 2, "the first update shows at once, the final line always")

        let terminal = Mutex<String>("")
        let bar = ProgressDisplay(label: "job", unit: "frames", rateUnit: "fps", style: .terminal) { text in
            terminal.withLock { $0 += text }
        }
        bar.update(completed: 1, total: 4)
        bar.abandon()
        let text = terminal.withLock { $0 }
        #expect(text.hasPrefix("\rjob: 25% 1/4 frames") && text.hasSuffix("\n"))
        let off = ProgressDisplay(label: "job", unit: "frames", rateUnit: "fps", style: .off) { _ in Issue.record("wrote while off") }
        off.update(completed: 1, total: 2)
        off.finish(completed: 2, total: 2)
        off.abandon()
    }

    @Test("Long jobs print progress lines with --progress, none without it off a terminal, nothing at all with --quiet",
          arguments: ["render", "strip", "sheet", "sprites", "loop"])
    func longJobs(command: String) throws {
        let directory = TestPaths.temporaryDirectory()
        let input = TestPaths.fixture("landscape.mp4")
        func arguments(_ output: String) -> [String] {
            switch command {
            case "render": ["render", input, "-o", directory + "/\(output).webp", "--length", "2", "-s", "64x48"]
            case "strip": ["strip", input, "-o", directory + "/\(output).png", "--span", "all", "-n", "6", "--accuracy", "exact", "-s", "64x48"]
            case "sheet": ["sheet", input, "-o", directory + "/\(output).png", "--grid", "3x2", "--width", "400", "--no-header"]
            case "sprites": ["sprites", input, "-o", directory + "/\(output)", "--every", "0.5", "-s", "64x48"]
            default: ["loop", input, "--loops", "2", "--length", "1", "-s", "64x48", "--frames", directory + "/\(output)"]
            }
        }
        let shown = try cli(arguments("shown") + ["--progress"])
        #expect(shown.status == 0, "\(shown.stderr)")
        let values = percents(in: shown.stderr, label: command)
        #expect(!values.isEmpty && values.last == 100, "\(shown.stderr)")
        #expect(values == values.sorted() && values.dropLast().allSatisfy { $0 < 100 }, "\(values)")
        #expect(!shown.stderr.contains("\r"))

        let plain = try cli(arguments("plain"))
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(percents(in: plain.stderr, label: command).isEmpty, "\(plain.stderr)")

        let quiet = try cli(arguments("quiet") + ["--quiet"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty && quiet.stdout.isEmpty, "\(quiet.stderr)")
        let written = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(written.contains { $0.hasPrefix("quiet") }, "\(written)")
    }

    @Test("On a terminal (script(1)'s pty): progress is one line redrawn with \\r; -o - is refused before decoding",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) (util-linux)"))
    func terminal() throws {
        let script = "/usr/bin/script"
        let directory = TestPaths.temporaryDirectory()
        let input = TestPaths.fixture("landscape.mp4")
        let drawn = try Child.run(script, ["-qec", "'\(TestPaths.cliBinary)' render '\(input)' -o '\(directory)/t.webp' "
                                                 + "--length 1 -s 64x48", "/dev/null"])
        #expect(drawn.status == 0, "\(drawn.stdoutText)")
        // Lines mode would start the first line at the output's start, not after a carriage return.
        #expect(drawn.stdoutText.hasPrefix("\rrender: ") && drawn.stdoutText.contains("\rrender: 100% "), "\(drawn.stdoutText)")
        let refused = try Child.run(script, ["-qec", "'\(TestPaths.cliBinary)' thumb '\(input)' -o -", "/dev/null"])
        #expect(refused.status == 64)
        #expect(refused.stdoutText.hasPrefix("Error: ") && refused.stdoutText.contains("which is a terminal"), "\(refused.stdoutText)")
        #expect(refused.stdout.count < 1000, "no image bytes on the terminal")
    }

    @Test("--quiet still reports errors")
    func quietErrors() throws {
        let result = try cli(["render", TestPaths.fixture("not-video.txt"), "-o", TestPaths.temporaryDirectory() + "/p.mp4", "--quiet"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("Error: ") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }
}

@Suite("Stdout and formats: -o -, --format")
struct StandardOutputTests {
    @Test("-o - picks the format from --format, PNG without it; --format must agree with an extension")
    func parsing() throws {
        guard case .command(let thumb as ThumbCommand) = try CommandLineParser.parse(["thumb", "c.mp4", "-o", "-"]) else {
            Issue.record("not a thumb command")
            return
        }
        #expect(thumb.output == "-" && thumb.format == .png)
        guard case .command(let strip as StripCommand) = try CommandLineParser.parse(["strip", "c.mp4", "-o", "-", "--format", "jpg", "-q", "50"]) else {
            Issue.record("not a strip command")
            return
        }
        #expect(strip.format == .jpeg && strip.quality == 50)
        guard case .command(let sheet as SheetCommand) = try CommandLineParser.parse(["sheet", "c.mp4", "-o", "contact", "--format", "webp"]) else {
            Issue.record("not a sheet command")
            return
        }
        #expect(sheet.format == .webp && sheet.output == "contact")
        #expect(usageError(["thumb", "c.mp4", "-o", "a.png", "--format", "jpg"])?.kind == .conflictingOptions("format", "output"))
        #expect(usageError(["thumb", "c.mp4", "-o", "-", "--format", "gif"])?.kind == .invalidValue(option: "format", value: "gif"))
        #expect(usageError(["thumb", "c.mp4", "-o", "-", "--format", "png", "-q", "50"])?.kind == .conflictingOptions("quality", "output"))
        #expect(usageError(["strip", "c.mp4", "-o", "-", "--json"])?.kind == .conflictingOptions("json", "output"))
        #expect(usageError(["thumb", "c.mp4", "-o", "poster"])?.kind == .unsupportedOutputFormat("poster"))
    }

    @Test("thumb -o - writes the same picture as the file output", arguments: ["png", "jpg", "webp", "ppm"])
    func thumbToStandardOutput(format: String) throws {
        let directory = TestPaths.temporaryDirectory()
        let input = TestPaths.fixture("landscape.mp4")
        let file = try cli(["thumb", input, "--at", "1.5", "-s", "96x72", "-o", directory + "/file.\(format)"])
        #expect(file.status == 0, "\(file.stderr)")
        let piped = try cli(["thumb", input, "--at", "1.5", "-s", "96x72", "-o", "-", "--format", format])
        #expect(piped.status == 0, "\(piped.stderr)")
        // The summary moves to standard error; standard output is the image alone.
        #expect(piped.stderr.hasPrefix("wrote standard output (96x72"), "\(piped.stderr)")
        try piped.stdout.write(to: URL(fileURLWithPath: directory + "/piped.\(format)"))
        let size = Size(width: 96, height: 72)
        let expected = try Oracle.frames(of: directory + "/file.\(format)", filter: "null", size: size)
        let actual = try Oracle.frames(of: directory + "/piped.\(format)", filter: "null", size: size)
        #expect(expected.count == 1 && actual.count == 1)
        #expect(expected.first?.pixels == actual.first?.pixels)
    }

    @Test("strip and sheet -o - write the same picture as the file output; --quiet drops the summary")
    func tiledToStandardOutput() throws {
        let directory = TestPaths.temporaryDirectory()
        let input = TestPaths.fixture("landscape.mp4")
        for (command, extra) in [("strip", ["-n", "4", "-c", "2", "-s", "64x48"]), ("sheet", ["--grid", "2x2", "--width", "300"])] {
            let file = try cli([command, input, "-o", directory + "/\(command).png"] + extra)
            #expect(file.status == 0, "\(file.stderr)")
            let piped = try cli([command, input, "-o", "-", "--quiet"] + extra)
            #expect(piped.status == 0 && piped.stderr.isEmpty, "\(piped.stderr)")
            #expect(Array(piped.stdout.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "PNG signature")
            try piped.stdout.write(to: URL(fileURLWithPath: directory + "/\(command)-piped.png"))
            let probe = try Child.tool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                                                 "-of", "csv=p=0:s=x", directory + "/\(command).png"])
            let parts = probe.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "x").compactMap { Int($0) }
            #expect(parts.count == 2)
            guard parts.count == 2 else { continue }
            let size = Size(width: parts[0], height: parts[1])
            let expected = try Oracle.frames(of: directory + "/\(command).png", filter: "null", size: size)
            let actual = try Oracle.frames(of: directory + "/\(command)-piped.png", filter: "null", size: size)
            #expect(!expected.isEmpty && expected.first?.pixels == actual.first?.pixels, "\(command)")
        }
    }

    @Test("loop --frames DIR --format png|jpg writes those files, the PNGs the same pictures as the PPMs")
    func loopFrameFormats() throws {
        let directory = TestPaths.temporaryDirectory()
        let input = TestPaths.fixture("landscape.mp4")
        for format in ["ppm", "png", "jpg"] {
            let result = try cli(["loop", input, "--length", "0.2", "-s", "64x48", "--frames", directory + "/\(format)",
                                  "--format", format])
            #expect(result.status == 0, "\(result.stderr)")
            let files = try FileManager.default.contentsOfDirectory(atPath: directory + "/\(format)").sorted()
            #expect(!files.isEmpty && files.allSatisfy { $0.hasSuffix(".\(format)") }, "\(files)")
        }
        let size = Size(width: 64, height: 48)
        let ppm = try Oracle.frames(of: directory + "/ppm/001-00001.ppm", filter: "null", size: size)
        let png = try Oracle.frames(of: directory + "/png/001-00001.png", filter: "null", size: size)
        #expect(!ppm.isEmpty && ppm.first?.pixels == png.first?.pixels)
        let jpeg = try Child.tool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0",
                                            directory + "/jpg/001-00001.jpg"])
        #expect(jpeg.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg")
        #expect(usageError(["loop", "c.mp4", "--format", "png"])?.kind == .conflictingOptions("format", "frames"))
        #expect(usageError(["loop", "c.mp4", "--frames", "d", "--format", "webp"])?.kind == .invalidValue(option: "format", value: "webp"))
    }
}

@Suite("sprites -o: an output that looks like a file")
struct SpritesOutputTests {
    @Test("An output that looks like a file is a usage error, and nothing is created")
    func fileLikeOutput() throws {
        for name in ["spr.jpg", "thumbs.VTT", "a/b.webp", "x.mp4"] {
            #expect(usageError(["sprites", "c.mp4", "-o", name])?.kind == .invalidValue(option: "output", value: name), "\(name)")
        }
        #expect(usageError(["sprites", "c.mp4", "-o", "thumbnails"]) == nil)
        #expect(usageError(["sprites", "c.mp4", "-o", "v1.2"]) == nil)
        let directory = TestPaths.temporaryDirectory()
        let result = try cli(["sprites", TestPaths.fixture("landscape.mp4"), "-o", directory + "/spr.jpg"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: ") && result.stderr.contains("looks like a file"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/spr.jpg"))
    }
}
