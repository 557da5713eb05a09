import Foundation
import Testing
import PreviewLoopTestSupport
import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// Every reproducer of the crashes, runaway jobs and small defects found by attack,
/// run through the built CLI under GNU `time`: the exit status, exactly one `Error:` line, a bounded
/// wall time, peak memory under ``HostileInputTests/memoryBound`` and nothing left in the output
/// directory. The crafted files (`far`/`gap` family, a 1 h clip) come from `Fixtures/make-bad-inputs.sh`.
@Suite("Hostile input: crashes, runaway work, small defects", .timeLimit(.minutes(10)))
struct HostileInputTests {
    /// The stated bound on any refusal path's peak RSS.
    static let memoryBound = 512 << 20

    /// What a run must look like.
    enum Expect {
        /// Refused on the command line or before decoding: status 64.
        case usage(containing: String)
        /// Failed at run time: status 1.
        case failure(containing: String)
        /// Succeeded.
        case success
    }

    /// Runs the CLI measured, with `{out}` in arguments replaced by a fresh directory, and checks the
    /// outcome, the one `Error:` line, the time and memory bounds, and (on failure) an empty directory.
    @discardableResult
    func run(_ arguments: [String], _ expect: Expect, seconds: Double = 20,
             sourceLocation: SourceLocation = #_sourceLocation) throws -> (result: ChildResult, directory: String) {
        let directory = TestPaths.temporaryDirectory()
        let arguments = arguments.map { $0.replacingOccurrences(of: "{out}", with: directory) }
        let what = arguments.joined(separator: " ").prefix(160)
        let (result, peak, _) = try Child.measuredCLI(arguments)
        #expect(result.signal == nil, "\(what): signal \(result.signal ?? 0)", sourceLocation: sourceLocation)
        #expect(result.elapsed < seconds, "\(what): took \(result.elapsed) s", sourceLocation: sourceLocation)
        #expect(peak < Self.memoryBound, "\(what): peak RSS \(peak >> 20) MB", sourceLocation: sourceLocation)
        let errorLines = result.errorLines.filter { $0.hasPrefix("Error:") }
        switch expect {
        case .usage(let text), .failure(let text):
            let status: Int32 = if case .usage = expect { 64 } else { 1 }
            #expect(result.status == status, "\(what): exit \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
            #expect(errorLines.count == 1, "\(what): \(result.stderr)", sourceLocation: sourceLocation)
            #expect(result.stderr.contains(text), "\(what): \(result.stderr)", sourceLocation: sourceLocation)
            let left = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            #expect(left.isEmpty, "\(what): left \(left)", sourceLocation: sourceLocation)
        case .success:
            #expect(result.status == 0, "\(what): exit \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
            #expect(errorLines.isEmpty, "\(what): \(result.stderr)", sourceLocation: sourceLocation)
        }
        return (result, directory)
    }

    static func bad(_ name: String) throws -> String { try BadInputs.path(name) }

    // MARK: Item 1: crashes

    @Test("sprites --every 0.000000001 and 0.(300 zeros)1: refused (was SIGABRT, SIGILL)")
    func tinyEvery() throws {
        let small = try Self.bad("small.mp4")
        try run(["sprites", small, "-o", "{out}/sp", "--every", "0.000000001"], .usage(containing: "--max-frames"))
        let tiny = "0." + String(repeating: "0", count: 300) + "1"
        try run(["sprites", small, "-o", "{out}/sp", "--every", tiny], .usage(containing: "--max-frames"))
    }

    @Test("A clip 1e12 s from zero (declared 1e12 + 5 s) samples as the 5 s it is (was a 1.6 TB allocation)")
    func farClip() throws {
        for name in ["far-1e12.mkv", "far-1e9.mkv"] {
            let (result, directory) = try run(["sprites", try Self.bad(name), "-o", "{out}/sp", "--every", "1"], .success)
            #expect(result.stdout.count > 0)
            let vtt = try String(contentsOfFile: directory + "/sp/thumbnails.vtt", encoding: .utf8)
            #expect(vtt.contains("00:00:04.000 --> 00:00:05.000"), "\(vtt)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/sp").sorted() == ["sprites-1.jpg", "thumbnails.vtt"])
            let probe = try Child.cli(["probe", try Self.bad(name), "--json"])
            let json = try JSONSerialization.jsonObject(with: probe.stdout) as? [String: Any]
            let duration = json?["duration"] as? Double
            #expect(duration.map { abs($0 - 5) < 0.01 } == true, "\(String(decoding: probe.stdout, as: UTF8.self))")
        }
    }

    @Test("timing: dropped counts 9223372036854775807 + 1 are an error, not an overflow trap")
    func droppedOverflow() throws {
        let directory = TestPaths.temporaryDirectory()
        let log = directory + "/log.csv"
        try ("pass,index,presentation_time,wall_time,decode_ms,scale_ms,lateness_ms,dropped\n"
            + "1,1,0.000000,0.000000,1.0,1.0,,9223372036854775807\n1,2,0.040000,0.040000,1.0,1.0,,1\n")
            .write(toFile: log, atomically: true, encoding: .utf8)
        try run(["timing", log], .failure(containing: "dropped counts add up"))
        try run(["timing", "--json", log], .failure(containing: "dropped counts add up"))
    }

    // MARK: Item 2: timestamps

    @Test("One frame at 1e9 s: the loop presents it at 0 in its window; render writes one frame, quickly")
    func oneFrameFarAway() throws {
        let clip = try Self.bad("one-at-1e9.mkv")
        let (loop, _) = try run(["loop", clip, "--log", "-"], .success)
        let rows = String(decoding: loop.stdout, as: UTF8.self).split(separator: "\n").dropFirst()
        #expect(rows.count == 1)
        let presentation = rows.first.map { $0.split(separator: ",")[2] }.flatMap { Double($0) }
        #expect(presentation.map { $0 >= 0 && $0 < 15 } == true, "\(rows)")
        let (gif, directory) = try run(["render", clip, "-o", "{out}/r.gif", "--size", "64x36"], .success, seconds: 10)
        #expect(gif.stdout.count > 0)
        #expect(FileManager.default.fileExists(atPath: directory + "/r.gif"))
        try run(["render", clip, "-o", "{out}/r.mp4", "--timeout", "5"], .success, seconds: 10)
    }

    @Test("Reading ahead for the origin loses no frame: a raw H.264 stream (no start, no timestamps) loops whole")
    func originReadAheadKeepsFrames() throws {
        let clip = try Self.bad("raw.h264")
        let (loop, _) = try run(["loop", clip, "--log", "-"], .success)
        let rows = String(decoding: loop.stdout, as: UTF8.self).split(separator: "\n").dropFirst()
        let probe = try Child.tool("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames",
                                             "-of", "csv=p=0", clip])
        #expect(rows.count == Int(probe.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)), "\(rows.count) frames")
    }

    @Test("Three frames at 1000 s: render's file lasts a fraction of a second, not 999.9 s")
    func threeFramesLate() throws {
        let (_, directory) = try run(["render", try Self.bad("three-at-1000.mkv"), "-o", "{out}/r.mp4"], .success)
        let probe = try Child.tool("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", directory + "/r.mp4"])
        let duration = Double(probe.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(duration > 0 && duration <= 3, "duration \(duration)")
    }

    @Test("Two frames 1,000,000 s apart: corrupt timing, no sheets (was 1,001 sheets)")
    func gapClip() throws {
        let clip = try Self.bad("gap-1e6.mkv")
        try run(["sprites", clip, "-o", "{out}/sp"], .failure(containing: "corrupt timing"))
        try run(["render", clip, "-o", "{out}/r.gif"], .failure(containing: "corrupt timing"))
        try run(["probe", clip], .failure(containing: "corrupt timing"))
    }

    // MARK: Item 3: work budget

    @Test("Absurd sizes and counts are refused before decoding, naming the limit")
    func absurdRequests() throws {
        let small = try Self.bad("small.mp4")
        let area = "(width+128)×(height+128)"
        try run(["strip", small, "-o", "{out}/s.png", "--count", "1000", "--columns", "1", "--size", "16384x16384"], .usage(containing: area))
        try run(["strip", small, "-o", "{out}/s.png", "--count", "1000", "--size", "2000x2000"], .usage(containing: area))
        try run(["strip", small, "-o", "{out}/s.ppm", "--count", "1000", "--size", "2000x2000"], .usage(containing: "--max-memory"))
        try run(["render", small, "-o", "{out}/r.gif", "--size", "16384x16384"], .usage(containing: area))
        try run(["render", small, "-o", "{out}/r.gif", "--size", "8000x8000"], .usage(containing: "--max-memory"))
        try run(["card", small, "-o", "{out}/c.gif", "--play-length", "1000000000"], .usage(containing: "--max-frames"))
        try run(["card", small, "-o", "{out}/c.png", "--size", "16384x16384", "--at", "1.3"], .usage(containing: area))
        try run(["card", small, "-o", "{out}/c.png", "--size", "12000x12000", "--at", "1.3"], .usage(containing: "--max-memory"))
        try run(["thumb", small, "-o", "{out}/a.png", "--size", "16384x16384"], .usage(containing: area))
        try run(["thumb", small, "-o", "{out}/a.webp", "--size", "16384x100"], .usage(containing: "16383"))
        try run(["loop", small, "--size", "16384x16384"], .usage(containing: "--max-memory"))
    }

    @Test("A long clip: render to GIF with --length 1e9 and sprites every 1 ms are refused before decoding")
    func longClip() throws {
        let long = try Self.bad("long-1h.mkv")
        try run(["render", long, "-o", "{out}/r.gif", "--length", "1000000000"], .usage(containing: "--max-memory"))
        try run(["render", long, "-o", "{out}/r.webp", "--length", "1000000000", "--fps", "120"], .usage(containing: "--max-frames"))
        try run(["sprites", long, "-o", "{out}/sp", "--every", "0.001"], .usage(containing: "3600000"))
        // The limits are settable: raised, the same sprites request passes the check (then runs; not here).
        let parsed = try CommandLineParser.parse(["sprites", long, "-o", "x", "--max-frames", "4000000", "--every", "0.001"])
        guard case .command(let options as SpritesCommand) = parsed else { Issue.record("not sprites"); return }
        #expect(options.budget.maxFrames == 4_000_000)
    }

    @Test("The frame limit also counts frames written from memory while running (writer bound)")
    func runningBound() throws {
        let directory = TestPaths.temporaryDirectory()
        let writer = try AnimationWriter(path: directory + "/a.gif", format: .gif, size: Size(width: 8, height: 8), framesPerSecond: 10)
        writer.maxFrames = 3
        let picture = try RGBImage(width: 8, height: 8, pixels: [UInt8](repeating: 0, count: 8 * 8 * 3))
        for _ in 0..<3 { try writer.append(picture) }
        #expect(throws: PreviewLoopError.self) { try writer.append(picture) }
        // Card: 1 s hold + 0.6 s reveal + 3 s play at 30 fps is 138 frames; a bound of 20 stops it.
        let card = try PreviewCard(source: Source(argument: try Self.bad("small.mp4")), style: CardStyle(size: Size(width: 32, height: 18)))
        #expect(throws: PreviewLoopError.self) { try card.render(to: directory + "/c.gif", framesPerSecond: 30, maxFrames: 20) }
        #expect(!FileManager.default.fileExists(atPath: directory + "/c.gif"))
    }

    // MARK: Item 4: small ones

    @Test("Control characters in an input name are escaped: one error, one line, no ESC byte")
    func controlCharacters() throws {
        let name = "a\u{1B}[31mred\nsecond line.mp4"
        let result = try Child.cli(["probe", name])
        #expect(result.status == 1)
        #expect(result.errorLines.count == 1, "\(result.stderr)")
        #expect(!result.stderr.contains("\u{1B}"))
        #expect(result.stderr.contains("\\u{1B}[31mred"))
        let usage = try Child.cli(["probe", "x.mp4", "--timeout", "1\u{1B}\n2"])
        #expect(usage.status == 64)
        #expect(usage.errorLines.filter { $0.hasPrefix("Error:") }.count == 1)
        #expect(!usage.stderr.contains("\u{1B}"))
    }

    @Test("loop --capture-at past the end: an error naming what was not captured, no empty directory")
    func captureMissed() throws {
        let small = try Self.bad("small.mp4")
        try run(["loop", small, "--capture-at", "100", "--capture-dir", "{out}/cap"], .failure(containing: "not captured: --capture-at 100.000 s"))
        try run(["loop", small, "--record", "100-200", "--capture-dir", "{out}/cap"], .failure(containing: "--record 100.000-200.000 s"))
        let (_, directory) = try run(["loop", small, "--capture-at", "0", "--capture-dir", "{out}/cap"], .success)
        #expect(FileManager.default.fileExists(atPath: directory + "/cap/capture-01.ppm"))
    }

    @Test("timing --json on a log with NaN or inf is refused")
    func nonFiniteLog() throws {
        let directory = TestPaths.temporaryDirectory()
        for value in ["nan", "inf", "-inf", "1e400", "0x10"] {
            let log = directory + "/log-\(value).csv"
            try ("pass,index,presentation_time,wall_time,decode_ms,scale_ms,lateness_ms,dropped\n"
                + "1,1,0.000000,0.000000,\(value),1.0,,0\n").write(toFile: log, atomically: true, encoding: .utf8)
            try run(["timing", "--json", log], .failure(containing: "finite decimal numbers"))
        }
    }
}
