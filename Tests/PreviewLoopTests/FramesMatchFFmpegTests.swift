import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// The engine's frames against the `ffmpeg` CLI's own decode: geometry (autorotation, sample aspect,
/// aspect-fill crop), colour (range, matrix) and frame choice.
@Suite("Frames match ffmpeg", .tags(.slow))
struct FramesMatchFFmpegTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var fixture: String
        var uprightWidth: Int, uprightHeight: Int, sampleAspect: Double
        var testDescription: String { fixture }
    }

    static let cases: [Case] = [
        Case(fixture: "landscape.mp4", uprightWidth: 400, uprightHeight: 300, sampleAspect: 1),
        Case(fixture: "rotated90.mp4", uprightWidth: 240, uprightHeight: 320, sampleAspect: 1),
        Case(fixture: "rotated180.mp4", uprightWidth: 320, uprightHeight: 240, sampleAspect: 1),
        Case(fixture: "rotated270.mp4", uprightWidth: 240, uprightHeight: 320, sampleAspect: 1),
        Case(fixture: "anamorphic.mp4", uprightWidth: 360, uprightHeight: 240, sampleAspect: 1.5),
        // ffmpeg's transpose turns the 3:2 sample aspect into 2:3 along with the picture.
        Case(fixture: "anamorphic-rotated90.mp4", uprightWidth: 240, uprightHeight: 360, sampleAspect: 2.0 / 3.0),
        Case(fixture: "fullrange.mp4", uprightWidth: 320, uprightHeight: 240, sampleAspect: 1),
        Case(fixture: "bt709.mp4", uprightWidth: 640, uprightHeight: 360, sampleAspect: 1),
        Case(fixture: "vp9.webm", uprightWidth: 320, uprightHeight: 240, sampleAspect: 1),
    ]

    static let sizes = [Size(width: 320, height: 180), Size(width: 120, height: 160)]

    @Test("Exact stills match the ffmpeg CLI's frame, crop and colours", arguments: cases, sizes)
    func exactStillMatchesFFmpeg(_ item: Case, size: Size) throws {
        let path = TestPaths.fixture(item.fixture)
        let filter = Oracle.aspectFillFilter(uprightWidth: item.uprightWidth, uprightHeight: item.uprightHeight,
                                             sampleAspect: item.sampleAspect, output: size)
        let reference = try Oracle.frames(of: path, filter: filter, size: size)
        let times = try Oracle.frameTimes(of: path)
        #expect(reference.count == times.count && reference.count > 5)

        let sampler = try FrameSampler(source: .file(path))
        // Between frames, so "the frame displayed at t" is unambiguous: the last one at or before it.
        let wanted = (times[3] + times[4]) / 2
        let frame = try sampler.frame(at: wanted, size: size, mode: .aspectFill, accuracy: .exact)
        let expectedIndex = times.lastIndex { $0 <= wanted }!
        let best = Compare.best(frame.image, among: reference)
        #expect(best.index == expectedIndex, "closest ffmpeg frame \(best.index), wanted \(expectedIndex)")
        #expect(best.psnr >= 35, "PSNR \(best.psnr) dB against ffmpeg")
        let neighbour = Compare.psnr(frame.image, reference[expectedIndex + 1])
        #expect(neighbour < best.psnr - 3, "the next frame is nearly as close (\(neighbour) dB)")
        // Colour: per-channel means within 2 levels of ffmpeg's.
        let (a, b) = (Compare.channelMeans(frame.image), Compare.channelMeans(reference[expectedIndex]))
        #expect(abs(a.0 - b.0) < 2 && abs(a.1 - b.1) < 2 && abs(a.2 - b.2) < 2, "means \(a) vs \(b)")
    }

    @Test("Exact stills across a clip pick the frame ffmpeg shows at each time", arguments: ["landscape.mp4", "offset.ts", "vp9.webm"])
    func exactFrameChoiceAcrossClip(_ fixture: String) throws {
        let path = TestPaths.fixture(fixture)
        let info = try MediaProbe.probe(.file(path))
        let size = Size(width: 160, height: 90)
        let filter = Oracle.aspectFillFilter(uprightWidth: info.displaySize.width, uprightHeight: info.displaySize.height,
                                             sampleAspect: 1, output: size)
        let reference = try Oracle.frames(of: path, filter: filter, size: size)
        let times = try Oracle.frameTimes(of: path)
        // Between frames, at the start, just after keyframes and just before them, in shuffled order.
        let picks = [0, 1, 5, 12, 22, 24, 25, 26, 37, 49, 50, 51, 60, 73, times.count - 2].filter { $0 + 1 < times.count }
        let wanted = picks.map { (times[$0] + times[$0 + 1]) / 2 }.shuffled()
        let sampler = try FrameSampler(source: .file(path))
        let frames = try sampler.frames(at: wanted, size: size, accuracy: .exact, interval: 0)
        for (time, frame) in zip(wanted, frames) {
            let expected = times.lastIndex { $0 <= time }!
            let best = Compare.best(frame.image, among: reference)
            #expect(best.index == expected, "at \(time) s: closest ffmpeg frame \(best.index), wanted \(expected)")
            #expect(best.psnr >= 35)
        }
        // One at a time, each with a fresh seek, gives the same pictures.
        for (time, frame) in zip(wanted, frames).prefix(4) {
            let single = try FrameSampler(source: .file(path)).frame(at: time, size: size, accuracy: .exact)
            let identical = single.pixels == frame.pixels
            #expect(identical, "at \(time) s")
        }
    }
}
