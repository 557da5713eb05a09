import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// `--pick scenes` on clips whose encoder starts a group of pictures at each cut (x264's default scene
/// cut detection): the cuts are taken from the keyframes without decoding the groups before them, and a
/// gradual change between keyframes at the regular interval is searched frame by frame, not taken for a cut.
@Suite("Scene picks: cuts on early keyframes")
struct ScenePickKeyframeTests {
    @Test("Each cut on a keyframe the encoder placed early: found from the keyframes alone, its tile the exact frame")
    func cutsOnEarlyKeyframes() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // 2 s shots with a keyframe at most every 30 frames: 30-frame groups, then a 20-frame one ending at
        // each cut, where x264 starts a group early.
        // x264 veryfast: ultrafast turns scene-cut detection off.
        let clip = try ScenePickTests.concatenatedShots(ScenePickTests.sources, seconds: 2,
                                                        encoder: ["-c:v", "libx264", "-preset", "veryfast", "-g", "30"],
                                                        in: directory, name: "early.mp4")
        let truth = try Oracle.frameTimes(of: clip)
        #expect(truth.count == 300)
        let expected = (1..<ScenePickTests.sources.count).map { truth[$0 * 50] }
        let keyframes = try Oracle.keyframeTimes(of: clip)
        for time in expected { #expect(keyframes.contains { abs($0 - time) < 1e-6 }, "x264 put no keyframe at the cut \(time)") }

        let scan = try FrameSampler(source: .file(clip)).sceneCuts(start: 0, length: 12)
        #expect(scan.cuts.map(\.time).count == expected.count, "\(scan.cuts)")
        for (cut, time) in zip(scan.cuts, expected) {
            #expect(abs(cut.time - time) <= 0.04 + 1e-6, "\(cut) vs \(time)")
            #expect(cut.evidence == .keyframe)
        }
        // Only groups at the regular interval whose keyframes differ (moving shots) are searched frame
        // by frame: at most the six 30-frame ones, under half of the clip; the groups ending at a cut are
        // not decoded (a decoded one would have placed its cut on frames).
        #expect(scan.groupsDecoded <= 6, "\(scan)")
        #expect(scan.framesDecoded < 150, "\(scan)")
        #expect(scan.packetCandidates != nil, "\(scan)")

        // The tiles: the start and the five cuts, each pixel for pixel the frame an exact decode gives.
        let size = Size(width: 96, height: 54)
        let plan = try FrameSampler(source: .file(clip)).tilePlan(pick: .scenes, count: 6, start: 0, length: 12, evenTimes: [],
                                                                  size: size, interval: 0)
        #expect(plan.tiles.map(\.reason) == [.start, .cut, .cut, .cut, .cut, .cut], "\(plan.tiles)")
        let reference = try FrameSampler(source: .file(clip))
        for (choice, frame) in zip(plan.tiles, plan.frames) {
            let exact = try reference.frame(at: choice.time + 1e-4, size: size, accuracy: .exact)
            #expect(abs(exact.sourceTime - frame.sourceTime) < 1e-6, "\(choice)")
            #expect(exact.image == frame.image, "tile \(choice) at \(frame.sourceTime) s differs from the exact frame")
        }
    }

    @Test("A fade between keyframes at the regular interval is searched frame by frame and gives no cut")
    func fadeAtRegularKeyframes() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // 4 s of testsrc2 fading out to black over 3 s, a keyframe every 25 frames and none at scene cuts:
        // keyframes a second apart differ, no packet stands out, and no group ends early.
        let clip = directory + "/fade.mp4"
        let made = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                                             "testsrc2=size=160x90:rate=25,trim=duration=4,fade=t=out:st=0.5:d=3",
                                             "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-sc_threshold", "0",
                                             "-pix_fmt", "yuv420p", clip])
        #expect(made.status == 0, "\(made.stderr)")
        let scan = try FrameSampler(source: .file(clip)).sceneCuts(start: 0, length: 4)
        #expect(scan.cuts.isEmpty, "\(scan.cuts)")
        #expect(scan.groupsDecoded >= 2, "\(scan)")
    }
}
