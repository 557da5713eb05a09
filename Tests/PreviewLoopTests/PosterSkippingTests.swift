import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// The poster search skips the frames it never looks at (neither a candidate nor referred to by
/// another frame): fewer frames decoded, the same outcome as decoding every frame.
@Suite("Poster search skipping unjudged frames")
struct PosterSkippingTests {
    static let size = Size(width: 160, height: 90)

    /// The reference: every frame of the look-ahead decoded, no keyframe confirmation.
    static func fullSearch(_ path: String, _ window: Range<Double>) throws -> PosterChoice {
        try FrameSampler(source: .file(path)).posterFrame(in: window, size: size, mode: .aspectFill, retention: .likely,
                                                          decodesEveryFrame: true, confirmsWithKeyframe: false)
    }

    @Test("Same poster, same judgements, fewer frames decoded",
          arguments: [("landscape.mp4", 0..<15.0), ("fade-in.mp4", 0..<15.0), ("blur-start.mp4", 0..<15.0),
                      ("black-start.mp4", 0..<15.0), ("dark.mp4", 0..<15.0), ("landscape.mp4", 1.5..<4)])
    func sameOutcome(_ fixture: String, window: Range<Double>) throws {
        let path = TestPaths.fixture(fixture)
        let skipping = try FrameSampler(source: .file(path)).posterFrame(in: window, size: Self.size)
        let every = try Self.fullSearch(path, window)
        #expect(skipping.time == every.time && skipping.reason == every.reason && skipping.scores == every.scores)
        #expect(skipping.frame.image == every.frame.image)
        #expect(skipping.rejected == every.rejected)
        // These fixtures have unreferenced B-frames between the candidates (and keyframes every second).
        #expect(skipping.framesDecoded < every.framesDecoded, "\(skipping.framesDecoded) vs \(every.framesDecoded)")
    }

    /// Fixtures with keyframes every second: a good start is settled by a keyframe decoded alone; a
    /// fade, a blur, a dark leader or a cut before it send the search through the second frame by frame.
    @Test("A keyframe a second on settles a good start in two frames; otherwise the same poster as the full search",
          arguments: [("landscape.mp4", 0..<15.0, true), ("title-card.mp4", 0..<15.0, false), ("fade-in.mp4", 0..<15.0, false),
                      ("blur-start.mp4", 0..<15.0, false), ("black-start.mp4", 0..<15.0, false), ("dark.mp4", 0..<15.0, false),
                      ("landscape.mp4", 2..<4, true)])
    func keyframeConfirmation(_ fixture: String, window: Range<Double>, settlesAtOnce: Bool) throws {
        let path = TestPaths.fixture(fixture)
        let confirmed = try FrameSampler(source: .file(path)).posterFrame(in: window, size: Self.size)
        let full = try Self.fullSearch(path, window)
        #expect(confirmed.time == full.time && confirmed.reason == full.reason && confirmed.scores == full.scores)
        #expect(confirmed.frame.image == full.frame.image)
        #expect(confirmed.rejected == full.rejected)
        if settlesAtOnce {
            #expect(confirmed.framesDecoded == 2, "\(confirmed.framesDecoded) frames decoded")
        } else {
            #expect(confirmed.framesDecoded > 2, "\(confirmed.framesDecoded) frames decoded")
        }
    }

    @Test("A cut before the confirming keyframe: the second is searched frame by frame, and the first frame still wins")
    func cutBeforeKeyframe() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = directory + "/cut.mp4"
        // testsrc2 for 0.6 s, then SMPTE bars; keyframes every second (x264, 25 fps).
        let made = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y",
            "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=0.6",
            "-f", "lavfi", "-i", "smptebars=size=320x180:rate=25:duration=2.4",
            "-filter_complex", "[0:v][1:v]concat=n=2:v=1:a=0,format=yuv420p[v]", "-map", "[v]",
            "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0", clip])
        try #require(made.status == 0, "\(made.stderr)")
        let confirmed = try FrameSampler(source: .file(clip)).posterFrame(in: 0..<15, size: Self.size)
        let full = try Self.fullSearch(clip, 0..<15)
        #expect(confirmed.time == 0 && confirmed.reason == .firstGoodFrame)
        #expect(confirmed.time == full.time && confirmed.frame.image == full.frame.image)
        #expect(confirmed.framesDecoded > 2, "the keyframe shows another scene: \(confirmed.framesDecoded) frames decoded")
    }

    @Test("After a search that skipped frames, the sampler still gives the exact frame at every time",
          arguments: ["landscape.mp4", "fade-in.mp4", "blur-start.mp4"])
    func continuesExactly(_ fixture: String) throws {
        let path = TestPaths.fixture(fixture)
        let fresh = try FrameSampler(source: .file(path))
        // Every frame of the first 2.4 s, each asked right after a search: those the search skipped,
        // and those just past where it stopped, included.
        for frame in 0..<60 {
            let time = Double(frame) * 0.04
            let sampler = try FrameSampler(source: .file(path))
            _ = try sampler.posterFrame(in: 0..<15, size: Self.size)
            let after = try sampler.frame(at: time, size: Self.size, accuracy: .exact)
            let alone = try fresh.frame(at: time, size: Self.size, accuracy: .exact)
            #expect(after.sourceTime == alone.sourceTime && after.image == alone.image, "at \(time) s")
        }
    }
}

/// After a leader, fade, slate or blur the first candidate that holds up is settled by a keyframe a
/// second or more later, decoded alone, instead of by the rest of its second.
@Suite("Poster search settling a candidate after a bad start by a later keyframe")
struct PosterLaterKeyframeTests {
    static func search(_ path: String, confirms: Bool) throws -> PosterChoice {
        try FrameSampler(source: .file(path)).posterFrame(in: 0..<15, size: PosterSkippingTests.size, mode: .aspectFill,
                                                          retention: .likely, decodesEveryFrame: false, confirmsWithKeyframe: confirms)
    }

    @Test("The same poster and judgements as searching the second, with fewer frames decoded",
          arguments: ["fade-in.mp4", "black-start.mp4", "blur-start.mp4", "slate.mp4"])
    func fewerFrames(_ fixture: String) throws {
        let path = TestPaths.fixture(fixture)
        let settled = try Self.search(path, confirms: true)
        let searched = try Self.search(path, confirms: false)
        #expect(settled.time > 0 && settled.reason == .firstGoodFrame)
        #expect(settled.time == searched.time && settled.scores == searched.scores && settled.rejected == searched.rejected)
        #expect(settled.frame.image == searched.frame.image)
        #expect(settled.framesDecoded < searched.framesDecoded, "\(settled.framesDecoded) vs \(searched.framesDecoded)")
    }

    @Test("A long GOP: a keyframe 8 s after a good start still settles it in two frames")
    func longGOP() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = directory + "/gop200.mp4"
        let made = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=10",
                                             "-c:v", "libx264", "-preset", "ultrafast", "-g", "200", "-keyint_min", "200",
                                             "-sc_threshold", "0", "-pix_fmt", "yuv420p", clip])
        try #require(made.status == 0, "\(made.stderr)")
        let settled = try FrameSampler(source: .file(clip)).posterFrame(in: 0..<15, size: PosterSkippingTests.size)
        let full = try PosterSkippingTests.fullSearch(clip, 0..<15)
        #expect(settled.time == 0 && settled.time == full.time && settled.frame.image == full.frame.image)
        #expect(settled.framesDecoded == 2, "\(settled.framesDecoded) frames decoded")
    }

    @Test("A cut a second after the good frame: the keyframe shows another scene, decoding resumes, the same poster")
    func cutAfterGoodFrame() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = directory + "/fade-cut.mp4"
        // testsrc2 blurred for 0.5 s (bad against what follows, not on its own, so no keyframe step),
        // sharp to 1.6 s, then SMPTE bars; keyframes every second (x264, 25 fps).
        let made = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y",
            "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=0.5,gblur=sigma=12",
            "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=1.1",
            "-f", "lavfi", "-i", "smptebars=size=320x180:rate=25:duration=2.4",
            "-filter_complex", "[0:v][1:v][2:v]concat=n=3:v=1:a=0,format=yuv420p[v]", "-map", "[v]",
            "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0", clip])
        try #require(made.status == 0, "\(made.stderr)")
        let settled = try Self.search(clip, confirms: true)
        let searched = try Self.search(clip, confirms: false)
        #expect(abs(settled.time - 0.52) < 0.05, "\(settled.time)")
        #expect(settled.time == searched.time && settled.frame.image == searched.frame.image && settled.rejected == searched.rejected)
        // The keyframe at 2 s shows the bars: nothing settled early, so more than the search itself.
        #expect(settled.framesDecoded > searched.framesDecoded, "\(settled.framesDecoded) vs \(searched.framesDecoded)")
    }
}

@Suite("Poster search on WebM with its cues at the end")
struct PosterWebMCuesTests {
    @Test("The cues are read before the search, so a keyframe a second on settles a good start in two frames")
    func cuesAtTheEnd() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = directory + "/cues-end.webm"
        // FFmpeg's WebM muxer writes the cues after the clusters unless told otherwise.
        let made = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=3",
                                             "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "500k", "-g", "25",
                                             "-pix_fmt", "yuv420p", clip])
        try #require(made.status == 0, "\(made.stderr)")
        let settled = try FrameSampler(source: .file(clip)).posterFrame(in: 0..<15, size: PosterSkippingTests.size)
        let full = try PosterSkippingTests.fullSearch(clip, 0..<15)
        #expect(settled.time == 0 && settled.time == full.time && settled.frame.image == full.frame.image)
        #expect(settled.framesDecoded == 2, "\(settled.framesDecoded) frames decoded")
        // The sampler still gives the exact frames after it (the seek that read the cues changed nothing).
        let sampler = try FrameSampler(source: .file(clip))
        _ = try sampler.posterFrame(in: 0..<15, size: PosterSkippingTests.size)
        let after = try sampler.frame(at: 1.52, size: PosterSkippingTests.size, mode: .aspectFill, accuracy: .exact)
        let fresh = try FrameSampler(source: .file(clip)).frame(at: 1.52, size: PosterSkippingTests.size, mode: .aspectFill, accuracy: .exact)
        #expect(after.image == fresh.image && after.sourceTime == fresh.sourceTime)
    }
}
