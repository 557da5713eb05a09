import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

@Suite("Smart crop on clips, against the ffmpeg CLI's crop of the chosen window", .timeLimit(.minutes(10)))
struct SmartCropClipTests {
    static let output = Size(width: 180, height: 180)

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var transform: PictureTransform
        /// The same transform as ffmpeg filters.
        var filters: String
        /// The object's place in the upright, transformed picture.
        var object: Rect
        var testDescription: String { name }
    }

    static let cases = [
        Case(name: "upright", transform: PictureTransform(), filters: "", object: SmartCropClips.object),
        // Turned clockwise: upright (x', y') = (359 − y, x), so the object's columns become rows.
        Case(name: "rotate 90", transform: PictureTransform(rotation: .clockwise), filters: "transpose=clock",
             object: Rect(x: 360 - 240, y: 510, width: 120, height: 120)),
        // Mirrored: the object is in the left third.
        Case(name: "flip_h", transform: PictureTransform(flipsHorizontally: true), filters: "hflip",
             object: Rect(x: 640 - 630, y: 120, width: 120, height: 120)),
    ]

    @Test("The still's window holds the object and is ffmpeg's crop there; the centred crop misses it", arguments: cases)
    func stillFollowsObject(_ item: Case) throws {
        let path = try SmartCropClips.make("object")
        var options = SourceOptions()
        options.transform = item.transform
        let sampler = try FrameSampler(source: .file(path), options: options)
        let smart = try sampler.frame(at: 0.45, size: Self.output, mode: .smartCrop, accuracy: .exact)
        let window = try #require(smart.uprightCrop)
        #expect(window.size == Size(width: 360, height: 360))
        #expect(SmartCropClips.coverage(of: item.object, by: window) >= 0.9, "window \(window), object \(item.object)")
        // The choice reports the same window, moved by the interest measure (testsrc2 holds no face).
        let choice = try #require(smart.smartCrop)
        #expect(choice.window == window && choice.basis == .interest, "\(choice)")
        #expect(choice.faces == (FaceCascade.frontalFace == nil ? nil : 0))

        let times = try Oracle.frameTimes(of: path)
        let index = times.lastIndex { $0 <= 0.45 }!
        let reference = try Oracle.frames(of: path, filter: SmartCropClips.cropFilter(window, output: Self.output, before: item.filters),
                                          size: Self.output)
        let psnr = Compare.psnr(smart.image, reference[index])
        #expect(psnr >= 35, "PSNR \(psnr) dB against ffmpeg's crop at \(window)")

        let centred = try sampler.frame(at: 0.45, size: Self.output, mode: .aspectFill, accuracy: .exact)
        let centreWindow = try #require(centred.uprightCrop)
        #expect(SmartCropClips.coverage(of: item.object, by: centreWindow) == 0, "the centre \(centreWindow) holds the object")
        #expect(Compare.psnr(centred.image, reference[index]) < psnr - 10)
    }

    @Test("An anamorphic clip: the window is chosen in display units and cut in coded pixels")
    func anamorphic() throws {
        // 320x360 coded with 2:1 pixels, displayed 640x360; the object's coded columns are 255..<315.
        let path = try SmartCropClips.make("anamorphic", filters: "scale=320:360,setsar=2")
        let sampler = try FrameSampler(source: .file(path))
        let smart = try sampler.frame(at: 0.45, size: Self.output, mode: .smartCrop, accuracy: .exact)
        let window = try #require(smart.uprightCrop)
        #expect(window.size == Size(width: 180, height: 360))
        #expect(SmartCropClips.coverage(of: Rect(x: 255, y: 120, width: 60, height: 120), by: window) >= 0.9, "window \(window)")
        let reference = try Oracle.frames(of: path, filter: SmartCropClips.cropFilter(window, output: Self.output), size: Self.output)
        let index = try Oracle.frameTimes(of: path).lastIndex { $0 <= 0.45 }!
        #expect(Compare.psnr(smart.image, reference[index]) >= 35)
    }

    @Test("A flat frame gives the centred crop, pixel for pixel")
    func flatFrame() throws {
        let path = try SmartCropClips.make("flat", flat: true)
        let sampler = try FrameSampler(source: .file(path))
        let smart = try sampler.frame(at: 0.45, size: Self.output, mode: .smartCrop, accuracy: .exact)
        let centred = try sampler.frame(at: 0.45, size: Self.output, mode: .aspectFill, accuracy: .exact)
        #expect(smart.uprightCrop == centred.uprightCrop)
        #expect(smart.pixels == centred.pixels)
        #expect(smart.smartCrop?.basis == .centre && smart.smartCrop?.window == smart.uprightCrop)
        #expect(centred.smartCrop == nil)
    }

    @Test("Odd sizes and 1-pixel outputs keep the window inside the frame", arguments: [
        Size(width: 1, height: 90), Size(width: 90, height: 1), Size(width: 1, height: 1), Size(width: 3, height: 181),
    ])
    func oddSizes(_ size: Size) throws {
        // 641x361 needs a codec without chroma subsampling's even sizes: FFV1 in Matroska.
        let path = try SmartCropClips.make("odd", encoder: ["-c:v", "ffv1"], fileExtension: "mkv", size: Size(width: 641, height: 361))
        for transform in [PictureTransform(), PictureTransform(rotation: .clockwise, flipsVertically: true)] {
            var options = SourceOptions()
            options.transform = transform
            let frame = try FrameSampler(source: .file(path), options: options).frame(at: 0.45, size: size, mode: .smartCrop)
            let window = try #require(frame.uprightCrop)
            let upright = transform.rotation == .none ? Size(width: 641, height: 361) : Size(width: 361, height: 641)
            #expect(window.x >= 0 && window.y >= 0 && window.x + window.width <= upright.width
                    && window.y + window.height <= upright.height, "\(window) in \(upright)")
            #expect(frame.width == size.width && frame.height == size.height)
        }
    }

    @Test("A loop keeps its first frame's window while the object moves; stills follow it")
    func loopHoldsWindow() throws {
        // The object sits in the right third for 0.5 s, then in the left third.
        let path = try SmartCropClips.make("moving", moving: true)
        let loop = try LoopPlayer(source: .file(path), configuration: .init(size: Self.output, contentMode: .smartCrop,
                                                                               windowLength: .seconds(1)))
        var windows: [Rect?] = []
        try loop.run(loops: 2) { frame in windows.append(frame.uprightCrop) }
        #expect(windows.count >= 18)
        let first = try #require(windows.first ?? nil)
        #expect(windows.allSatisfy { $0 == first }, "the window moved: \(Set(windows.map { $0?.description ?? "nil" }))")
        #expect(SmartCropClips.coverage(of: SmartCropClips.object, by: first) >= 0.9)
        // A still late in the clip chooses its own window, on the left.
        let late = try FrameSampler(source: .file(path)).frame(at: 0.85, size: Self.output, mode: .smartCrop, accuracy: .exact)
        let lateWindow = try #require(late.uprightCrop)
        #expect(SmartCropClips.coverage(of: Rect(x: 10, y: 120, width: 120, height: 120), by: lateWindow) >= 0.9, "\(lateWindow)")
    }

    @Test("The same clip and options give the same bytes every time")
    func reproducible() throws {
        let path = try SmartCropClips.make("object")
        let first = try FrameSampler(source: .file(path)).frame(at: 0.45, size: Self.output, mode: .smartCrop)
        for _ in 0..<2 {
            let again = try FrameSampler(source: .file(path)).frame(at: 0.45, size: Self.output, mode: .smartCrop)
            #expect(again.pixels == first.pixels && again.uprightCrop == first.uprightCrop)
        }
    }
}
