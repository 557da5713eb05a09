import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// The loop builds its frames from decoded ones with the samplers' builder
/// (`VideoFrame(converting:…)`): a looped frame is, pixel for pixel, the exact still at its source
/// time, and a replayed pass is pass 0 with only its place and hand-over timings changed.
@Suite struct LoopFrameBuilderTests {
    @Test(arguments: ["anamorphic-rotated90.mp4"])
    func loopFramesAreTheSamplersStills(_ name: String) throws {
        let size = Size(width: 96, height: 64)
        let loop = try LoopPlayer(source: .file(TestPaths.fixture(name)),
                                  configuration: .init(size: size, windowStart: 0.2, windowLength: 0.4))
        var frames: [VideoFrame] = []
        try loop.run(loops: 2) { frames.append($0) }
        let first = frames.filter { $0.loopIndex == 0 }, second = frames.filter { $0.loopIndex == 1 }
        #expect(first.count >= 5)
        #expect(second.count == first.count)

        let sampler = try FrameSampler(source: .file(TestPaths.fixture(name)))
        for frame in first.prefix(2) + first.suffix(1) {
            let still = try sampler.frame(at: frame.sourceTime, size: size, accuracy: .exact)
            #expect(still.sourceTime == frame.sourceTime)
            #expect(still.image == frame.image, "frame \(frame.index) at \(frame.sourceTime) s")
        }
        for (index, (replayed, original)) in zip(second, first).enumerated() {
            #expect(replayed.index == index && original.index == index)
            #expect(replayed.image == original.image)
            #expect(replayed.presentationTime == original.presentationTime)
            #expect(replayed.sourceTime == original.sourceTime && replayed.isKeyframe == original.isKeyframe)
            #expect(replayed.timings.decode == .zero && replayed.timings.conversion == .zero, "from the cache")
        }
    }
}
