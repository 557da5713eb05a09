import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// The poster search skips the frames it never looks at (neither a candidate nor referred to by
/// another frame): fewer frames decoded, the same outcome as decoding every frame.
@Suite("Poster search skipping unjudged frames")
struct PosterSkippingTests {
    static let size = Size(width: 160, height: 90)

    @Test("Same poster, same judgements, fewer frames decoded",
          arguments: [("landscape.mp4", 0..<15.0), ("fade-in.mp4", 0..<15.0), ("blur-start.mp4", 0..<15.0),
                      ("black-start.mp4", 0..<15.0), ("dark.mp4", 0..<15.0), ("landscape.mp4", 1.5..<4)])
    func sameOutcome(_ fixture: String, window: Range<Double>) throws {
        let path = TestPaths.fixture(fixture)
        let skipping = try FrameSampler(source: .file(path)).posterFrame(in: window, size: Self.size)
        let every = try FrameSampler(source: .file(path)).posterFrame(in: window, size: Self.size, mode: .aspectFill,
                                                                      retention: .likely, decodesEveryFrame: true)
        #expect(skipping.time == every.time && skipping.reason == every.reason && skipping.scores == every.scores)
        #expect(skipping.frame.image == every.frame.image)
        #expect(skipping.rejected == every.rejected)
        // These fixtures have unreferenced B-frames between the candidates.
        #expect(skipping.framesDecoded < every.framesDecoded, "\(skipping.framesDecoded) vs \(every.framesDecoded)")
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
