import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// `--pick scenes`: cuts found on clips made here by concatenating distinct lavfi sources (ground truth:
/// the concat offsets, one shot a second at 25 fps), no near-duplicate tiles on a clip that repeats its
/// shots, and `--pick even` unchanged.
@Suite("Scene picks")
struct ScenePickTests {
    /// Six 1-second shots of distinct sources.
    static let sources = ["testsrc2", "smptebars", "mandelbrot", "rgbtestsrc", "testsrc", "cellauto=seed=1"]

    /// Concatenates 1-second, 25 fps, 160x90 shots of `sources` into an H.264 clip with keyframes every
    /// `gop` frames (no scene-cut keyframes), 2 B-frames.
    static func makeClip(_ sources: [String], gop: Int, in directory: String, name: String) throws -> String {
        try concatenatedShots(sources, seconds: 1, encoder: ["-c:v", "libx264", "-preset", "ultrafast", "-g", String(gop),
                                                              "-keyint_min", String(gop), "-sc_threshold", "0", "-bf", "2",
                                                              "-x264-params", "b-adapt=0"],
                              in: directory, name: name)
    }

    /// Concatenates shots of `seconds` each of the lavfi `sources` at 25 fps and 160x90 (yuv420p) into
    /// `directory/name`, encoded with the ffmpeg `encoder` options.
    static func concatenatedShots(_ sources: [String], seconds: Double, encoder: [String], in directory: String,
                                  name: String) throws -> String {
        let path = directory + "/" + name
        var arguments = ["-v", "error", "-nostdin", "-y"]
        for source in sources {
            let separator = source.contains("=") ? ":" : "="
            arguments += ["-f", "lavfi", "-i", "\(source)\(separator)size=160x90:rate=25,trim=duration=\(seconds),setpts=PTS-STARTPTS"]
        }
        let inputs = sources.indices.map { "[\($0):v]" }.joined()
        arguments += ["-filter_complex", "\(inputs)concat=n=\(sources.count):v=1:a=0,format=yuv420p[v]", "-map", "[v]"]
        let result = try Child.tool("ffmpeg", arguments + encoder + [path])
        guard result.status == 0 else { throw OracleError(message: "ffmpeg failed: \(result.stderr)") }
        return path
    }

    /// The tile plan of a `--json` record: its one output's `plan` (the record is checked to be `ok`).
    static func json(_ result: ChildResult) throws -> [String: Any] {
        let record = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(record["status"] as? String == "ok")
        let outputs = try #require(record["outputs"] as? [[String: Any]])
        #expect(outputs.count == 1)
        return try #require(outputs.first?["plan"] as? [String: Any])
    }

    @Test("Cuts between keyframes are found within one frame of each concat offset, keyframe-first")
    func cutsWithinOneFrame() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Keyframes every 100 frames (4 s): the cuts at 1, 2, 3 and 5 s fall inside groups of pictures.
        let long = try Self.makeClip(Self.sources, gop: 100, in: directory, name: "long.mp4")
        let truth = try Oracle.frameTimes(of: long)
        #expect(truth.count == 150)
        let expected = (1..<Self.sources.count).map { truth[$0 * 25] }
        let sampler = try FrameSampler(source: .file(long))
        let scan = try sampler.sceneCuts(start: 0, length: 6)
        #expect(scan.cuts.count == expected.count, "\(scan.cuts)")
        for (cut, time) in zip(scan.cuts, expected) { #expect(abs(cut.time - time) <= 0.04 + 1e-6, "\(cut) vs \(time)") }
        #expect(scan.keyframesDecoded == 2)

        // Keyframes every 10 frames: the same cuts, and only the groups with a cut (and the last) decoded.
        let short = try Self.makeClip(Self.sources, gop: 10, in: directory, name: "short.mp4")
        let shortScan = try FrameSampler(source: .file(short)).sceneCuts(start: 0, length: 6)
        #expect(shortScan.cuts.map(\.time).count == expected.count, "\(shortScan.cuts)")
        for (cut, time) in zip(shortScan.cuts, expected) { #expect(abs(cut.time - time) <= 0.04 + 1e-6) }
        #expect(shortScan.groups == 15)
        #expect(shortScan.groupsDecoded < shortScan.groups, "\(shortScan)")
        #expect(shortScan.framesDecoded < 100, "\(shortScan)")
    }

    @Test("sheet --pick scenes: a 3x2 sheet of a 6-shot clip shows the six shots, each from its first frame")
    func sheetShowsEveryShot() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = try Self.makeClip(Self.sources, gop: 100, in: directory, name: "six.mp4")
        let truth = try Oracle.frameTimes(of: clip)
        let result = try Child.run(TestPaths.cliBinary, ["sheet", clip, "-o", directory + "/s.png", "--grid", "3x2",
                                                           "--width", "480", "--pick", "scenes", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try Self.json(result)
        let tiles = try #require(json["tiles"] as? [[String: Any]])
        #expect(tiles.count == 6)
        #expect(tiles.map { $0["reason"] as? String } == ["start", "cut", "cut", "cut", "cut", "cut"])
        for (index, tile) in tiles.enumerated() {
            let shown = try #require(tile["frame_time"] as? Double)
            #expect(abs(shown - truth[index * 25]) <= 0.04 + 1e-6, "tile \(index): \(shown)")
            if index > 0 { #expect((tile["score"] as? Double ?? 0) >= ScenePickSettings().cutThreshold) }
        }
        #expect((json["dropped"] as? [Any])?.isEmpty == true)
        #expect(json["pick"] as? String == "scenes")
        // The sheet itself: six tiles, all different shots by the duplicate distance.
        #expect(FileManager.default.fileExists(atPath: directory + "/s.png"))
    }

    @Test("More tiles than shots: the rest is filled in evenly; fewer: the strongest cuts")
    func fillsAndStrongest() {
        let cuts = [SceneCut(time: 2, score: 40), SceneCut(time: 5, score: 90), SceneCut(time: 8, score: 20)]
        let filled = TileChoice.sceneChoices(cuts: cuts, count: 6, start: 0, length: 10)
        #expect(filled.map(\.time) == [0, 2, 3.5, 5, 6.5, 8])
        #expect(filled.map(\.reason) == [.start, .cut, .fill, .cut, .fill, .cut])
        let strongest = TileChoice.sceneChoices(cuts: cuts, count: 3, start: 0, length: 10)
        #expect(strongest.map(\.time) == [0, 2, 5])
        #expect(TileChoice.sceneChoices(cuts: [], count: 2, start: 0, length: 10).map(\.time) == [0, 5])
    }

    @Test("Repeated identical shots (A B A B) give no duplicate tiles; what was dropped is reported")
    func repeatedShotsAreDropped() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = try Self.makeClip(["smptebars", "rgbtestsrc", "smptebars", "rgbtestsrc"], gop: 100, in: directory,
                                     name: "abab.mp4")
        let result = try Child.run(TestPaths.cliBinary, ["strip", clip, "-o", directory + "/s.png", "-n", "4",
                                                           "--span", "all", "--size", "64x36", "--pick", "scenes", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try Self.json(result)
        let tiles = try #require(json["tiles"] as? [[String: Any]])
        let dropped = try #require(json["dropped"] as? [[String: Any]])
        #expect(tiles.count == 2, "\(tiles)")
        #expect(dropped.count >= 2, "\(dropped)")
        for drop in dropped { #expect((drop["distance"] as? Double ?? 99) < ScenePickSettings().duplicateThreshold) }
        // The kept tiles, by an independent look: ffmpeg's frames at the kept times are different shots.
        let frames = try Oracle.frames(of: clip, filter: "scale=64:36", size: Size(width: 64, height: 36))
        let shown = try tiles.map { try #require($0["frame_time"] as? Double) }
        let thumbnails = shown.map { LumaThumbnail(frames[min(frames.count - 1, Int(($0 * 25).rounded()))]) }
        #expect(thumbnails[0].normalisedDifference(from: thumbnails[1]) >= ScenePickSettings().duplicateThreshold)
    }

    @Test("--pick even is the default: the same bytes, and --json reports the even slices")
    func evenUnchanged() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = TestPaths.fixture("landscape.mp4")
        let plain = try Child.run(TestPaths.cliBinary, ["sheet", clip, "-o", directory + "/a.png", "--grid", "2x2",
                                                          "--width", "320"])
        let even = try Child.run(TestPaths.cliBinary, ["sheet", clip, "-o", directory + "/b.png", "--grid", "2x2",
                                                         "--width", "320", "--pick", "even", "--json"])
        #expect(plain.status == 0 && even.status == 0)
        #expect(FileManager.default.contents(atPath: directory + "/a.png") == FileManager.default.contents(atPath: directory + "/b.png"))
        let tiles = try #require(try Self.json(even)["tiles"] as? [[String: Any]])
        #expect(tiles.map { $0["time"] as? Double } == [0.5, 1.5, 2.5, 3.5])
        #expect(tiles.allSatisfy { $0["reason"] as? String == "even" })
        let stripPlain = try Child.run(TestPaths.cliBinary, ["strip", clip, "-o", directory + "/c.png", "-n", "3"])
        let stripEven = try Child.run(TestPaths.cliBinary, ["strip", clip, "-o", directory + "/d.png", "-n", "3",
                                                              "--pick", "even"])
        #expect(stripPlain.stdoutText.replacingOccurrences(of: "c.png", with: "d.png") == stripEven.stdoutText)
        #expect(FileManager.default.contents(atPath: directory + "/c.png") == FileManager.default.contents(atPath: directory + "/d.png"))
        let bad = try Child.run(TestPaths.cliBinary, ["strip", clip, "-o", directory + "/e.png", "--pick", "shots"])
        #expect(bad.status != 0 && bad.stderr.hasPrefix("Error:") && bad.stderr.contains("even or scenes"), "\(bad.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/e.png"))
    }
}
