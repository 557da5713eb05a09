import Foundation
import Synchronization
import Testing
@testable import PreviewLoop

extension Oracle {
    /// ffmpeg's decoded frames as ffprobe lists them, in presentation order.
    struct FrameList: Sendable {
        /// Seconds from the video stream's start.
        var times: [Double]
        /// Whether each frame is a keyframe.
        var keyframes: [Bool]
    }

    /// ffmpeg's frames with their images (aspect-filled to a size), times and key flags.
    struct Reference: Sendable {
        var images: [RGBImage]
        var times: [Double]
        var keyframes: [Bool]
    }

    /// Frame times (from the video stream's start) and key flags, from one ffprobe run.
    ///
    /// Unlike `frameTimes(of:)` this reads ffprobe's JSON: for MPEG-TS ffprobe prints the stream twice
    /// in CSV (program and stream sections), which `streamStart(of:)` cannot parse and turns into 0.
    static func frameList(of path: String) throws -> FrameList {
        let result = try Run.tool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                             "stream=start_time:frame=key_frame,best_effort_timestamp_time", "-of", "json", path])
        let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        guard let streams = json?["streams"] as? [[String: Any]], let frames = json?["frames"] as? [[String: Any]],
              let start = (streams.first?["start_time"] as? String).flatMap(Double.init) else {
            throw OracleError(message: "ffprobe gave no frames or start_time for \(path): \(result.stderr)")
        }
        let times = frames.compactMap { ($0["best_effort_timestamp_time"] as? String).flatMap(Double.init).map { $0 - start } }
        let keyframes = frames.compactMap { $0["key_frame"] as? Int }.map { $0 == 1 }
        guard times.count == frames.count, keyframes.count == frames.count else {
            throw OracleError(message: "ffprobe listed frames without times or key flags for \(path)")
        }
        return FrameList(times: times, keyframes: keyframes)
    }

    /// Frame times from the video stream's start (see ``frameList(of:)``).
    static func relativeFrameTimes(of path: String) throws -> [Double] {
        try frameList(of: path).times
    }

    /// References already computed, by fixture, geometry and size; tests share them.
    private static let references = Mutex<[String: Reference]>([:])

    /// ffmpeg's frames of `fixture` aspect-filled to `size`, their times and key flags (cached).
    static func reference(_ fixture: String, upright: Size, sampleAspect: Double = 1, size: Size) throws -> Reference {
        let key = "\(fixture) \(upright) \(sampleAspect) \(size)"
        if let cached = references.withLock({ $0[key] }) { return cached }
        let path = TestPaths.fixture(fixture)
        let filter = aspectFillFilter(uprightWidth: upright.width, uprightHeight: upright.height,
                                      sampleAspect: sampleAspect, output: size)
        let images = try frames(of: path, filter: filter, size: size), list = try frameList(of: path)
        guard images.count == list.times.count, images.count > 5 else {
            throw OracleError(message: "ffmpeg gave \(images.count) frames, ffprobe listed \(list.times.count) for \(fixture)")
        }
        let reference = Reference(images: images, times: list.times, keyframes: list.keyframes)
        references.withLock { $0[key] = reference }
        return reference
    }

    /// The index of the frame displayed at `time`: the last one whose time is at or before it.
    static func displayedIndex(at time: Double, times: [Double]) -> Int {
        times.lastIndex { $0 <= time + 1e-6 } ?? 0
    }
}

extension Compare {
    /// `best(_:among:)` with the same result, computed over raw buffers with integer sums: about ten
    /// times faster in debug builds, where these suites compare hundreds of frames.
    static func bestMatch(_ image: RGBImage, among candidates: [RGBImage]) -> (index: Int, psnr: Double) {
        var best = (index: -1, psnr: -Double.infinity)
        image.pixels.withUnsafeBufferPointer { a in
            for (index, candidate) in candidates.enumerated() where candidate.pixels.count == a.count {
                let sum = candidate.pixels.withUnsafeBufferPointer { b in
                    var sum = 0
                    for offset in 0..<a.count {
                        let d = Int(a[offset]) - Int(b[offset])
                        sum += d * d
                    }
                    return sum
                }
                let mse = Double(sum) / Double(a.count)
                let value = mse == 0 ? Double.infinity : 10 * log10(255 * 255 / mse)
                if value > best.psnr { best = (index, value) }
            }
        }
        return best
    }
}

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
