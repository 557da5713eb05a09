import Foundation
import Testing
import PreviewLoopTestSupport

/// The one JSON record a `--json` command prints, and its first output.
private func firstOutput(_ result: ChildResult) throws -> [String: Any] {
    let record = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.stderr)")
    return try #require((record["outputs"] as? [[String: Any]])?.first)
}

@Suite("Hover previews start at the poster: render --start poster, the recipe's \"start\", batch's default")
struct HoverStartTests {
    /// The time `thumb` picks for the clip's poster with its defaults.
    static func posterTime(_ clip: String, directory: String) throws -> Double {
        let thumb = try Child.cli(["thumb", clip, "-o", directory + "/poster.jpg", "--json"])
        #expect(thumb.status == 0, "\(thumb.stderr)")
        return try #require(try firstOutput(thumb)["time"] as? Double)
    }

    @Test("render --start poster starts on thumb's poster frame, past the title card; --start 0 starts on the card")
    func renderAtPoster() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = TestPaths.fixture("title-card.mp4")
        let poster = try Self.posterTime(clip, directory: directory)
        #expect(poster > 1, "title-card.mp4's poster is past its title card")
        let atPoster = try Child.cli(["render", clip, "-o", directory + "/poster.mp4", "--start", "poster", "--json"])
        #expect(atPoster.status == 0, "\(atPoster.stderr)")
        #expect(try firstOutput(atPoster)["time"] as? Double == poster)
        let summary = try Child.cli(["render", clip, "-o", directory + "/again.mp4", "--start", "poster"])
        #expect(summary.stdoutText.contains("from \(String(format: "%.3f", poster)) s (the poster)"), "\(summary.stdoutText)")
        // The file's first picture is the poster's frame: the frame ffmpeg shows at the poster's time (in
        // RGB: the preview and the clip may be tagged with different YUV matrices).
        let first = try Child.run("/usr/bin/ffmpeg", ["-v", "error", "-i", directory + "/poster.mp4", "-frames:v", "1",
                                                      "-vf", "scale=32:18", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"]).stdout
        // The clip is 4:3; the preview fills 16:9, cropping the middle.
        let card = try Child.run("/usr/bin/ffmpeg", ["-v", "error", "-i", clip, "-frames:v", "1",
                                                     "-vf", "crop=iw:iw*9/16,scale=32:18", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"]).stdout
        let shown = try Child.run("/usr/bin/ffmpeg", ["-v", "error", "-ss", String(poster), "-i", clip, "-frames:v", "1",
                                                      "-vf", "crop=iw:iw*9/16,scale=32:18", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"]).stdout
        func difference(_ a: Data, _ b: Data) -> Double {
            Double(zip(a, b).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(max(1, min(a.count, b.count)))
        }
        #expect(first.count == 32 * 18 * 3 && shown.count == 32 * 18 * 3 && card.count == 32 * 18 * 3)
        #expect(difference(first, shown) < 8, "the preview's first frame is the poster's")
        #expect(difference(first, card) > 40, "the preview does not open on the title card")
        // --start 10% is a share of the duration, as elsewhere.
        let percent = try Child.cli(["render", clip, "-o", directory + "/percent.mp4", "--start", "10%", "--json"])
        #expect(percent.status == 0, "\(percent.stderr)")
        #expect(abs((try firstOutput(percent)["time"] as? Double ?? -1) - 0.38) < 0.05)
    }

    @Test("--start poster refuses what it cannot do: standard input, a --loop-point time; a bad word names the forms")
    func renderRefusals() throws {
        let clip = TestPaths.fixture("title-card.mp4")
        for arguments in [["render", "-", "-o", "x.mp4", "--start", "poster"],
                          ["render", clip, "-o", "x.mp4", "--start", "poster", "--loop-point", "2"],
                          ["render", clip, "-o", "x.mp4", "--start", "auto"]] {
            let result = try Child.cli(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: ") && result.stderr.contains("--start"), "\(arguments): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: "x.mp4"))
        }
    }

    @Test("Batch's default hover starts at the poster and is render --start poster's file; \"start\" takes times and N%")
    func batchDefaultAtPoster() throws {
        let bench = BatchBench()
        let clip = TestPaths.fixture("title-card.mp4")
        try bench.writeManifest([("title", clip)])
        let poster = try Self.posterTime(clip, directory: bench.directory)
        let recipe = bench.directory + "/recipe.json"
        let reference = bench.directory + "/render.mp4"
        #expect(try Child.cli(["render", clip, "-o", reference, "--start", "poster"]).status == 0)
        // With and without a poster output, the hover opens on the poster's frame.
        for (index, json) in [#"{"hover":{}}"#, #"{"poster":{},"hover":{}}"#, #"{"hover":{"start":"poster"}}"#].enumerated() {
            try json.write(toFile: recipe, atomically: true, encoding: .utf8)
            let result = try bench.batch(["--recipe", recipe, "--force"])
            #expect(result.status == 0, "\(json): \(result.stderr)")
            let outputs = try #require(try bench.records()["title"]?["outputs"] as? [[String: Any]])
            let hover = try #require(outputs.first { $0["kind"] as? String == "hover" })
            #expect(hover["time"] as? Double == poster, "\(json)")
            if index == 1 { #expect(outputs.first { $0["kind"] as? String == "poster" }?["time"] as? Double == poster) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: bench.out + "/title/hover.mp4")) == Data(contentsOf: URL(fileURLWithPath: reference)),
                    "\(json): batch's hover differs from render --start poster's")
        }
        // A time or a share of the duration, as render's --start.
        for (json, expected) in [(#"{"hover":{"start":0}}"#, 0.0), (#"{"hover":{"start":"10%"}}"#, 0.38), (#"{"hover":{"start":"0:01"}}"#, 1.0)] {
            try json.write(toFile: recipe, atomically: true, encoding: .utf8)
            let result = try bench.batch(["--recipe", recipe, "--force"])
            #expect(result.status == 0, "\(json): \(result.stderr)")
            let outputs = try #require(try bench.records()["title"]?["outputs"] as? [[String: Any]])
            let time = try #require(outputs.first { $0["kind"] as? String == "hover" }?["time"] as? Double)
            #expect(abs(time - expected) < 0.05, "\(json): the hover starts at \(time) s")
        }
    }
}
