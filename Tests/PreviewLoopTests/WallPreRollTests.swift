import Foundation
import Synchronization
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// A wall loop over a clip cut without re-encoding from the middle of a long GOP: the cut keeps the
/// GOP's earlier frames as a pre-roll FFmpeg marks discard, so every decode of the window pays for
/// them. A first pass that is late must still leave its whole window in the cache, so that later
/// passes replay it instead of decoding the window and its pre-roll again. No timing is asserted:
/// lateness is forced (a clock started long ago, a presenter held up), and the counters say which
/// frames were decoded.
extension WallTests {
    /// Pictures of pre-roll before the cut's first frame (3 s at 30 fps).
    static let cutPreRoll = 90

    /// A 6 s 320x240 H.264 film with one GOP, cut from 3 s to 5 s by stream copy into `directory`.
    static func midGOPCut(in directory: String) throws -> String {
        let film = directory + "/film.mp4", cut = directory + "/cut.mp4"
        let made = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
                                             "-t", "6", "-c:v", "libx264", "-g", "300", "-pix_fmt", "yuv420p", film])
        try #require(made.status == 0, "\(made.stderr)")
        let cutting = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-ss", "3", "-i", film, "-t", "2", "-c", "copy", cut])
        try #require(cutting.status == 0, "\(cutting.stderr)")
        // The cut carries the GOP from its keyframe at 0 s: 90 pre-roll packets marked discard.
        let packets = try Child.tool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=flags",
                                                 "-of", "csv=p=0", cut])
        let discarded = packets.stdoutText.split(separator: "\n").filter { $0.contains("D") }.count
        try #require(discarded == cutPreRoll, "pre-roll packets marked discard: \(discarded)")
        return cut
    }

    static let cutConfiguration = LoopPlayer.Configuration(size: WallTests.size, clock: .realtime)

    /// The cut's frames as an on-time (offline) decode shows them.
    static func onTimeFrames(of clip: String) throws -> [RGBImage] {
        let loop = try WallLoop(id: 1, source: .file(clip), configuration: offline(), loops: 1, frameRateDivisor: 1,
                                budget: FrameCacheBudget(limit: 0))
        defer { loop.close() }
        var frames: [RGBImage] = []
        while case .frame(let item) = try loop.step(clockStart: nil) { frames.append(item.image) }
        try #require(frames.count >= 60, "frames in the 2 s cut: \(frames.count)")
        return frames
    }

    @Test("A first pass too late to show a single frame still caches its window: later passes replay it, the pre-roll decoded once")
    func lateFirstPassStillCaches() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = try Self.midGOPCut(in: directory)
        let reference = try Self.onTimeFrames(of: clip)
        let cutFrames = reference.count
        let budget = FrameCacheBudget(limit: 1 << 24)
        let loop = try WallLoop(id: 0, source: .file(clip), configuration: Self.cutConfiguration, loops: 3,
                                frameRateDivisor: 1, budget: budget)
        // The loop's clock started an hour ago: every frame the decoder makes is far too late to show.
        let clockStart = ContinuousClock.now - .seconds(3600)
        var items: [WallItem] = []
        while case .frame(let item) = try loop.step(clockStart: clockStart) { items.append(item) }
        let statistics = loop.counters.withLock { $0.statistics }

        // Each window frame decoded once, the pre-roll once; both later passes come from the cache.
        #expect(statistics.framesDecoded == cutFrames)
        #expect(statistics.framesDecodedAgain == 0)
        #expect(statistics.preRollPictures >= Self.cutPreRoll && statistics.preRollPictures < 2 * Self.cutPreRoll,
                "pre-roll pictures decoded: \(statistics.preRollPictures)")
        #expect(statistics.framesReplayed == 2 * cutFrames)
        #expect(statistics.passesCompleted == 3)
        // No first-pass frame was shown, and every one is counted as dropped.
        #expect(items.allSatisfy { $0.pass > 0 })
        #expect(items.reduce(0) { $0 + $1.droppedBefore } == cutFrames)
        let passes = (1...2).map { pass in items.filter { $0.pass == pass } }
        #expect(passes.map { $0.map(\.index) } == [Array(0..<cutFrames), Array(0..<cutFrames)])

        // The replayed frames are those an on-time decode shows, byte for byte.
        for pass in passes {
            for (item, expected) in zip(pass, reference) where item.image.pixels != expected.pixels {
                Issue.record("pass \(item.pass + 1) frame \(item.index + 1) differs from an on-time decode")
            }
        }
        loop.close()
        #expect(budget.bytesInUse == 0)
    }

    @Test("A wall loop held up in its first pass replays its later passes from the cache, without decoding its pre-roll again")
    func heldUpFirstPassReplaysLaterPasses() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = try Self.midGOPCut(in: directory)
        let cutFrames = try Self.onTimeFrames(of: clip).count
        let wall = try PreviewWall(configuration: .init(workers: 2))
        // The presenter is held 1.5 s on the first frame: the loop's read-ahead runs out, and it goes
        // on well over a second late, far past the frame interval a realtime frame may be late.
        let passes = Mutex([Int](repeating: 0, count: 3))
        let handle = try wall.add(source: .file(clip), configuration: Self.cutConfiguration, loops: 3, onFrame: { frame in
            let first = passes.withLock { counts -> Bool in
                counts[frame.loopIndex] += 1
                return frame.loopIndex == 0 && counts[0] == 1
            }
            if first { Thread.sleep(forTimeInterval: 1.5) }
        })
        try handle.wait()
        let statistics = handle.statistics
        #expect(statistics.passesCompleted == 3)
        #expect(statistics.framesDropped > 0, "the first pass was not late: \(passes.withLock { $0 })")
        #expect(statistics.framesDecoded == cutFrames)
        #expect(statistics.framesDecodedAgain == 0)
        #expect(statistics.preRollPictures >= Self.cutPreRoll && statistics.preRollPictures < 2 * Self.cutPreRoll,
                "pre-roll pictures decoded: \(statistics.preRollPictures)")
        #expect(statistics.framesReplayed == 2 * cutFrames)
        #expect(statistics.framesPresented + statistics.framesDropped == 3 * cutFrames)
        #expect(wall.statistics.total.framesDecodedAgain == 0)
    }
}
