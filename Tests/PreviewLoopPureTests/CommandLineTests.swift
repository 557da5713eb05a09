import PreviewLoop
import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// Parses arguments that must be accepted.
private func parse(_ arguments: [String]) throws -> ParsedCommand {
    try CommandLineParser.parse(arguments)
}

@Suite("CommandLine parsing: defaults and options")
struct CommandLineParsingTests {
    @Test func probeDefaultsAndJSON() throws {
        #expect(try parse(["probe", "clip.mp4"]) == .command(ProbeCommand(source: .init(input: "clip.mp4"))))
        #expect(try parse(["probe", "--json", "clip.mp4"]) == .command(ProbeCommand(source: .init(input: "clip.mp4"), isJSON: true)))
        var flashes = ProbeCommand(source: .init(input: "clip.mp4"), isJSON: true, analysesFlashes: true)
        flashes.source.threads = 3
        flashes.source.toneMapping = .clip
        #expect(try parse(["probe", "--flashes", "--json", "--threads", "3", "--tonemap", "clip", "clip.mp4"]) == .command(flashes))
    }

    @Test("--allow-redirects is a flag of every command that reads a clip, off by default",
          arguments: ["probe", "thumb", "strip", "loop", "render", "sprites", "card"])
    func allowRedirects(subcommand: String) throws {
        let output = ["thumb": ["-o", "a.png"], "strip": ["-o", "a.png"], "render": ["-o", "a.mp4"], "sprites": ["-o", "dir"],
                      "card": ["-o", "a.webp"]][subcommand] ?? []
        func allows(_ command: ParsedCommand) -> Bool? {
            switch command {
            case .command(let options as ProbeCommand): options.source.allowsRedirects
            case .command(let options as ThumbCommand): options.source.allowsRedirects
            case .command(let options as StripCommand): options.source.allowsRedirects
            case .command(let options as LoopCommand): options.source.allowsRedirects
            case .command(let options as RenderCommand): options.source.allowsRedirects
            case .command(let options as SpritesCommand): options.source.allowsRedirects
            case .command(let options as CardCommand): options.source.allowsRedirects
            default: nil
            }
        }
        #expect(allows(try parse([subcommand, "http://a.test/clip.mp4"] + output)) == false)
        #expect(allows(try parse([subcommand, "http://a.test/clip.mp4", "--allow-redirects"] + output)) == true)
    }

    @Test func thumbDefaults() throws {
        let expected = ThumbCommand(source: .init(input: "clip.mp4", threads: 2), output: "out.ppm", format: .ppm, time: .auto,
                                    size: .orientedBox(Size(width: 320, height: 180)), contentMode: .aspectFill,
                                    accuracy: .exact)
        #expect(try parse(["thumb", "clip.mp4", "-o", "out.ppm"]) == .command(expected))
    }

    @Test("--latest and --program-time (with --accuracy) choose the frame instead of --at")
    func thumbLiveChoices() throws {
        guard case .command(let latest as ThumbCommand) = try parse(["thumb", "live.m3u8", "-o", "a.png", "--latest"]) else {
            Issue.record("not a thumb command")
            return
        }
        #expect(latest.latest && latest.programTime == nil && latest.time == .auto)
        guard case .command(let dated as ThumbCommand) = try parse(["thumb", "live.m3u8", "-o", "a.png", "--program-time",
                                                                    "2026-12-07T04:00:00.5+01:00", "--accuracy", "keyframe"]) else {
            Issue.record("not a thumb command")
            return
        }
        #expect(!dated.latest && dated.programTime == 1_796_612_400.5 && dated.accuracy == .keyframe)
    }

    @Test func thumbEveryOption() throws {
        let parsed = try parse(["thumb", "--at", "1:30", "--size", "640x360", "--fit", "fit", "--accuracy", "keyframe",
                                "--threads", "8", "--output", "dir/OUT.PPM", "clip.mp4"])
        #expect(parsed == .command(ThumbCommand(source: .init(input: "clip.mp4", threads: 8), output: "dir/OUT.PPM", format: .ppm, time: .at(.seconds(90)),
                                              size: .exact(Size(width: 640, height: 360)), contentMode: .aspectFit,
                                              accuracy: .keyframe)))
    }

    @Test(arguments: [
        ["thumb", "clip.mp4", "-o", "a.ppm", "-t", "12.5", "-s", "64x36"],
        ["thumb", "clip.mp4", "--output=a.ppm", "--at=12.5", "--size=64x36"],
        ["thumb", "-o=a.ppm", "-t=12.5", "-s=64x36", "clip.mp4"],
        ["thumb", "-s", "1x1", "--size", "64x36", "-o", "a.ppm", "--at", "12.5", "clip.mp4"],  // last value wins
    ])
    func thumbSpellings(arguments: [String]) throws {
        let expected = ThumbCommand(source: .init(input: "clip.mp4"), output: "a.ppm", format: .ppm, time: .at(.seconds(12.5)),
                                    size: .exact(Size(width: 64, height: 36)))
        #expect(try parse(arguments) == .command(expected))
    }

    @Test(arguments: ContentMode.allCases)
    func fitValues(mode: ContentMode) throws {
        let parsed = try parse(["thumb", "clip.mp4", "-o", "a.ppm", "--fit", mode.rawValue])
        #expect(parsed == .command(ThumbCommand(source: .init(input: "clip.mp4"), output: "a.ppm", format: .ppm, contentMode: mode)))
    }

    @Test func stripDefaults() throws {
        let expected = StripCommand(source: .init(input: "clip.mp4", threads: 2), output: "s.ppm", format: .ppm, count: 8, columns: 8,
                                    size: .orientedBox(Size(width: 160, height: 90)), span: .window, start: .seconds(0),
                                    length: .seconds(15), accuracy: .auto, contentMode: .aspectFill)
        #expect(try parse(["strip", "clip.mp4", "-o", "s.ppm"]) == .command(expected))
    }

    @Test func stripEveryOption() throws {
        let parsed = try parse(["strip", "clip.mp4", "-o", "s.ppm", "-n", "12", "-c", "4", "-s", "80x45",
                                "--span", "window", "--start", "00:01:02.5", "--length", "20%",
                                "--accuracy", "keyframe", "--fit", "stretch", "--threads", "64"])
        #expect(parsed == .command(StripCommand(source: .init(input: "clip.mp4", threads: 64), output: "s.ppm", format: .ppm, count: 12, columns: 4,
                                              size: .exact(Size(width: 80, height: 45)), span: .window, start: .seconds(62.5),
                                              length: .percent(20), accuracy: .keyframe, contentMode: .stretch)))
    }

    @Test(arguments: [
        (["--count", "5"], 5, 5),           // columns follow the count
        (["--count=5", "--columns=2"], 5, 2),
        (["-c", "9", "-n", "4"], 4, 4),     // more columns than frames: one row
        (["-n", "1000"], 1000, 1000),
    ])
    func stripCountAndColumns(options: [String], count: Int, columns: Int) throws {
        guard case .command(let strip as StripCommand) = try parse(["strip", "clip.mp4", "-o", "s.ppm"] + options) else {
            Issue.record("not a strip")
            return
        }
        #expect(strip.count == count)
        #expect(strip.columns == columns)
    }

    @Test(arguments: SeekAccuracy.allCases)
    func stripAccuracies(accuracy: SeekAccuracy) throws {
        guard case .command(let strip as StripCommand) = try parse(["strip", "clip.mp4", "-o", "s.ppm", "--accuracy", accuracy.rawValue]) else {
            Issue.record("not a strip")
            return
        }
        #expect(strip.accuracy == accuracy)
    }

    @Test func stripSpanAll() throws {
        guard case .command(let strip as StripCommand) = try parse(["strip", "--span=all", "clip.mp4", "-o", "s.ppm"]) else {
            Issue.record("not a strip")
            return
        }
        #expect(strip.span == .all)
    }

    @Test func loopDefaults() throws {
        let expected = LoopCommand(source: .init(input: "clip.mp4", threads: 2), start: .seconds(0), length: .seconds(15), loops: 1,
                                   size: .orientedBox(Size(width: 320, height: 180)), contentMode: .aspectFill, isRealtime: false,
                                   log: nil, framesDirectory: nil)
        #expect(try parse(["loop", "clip.mp4"]) == .command(expected))
    }

    @Test func loopEveryOption() throws {
        let parsed = try parse(["loop", "--start", "2", "--length=1:00", "--loops", "0", "-s", "160x90", "--fit", "fit",
                                "--realtime", "--log", "t.csv", "--frames", "out/frames", "--threads", "1",
                                "https://example.com/a.mp4"])
        #expect(parsed == .command(LoopCommand(source: .init(input: "https://example.com/a.mp4", threads: 1), start: .seconds(2), length: .seconds(60),
                                            loops: 0, size: .exact(Size(width: 160, height: 90)), contentMode: .aspectFit,
                                            isRealtime: true, log: .file("t.csv"), framesDirectory: "out/frames")))
    }

    @Test func loopLogToStandardOutput() throws {
        #expect(try parse(["loop", "clip.mp4", "--log", "-"])
            == .command(LoopCommand(source: .init(input: "clip.mp4"), log: .standardOutput)))
        #expect(try parse(["loop", "--log=-", "clip.mp4"])
            == .command(LoopCommand(source: .init(input: "clip.mp4"), log: .standardOutput)))
    }

    @Test func inputSpellings() throws {
        #expect(try parse(["probe", "-"]) == .command(ProbeCommand(source: .init(input: "-"))))
        #expect(try parse(["probe", "--", "--json"]) == .command(ProbeCommand(source: .init(input: "--json"))))
        #expect(try parse(["probe", "--json", "--", "-h"]) == .command(ProbeCommand(source: .init(input: "-h"), isJSON: true)))
        #expect(try parse(["thumb", "-o", "a.ppm", "--", "-odd.mp4"])
            == .command(ThumbCommand(source: .init(input: "-odd.mp4"), output: "a.ppm", format: .ppm)))
    }

    @Test("Every command that decodes takes the input group: sheet too (--tonemap, --allow-redirects, --deadline)")
    func sheetTakesTheInputGroup() throws {
        let command = try parse(["sheet", "x.mp4", "-o", "a.jpg", "--tonemap", "clip", "--allow-redirects", "--deadline", "9"])
        guard case .command(let options as SheetCommand) = command else { Issue.record("not a sheet: \(command)"); return }
        #expect(options.source.toneMapping == .clip && options.source.allowsRedirects && options.source.deadline == 9)
    }

    @Test("batch report and batch export-page parse to commands of their own, typed right after batch")
    func batchSubcommands() throws {
        var report = BatchReportCommand()
        report.paths = ["OUT", "more.jsonl"]
        report.isJSON = true
        #expect(try parse(["batch", "report", "OUT", "--json", "more.jsonl"]) == .command(report))
        var duplicates = BatchReportCommand()
        duplicates.paths = ["OUT"]
        duplicates.duplicateThreshold = 12
        #expect(try parse(["batch", "report", "--duplicates", "OUT", "--hamming", "12"]) == .command(duplicates))
        #expect(try parse(["batch", "export-page", "OUT"]) == .command(BatchExportPageCommand(directory: "OUT")))
        #expect(try parse(["batch", "export-page", "--", "-odd"]) == .command(BatchExportPageCommand(directory: "-odd")))
        // Anywhere else the name is a word like any other: here, the manifest.
        guard case .command(let run as BatchCommand) = try parse(["batch", "-o", "x", "report"]) else {
            Issue.record("not a batch run")
            return
        }
        #expect(run.manifest == "report" && run.outputDirectory == "x")
        let refused: [([String], UsageError.Kind)] = [
            (["batch", "report"], .missingInput),
            (["batch", "report", "OUT", "--force"], .unknownOption("--force")),
            (["batch", "report", "OUT", "--hamming", "4"], .conflictingOptions("hamming", "duplicates")),
            (["batch", "export-page"], .missingInput),
            (["batch", "export-page", "a", "b"], .unexpectedArgument("b")),
            (["batch", "export-page", "OUT", "--jobs", "2"], .unknownOption("--jobs")),
            (["batch", "m.txt", "-o", "x", "--json"], .unknownOption("--json")),
            (["batch", "-j", "2", "report", "OUT"], .unexpectedArgument("OUT")),
        ]
        for (arguments, kind) in refused {
            let error = usageError(arguments)
            #expect(error?.kind == kind, "\(arguments): \(String(describing: error))")
            #expect(error?.subcommand?.rawValue == (arguments[1] == "report" || arguments[1] == "export-page" ? "batch \(arguments[1])" : "batch"))
        }
        #expect(usageError(["batch", "m.txt", "-o", "x", "--json"])?.message.contains("(an option of 'batch report')") == true)
        #expect(usageError(["batch", "-j", "2", "report", "OUT"])?.message.contains("'batch report' comes right after 'batch'") == true)
    }
}

@Suite("CommandLine parsing: help and version")
struct CommandLineHelpTests {
    @Test(arguments: [["--help"], ["-h"], ["help"]])
    func rootHelp(arguments: [String]) throws {
        guard case .help(let text) = try parse(arguments) else {
            Issue.record("no help for \(arguments)")
            return
        }
        for section in ["OVERVIEW:", "USAGE:", "OPTIONS:", "SUBCOMMANDS:", "--version"] {
            #expect(text.contains(section))
        }
        for subcommand in Subcommand.allCases {
            #expect(text.contains("  \(subcommand.rawValue) "))
        }
    }

    @Test(arguments: Subcommand.allCases)
    func subcommandHelp(subcommand: Subcommand) throws {
        let name = subcommand.rawValue
        let expected = ParsedCommand.help(HelpText.help(for: subcommand))
        #expect(try parse([name, "--help"]) == expected)
        #expect(try parse([name, "-h"]) == expected)
        #expect(try parse(["help", name]) == expected)
        #expect(try parse([name, "--bogus", "--size", "oops", "-h"]) == expected)  // help wins over errors
        let text = HelpText.help(for: subcommand)
        let argument = subcommand == .batch ? "<manifest>" : subcommand == .wall ? "<inputs…>" : "<input>"
        // serve takes no argument: its folder is the required --root.
        let sections = subcommand == .serve ? ["OVERVIEW:", "USAGE: preview-loop serve --root <dir>", "OPTIONS:"]
            : ["OVERVIEW:", "USAGE: preview-loop \(name) \(argument)", "ARGUMENTS:", "  \(argument)", "OPTIONS:"]
        for section in sections {
            #expect(text.contains(section), "\(name): \(section)")
        }
        if subcommand == .serve { #expect(!text.contains("ARGUMENTS:")) }
        // A long default may wrap; compare with the text's words joined by single spaces.
        let flat = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for option in subcommand.options {
            #expect(text.contains(option.helpLabel))
            if let defaultValue = option.defaultValue {
                #expect(flat.contains("(default: \(defaultValue))"), "\(name) --\(option.name)")
            }
        }
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= HelpText.width })
    }

    @Test func documentedDefaults() {
        let thumb = HelpText.help(for: .thumb), strip = HelpText.help(for: .strip), loop = HelpText.help(for: .loop)
        #expect(thumb.contains("(default: auto)") && thumb.contains("(default: 320x180 (180x320 for a") && thumb.contains("(default: exact)"))
        #expect(strip.contains("(default: 8)") && strip.contains("(default: 160x90 (90x160 for a") && strip.contains("(default: auto)"))
        #expect(loop.contains("(default: 1)") && loop.contains("(default: 15)") && loop.contains("(default: 2)"))
    }

    @Test func version() throws {
        #expect(try parse(["--version"]) == .version)
    }
}

@Suite("CommandLine parsing: usage errors")
struct CommandLineUsageErrorTests {
    @Test(arguments: [
        ([], UsageError.Kind.missingSubcommand, Subcommand?.none),
        (["thum", "clip.mp4"], .unknownSubcommand("thum"), nil),
        (["help", "nope"], .unknownSubcommand("nope"), nil),
        (["--frobnicate"], .unknownOption("--frobnicate"), nil),
        (["--version", "x"], .unexpectedArgument("x"), nil),
        (["thumb", "clip.mp4", "-o", "a.ppm", "--sze", "1x1"], .unknownOption("--sze"), .thumb),
        (["thumb", "clip.mp4", "-o", "a.ppm", "-x"], .unknownOption("-x"), .thumb),
        (["probe", "clip.mp4", "--deinterlace", "on"], .unknownOption("--deinterlace"), .probe),
        (["probe", "clip.mp4", "--threads", "2"], .conflictingOptions("threads", "flashes"), .probe),
        (["thumb", "clip.mp4", "--version"], .unknownOption("--version"), .thumb),
        (["thumb", "clip.mp4", "-o"], .missingValue(option: "output"), .thumb),
        (["strip", "clip.mp4", "-o", "a.ppm", "--count"], .missingValue(option: "count"), .strip),
        (["loop", "clip.mp4", "--log", "--realtime"], .missingValue(option: "log"), .loop),
        (["probe", "clip.mp4", "--json=yes"], .unexpectedValue(option: "json"), .probe),
        (["loop", "clip.mp4", "--realtime=1"], .unexpectedValue(option: "realtime"), .loop),
        (["probe"], .missingInput, .probe),
        (["thumb", "-o", "a.ppm"], .missingInput, .thumb),
        (["strip", "-o", "a.ppm"], .missingInput, .strip),
        (["loop", "--loops", "2"], .missingInput, .loop),
        (["probe", ""], .missingInput, .probe),
        (["thumb", "clip.mp4"], .missingOption("output"), .thumb),
        (["strip", "clip.mp4", "-n", "4"], .missingOption("output"), .strip),
        (["probe", "a.mp4", "b.mp4"], .unexpectedArgument("b.mp4"), .probe),
        (["strip", "clip.mp4", "-o", "s.ppm", "--span", "all", "--start", "1"], .conflictingOptions("start", "span"), .strip),
        (["strip", "clip.mp4", "-o", "s.ppm", "--length=3", "--span=all"], .conflictingOptions("length", "span"), .strip),
        (["thumb", "live.m3u8", "-o", "a.png", "--latest", "--at", "5"], .conflictingOptions("latest", "at"), .thumb),
        (["thumb", "live.m3u8", "-o", "a.png", "--latest", "--accuracy", "keyframe"], .conflictingOptions("latest", "accuracy"), .thumb),
        (["thumb", "live.m3u8", "-o", "a.png", "--latest", "--program-time", "2026-12-07T03:00:00Z"],
         .conflictingOptions("latest", "program-time"), .thumb),
        (["thumb", "live.m3u8", "-o", "a.png", "--program-time", "2026-12-07T03:00:00Z", "--start", "1"],
         .conflictingOptions("program-time", "start"), .thumb),
        (["thumb", "live.m3u8", "-o", "a.png", "--program-time", "03:00"], .invalidValue(option: "program-time", value: "03:00"), .thumb),
    ])
    func structuralErrors(arguments: [String], kind: UsageError.Kind, subcommand: Subcommand?) {
        let error = usageError(arguments)
        #expect(error?.kind == kind)
        #expect(error?.subcommand == subcommand)
    }

    @Test("An s3:// input or output whose bucket name S3 refuses is a usage error when parsed", arguments: [
        "Bad_Bucket!", "UPPER", "ab", String(repeating: "a", count: 64), "192.168.5.4", "-lead", "trail-", "two..dots",
    ])
    func badBucketNames(bucket: String) {
        let url = "s3://\(bucket)/x.jpg"
        #expect(usageError(["thumb", url, "-o", "a.jpg"])?.kind == .invalidValue(option: "input", value: url))
        #expect(usageError(["thumb", "clip.mp4", "-o", url])?.kind == .invalidValue(option: "output", value: url))
        #expect(usageError(["sprites", "clip.mp4", "-o", "s3://\(bucket)/thumbs/"])?.kind
            == .invalidValue(option: "output", value: "s3://\(bucket)/thumbs/"))
        #expect(usageError(["thumb", url, "-o", "a.jpg"])?.message.split(separator: "\n").count == 1)
    }

    @Test("Bucket names S3 accepts parse", arguments: ["abc", "clips", "my.clips-2024", String(repeating: "a", count: 63), "1.2.3"])
    func goodBucketNames(bucket: String) throws {
        _ = try parse(["thumb", "s3://\(bucket)/in.mp4", "-o", "s3://\(bucket)/out.jpg"])
    }

    @Test(arguments: ["axb", "-320x180", "16385x10", "320x180x2", "", "0x0", "-1x-1", "x", "0", "16385", "sourc", "+320x180",
                      "320x-2", "1e3x10"])
    func badSizes(value: String) {
        #expect(usageError(["thumb", "clip.mp4", "-o", "a.ppm", "--size=\(value)"])?.kind
            == .invalidValue(option: "size", value: value))
        #expect(usageError(["loop", "clip.mp4", "-s", value])?.kind == .invalidValue(option: "size", value: value))
    }

    @Test(arguments: [("320", SizeRequest.width(320)), ("320x", .width(320)), ("320x-1", .width(320)), ("320x0", .width(320)),
                      ("x180", .height(180)), ("-1x180", .height(180)), ("0x180", .height(180)), ("source", .source),
                      ("SOURCE", .source), ("320x180", .exact(Size(width: 320, height: 180)))])
    func sizesKeepingTheShape(value: String, expected: SizeRequest) throws {
        guard case .command(let options as ThumbCommand) = try parse(["thumb", "clip.mp4", "-o", "a.ppm", "--size=\(value)"]) else {
            Issue.record("not a thumb command"); return
        }
        #expect(options.size == expected)
        guard case .command(let render as RenderCommand) = try parse(["render", "clip.mp4", "-o", "a.mp4", "--size=\(value)"]) else {
            Issue.record("not a render command"); return
        }
        #expect(render.size == expected)
    }

    @Test func renderFlashSafety() throws {
        guard case .command(let checked as RenderCommand) = try parse(["render", "clip.mp4", "-o", "a.mp4"]),
              case .command(let off as RenderCommand) = try parse(["render", "clip.mp4", "-o", "a.mp4", "--flash-safety", "off"]) else {
            Issue.record("not a render command"); return
        }
        #expect(checked.flashSafety == .check && off.flashSafety == .off)
        guard case .command(let avoid as RenderCommand) = try parse(["render", "clip.mp4", "-o", "a.mp4", "--flash-safety", "avoid"]) else {
            Issue.record("not a render command"); return
        }
        #expect(avoid.flashSafety == .avoid)
        #expect(usageError(["render", "clip.mp4", "-o", "a.mp4", "--flash-safety", "sometimes"])?.kind
                    == .invalidValue(option: "flash-safety", value: "sometimes"))
        // A card and a wall have no window to move: avoid is not one of their values.
        #expect(usageError(["card", "clip.mp4", "-o", "c.webp", "--flash-safety", "avoid"])?.kind
                    == .invalidValue(option: "flash-safety", value: "avoid"))
    }

    @Test func oddSidesForMP4() {
        #expect(usageError(["render", "clip.mp4", "-o", "a.mp4", "--size=321"])?.kind == .invalidValue(option: "size", value: "321"))
        #expect(usageError(["render", "clip.mp4", "-o", "a.mp4", "--size=x181"])?.kind == .invalidValue(option: "size", value: "x181"))
        #expect(usageError(["render", "clip.mp4", "-o", "a.gif", "--size=321"]) == nil)
    }

    @Test(arguments: ["abc", "-5", "1:60", "1:2:3:4", "150%", "%", "1e3x", ""])
    func badTimes(value: String) {
        #expect(usageError(["thumb", "clip.mp4", "-o", "a.ppm", "--at=\(value)"])?.kind
            == .invalidValue(option: "at", value: value))
        #expect(usageError(["strip", "clip.mp4", "-o", "a.ppm", "--start=\(value)"])?.kind
            == .invalidValue(option: "start", value: value))
        #expect(usageError(["loop", "clip.mp4", "--length=\(value)"])?.kind
            == .invalidValue(option: "length", value: value))
    }

    @Test(arguments: ["0", "0%", "0:00", "-3"])
    func emptyLengths(value: String) {
        #expect(usageError(["loop", "clip.mp4", "--length", value])?.kind == .invalidValue(option: "length", value: value))
        #expect(usageError(["strip", "clip.mp4", "-o", "s.ppm", "--length", value])?.kind
            == .invalidValue(option: "length", value: value))
    }

    @Test(arguments: [
        (["strip", "clip.mp4", "-o", "s.ppm", "--count", "0"], "count", "0"),
        (["strip", "clip.mp4", "-o", "s.ppm", "-n", "1001"], "count", "1001"),
        (["strip", "clip.mp4", "-o", "s.ppm", "-n", "many"], "count", "many"),
        (["strip", "clip.mp4", "-o", "s.ppm", "--columns", "0"], "columns", "0"),
        (["strip", "clip.mp4", "-o", "s.ppm", "-c", "-2"], "columns", "-2"),
        (["loop", "clip.mp4", "--loops", "-1"], "loops", "-1"),
        (["loop", "clip.mp4", "--loops", "1.5"], "loops", "1.5"),
        (["thumb", "clip.mp4", "-o", "a.ppm", "--threads", "0"], "threads", "0"),
        (["strip", "clip.mp4", "-o", "a.ppm", "--threads", "65"], "threads", "65"),
        (["loop", "clip.mp4", "--threads", "99999999999999999999"], "threads", "99999999999999999999"),
        (["thumb", "clip.mp4", "-o", "a.ppm", "--fit", "cover"], "fit", "cover"),
        (["thumb", "clip.mp4", "-o", "a.ppm", "--fit", "FILL"], "fit", "FILL"),
        (["thumb", "clip.mp4", "-o", "a.ppm", "--accuracy", "auto"], "accuracy", "auto"),
        (["strip", "clip.mp4", "-o", "a.ppm", "--accuracy", "fast"], "accuracy", "fast"),
        (["strip", "clip.mp4", "-o", "a.ppm", "--span", "half"], "span", "half"),
        (["loop", "clip.mp4", "--log="], "log", ""),
        (["loop", "clip.mp4", "--frames="], "frames", ""),
    ])
    func invalidValues(arguments: [String], option: String, value: String) {
        let error = usageError(arguments)
        #expect(error?.kind == .invalidValue(option: option, value: value))
        #expect(error?.subcommand == Subcommand(rawValue: arguments[0]))
    }

    @Test(arguments: ["a.gif", "a.tiff", "a", "a.ppm.gz", "dir/", ".ppm", "a.", "dir.ppm/a", ""])
    func unsupportedOutputs(path: String) {
        for subcommand in ["thumb", "strip"] {
            let error = usageError([subcommand, "clip.mp4", "-o", path])
            #expect(error?.kind == .unsupportedOutputFormat(path))
            #expect(error?.subcommand == Subcommand(rawValue: subcommand))
        }
    }

    @Test func reportNamesTheSubcommand() throws {
        let report = try #require(usageError(["strip", "clip.mp4", "-o", "s.ppm", "-n", "0"])).report
        let lines = report.split(separator: "\n")
        #expect(lines.first?.hasPrefix("Error: ") == true)
        #expect(lines.dropFirst().first?.hasPrefix("Usage: preview-loop strip <input> -o <file>") == true)
        #expect(lines.last == "See 'preview-loop strip --help'.")
        #expect(try #require(usageError(["nope"])).report.hasSuffix("See 'preview-loop --help'."))
    }

    @Test func suggestions() throws {
        #expect(try #require(usageError(["thumb", "x", "-o", "a.ppm", "--sise", "1x1"])).message.contains("'--size'"))
        #expect(try #require(usageError(["strp"])).message.contains("'strip'"))
        #expect(!(try #require(usageError(["thumb", "x", "-o", "a.ppm", "--zzzzzz"])).message.contains("did you mean")))
    }
}

@Suite("CommandLine: pure helpers")
struct CommandLineHelperTests {
    @Test(arguments: [("a.ppm", ImageFileFormat?.some(.ppm)), ("dir.x/A.PPM", .ppm), ("a.Ppm", .ppm), ("a.png", .png), ("a.gif", nil),
                      ("ppm", nil), (".ppm", nil), ("dir/.ppm", nil), ("a.ppm/", nil)])
    func imageFormatByExtension(path: String, format: ImageFileFormat?) {
        #expect(ImageFileFormat(path: path) == format)
    }

    @Test func windowSampleTimes() throws {
        let span = try SampleSpan.window(start: .seconds(2), length: .seconds(4), duration: 10)
        #expect(span == SampleSpan(start: 2, length: 4))
        #expect(span.sampleTimes(count: 4) == [2.5, 3.5, 4.5, 5.5])
        #expect(span.interval(count: 4) == 1)
        // Cut at the end of the clip; unknown duration keeps the window.
        #expect(try SampleSpan.window(start: .seconds(8), length: .seconds(15), duration: 10)
            == SampleSpan(start: 8, length: 2))
        #expect(try SampleSpan.window(start: .seconds(8), length: .seconds(15), duration: nil)
            == SampleSpan(start: 8, length: 15))
        #expect(try SampleSpan.resolve(.wholeClip, duration: 4)
            == SampleSpan(start: 0, length: 4))
        #expect(try SampleSpan.resolve(.window(start: .percent(50), length: .percent(10)), duration: 20)
            == SampleSpan(start: 10, length: 2))
    }

    @Test(arguments: [
        (ContactStrip.Span.window(start: .seconds(10), length: .seconds(1)), Double?.some(10)),  // starts at the end
        (.window(start: .percent(10), length: .seconds(1)), nil),                                // % of unknown
        (.window(start: .seconds(1), length: .percent(0)), 10),                                  // empty
        (.window(start: .seconds(-1), length: .seconds(1)), 10),                                 // negative
        (.wholeClip, nil),
        (.wholeClip, 0),
    ])
    func unusableSpans(span: ContactStrip.Span, duration: Double?) {
        #expect(throws: PreviewLoopError.self) {
            _ = try SampleSpan.resolve(span, duration: duration)
        }
    }

    @Test func timingLogRows() {
        #expect(TimingLog.header == "pass,index,presentation_time,wall_time,decode_ms,scale_ms,lateness_ms,dropped")
        #expect(TimingLog.row(pass: 2, index: 31, presentationTime: .milliseconds(1_033), wallTime: .microseconds(2_500_001),
                              decode: .microseconds(1_234), conversion: .nanoseconds(500_400), lateness: nil)
            == "2,31,1.033000,2.500001,1.234,0.500,,0")
        #expect(TimingLog.row(pass: 1, index: 1, presentationTime: .zero, wallTime: .zero, decode: .zero,
                              conversion: .zero, lateness: .microseconds(-1_500), dropped: 2).hasSuffix(",-1.500,2"))
    }

    @Test func frameFileNames() {
        #expect(LoopRecorder.frameFileName(pass: 1, index: 1) == "001-00001.ppm")
        #expect(LoopRecorder.frameFileName(pass: 12, index: 34567) == "012-34567.ppm")
    }

    @Test func runtimeErrorLines() {
        let error = PreviewLoopError(.inputNotFound, "no such file")
        #expect(CommandFailure.errorLine(for: error, input: "a.mp4") == "Error: a.mp4: no such file")
        let named = PreviewLoopError(.inputNotFound, "a.mp4: no such file")
        #expect(CommandFailure.errorLine(for: named, input: "a.mp4") == "Error: a.mp4: no such file")
    }

    @Test func probeNumbers() {
        #expect(ProbeRun.decimal(4) == "4.0")
        #expect(ProbeRun.decimal(30000.0 / 1001) == "29.97003")
        #expect(ProbeRun.decimal(0.0333333) == "0.033333")
        #expect(JSONValue.string("a\"b\\c\n\u{1}").text == "\"a\\\"b\\\\c\\n\\u0001\"")
    }
}

/// `preview-loop timing`: the summary of a loop's CSV log, from hand-written logs.
@Suite("CommandLine: timing summary")
struct TimingSummaryTests {
    static let header = "pass,index,presentation_time,wall_time,decode_ms,scale_ms,lateness_ms,dropped"

    @Test func realtimeLog() throws {
        // Two passes of 3 frames; the seam (pass 2, index 1) is 4 ms late; one frame dropped.
        let log = [Self.header,
                   "1,1,0.000000,0.000000,2.000,1.000,0.100,0",
                   "1,2,0.040000,0.040000,3.000,1.000,0.200,0",
                   "1,3,0.080000,0.080000,4.000,1.000,0.300,0",
                   "2,1,0.000000,0.124000,0.000,0.000,4.000,0",
                   "2,2,0.040000,0.160000,0.000,0.000,0.500,0",
                   "2,3,0.080000,0.200000,0.000,0.000,0.600,1"].joined(separator: "\n") + "\n"
        let summary = try TimingSummary(csv: log)
        #expect(summary.frames == 6 && summary.passes == 2 && summary.dropped == 1)
        #expect(abs(summary.framesPerSecond - 25) < 1e-9)          // 5 intervals over 0.2 s
        #expect(summary.seamLateness == [4.0])
        #expect(summary.lateness?.maximum == 4.0 && summary.lateness?.p50 == 0.3)
        #expect(summary.decode.p50 == 0.0 && summary.decode.maximum == 4.0)
        #expect(summary.text.contains("seam ms:       4.000"))
        let json = try JSONSerialization.jsonObject(with: Data(summary.json.utf8)) as? [String: Any]
        #expect(json?["frames"] as? Int == 6 && json?["dropped"] as? Int == 1)
    }

    @Test func offlineLogAndOldHeader() throws {
        // The 7-column header of logs written before the dropped column still reads.
        let log = "pass,index,presentation_time,wall_time,decode_ms,scale_ms,lateness_ms\n1,1,0.000000,0.001000,1.000,0.500,\n1,2,0.040000,0.002000,1.000,0.500,\n"
        let summary = try TimingSummary(csv: log)
        #expect(summary.lateness == nil && summary.seamLateness.isEmpty && summary.frames == 2)
        #expect(summary.text.contains("(offline clock)"))
    }

    @Test(arguments: ["", "a,b,c\n1,2,3\n", header + "\n", header + "\nx,1,0,0,0,0,\n"])
    func malformedLogs(_ text: String) {
        #expect(throws: TimingSummary.Malformed.self) { try TimingSummary(csv: text) }
    }

    @Test func parsesTheSubcommand() throws {
        #expect(try CommandLineParser.parse(["timing", "log.csv", "--json"]) == .command(TimingCommand(input: "log.csv", isJSON: true)))
    }

    /// What `JSONSerialization` (pretty-printed, sorted keys) wrote for a summary, as `--json` did before.
    static func foundationJSON(_ summary: TimingSummary) -> String {
        func object(_ p: TimingSummary.Percentiles) -> [String: Double] { ["p50": p.p50, "p95": p.p95, "p99": p.p99, "max": p.maximum] }
        var value: [String: Any] = [
            "frames": summary.frames, "passes": summary.passes, "fps": (summary.framesPerSecond * 100).rounded() / 100,
            "decode_ms": object(summary.decode), "scale_ms": object(summary.scale), "seam_lateness_ms": summary.seamLateness,
            "dropped": summary.dropped,
        ]
        value["lateness_ms"] = summary.lateness.map(object) ?? NSNull()
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    @Test("--json is byte for byte what JSONSerialization wrote", arguments: [
        // Realtime, two seams, odd decimals and whole numbers.
        [header, "1,1,0.000000,0.000000,2.000,1.000,0.100,0", "1,2,0.040000,0.041000,3.125,0.333,0.200,2",
         "2,1,0.000000,0.124000,0.000,0.000,4.000,0", "3,1,0.000000,0.300000,12345.678,1e-7,17.5,0"],
        // Offline: no lateness (null), no seams (an empty array).
        ["pass,index,presentation_time,wall_time,decode_ms,scale_ms,lateness_ms",
         "1,1,0.000000,0.001000,1.000,0.500,", "1,2,0.040000,0.002000,1.000,0.500,"],
        // A single frame: no span, 0 fps.
        [header, "1,1,0.000000,0.000000,0.001,0.002,,0"],
    ])
    func jsonMatchesFoundation(_ lines: [String]) throws {
        let summary = try TimingSummary(csv: lines.joined(separator: "\n") + "\n")
        #expect(summary.json == Self.foundationJSON(summary))
    }

    @Test("A log with values that are not finite decimals is refused (it printed {} and exited 0)", arguments: [
        "1,1,0.000000,0.000000,nan,1.000,0.100,0", "1,2,0.040000,0.040000,1.000,1.000,inf,0",
        "1,1,0.000000,0x1p4,1.000,1.000,,0", "1,1,0.000000,1e400,1.000,1.000,,0", "1,1,0.000000,0.000000,1.000,1.000,,-1",
    ])
    func nonFiniteRefused(_ line: String) {
        #expect(throws: TimingSummary.Malformed.self) { try TimingSummary(csv: Self.header + "\n" + line + "\n") }
    }
}
