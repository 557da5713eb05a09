import Foundation
import PreviewLoop
import Testing
import PreviewLoopTestSupport

/// Public initialisers and calls that used to trap on a bad argument throw `invalidArgument` instead.
@Suite("Invalid arguments throw, never trap")
struct InvalidArgumentTests {
    @Test("Images: sides outside 1…65535, a pixel count that does not match, tiling nothing")
    func images() throws {
        #expect(errorCode { _ = try RGBImage(width: 0, height: 1) } == .invalidArgument)
        #expect(errorCode { _ = try RGBImage(width: 4, height: -2) } == .invalidArgument)
        #expect(errorCode { _ = try RGBImage(width: 70_000, height: 1) } == .invalidArgument)
        #expect(errorCode { _ = try RGBImage(width: Int.max, height: Int.max) } == .invalidArgument)   // no overflow trap
        #expect(errorCode { _ = try RGBImage(width: 2, height: 2, pixels: [1, 2, 3]) } == .invalidArgument)
        #expect(errorCode { _ = try RGBAImage(width: 0, height: 0) } == .invalidArgument)
        #expect(errorCode { _ = try RGBAImage(width: 1, height: 1, pixels: [0, 0, 0]) } == .invalidArgument)
        #expect(errorCode { _ = try RGBImage(filledWith: .white, size: Size(width: 3, height: 0)) } == .invalidArgument)
        let tile = try RGBImage(width: 2, height: 2)
        #expect(errorCode { _ = try RGBImage.tiled([], columns: 1) } == .invalidArgument)
        #expect(errorCode { _ = try RGBImage.tiled([tile], columns: 0) } == .invalidArgument)
        #expect(try RGBImage.tiled([tile, tile, tile], columns: 2).size == Size(width: 4, height: 4))
    }

    @Test("Layouts, palettes, masks and blends of the wrong size")
    func layoutsPalettesMasks() throws {
        #expect(errorCode { _ = try ContactSheetLayout(columns: 0, rows: 1, tileSize: Size(width: 8, height: 8)) } == .invalidArgument)
        #expect(errorCode { _ = try ContactSheetLayout(columns: 1, rows: 1, tileSize: Size(width: 8, height: 8), gap: -1) } == .invalidArgument)
        #expect(errorCode { _ = try ColorPalette(colors: []) } == .invalidArgument)
        #expect(errorCode { _ = try ColorPalette(representing: []) } == .invalidArgument)
        #expect(errorCode { _ = try ColorPalette(representing: [RGBImage(width: 2, height: 2)], maximumCount: 0) } == .invalidArgument)
        #expect(errorCode { _ = try ColorPalette(representing: [RGBImage(width: 2, height: 2)], sampleStride: 0) } == .invalidArgument)
        #expect(errorCode { _ = try CoverageMask(size: Size(width: 0, height: 4), value: 255) } == .invalidArgument)
        #expect(errorCode { _ = try CoverageMask(.disc(center: Point(x: 1, y: 1), radius: 1), size: Size(width: -1, height: 4)) } == .invalidArgument)
        var picture = try RGBAImage(width: 4, height: 4, color: .white)
        let small = try CoverageMask(size: Size(width: 2, height: 2), value: 0)
        #expect(errorCode { try picture.apply(small) } == .invalidArgument)
        #expect(picture.isOpaque)   // left untouched
        #expect(errorCode { _ = try picture.blended(with: RGBAImage(width: 2, height: 2)) } == .invalidArgument)
        #expect(errorCode { _ = try picture.blended(with: picture, through: small) } == .invalidArgument)
    }

    @Test("The card's compositor: an unusable style, pictures of the wrong size; an animation frame of the wrong size")
    func compositorAndWriter() throws {
        #expect(errorCode { _ = try CardCompositor(style: CardStyle(size: Size(width: 0, height: 270))) } == .invalidArgument)
        #expect(errorCode { _ = try CardCompositor(style: CardStyle(cornerRadius: -1)) } == .invalidArgument)
        let compositor = try CardCompositor(style: CardStyle(size: Size(width: 32, height: 18)))
        let right = try RGBImage(width: 32, height: 18), wrong = try RGBImage(width: 16, height: 9)
        #expect(errorCode { _ = try compositor.picture(at: .poster, poster: wrong, video: nil) } == .invalidArgument)
        #expect(errorCode { _ = try compositor.picture(at: .playing(videoTime: 0), poster: right, video: wrong) } == .invalidArgument)
        #expect(try compositor.picture(at: .poster, poster: right, video: nil).size == Size(width: 32, height: 18))
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writer = try AnimationWriter(path: directory + "/a.gif", format: .gif, size: Size(width: 32, height: 18), framesPerSecond: 10)
        #expect(errorCode { try writer.append(wrong) } == .invalidArgument)
        try writer.append(right)
        try writer.finish()
        #expect(FileManager.default.fileExists(atPath: directory + "/a.gif"))
    }
}
