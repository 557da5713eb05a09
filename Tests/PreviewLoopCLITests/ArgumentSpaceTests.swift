import Foundation
import Testing
import PreviewLoopTestSupport
import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// Property tests over the argument space: every numeric option of every subcommand with
/// extreme values — 0, tiny, huge, negative, NaN, inf, hex, very long digit strings — is either
/// accepted within its documented range or refused with a usage error; never a trap. Mostly in process
/// against the pure parser (thousands of cases in well under a second), plus a small seeded sample
/// through the built binary under GNU `time` (status, one `Error:` line, peak memory of refusals).
@Suite("Argument space: extreme values never crash", .timeLimit(.minutes(10)), .tags(.slow))
struct ArgumentSpaceTests {
    /// Options whose values are not numbers.
    static let nonNumeric: Set<String> = ["output", "text-color", "font", "out", "recipe", "fit", "accuracy", "span", "format", "reveal", "background", "log",
                                          "frames", "capture-dir", "admission", "root", "listen", "access-log"]

    /// The extremes tried on every numeric option.
    static let extremes: [String] = [
        "0", "-0", "1", "-1", "0.000000001", "1e-300", "5e-324", "0." + String(repeating: "0", count: 300) + "1",
        "99999999999999999999", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        String(repeating: "9", count: 400), "1e308", "1e400", "nan", "NaN", "inf", "-inf", "infinity", "0x10", "0x1p4",
        "", " ", "1 ", "16384x16384", "100000x100000", "0x0", "-1x-1", "1x1", "16383x1", "1:0", "0:1", "1e9:1",
        "59:59:59.999", "00:00:99999999999", "99999999999:00", "100%", "101%", "1e9%", "nan%", "0x10%", "1-2", "2-1",
        "0-1e9", "1,2,3", "1,,2", "\u{1B}[31m", "1\n2", "١٢",
    ]

    /// The output path each subcommand gets, so that parsing reaches its numeric options.
    static func baseArguments(_ subcommand: Subcommand) -> [String] {
        switch subcommand.rawValue {
        case "probe", "timing": [subcommand.rawValue, "clip.mp4"]
        case "thumb", "strip": [subcommand.rawValue, "clip.mp4", "-o", "out.png"]
        case "loop": [subcommand.rawValue, "clip.mp4", "--capture-dir", "d"]
        case "render": [subcommand.rawValue, "clip.mp4", "-o", "out.gif"]
        case "sprites": [subcommand.rawValue, "clip.mp4", "-o", "sp"]
        case "card": [subcommand.rawValue, "clip.mp4", "-o", "card.gif"]
        case "sheet": [subcommand.rawValue, "clip.mp4", "-o", "sheet.png"]
        case "batch": [subcommand.rawValue, "clips.jsonl", "--out", "out"]
        case "batch report": ["batch", "report", "out", "--duplicates"]
        case "batch export-page": ["batch", "export-page", "out"]
        case "wall": [subcommand.rawValue, "clip.mp4", "--log", "logs"]
        case "serve": [subcommand.rawValue, "--root", "media"]
        default: [subcommand.rawValue]
        }
    }

    static func numericOptions(_ subcommand: Subcommand) -> [String] {
        subcommand.options.filter { $0.takesValue && !nonNumeric.contains($0.name) }.map(\.name)
    }

    /// Checks what a parse that succeeded promises: sizes within 1…16384, counts and rates in range,
    /// times finite and non-negative, and the work budget within its documented ranges.
    static func checkAccepted(_ command: ParsedCommand, _ arguments: [String]) {
        func size(_ size: Size) {
            #expect((1...16384).contains(size.width) && (1...16384).contains(size.height), "\(arguments)")
        }
        func time(_ position: TimePosition) {
            switch position {
            case .seconds(let value): #expect(value.isFinite && value >= 0 && value <= 1e9, "\(arguments)")
            case .percent(let value): #expect(value.isFinite && (0...100).contains(value), "\(arguments)")
            }
        }
        func budget(_ budget: WorkBudget) {
            #expect(WorkBudget.memoryRange.contains(budget.maxMemoryMB) && WorkBudget.framesRange.contains(budget.maxFrames))
        }
        func timeout(_ value: Double) { #expect(value > 0 && value <= 86_400, "\(arguments)") }
        switch command {
        case .command(let o as ProbeCommand): timeout(o.source.timeout)
        case .command(let o as ThumbCommand):
            time(o.start); time(o.length); budget(o.budget); timeout(o.source.timeout)
            #expect(o.cornerRadius.isFinite && o.cornerRadius >= 0)
            for known in o.size.knownSizes {
                size(known)
                #expect(WorkBudget.rgba(known) * 4 <= o.budget.maxBytes, "\(arguments)")
            }
        case .command(let o as StripCommand):
            time(o.start); time(o.length); budget(o.budget); timeout(o.source.timeout)
            #expect((1...1000).contains(o.count) && (1...o.count).contains(o.columns), "\(arguments)")
            for known in o.size.knownSizes {
                size(known)
                #expect(3 * Double(o.count) * WorkBudget.rgb(known) <= o.budget.maxBytes, "\(arguments)")
            }
        case .command(let o as LoopCommand):
            o.size.knownSizes.forEach(size); time(o.start); time(o.length); budget(o.budget); timeout(o.source.timeout)
            #expect(o.loops >= 0 && o.captureTimes.allSatisfy { $0.isFinite && $0 >= 0 })
        case .command(is TimingCommand): break
        case .command(let o as RenderCommand):
            time(o.start); time(o.length); budget(o.budget); timeout(o.source.timeout)
            #expect((1...120).contains(o.framesPerSecond))
            for known in o.size.knownSizes {
                size(known)
                #expect(RenderCommand.bytes(frames: 1, size: known, format: o.format) <= o.budget.maxBytes, "\(arguments)")
            }
        case .command(let o as SpritesCommand):
            budget(o.budget); timeout(o.source.timeout)
            switch o.every {
            case .auto: break
            case .every(let seconds): #expect(seconds.isFinite && seconds > 0, "\(arguments)")
            case .count(let count): #expect((1...100_000).contains(count), "\(arguments)")
            }
            #expect((1...100).contains(o.columns) && (1...100).contains(o.rows))
            for known in o.size.knownSizes {
                size(known)
                #expect(o.columns * known.width <= 16383 && o.rows * known.height <= 16383, "\(arguments)")
            }
        case .command(let o as CardCommand):
            size(o.style.size); time(o.start); time(o.length); budget(o.budget); timeout(o.source.timeout)
            #expect(o.style.posterHold.isFinite && o.style.playLength.isFinite && o.stillTime.isFinite)
            let frames = PreviewCard.frameCount(duration: CardTimeline(style: o.style).duration, framesPerSecond: o.framesPerSecond)
            #expect(frames <= o.budget.maxFrames, "\(arguments)")
        case .command(let o as SheetCommand):
            timeout(o.source.timeout)
            #expect((1...100).contains(o.columns) && (1...100).contains(o.rows) && o.columns * o.rows <= SheetCommand.maximumTiles)
        case .command(is BatchCommand): break
        case .command(let o as WallCommand):
            size(o.size); timeout(o.timeout)
            #expect(o.start.isFinite && o.start >= 0 && o.length.isFinite && o.length > 0, "\(arguments)")
            #expect((1...1_000_000).contains(o.passes) && o.seconds.map { $0 > 0 && $0 <= 86_400 } ?? true)
            #expect((0...65_536).contains(o.cacheBudgetMiB) && (1...64).contains(o.workers) && (0...60).contains(o.stagger))
        case .command(let o as ServeCommand):
            #expect((1...64).contains(o.workers) && (0...10_000).contains(o.queue) && (0...65_535).contains(o.listen.port))
            #expect(o.requestDeadline.isFinite && o.requestDeadline > 0 && o.connectionTimeout.isFinite && o.connectionTimeout > 0)
            #expect(o.grace.isFinite && o.grace >= 0 && o.memoryCacheBytes >= 0 && o.memoryBudget >= 16 << 20, "\(arguments)")
        case .help, .version, .generated, .command: break
        }
    }

    /// Parses, returning whether it was accepted; a usage error is a refusal, anything else is a defect.
    static func parse(_ arguments: [String]) -> Bool {
        do {
            checkAccepted(try CommandLineParser.parse(arguments), arguments)
            return true
        } catch {
            #expect(!error.message.isEmpty)
            #expect(!error.report.contains("\u{1B}"), "\(arguments): raw control character in \(error.report)")
            #expect(error.report.split(separator: "\n").filter { $0.hasPrefix("Error:") }.count == 1)
            return false
        }
    }

    @Test("Every numeric option of every subcommand, every extreme: accepted in range or refused", arguments: Subcommand.allCommands)
    func everyOption(_ subcommand: Subcommand) {
        let clock = ContinuousClock()
        let started = clock.now
        var cases = 0
        for name in Self.numericOptions(subcommand) {
            for value in Self.extremes {
                _ = Self.parse(Self.baseArguments(subcommand) + ["--\(name)", value])
                _ = Self.parse(Self.baseArguments(subcommand) + ["--\(name)=\(value)"])
                cases += 2
            }
        }
        #expect(cases > 0 || ["timing", "batch export-page"].contains(subcommand.rawValue))
        // Generous: thousands of parses take milliseconds; a runaway parse would not.
        #expect(clock.now - started < .seconds(20))
    }

    @Test("Random combinations of extremes (seeded): accepted in range or refused",
          arguments: Subcommand.allCommands.filter { !ArgumentSpaceTests.numericOptions($0).isEmpty })
    func randomCombinations(_ subcommand: Subcommand) {
        var random = SeededGenerator(state: 0x11A ^ UInt64(subcommand.rawValue.count))
        let names = Self.numericOptions(subcommand)
        for _ in 0..<400 {
            var arguments = Self.baseArguments(subcommand)
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let name = names[Int(random.next() % UInt64(names.count))]
                arguments += ["--\(name)", Self.extremes[Int(random.next() % UInt64(Self.extremes.count))]]
            }
            _ = Self.parse(arguments)
        }
    }

    @Test("A seeded sample through the binary: a status, one Error: line, refusals under 512 MB")
    func binarySample() throws {
        let clip = try BadInputs.path("small.mp4")
        var random = SeededGenerator(state: 2026_11)
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Extremes that could make a real job long on purpose are left to the parser tests: loop's
        // --loops (an endless player by design).
        let picks = ["thumb", "strip", "render", "sprites", "card", "loop", "probe"].map { Subcommand(rawValue: $0)! }
        for run in 0..<14 {
            let subcommand = picks[run % picks.count]
            let names = Self.numericOptions(subcommand).filter { $0 != "loops" && $0 != "threads" }
            var arguments = Self.baseArguments(subcommand).map {
                $0 == "clip.mp4" ? clip : ($0.hasPrefix("out.") || $0 == "sp" || $0 == "card.gif" || $0 == "d")
                    ? directory + "/\(run)-" + $0 : $0
            }
            for _ in 0..<2 {
                let name = names[Int(random.next() % UInt64(names.count))]
                arguments += ["--\(name)", Self.extremes[Int(random.next() % UInt64(Self.extremes.count))]]
            }
            let (result, peak, _) = try Child.measuredCLI(arguments)
            let what = arguments.joined(separator: " ").prefix(200)
            #expect(result.signal == nil, "\(what): signal")
            #expect([0, 1, 64].contains(result.status), "\(what): exit \(result.status)")
            #expect(result.elapsed < 60, "\(what): \(result.elapsed) s")
            if result.status != 0 {
                #expect(result.errorLines.filter { $0.hasPrefix("Error:") }.count == 1, "\(what): \(result.stderr)")
                #expect(peak < HostileInputTests.memoryBound, "\(what): peak \(peak >> 20) MB")
            }
        }
    }
}
