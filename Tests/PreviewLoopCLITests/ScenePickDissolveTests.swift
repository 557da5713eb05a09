import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// `--pick scenes` on a 13 s clip of three still shots made here: a testsrc2 picture (0–5 s), SMPTE
/// bars (5–9.4 s) and a Mandelbrot picture, the last two joined by a 0.8 s dissolve (`xfade`, 8.6–9.4 s;
/// its first frame wholly of the third shot is at 9.40 s). Light noise on every frame, as a camera gives.
@Suite("Scene picks: dissolves and sheets with fewer shots than tiles", .timeLimit(.minutes(10)))
struct ScenePickDissolveTests {
    static let hardCut = 5.0
    /// The dissolve's first mixed frame and its first frame wholly of the next shot.
    static let dissolve = (first: 8.64, last: 9.40)

    /// Makes the clip with x264 (`-preset veryfast`, its scene-cut keyframes on), plus `extra` options.
    static func makeClip(in directory: String, name: String, extra: [String] = []) throws -> String {
        let path = directory + "/" + name
        let still = { (source: String, frames: Int) in
            "\(source)=size=320x240:rate=25,trim=duration=0.04,loop=loop=\(frames - 1):size=1,setpts=N/25/TB"
        }
        let result = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y",
            "-f", "lavfi", "-i", still("testsrc2", 125),
            "-f", "lavfi", "-i", "smptebars=size=320x240:rate=25:duration=4.4",
            "-f", "lavfi", "-i", still("mandelbrot", 110),
            "-filter_complex", "[0][1]concat=n=2:v=1:a=0,settb=1/25,format=yuv420p[ab];[2]settb=1/25,format=yuv420p[c];"
                + "[ab][c]xfade=transition=fade:duration=0.8:offset=8.6,noise=alls=4:allf=t,format=yuv420p[v]",
            "-map", "[v]", "-c:v", "libx264", "-threads", "1", "-preset", "veryfast"] + extra + [path])
        guard result.status == 0 else { throw OracleError(message: "ffmpeg failed: \(result.stderr)") }
        return path
    }

    /// Which shot ffmpeg shows at `time` (0, 1, 2; `nil` inside the dissolve), by the clip's construction,
    /// checked on ffmpeg's own frame: closest to that shot's picture.
    static func shot(at time: Double) -> Int? {
        if time < hardCut - 1e-6 { return 0 }
        if time < dissolve.first - 1e-6 { return 1 }
        if time >= dissolve.last - 1e-6 { return 2 }
        return nil
    }

    @Test("A scene sheet of a 3-shot clip has no empty tiles: the grid shrinks to the shots, the last row completed")
    func sheetHasNoEmptyTiles() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = try Self.makeClip(in: directory, name: "three.mp4")
        var configuration = ClipContactSheet.Configuration()
        configuration.pick = .scenes
        configuration.sheetWidth = 640
        let sheet = try FrameSampler(source: .file(clip)).contactSheet(configuration)
        let layout = sheet.layout
        // Every place of the grid drawn holds a tile: no place shows the bare background.
        #expect(sheet.plan.frames.count == layout.columns * layout.rows, "\(sheet.plan.tiles) in \(layout.columns)x\(layout.rows)")
        #expect(layout.columns * layout.rows < 16)
        #expect(sheet.plan.gridAsked == Size(width: 4, height: 4))
        #expect(sheet.plan.grid == Size(width: layout.columns, height: layout.rows))
        for index in 0..<(layout.columns * layout.rows) {
            let frame = layout.tileFrame(index)
            var values = Set<Int>()
            for y in stride(from: frame.y, to: frame.y + frame.height, by: 7) {
                for x in stride(from: frame.x, to: frame.x + frame.width, by: 7) {
                    let pixel = sheet.image[x, y]
                    values.insert(Int(pixel.red) << 16 | Int(pixel.green) << 8 | Int(pixel.blue))
                }
            }
            #expect(values.count > 20, "tile \(index) at \(frame) looks empty (\(values.count) colours)")
        }
        // The tiles show all three shots and no frame inside the dissolve (ffmpeg's frame times).
        let times = try Oracle.frameTimes(of: clip)
        let shown = sheet.plan.frames.map(\.sourceTime)
        for time in shown { #expect(times.contains { abs($0 - time) < 1e-6 }, "tile at \(time) s is no frame ffmpeg decodes") }
        #expect(Set(shown.compactMap(Self.shot)) == [0, 1, 2], "tiles at \(shown)")
        #expect(shown.allSatisfy { Self.shot(at: $0) != nil }, "a tile inside the dissolve: \(shown)")
        let distinct = sheet.plan.tiles.filter { $0.reason != .spread }
        #expect(distinct.count == 3, "\(sheet.plan.tiles)")

        // The CLI says so.
        let result = try Child.cli(["sheet", clip, "-o", directory + "/s.png", "--pick", "scenes", "--width", "640"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.contains("3 distinct shots for the 4x4 asked"), "\(result.stdoutText)")
        let json = try Child.cli(["sheet", clip, "-o", directory + "/s.png", "--pick", "scenes", "--width", "640", "--json"])
        let record = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        let plan = try #require((record["outputs"] as? [[String: Any]])?.first?["plan"] as? [String: Any])
        #expect(plan["grid_asked"] as? String == "4x4")
        #expect(plan["grid"] as? String == "\(layout.columns)x\(layout.rows)")
    }

    @Test("The dissolve yields one cut, at its end, and the hard cut one", arguments: [false, true])
    func dissolveIsOneCut(keyframesInside: Bool) throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // With keyframes forced inside the dissolve, as an encoder that starts a group at each change it sees.
        let clip = try Self.makeClip(in: directory, name: "three.mp4",
                                     extra: keyframesInside ? ["-force_key_frames", "8.72,8.92,9.12"] : [])
        if keyframesInside {
            let keyframes = try Oracle.keyframeTimes(of: clip)
            #expect(keyframes.filter { $0 > Self.dissolve.first && $0 < Self.dissolve.last }.count == 3, "\(keyframes)")
        }
        let scan = try FrameSampler(source: .file(clip)).sceneCuts(start: 0, length: 13)
        try #require(scan.cuts.count == 2, "\(scan.cuts)")
        #expect(abs(scan.cuts[0].time - Self.hardCut) < 1e-6)
        let transition = scan.cuts[1]
        #expect(transition.time > Self.dissolve.first && transition.time <= Self.dissolve.last + 1e-6, "\(transition)")
        #expect(transition.evidence == .dissolve)
        #expect(transition.score >= ScenePickSettings().cutThreshold)
        if !keyframesInside { #expect(abs(transition.time - Self.dissolve.last) < 1e-6, "\(transition)") }
    }
}
