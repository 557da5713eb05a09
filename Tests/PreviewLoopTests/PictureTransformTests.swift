import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// `rotate`, `flip_h` and `flip_v` (Mux's image API): the picture turned clockwise after the source's
/// own orientation, then mirrored; checked as geometry and against the `ffmpeg` CLI's `transpose`,
/// `hflip` and `vflip` after its autorotation.
@Suite("Picture transforms: rotate, flip_h, flip_v")
struct PictureTransformTests {
    @Test("Orientations compose as the turns and mirrors they are: 64 pairs, checked pixel by pixel")
    func composition() {
        let decoded = Size(width: 5, height: 3)
        for first in Orientation.allCases {
            #expect(Orientation(clockwiseDegrees: first.clockwiseDegrees, mirrored: first.isMirrored) == first)
            let middle = first.swapsAxes ? Size(width: decoded.height, height: decoded.width) : decoded
            for second in Orientation.allCases {
                let composed = first.followed(by: second)
                let upright = second.swapsAxes ? Size(width: middle.height, height: middle.width) : middle
                for y in 0..<upright.height {
                    for x in 0..<upright.width {
                        let pixel = Rect(x: x, y: y, width: 1, height: 1)
                        let viaMiddle = first.decodedRect(forUpright: second.decodedRect(forUpright: pixel, decodedSize: middle),
                                                          decodedSize: decoded)
                        #expect(composed.decodedRect(forUpright: pixel, decodedSize: decoded) == viaMiddle,
                                "\(first) then \(second) at \(x),\(y)")
                    }
                }
            }
        }
    }

    @Test("A transform is the turn, then the horizontal flip, then the vertical flip")
    func transformOrder() {
        #expect(PictureTransform().isIdentity)
        #expect(PictureTransform(rotation: .clockwise).orientation == .rotatedClockwise)
        #expect(PictureTransform(rotation: .counterClockwise).orientation == .rotatedCounterClockwise)
        #expect(PictureTransform(flipsHorizontally: true).orientation == .mirrored)
        #expect(PictureTransform(flipsVertically: true).orientation == .flipped)
        #expect(PictureTransform(flipsHorizontally: true, flipsVertically: true).orientation == .upsideDown)
        // Turned clockwise, then mirrored left to right: the main diagonal's mirror (ffmpeg's transpose=cclock_flip).
        #expect(PictureTransform(rotation: .clockwise, flipsHorizontally: true).orientation == .transposed)
        #expect(PictureTransform(rotation: .clockwise, flipsVertically: true).orientation == .transverse)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var fixture: String
        /// The upright size before the transform.
        var width: Int, height: Int
        var transform: PictureTransform
        /// The same transform as ffmpeg filters, after its autorotation.
        var filters: String
        var testDescription: String { "\(fixture) \(filters)" }
    }

    static let cases: [Case] = [
        Case(fixture: "landscape.mp4", width: 400, height: 300, transform: PictureTransform(rotation: .clockwise), filters: "transpose=clock"),
        Case(fixture: "landscape.mp4", width: 400, height: 300, transform: PictureTransform(rotation: .half), filters: "hflip,vflip"),
        Case(fixture: "landscape.mp4", width: 400, height: 300, transform: PictureTransform(rotation: .counterClockwise), filters: "transpose=cclock"),
        Case(fixture: "landscape.mp4", width: 400, height: 300, transform: PictureTransform(flipsHorizontally: true), filters: "hflip"),
        Case(fixture: "landscape.mp4", width: 400, height: 300, transform: PictureTransform(flipsVertically: true), filters: "vflip"),
        Case(fixture: "landscape.mp4", width: 400, height: 300, transform: PictureTransform(rotation: .clockwise, flipsHorizontally: true),
             filters: "transpose=clock,hflip"),
        Case(fixture: "rotated90.mp4", width: 240, height: 320, transform: PictureTransform(rotation: .clockwise), filters: "transpose=clock"),
        Case(fixture: "rotated90.mp4", width: 240, height: 320, transform: PictureTransform(rotation: .counterClockwise, flipsVertically: true),
             filters: "transpose=cclock,vflip"),
    ]

    @Test("The transformed still is ffmpeg's frame turned and mirrored by its own filters", arguments: cases)
    func matchesFFmpeg(_ item: Case) throws {
        let path = TestPaths.fixture(item.fixture)
        let turns = item.transform.rotation.rawValue % 180 != 0
        let upright = turns ? Size(width: item.height, height: item.width) : Size(width: item.width, height: item.height)
        let size = Size(width: 160, height: 90)
        let filter = item.filters + "," + Oracle.aspectFillFilter(uprightWidth: upright.width, uprightHeight: upright.height,
                                                                 sampleAspect: 1, output: size)
        let reference = try Oracle.frames(of: path, filter: filter, size: size)
        let times = try Oracle.frameTimes(of: path)
        var options = SourceOptions()
        options.transform = item.transform
        let sampler = try FrameSampler(source: .file(path), options: options)
        #expect(sampler.info.displaySize == upright)
        let wanted = (times[3] + times[4]) / 2
        let frame = try sampler.frame(at: wanted, size: size, mode: .aspectFill, accuracy: .exact)
        let expected = times.lastIndex { $0 <= wanted }!
        let best = Compare.best(frame.image, among: reference)
        #expect(best.index == expected, "closest ffmpeg frame \(best.index), wanted \(expected)")
        #expect(best.psnr >= 35, "PSNR \(best.psnr) dB against ffmpeg")
        // Not the untransformed picture: the transform is what made it match.
        let plain = try FrameSampler(source: .file(path)).frame(at: wanted, size: size, mode: .aspectFill, accuracy: .exact)
        #expect(Compare.psnr(plain.image, reference[expected]) < best.psnr - 3)
    }
}
