import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// `--pick scenes` keeps the tiles the cut search decodes on its way (start, cuts, fills near its grid)
/// instead of decoding them again: those tiles must be the very frames an exact decode gives.
@Suite("Scene picks: tiles kept from the search")
struct ScenePickCostTests {
    @Test("Every tile of a scene plan (start, cuts and fills) is pixel for pixel the exact frame at its time")
    func keptTilesAreExactFrames() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Keyframes every 100 frames: the cuts fall inside groups, which the search decodes frame by frame.
        let clip = try ScenePickTests.makeClip(ScenePickTests.sources, gop: 100, in: directory, name: "six.mp4")
        let size = Size(width: 96, height: 54)
        let plan = try FrameSampler(source: .file(clip)).tilePlan(pick: .scenes, count: 8, start: 0, length: 6, evenTimes: [],
                                                                  size: size, interval: 0)
        #expect(plan.tiles.count >= 6, "\(plan.tiles)")
        #expect(plan.tiles.contains { $0.reason == .fill })
        let reference = try FrameSampler(source: .file(clip))
        for (choice, frame) in zip(plan.tiles, plan.frames) {
            let exact = try reference.frame(at: frame.sourceTime + 1e-4, size: size, accuracy: .exact)
            #expect(abs(exact.sourceTime - frame.sourceTime) < 1e-6, "\(choice)")
            #expect(exact.image == frame.image, "tile \(choice) at \(frame.sourceTime) s differs from the exact frame")
        }
    }
}
