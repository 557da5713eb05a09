import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// `sprites --pick scenes`: an interval that a cut splits shows the middle of its longest shot, not
/// whatever lies at its middle.
@Suite("sprites --pick even|scenes")
struct SpritesPickTests {
    @Test("The longest piece of an interval split by cuts, its middle; none inside: nil")
    func longestShotMiddle() {
        #expect(ThumbnailTrack.longestShotMiddle(start: 0, end: 2, cuts: [0.8, 1.2]) == 0.4)
        #expect(ThumbnailTrack.longestShotMiddle(start: 0, end: 2, cuts: [0.4]) == 1.2)
        #expect(ThumbnailTrack.longestShotMiddle(start: 2, end: 4, cuts: [0.8, 2, 4.5]) == nil)
        #expect(ThumbnailTrack.longestShotMiddle(start: 0, end: 2, cuts: []) == nil)
    }

    /// Shots: testsrc2 0–0.8 s, smptebars 0.8–1.2 s, mandelbrot 1.2–4 s (25 fps, 160x90).
    static func makeShots(in directory: String) throws -> String {
        let clip = directory + "/shots.mp4"
        let shots = [("testsrc2", 0.8), ("smptebars", 0.4), ("mandelbrot", 2.8)]
        var arguments = ["-v", "error", "-nostdin", "-y"]
        for (source, seconds) in shots {
            arguments += ["-f", "lavfi", "-i", "\(source)=size=160x90:rate=25,trim=duration=\(seconds),setpts=PTS-STARTPTS"]
        }
        arguments += ["-filter_complex", "[0:v][1:v][2:v]concat=n=3:v=1:a=0,format=yuv420p[v]", "-map", "[v]",
                      "-c:v", "libx264", "-preset", "ultrafast", "-g", "100", "-bf", "2", clip]
        let made = try Child.tool("ffmpeg", arguments)
        #expect(made.status == 0, "\(made.stderr)")
        return clip
    }

    @Test("The async thumbnailTrack takes pick: too, with the sync form's choice")
    func asyncPick() async throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = try Self.makeShots(in: directory)
        let layout = ThumbnailTrack.Layout(tileSize: Size(width: 64, height: 36))
        let scenes = try await FrameSampler(source: .file(clip)).thumbnailTrack(every: 2, layout: layout, accuracy: .exact, pick: .scenes)
        let even = try await FrameSampler(source: .file(clip)).thumbnailTrack(every: 2, layout: layout, accuracy: .exact)
        #expect(scenes.track.cues.count == 2 && scenes.sheets.count == 1)
        // As the sync test finds: scenes takes the first interval's longest shot (0.4 s), even its middle.
        #expect(abs(scenes.track.cues[0].frameTime - 0.4) < 0.05, "\(scenes.track.cues[0])")
        #expect(abs(even.track.cues[0].frameTime - 0.96) < 0.05, "\(even.track.cues[0])")
        #expect(scenes.sheets[0] != even.sheets[0])
    }

    @Test("sprites --pick scenes: a tile whose interval's middle falls in a short shot shows the longest shot instead")
    func scenesTiles() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = try Self.makeShots(in: directory)

        // The CLI writes both (an ok record each).
        func runSprites(_ pick: String) throws {
            let result = try Child.run(TestPaths.cliBinary, ["sprites", clip, "-o", directory + "/" + pick, "--every", "2",
                                                               "--size", "64x36", "--pick", pick, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let record = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
            #expect(record["status"] as? String == "ok")
        }
        try runSprites("even")
        try runSprites("scenes")
        // The library says which frames: even takes the first interval's middle (1 s, smptebars),
        // scenes the middle of its longest shot (0.4 s; testsrc2 and mandelbrot tie at 0.8 s, the first wins).
        let even = try FrameSampler(source: .file(clip)).thumbnailTrack(every: 2, layout: .init(tileSize: Size(width: 64, height: 36)),
                                                                        accuracy: .exact) { _, _ in }
        let scenes = try FrameSampler(source: .file(clip)).thumbnailTrack(every: 2, layout: .init(tileSize: Size(width: 64, height: 36)),
                                                                          accuracy: .exact, pick: .scenes) { _, _ in }
        #expect(even.cues.count == 2 && scenes.cues.count == 2)
        #expect(abs(even.cues[0].frameTime - 0.96) < 0.05, "\(even.cues[0])")
        #expect(abs(scenes.cues[0].frameTime - 0.4) < 0.05, "\(scenes.cues[0])")
        // The second interval (2–4 s) has no cut: both take its middle.
        #expect(abs(scenes.cues[1].frameTime - even.cues[1].frameTime) < 1e-6)
        // Parsing: --pick on sprites, even by default, anything else a usage error.
        guard case .command(let options as SpritesCommand) = try CommandLineParser.parse(["sprites", "c.mp4", "-o", "dir", "--pick", "scenes"]),
              case .command(let plain as SpritesCommand) = try CommandLineParser.parse(["sprites", "c.mp4", "-o", "dir"]) else {
            Issue.record("not a sprites command")
            return
        }
        #expect(options.pick == .scenes && plain.pick == .even)
        #expect(HelpText.help(for: Subcommand(SpritesCommand.self)).contains("--pick <pick>"))
        let bad = try Child.run(TestPaths.cliBinary, ["sprites", clip, "-o", directory + "/bad", "--pick", "shots"])
        #expect(bad.status == 64 && bad.stderr.hasPrefix("Error:"))
    }
}
