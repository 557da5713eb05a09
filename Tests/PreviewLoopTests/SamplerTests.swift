import Foundation
import Synchronization
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// `FrameSampler` on real fixtures: which frame each accuracy picks (keyframe, exact, auto), in the
/// caller's order, on an indexed MP4, an index-less MPEG-TS that starts at 11.4 s and a VP9 WebM.
/// The oracle is ffmpeg's own decode and ffprobe's times and key flags; each sampled frame must be
/// ffmpeg's frame at the expected time (best match among all frames, PSNR ≥ 35 dB).
@Suite("Frame sampler on fixtures")
struct SamplerTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var fixture: String
        var time: Double
        var accuracy: SeekAccuracy
        var interval: Double = 0
        /// The time (from the stream's start) of the frame ffmpeg shows that should come back.
        var expected: Double
        var testDescription: String { "\(fixture) \(accuracy) at \(time)" + (accuracy == .auto ? " every \(interval)" : "") }
    }

    static let size = Size(width: 160, height: 90)
    static let uprights = ["landscape.mp4": Size(width: 400, height: 300), "offset.ts": Size(width: 320, height: 240),
                           "vp9.webm": Size(width: 320, height: 240)]

    static let cases: [Case] = [
        // landscape.mp4: 25 fps, keyframes at 0, 1, 2, 3 s.
        Case(fixture: "landscape.mp4", time: 1.7, accuracy: .keyframe, expected: 1.0),
        Case(fixture: "landscape.mp4", time: 0.99, accuracy: .keyframe, expected: 0.0),
        Case(fixture: "landscape.mp4", time: 1.0, accuracy: .keyframe, expected: 1.0),
        Case(fixture: "landscape.mp4", time: 1.7, accuracy: .exact, expected: 1.68),
        Case(fixture: "landscape.mp4", time: 1.7, accuracy: .auto, interval: 0.2, expected: 1.68),
        // .auto takes the nearest keyframe on either side within half an interval. Index times are
        // decode times (0.92 s for the keyframe shown at 1.0 s): using them picked 0.0 s at 1.3 s.
        Case(fixture: "landscape.mp4", time: 1.3, accuracy: .auto, interval: 2.0, expected: 1.0),
        Case(fixture: "landscape.mp4", time: 1.7, accuracy: .auto, interval: 2.0, expected: 2.0),
        Case(fixture: "landscape.mp4", time: 1.7, accuracy: .auto, interval: 1.0, expected: 2.0),
        Case(fixture: "landscape.mp4", time: 10, accuracy: .exact, expected: 3.96),
        Case(fixture: "landscape.mp4", time: 10, accuracy: .keyframe, expected: 3.0),
        // offset.ts: no index, stream starts at 11.4 s, keyframes every 1 s from there.
        Case(fixture: "offset.ts", time: 2.3, accuracy: .keyframe, expected: 2.0),
        Case(fixture: "offset.ts", time: 2.3, accuracy: .exact, expected: 2.28),
        Case(fixture: "offset.ts", time: 2.3, accuracy: .auto, interval: 0.4, expected: 2.28),
        Case(fixture: "offset.ts", time: 2.3, accuracy: .auto, interval: 1.0, expected: 2.0),
        // No index: keyframes on either side are found by demuxing. At 1.8 the one at 2.0 is nearest;
        // at 2.79 none lies within 0.5 s (2.0 is 0.79 back; the clip ends at 2.96), so exact.
        Case(fixture: "offset.ts", time: 1.8, accuracy: .auto, interval: 1.0, expected: 2.0),
        Case(fixture: "offset.ts", time: 2.79, accuracy: .auto, interval: 1.0, expected: 2.76),
        // vp9.webm: video starts at 0.007 s, one keyframe (frame 0).
        Case(fixture: "vp9.webm", time: 0.5, accuracy: .keyframe, expected: 0.0),
        Case(fixture: "vp9.webm", time: 0.5, accuracy: .exact, expected: 0.48),
    ]

    @Test("Each accuracy returns ffmpeg's frame at the expected time", arguments: cases)
    func samplesExpectedFrame(_ item: Case) throws {
        let reference = try Oracle.reference(item.fixture, upright: Self.uprights[item.fixture]!, size: Self.size)
        let sampler = try FrameSampler(source: .file(TestPaths.fixture(item.fixture)))
        let frame = try sampler.frames(at: [item.time], size: Self.size, accuracy: item.accuracy, interval: item.interval)[0]
        let expectedIndex = Oracle.displayedIndex(at: item.expected, times: reference.times)
        #expect(abs(reference.times[expectedIndex] - item.expected) < 1e-3, "oracle: no frame at \(item.expected) s")
        #expect(abs(frame.sourceTime - item.expected) < 1e-3, "sourceTime \(frame.sourceTime), wanted \(item.expected)")
        #expect(frame.isKeyframe == reference.keyframes[expectedIndex], "isKeyframe \(frame.isKeyframe)")
        if item.accuracy == .keyframe { #expect(frame.isKeyframe) }
        #expect(frame.image.size == Self.size)
        let best = Compare.bestMatch(frame.image, among: reference.images)
        #expect(best.index == expectedIndex, "closest ffmpeg frame \(best.index), wanted \(expectedIndex)")
        #expect(best.psnr >= 35, "PSNR \(best.psnr) dB")
    }

    @Test("Times given out of order come back in the caller's order, each the right frame")
    func callersOrder() throws {
        let reference = try Oracle.reference("landscape.mp4", upright: Size(width: 400, height: 300), size: Self.size)
        let sampler = try FrameSampler(source: .file(TestPaths.fixture("landscape.mp4")))
        let times = [3.1, 0.5, 2.21, 0.5, 1.0, 3.99]
        for accuracy in [SeekAccuracy.exact, .keyframe] {
            let frames = try sampler.frames(at: times, size: Self.size, accuracy: accuracy, interval: 0)
            #expect(frames.count == times.count)
            for (position, (time, frame)) in zip(times, frames).enumerated() {
                let expected = accuracy == .exact ? Oracle.displayedIndex(at: time, times: reference.times)
                    : reference.keyframes[...Oracle.displayedIndex(at: time, times: reference.times)].lastIndex(of: true)!
                #expect(frame.index == position)
                #expect(abs(frame.sourceTime - reference.times[expected]) < 1e-3,
                        "\(accuracy) at \(time): sourceTime \(frame.sourceTime), wanted \(reference.times[expected])")
                let best = Compare.bestMatch(frame.image, among: reference.images)
                #expect(best.index == expected && best.psnr >= 35, "\(accuracy) at \(time): best \(best)")
            }
        }
    }

    @Test("Repeated and interleaved calls on one sampler keep answering correctly")
    func reusedSampler() throws {
        let sampler = try FrameSampler(source: .file(TestPaths.fixture("landscape.mp4")))
        // Forward within a GOP, back, across GOPs, keyframe in between, and the same time twice.
        let script: [(Double, SeekAccuracy, Double)] = [(0.5, .exact, 0.48), (0.9, .exact, 0.88), (0.3, .exact, 0.28),
                                                        (2.5, .keyframe, 2.0), (2.1, .exact, 2.08), (2.1, .exact, 2.08),
                                                        (3.5, .exact, 3.48), (0.0, .exact, 0.0)]
        var first: [Double: RGBImage] = [:]
        for (time, accuracy, expected) in script {
            let frame = try sampler.frame(at: time, size: Self.size, accuracy: accuracy)
            #expect(abs(frame.sourceTime - expected) < 1e-3, "\(accuracy) at \(time): \(frame.sourceTime)")
            if let earlier = first[expected] { #expect(earlier == frame.image, "same frame, different pixels at \(expected)") }
            first[expected] = frame.image
        }
    }

    @Test("Negative times clamp to the first frame")
    func negativeTime() throws {
        let sampler = try FrameSampler(source: .file(TestPaths.fixture("offset.ts")))
        let frame = try sampler.frame(at: -5, size: Self.size)
        #expect(frame.sourceTime == 0)
        #expect(frame.isKeyframe)
    }
}
