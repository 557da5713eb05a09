import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// Files cut short (an MP4 whose index comes first with its media data cut, Matroska and WebM cut at
/// half) declare 2.0 s but hold less: the probe, every `--json` record and batch records say so, with
/// where the data ends; the end is checked against the last frame ffmpeg decodes. The inputs come from
/// `Fixtures/make-bad-inputs.sh`.
@Suite("Truncated files are reported", .timeLimit(.minutes(10)))
struct TruncationTests {
    static let truncated = ["faststart-cut10.mp4", "faststart-cut50.mp4", "faststart-cut90.mp4", "cut50.mkv", "cut50.webm"]

    /// The end of the last frame ffmpeg decodes, seconds from the stream's start.
    private func oracleEnd(_ path: String) throws -> Double {
        let times = try Oracle.frameTimes(of: path)
        return try #require(times.max()) + 0.04
    }

    private func json(_ result: ChildResult) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(result.stdoutText.utf8)) as? [String: Any], "\(result.stdoutText)")
    }

    @Test("Truncation is reported on the truncated fixtures: declared 2.0 s, the data's end where ffmpeg's frames end",
          arguments: truncated)
    func reported(_ name: String) throws {
        let path = try BadInputs.path(name)
        let info = try MediaProbe.probe(.file(path))
        let end = try oracleEnd(path)
        #expect(info.isTruncated)
        #expect(info.declaredDuration == 2.0)
        let decodable = try #require(info.decodableDuration)
        // Measured from the packets the file holds whole: at most a frame past ffmpeg's last decoded one.
        #expect(decodable >= end - 1e-6 && decodable <= end + 0.04 + 1e-6, "data ends at \(decodable) s, ffmpeg's frames at \(end) s")
        #expect(info.duration == decodable)

        let text = try Child.cli(["probe", path])
        #expect(text.status == 0)
        #expect(text.stdoutText.contains("duration:      2.000 s (declared; the data ends at \(String(format: "%.3f", decodable)) s — truncated)"),
                "\(text.stdoutText)")
        let probe = try json(try Child.cli(["probe", "--json", path]))
        #expect(probe["duration"] as? Double == 2.0)
        #expect(probe["truncated"] as? Bool == true)
        #expect(probe["decodable_duration"] as? Double == decodable)
    }

    @Test("Whole files are not reported truncated", arguments: ["faststart.mp4", "moov-at-end.mp4", "whole.mkv", "whole.webm"])
    func whole(_ name: String) throws {
        let info = try MediaProbe.probe(.file(try BadInputs.path(name)))
        #expect(!info.isTruncated)
        #expect(info.decodableDuration == info.duration && info.declaredDuration == info.duration)
    }

    @Test("Whole fixtures are not reported truncated; MPEG-TS, whose duration ffmpeg measures from its data, is not checked",
          arguments: ["landscape.mp4", "long-audio.mp4", "vp9.webm", "offset.ts", "rotated90.mp4"])
    func wholeFixtures(_ name: String) throws {
        let info = try MediaProbe.probe(.file(TestPaths.fixture(name)))
        #expect(!info.isTruncated)
        if name.hasSuffix(".ts") {
            #expect(info.decodableDuration == nil)
        } else {
            #expect(info.decodableDuration == info.duration)
        }
    }

    @Test("thumb past the data's end gives ffmpeg's last frame and says it is not the one asked for", arguments: ["faststart-cut50.mp4", "cut50.mkv"])
    func thumbPastTheEnd(_ name: String) throws {
        let path = try BadInputs.path(name)
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let size = Size(width: 160, height: 120)
        let result = try Child.cli(["thumb", path, "-o", output + "/late.ppm", "--at", "1.9", "--size", size.description, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let record = try json(result)
        let clip = try #require(record["clip"] as? [String: Any])
        #expect(clip["truncated"] as? Bool == true && clip["duration"] as? Double == 2.0)
        let frame = try #require((record["outputs"] as? [[String: Any]])?.first)
        #expect(frame["time_asked"] as? Double == 1.9)
        let choice = try #require(frame["choice"] as? String)
        #expect(choice.hasPrefix("the last frame: the data ends at") && !choice.contains("the time asked (exact)"), "\(choice)")
        // The frame given is the last one ffmpeg decodes (closest among the last three).
        let image = try PPM.decode([UInt8](Data(contentsOf: URL(fileURLWithPath: output + "/late.ppm"))))
        let oracle = try Oracle.frames(of: path, filter: "scale=160:120:flags=bicubic+full_chroma_int+accurate_rnd", size: size)
        let best = Compare.best(image, among: Array(oracle.suffix(3)))
        #expect(best.index == 2 && best.psnr > 30, "best match \(best) among the last three of \(oracle.count)")
        let times = try Oracle.frameTimes(of: path)
        #expect(abs((frame["time"] as? Double ?? -1) - (times.max() ?? 0)) < 1e-3)

        // The summary line says it too.
        let summary = try Child.cli(["thumb", path, "-o", output + "/late.jpg", "--at", "1.9"])
        #expect(summary.status == 0 && summary.stdoutText.contains("the last frame: the data ends at"), "\(summary.stdoutText)")
    }

    @Test("A percentage is of the part the data holds: thumb --at 50% shows ffmpeg's frame at half the decodable duration")
    func percentageOfTheData() throws {
        let path = try BadInputs.path("faststart-cut90.mp4")
        let info = try MediaProbe.probe(.file(path))
        let decodable = try #require(info.decodableDuration)
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try Child.cli(["thumb", path, "-o", output + "/half.jpg", "--at", "50%", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let frame = try #require((try json(result)["outputs"] as? [[String: Any]])?.first)
        #expect(frame["choice"] as? String == "the time asked (exact)")
        let asked = try #require(frame["time_asked"] as? Double)
        #expect(abs(asked - decodable / 2) < 1e-6)
        let times = try Oracle.frameTimes(of: path)
        let shown = times[Oracle.displayedIndex(at: asked, times: times)]
        #expect(abs((frame["time"] as? Double ?? -1) - shown) < 1e-3, "frame at \(frame["time"] ?? "?"), ffmpeg shows \(shown) at \(asked)")
        let summary = try Child.cli(["thumb", path, "-o", output + "/half.jpg", "--at", "50%"])
        #expect(summary.stdoutText.contains("the file is truncated: its data ends at \(String(format: "%.3f", decodable)) s of the 2.000 s declared"),
                "\(summary.stdoutText)")
    }

    @Test("Batch records carry truncated and decodable_duration for a truncated clip, and a whole clip's false")
    func batchRecords() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let manifest = directory + "/clips.jsonl"
        let lines = [("cut", try BadInputs.path("faststart-cut50.mp4")), ("whole", try BadInputs.path("faststart.mp4"))]
            .map { "{\"id\":\"\($0.0)\",\"input\":\"\($0.1)\"}" }
        try (lines.joined(separator: "\n") + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let result = try Child.cli(["batch", manifest, "--out", directory + "/OUT"], killAfter: 120)
        #expect(result.status == 0, "\(result.stderr)")
        var clips: [String: [String: Any]] = [:]
        for line in try String(contentsOfFile: directory + "/OUT/results.jsonl", encoding: .utf8).split(separator: "\n") {
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            if let id = object["id"] as? String { clips[id] = object["clip"] as? [String: Any] }
        }
        let cut = try #require(clips["cut"]), whole = try #require(clips["whole"])
        #expect(cut["truncated"] as? Bool == true && cut["duration"] as? Double == 2.0)
        #expect((cut["decodable_duration"] as? Double ?? 9) < 1.0)
        #expect(whole["truncated"] as? Bool == false && whole["decodable_duration"] as? Double == 2.0)
    }
}
