import Foundation
import Testing
import PreviewLoopTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A single-clip command stopped by SIGINT or SIGTERM while it decodes, on the real binary: with
/// `--json` exactly one record (failed, reason `interrupted`, transient, the clip, the timings so far,
/// no unfinished output); without it one `Error:` line and nothing on standard output; exit 130/143
/// soon after the signal, no temporary left, the earlier output byte for byte intact.
@Suite("Signals: an interrupted single-clip command reports itself", .timeLimit(.minutes(10)))
struct InterruptedCommandTests {
    /// A 720p clip of 40 s (1,000 frames) whose decoding keeps `render` (600 frames at 640x360, about
    /// 9 s) and `sprites` (1,000 exact thumbnails, about 4.5 s) busy well past their start on this
    /// machine: 2 s of `testsrc2` encoded once and repeated without re-encoding (under a second to make).
    private static let clip: Result<String, OracleError> = {
        let base = NSTemporaryDirectory() + "previewloop-interrupt-" + UUID().uuidString
        defer { unlink(base + "-2s.mp4") }
        do {
            for arguments in [["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25", "-t", "2", "-c:v", "libx264",
                               "-preset", "ultrafast", "-crf", "40", "-g", "50", base + "-2s.mp4"],
                              ["-stream_loop", "19", "-i", base + "-2s.mp4", "-c", "copy", base + ".mp4"]] {
                let made = try Child.tool("ffmpeg", ["-v", "error", "-nostdin"] + arguments)
                guard made.status == 0 else { return .failure(OracleError(message: made.stderr)) }
            }
        } catch {
            return .failure(OracleError(message: "\(error)"))
        }
        atexit { if case .success(let path) = InterruptedCommandTests.clip { unlink(path) } }
        return .success(base + ".mp4")
    }()

    /// The names in a directory, hidden ones included, sorted.
    private func names(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// Runs the CLI with `--progress` and sends `signal` once its second progress line (`<command>: N%
    /// done/total`, at most two a second: the decoding has run for half a second at least) shows the job
    /// under way; checks what every interrupted run shares: the signal was sent while it ran, the exit
    /// status, the time to stop, one `Error:` line naming the interruption, and no progress line at
    /// 100 % (the job had not finished).
    private func interrupt(_ arguments: [String], with signal: Int32) throws -> ChildResult {
        let command = arguments[0]
        let isDecoding: @Sendable (String) -> Bool = { text in
            text.split(separator: "\n").filter { $0.hasPrefix("\(command): ") }.count >= 2
        }
        let result = try Child.cli(arguments + ["--progress"], signal: ChildSignal(signal, .standardError(isDecoding)), killAfter: 60)
        let sentAt = try #require(result.signalSentAt, "\(command): no progress line, or it ended first: \(result.stderr)")
        #expect(result.status == 128 + signal, "\(command): exit \(result.status) (signal \(result.signal.map(String.init) ?? "none")): \(result.stderr)")
        // A liveness bound only (the run is killed at 60 s); no 100 % line below shows the job was cut short.
        #expect(result.elapsed - sentAt < 20, "\(command): \(result.elapsed - sentAt) s from the signal to the exit")
        let progress = result.errorLines.filter { $0.hasPrefix("\(command): ") }
        #expect(!progress.isEmpty && !progress.contains { $0.contains("100%") }, "\(command): \(result.stderr)")
        let errors = result.errorLines.filter { $0.hasPrefix("Error: ") }
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        #expect(errors.count == 1 && errors[0].contains("interrupted by \(name)"), "\(command): \(result.stderr)")
        #expect(result.errorLines.count == progress.count + errors.count, "\(command): \(result.stderr)")
        return result
    }

    /// The one record on standard output, checked as an interruption's: failed, `interrupted`,
    /// transient, the command, the clip opened, the timings so far, no outputs.
    private func checkRecord(_ result: ChildResult, command: String, signal: Int32) throws {
        let lines = result.stdoutText.split(separator: "\n")
        #expect(lines.count == 1, "\(command): one record expected: \(result.stdoutText)")
        let record = try #require(try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any],
                                  "\(command): \(result.stdoutText)")
        #expect(record["type"] as? String == "clip")
        #expect(record["command"] as? String == command)
        #expect(record["status"] as? String == "failed")
        #expect(record["reason"] as? String == "interrupted", "\(record)")
        #expect(record["permanence"] as? String == "transient", "\(record)")
        #expect((record["message"] as? String)?.contains("interrupted by \(signal == SIGINT ? "SIGINT" : "SIGTERM")") == true, "\(record)")
        #expect((record["outputs"] as? [Any])?.isEmpty == true, "an unfinished output is listed: \(record)")
        let clip = try #require(record["clip"] as? [String: Any], "the clip was open: \(record)")
        #expect(clip["width"] as? Int == 1280 && clip["height"] as? Int == 720 && clip["codec"] as? String == "h264", "\(clip)")
        let timings = try #require(record["timings"] as? [String: Double])
        let open = try #require(timings["open_ms"], "\(timings)")
        let total = try #require(timings["total_ms"], "\(timings)")
        // Stopped mid-decode: some of the job's time had passed after opening, and no output's own timing.
        #expect(total > open, "\(timings)")
        #expect(Set(timings.keys) == ["open_ms", "total_ms"], "\(timings)")
    }

    @Test("render --json under SIGTERM and SIGINT mid-decode: one interrupted record, exit 143/130, the earlier file intact",
          arguments: [SIGTERM, SIGINT])
    func renderWithJSON(signal: Int32) throws {
        let input = try Self.clip.get()
        let root = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let earlier = Data("an earlier render".utf8)
        try earlier.write(to: URL(fileURLWithPath: root + "/out.mp4"))
        let result = try interrupt(["render", input, "-o", root + "/out.mp4", "--length", "40", "--size", "640x360", "--json"],
                                   with: signal)
        try checkRecord(result, command: "render", signal: signal)
        #expect(names(root) == ["out.mp4"], "left: \(names(root))")
        #expect(FileManager.default.contents(atPath: root + "/out.mp4") == earlier)
    }

    @Test("sprites --json under SIGTERM mid-decode: one interrupted record, the earlier directory intact, no staging left")
    func spritesWithJSON() throws {
        let input = try Self.clip.get()
        let root = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/sp", withIntermediateDirectories: false)
        let earlier = Data("WEBVTT\n\nearlier\n".utf8)
        try earlier.write(to: URL(fileURLWithPath: root + "/sp/thumbnails.vtt"))
        let result = try interrupt(["sprites", input, "-o", root + "/sp", "--every", "0.04", "--accuracy", "exact",
                                    "--grid", "10x10", "--json"], with: SIGTERM)
        try checkRecord(result, command: "sprites", signal: SIGTERM)
        #expect(names(root) == ["sp"], "left: \(names(root))")
        #expect(names(root + "/sp") == ["thumbnails.vtt"])
        #expect(FileManager.default.contents(atPath: root + "/sp/thumbnails.vtt") == earlier)
    }

    @Test("render without --json under SIGTERM: one Error: line, nothing on standard output, the earlier file intact")
    func renderWithoutJSON() throws {
        let input = try Self.clip.get()
        let root = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let earlier = Data("an earlier render".utf8)
        try earlier.write(to: URL(fileURLWithPath: root + "/out.mp4"))
        let result = try interrupt(["render", input, "-o", root + "/out.mp4", "--length", "40", "--size", "640x360"], with: SIGTERM)
        #expect(result.stdout.isEmpty, "\(result.stdoutText)")
        #expect(names(root) == ["out.mp4"], "left: \(names(root))")
        #expect(FileManager.default.contents(atPath: root + "/out.mp4") == earlier)
    }

    @Test("loop --json stopped while it opens a silent pipe: one interrupted record without a clip, exit 143")
    func loopWhileOpening() throws {
        let result = try Child.cli(["loop", "-", "--json"], input: .stalledPipe, signal: ChildSignal(SIGTERM, .after(1)), killAfter: 30)
        #expect(result.signalSentAt != nil)
        #expect(result.status == 143 && result.signal == nil, "exit \(result.status) (signal \(result.signal.map(String.init) ?? "none")): \(result.stderr)")
        #expect(result.elapsed - (result.signalSentAt ?? 0) < 2, "\(result.elapsed) s")
        #expect(result.errorLines.count == 1 && result.stderr.hasPrefix("Error: ") && result.stderr.contains("interrupted by SIGTERM"),
                "\(result.stderr)")
        let lines = result.stdoutText.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stdoutText)")
        let record = try #require(try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any],
                                  "\(result.stdoutText)")
        #expect(record["command"] as? String == "loop" && record["status"] as? String == "failed")
        #expect(record["reason"] as? String == "interrupted" && record["permanence"] as? String == "transient", "\(record)")
        #expect(record["clip"] == nil, "the input never opened: \(record)")
        #expect((record["outputs"] as? [Any])?.isEmpty == true)
    }
}
