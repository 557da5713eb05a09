import Foundation
import Testing
@testable import PreviewLoop

/// An independent model of the eight orientations, written from FFmpeg's filter definitions
/// (libavfilter/vf_transpose.c, vf_hflip.c, vf_vflip.c), not from the library: which decoded pixel is
/// shown at each upright pixel. Shared by the geometry and imaging tests.
enum OrientationModel {
    /// The decoded pixel (in a `w`×`h` decoded picture) shown at upright pixel (`x`, `y`).
    static func decodedPixel(_ orientation: Orientation, x: Int, y: Int, w: Int, h: Int) -> (x: Int, y: Int) {
        switch orientation {
        case .up: (x, y)
        case .rotatedClockwise: (y, h - 1 - x)                 // transpose=clock: source rows read bottom-up
        case .rotatedCounterClockwise: (w - 1 - y, x)          // transpose=cclock: destination rows written bottom-up
        case .upsideDown: (w - 1 - x, h - 1 - y)               // hflip,vflip
        case .mirrored: (w - 1 - x, y)                         // hflip
        case .flipped: (x, h - 1 - y)                          // vflip
        case .transposed: (y, x)                               // transpose=cclock_flip (main diagonal)
        case .transverse: (w - 1 - y, h - 1 - x)               // transpose=clock_flip (anti-diagonal)
        }
    }

    /// The upright pixel showing decoded pixel (`p`, `q`): the inverse of ``decodedPixel(_:x:y:w:h:)``.
    static func uprightPixel(_ orientation: Orientation, p: Int, q: Int, w: Int, h: Int) -> (x: Int, y: Int) {
        switch orientation {
        case .up: (p, q)
        case .rotatedClockwise: (h - 1 - q, p)
        case .rotatedCounterClockwise: (q, w - 1 - p)
        case .upsideDown: (w - 1 - p, h - 1 - q)
        case .mirrored: (w - 1 - p, q)
        case .flipped: (p, h - 1 - q)
        case .transposed: (q, p)
        case .transverse: (h - 1 - q, w - 1 - p)
        }
    }

    /// Whether the orientation is a quarter turn (with or without a mirror).
    static func isQuarterTurn(_ orientation: Orientation) -> Bool {
        [.rotatedClockwise, .rotatedCounterClockwise, .transposed, .transverse].contains(orientation)
    }

    /// The upright picture's size for a decoded size.
    static func uprightSize(_ orientation: Orientation, _ decoded: Size) -> Size {
        isQuarterTurn(orientation) ? Size(width: decoded.height, height: decoded.width) : decoded
    }

    /// The upright rectangle covering decoded rectangle `rect`: the bounding box of its mapped corners.
    static func uprightRect(_ orientation: Orientation, forDecoded rect: Rect, decodedSize: Size) -> Rect {
        let a = uprightPixel(orientation, p: rect.x, q: rect.y, w: decodedSize.width, h: decodedSize.height)
        let b = uprightPixel(orientation, p: rect.x + rect.width - 1, q: rect.y + rect.height - 1,
                             w: decodedSize.width, h: decodedSize.height)
        return Rect(x: min(a.x, b.x), y: min(a.y, b.y), width: abs(a.x - b.x) + 1, height: abs(a.y - b.y) + 1)
    }
}

/// Pixel sizes and ratios: parsing `WxH`, and the small value types the layout is built from.
@Suite("Size, Rect and Rational")
struct SizeTests {
    @Test("WxH parses", arguments: [("320x180", 320, 180), ("320X180", 320, 180), ("1x1", 1, 1), ("16384x16384", 16384, 16384)])
    func parses(text: String, width: Int, height: Int) {
        #expect(Size(parsing: text) == Size(width: width, height: height))
    }

    @Test("Invalid sizes are rejected",
          arguments: ["0x10", "10x0", "10x", "x10", "x", "-1x5", "5x-1", "16385x10", "10x16385", "abc", "", "320", "320x180x2",
                      " 320x180", "320 x 180", "3.5x2", "320*180"])
    func rejects(text: String) {
        #expect(Size(parsing: text) == nil)
    }

    @Test("Size, Rect and Rational basics")
    func basics() {
        let size = Size(width: 320, height: 180)
        #expect(size.transposed == Size(width: 180, height: 320))
        #expect(size.area == 57_600)
        #expect(size.description == "320x180")
        #expect(Rect(x: 3, y: 4, width: 5, height: 6).size == Size(width: 5, height: 6))
        #expect(Rect(x: 3, y: 4, width: 5, height: 6).description == "5x6+3+4")
        #expect(Rational(3, 2).doubleValue == 1.5)
        #expect(Rational(3, 2).description == "3:2")
        for undefined in [Rational(0, 1), Rational(1, 0), Rational(0, 0), Rational(-3, 2), Rational(3, -2)] {
            #expect(!undefined.isDefined && undefined.doubleValue == nil, "\(undefined)")
        }
    }
}

/// `FrameLayout`: exhaustive invariants over modes × orientations × sizes × sample aspects × outputs,
/// checked in upright coordinates through ``OrientationModel``, plus hand-computed exact layouts.
@Suite("Frame layout")
struct FrameLayoutTests {
    static let sources = [(1920, 1080), (400, 300), (1080, 1920), (500, 500), (321, 241), (4000, 16), (16, 4000)]
        .map { Size(width: $0.0, height: $0.1) }
    static let ratios = [Rational(1, 1), Rational(3, 2), Rational(4, 3), Rational(0, 1)]
    static let outputs = [(320, 180), (180, 320), (1, 1), (400, 400)].map { Size(width: $0.0, height: $0.1) }

    /// Whether `rect` lies inside a picture of `size` and covers at least one pixel.
    static func isInside(_ rect: Rect, _ size: Size) -> Bool {
        rect.width >= 1 && rect.height >= 1 && rect.x >= 0 && rect.y >= 0
            && rect.x + rect.width <= size.width && rect.y + rect.height <= size.height
    }

    /// Whether `rect` is centred in `size`: opposite margins differ by at most one pixel.
    static func isCentred(_ rect: Rect, in size: Size) -> Bool {
        abs(rect.x - (size.width - rect.x - rect.width)) <= 1 && abs(rect.y - (size.height - rect.y - rect.height)) <= 1
    }

    @Test("Layout invariants hold for every case", arguments: ContentMode.allCases, Orientation.allCases)
    func invariants(mode: ContentMode, orientation: Orientation) {
        for source in Self.sources {
            for ratio in Self.ratios {
                for output in Self.outputs {
                    check(mode: mode, orientation: orientation, source: source, ratio: ratio, output: output)
                }
            }
        }
    }

    func check(mode: ContentMode, orientation: Orientation, source: Size, ratio: Rational, output: Size) {
        let context = "\(mode) \(orientation) \(source) SAR \(ratio) → \(output)"
        let layout = FrameLayout(source: source, sampleAspectRatio: ratio, orientation: orientation, output: output, mode: mode)
        let whole = Rect(x: 0, y: 0, width: source.width, height: source.height)
        let wholeOutput = Rect(x: 0, y: 0, width: output.width, height: output.height)
        let quarterTurn = OrientationModel.isQuarterTurn(orientation)
        #expect(layout.orientation == orientation && layout.outputSize == output, "\(context)")
        #expect(Self.isInside(layout.sourceCrop, source), "crop \(layout.sourceCrop) outside: \(context)")
        #expect(Self.isInside(layout.placement, output), "placement \(layout.placement) outside: \(context)")
        // One upright pixel's width and height in square display units.
        let sar = Double(ratio.numerator) / Double(ratio.denominator)
        let pixelAspect = ratio.numerator > 0 && ratio.denominator > 0 ? sar : 1
        let (pixelWidth, pixelHeight) = quarterTurn ? (1.0, pixelAspect) : (pixelAspect, 1.0)
        let upright = OrientationModel.uprightSize(orientation, source)
        let ow = Double(output.width), oh = Double(output.height)

        #expect(OrientationModel.uprightRect(orientation, forDecoded: layout.sourceCrop, decodedSize: source) == layout.uprightCrop,
                "upright crop \(layout.uprightCrop): \(context)")
        switch mode {
        case .aspectFill, .smartCrop:
            #expect(layout.placement == wholeOutput, "\(context)")
            #expect(layout.scaledSize == (quarterTurn ? output.transposed : output), "\(context)")
            guard Self.isInside(layout.sourceCrop, source) else { return }
            let crop = OrientationModel.uprightRect(orientation, forDecoded: layout.sourceCrop, decodedSize: source)
            #expect(Self.isCentred(crop, in: upright), "upright crop \(crop) of \(upright) not centred: \(context)")
            // A full side, and the other side within one pixel of the output's displayed aspect.
            let cw = Double(crop.width), ch = Double(crop.height)
            let idealHeight = cw * pixelWidth * oh / (ow * pixelHeight)
            let idealWidth = ch * pixelHeight * ow / (oh * pixelWidth)
            let aspectHolds = (crop.width == upright.width && abs(ch - idealHeight) <= 1)
                || (crop.height == upright.height && abs(cw - idealWidth) <= 1)
            #expect(aspectHolds, "upright crop \(crop) of \(upright): \(context)")
            // Moved anywhere (corners, past the edges), the crop keeps its size and stays inside, and
            // the decoded crop is still the upright one turned back.
            for (x, y) in [(0, 0), (-5, -5), (upright.width, upright.height), (1, upright.height / 2), (Int.max / 4, 0)] {
                let moved = layout.movingCrop(x: x, y: y, source: source)
                #expect(moved.uprightCrop.size == layout.uprightCrop.size && moved.scaledSize == layout.scaledSize, "\(context)")
                #expect(Self.isInside(moved.sourceCrop, source), "moved to \(x),\(y): \(moved.sourceCrop): \(context)")
                #expect(OrientationModel.uprightRect(orientation, forDecoded: moved.sourceCrop, decodedSize: source) == moved.uprightCrop,
                        "moved to \(x),\(y): \(context)")
                // Within a pixel of the corner asked for (inside the picture), on even decoded
                // coordinates where a side moved and the picture leaves room for that.
                let wanted = (x: min(max(0, x), upright.width - crop.width), y: min(max(0, y), upright.height - crop.height))
                #expect(abs(moved.uprightCrop.x - wanted.x) <= 1 && abs(moved.uprightCrop.y - wanted.y) <= 1, "\(context)")
                if wanted.x == crop.x { #expect(moved.uprightCrop.x == crop.x, "\(context)") }
                if wanted.y == crop.y { #expect(moved.uprightCrop.y == crop.y, "\(context)") }
                let decodedX = quarterTurn ? moved.sourceCrop.y : moved.sourceCrop.x
                if wanted.x != crop.x && upright.width - crop.width >= 2 { #expect(decodedX % 2 == 0, "\(context): \(moved.sourceCrop)") }
                let decodedY = quarterTurn ? moved.sourceCrop.x : moved.sourceCrop.y
                if wanted.y != crop.y && upright.height - crop.height >= 2 { #expect(decodedY % 2 == 0, "\(context): \(moved.sourceCrop)") }
            }
        case .aspectFit:
            #expect(layout.sourceCrop == whole, "\(context)")
            #expect(layout.scaledSize == (quarterTurn ? layout.placement.size.transposed : layout.placement.size), "\(context)")
            #expect(Self.isCentred(layout.placement, in: output), "placement \(layout.placement) not centred: \(context)")
            let dw = Double(upright.width) * pixelWidth, dh = Double(upright.height) * pixelHeight
            let pw = Double(layout.placement.width), ph = Double(layout.placement.height)
            let aspectHolds = (layout.placement.width == output.width && abs(ph - ow * dh / dw) <= 1)
                || (layout.placement.height == output.height && abs(pw - oh * dw / dh) <= 1)
            #expect(aspectHolds, "placement \(layout.placement) for display \(dw)x\(dh): \(context)")
            #expect(layout.hasBars == (layout.placement != wholeOutput), "\(context)")
        case .stretch:
            #expect(layout.sourceCrop == whole && layout.placement == wholeOutput && !layout.hasBars, "\(context)")
            #expect(layout.scaledSize == (quarterTurn ? output.transposed : output), "\(context)")
        }
    }

    /// Hand-computed layouts (see the comments for the arithmetic).
    @Test("Exact layouts", arguments: [
        // 1920x1080 → 320x320 fill: keep 1080x1080, x = (1920 - 1080) / 2 = 420.
        (Size(width: 1920, height: 1080), Rational(1, 1), Orientation.up, Size(width: 320, height: 320), ContentMode.aspectFill,
         Rect(x: 420, y: 0, width: 1080, height: 1080), Size(width: 320, height: 320), Rect(x: 0, y: 0, width: 320, height: 320)),
        // 400x300 → 320x180 fill: scale 0.8, keep 400x225, y = 75 / 2 = 37.
        (Size(width: 400, height: 300), Rational(1, 1), .up, Size(width: 320, height: 180), .aspectFill,
         Rect(x: 0, y: 37, width: 400, height: 225), Size(width: 320, height: 180), Rect(x: 0, y: 0, width: 320, height: 180)),
        // 360x240 SAR 3:2 (display 540x240) → 320x180 fill: keep 426.67 display = 284.44 → 284 coded, x = 76 / 2 = 38.
        (Size(width: 360, height: 240), Rational(3, 2), .up, Size(width: 320, height: 180), .aspectFill,
         Rect(x: 38, y: 0, width: 284, height: 240), Size(width: 320, height: 180), Rect(x: 0, y: 0, width: 320, height: 180)),
        // 320x240 turned clockwise (upright 240x320) → 320x180 fill: upright crop 240x135 at y = 185 / 2 = 92,
        // which is decoded columns 92..<227 (decoded x = upright y), all rows.
        (Size(width: 320, height: 240), Rational(1, 1), .rotatedClockwise, Size(width: 320, height: 180), .aspectFill,
         Rect(x: 92, y: 0, width: 135, height: 240), Size(width: 180, height: 320), Rect(x: 0, y: 0, width: 320, height: 180)),
        // Same turned counter-clockwise: decoded x = 319 - upright y, so columns 320 - 227 = 93..<228.
        (Size(width: 320, height: 240), Rational(1, 1), .rotatedCounterClockwise, Size(width: 320, height: 180), .aspectFill,
         Rect(x: 93, y: 0, width: 135, height: 240), Size(width: 180, height: 320), Rect(x: 0, y: 0, width: 320, height: 180)),
        // 1920x1080 → 400x400 fit: 400x225 at y = 175 / 2 = 87.
        (Size(width: 1920, height: 1080), Rational(1, 1), .up, Size(width: 400, height: 400), .aspectFit,
         Rect(x: 0, y: 0, width: 1920, height: 1080), Size(width: 400, height: 225), Rect(x: 0, y: 87, width: 400, height: 225)),
        // 360x240 SAR 3:2 (540x240) → 320x180 fit: 320 x 142.2 → 142, y = 38 / 2 = 19.
        (Size(width: 360, height: 240), Rational(3, 2), .up, Size(width: 320, height: 180), .aspectFit,
         Rect(x: 0, y: 0, width: 360, height: 240), Size(width: 320, height: 142), Rect(x: 0, y: 19, width: 320, height: 142)),
        // 320x240 clockwise (240x320) → 320x180 fit: 135x180 at x = 185 / 2 = 92; scaled before turning: 180x135.
        (Size(width: 320, height: 240), Rational(1, 1), .rotatedClockwise, Size(width: 320, height: 180), .aspectFit,
         Rect(x: 0, y: 0, width: 320, height: 240), Size(width: 180, height: 135), Rect(x: 92, y: 0, width: 135, height: 180)),
        // 360x240 SAR 3:2 clockwise (display 240x540) → 320x180 fit: 80 x 180 at x = 120.
        (Size(width: 360, height: 240), Rational(3, 2), .rotatedClockwise, Size(width: 320, height: 180), .aspectFit,
         Rect(x: 0, y: 0, width: 360, height: 240), Size(width: 180, height: 80), Rect(x: 120, y: 0, width: 80, height: 180)),
    ])
    func exact(source: Size, ratio: Rational, orientation: Orientation, output: Size, mode: ContentMode,
               crop: Rect, scaled: Size, placement: Rect) {
        let layout = FrameLayout(source: source, sampleAspectRatio: ratio, orientation: orientation, output: output, mode: mode)
        #expect(layout.sourceCrop == crop)
        #expect(layout.scaledSize == scaled)
        #expect(layout.placement == placement)
    }

    /// Anamorphic and turned: 360x240 SAR 3:2 turned clockwise displays as 240x540 (each upright pixel 1
    /// wide, 1.5 tall). Filling 320x180 keeps the full width, 240 display units, and 240 × 9/16 = 135
    /// display units of height = 90 upright pixels, centred at y = (360 - 90) / 2 = 135, i.e. decoded
    /// columns 135..<225. (A first version kept 135 upright pixels, 202.5 display units.)
    @Test("Aspect fill of an anamorphic quarter-turned picture")
    func anamorphicQuarterTurn() {
        let layout = FrameLayout(source: Size(width: 360, height: 240), sampleAspectRatio: Rational(3, 2),
                                 orientation: .rotatedClockwise, output: Size(width: 320, height: 180), mode: .aspectFill)
        #expect(layout.sourceCrop == Rect(x: 135, y: 0, width: 90, height: 240))
        #expect(layout.scaledSize == Size(width: 180, height: 320))
    }
}

/// `VideoInfo.displaySize`: coded size × sample aspect, exchanged for quarter turns.
@Suite("Display size")
struct DisplaySizeTests {
    @Test("Display sizes", arguments: [
        (360, 240, Rational(3, 2), Orientation.up, Size(width: 540, height: 240)),
        (360, 240, Rational(3, 2), .rotatedClockwise, Size(width: 240, height: 540)),
        (320, 240, Rational(1, 1), .rotatedClockwise, Size(width: 240, height: 320)),
        (320, 240, Rational(1, 1), .transverse, Size(width: 240, height: 320)),
        (320, 240, Rational(1, 1), .upsideDown, Size(width: 320, height: 240)),
        (320, 240, Rational(0, 1), .up, Size(width: 320, height: 240)),
        (320, 240, Rational(0, 0), .mirrored, Size(width: 320, height: 240)),
        (320, 240, Rational(4, 3), .up, Size(width: 427, height: 240)),
        (10, 5, Rational(1, 100), .up, Size(width: 1, height: 5)),
    ])
    func displaySize(width: Int, height: Int, ratio: Rational, orientation: Orientation, expected: Size) {
        #expect(VideoInfo.displaySize(width: width, height: height, sampleAspectRatio: ratio, orientation: orientation) == expected)
    }
}

/// `Orientation`: reading display matrices the way FFmpeg builds and reads them, and mapping upright
/// rectangles back to decoded ones, both checked against ``OrientationModel``.
@Suite("Orientation")
struct OrientationTests {
    /// FFmpeg 5.1 `av_display_rotation_set` (libavutil/display.c): a clockwise turn by `angle` degrees,
    /// `CONV_DB` truncating to 16.16 fixed point.
    static func rotationMatrix(clockwise angle: Double) -> [Int32] {
        let radians = -angle * .pi / 180
        let c = cos(radians), s = sin(radians)
        var matrix = [Int32](repeating: 0, count: 9)
        matrix[0] = Int32(c * 65536)
        matrix[1] = Int32(-s * 65536)
        matrix[3] = Int32(s * 65536)
        matrix[4] = Int32(c * 65536)
        matrix[8] = 1 << 30
        return matrix
    }

    /// FFmpeg `av_display_matrix_flip`: entry `i` is multiplied by `flip[i % 3]`.
    static func flipped(_ matrix: [Int32], horizontally: Bool, vertically: Bool) -> [Int32] {
        let flip: [Int32] = [horizontally ? -1 : 1, vertically ? -1 : 1, 1]
        return matrix.indices.map { matrix[$0] * flip[$0 % 3] }
    }

    /// FFmpeg 5.1 `av_display_rotation_get`: the counter-clockwise angle, NaN for a degenerate matrix.
    static func rotation(of matrix: [Int32]) -> Double {
        let m = matrix.map { Double($0) / 65536 }
        let scale0 = hypot(m[0], m[3]), scale1 = hypot(m[1], m[4])
        guard scale0 != 0, scale1 != 0 else { return .nan }
        return -(atan2(m[1] / scale1, m[0] / scale0) * 180 / .pi)
    }

    /// The orientation whose pixel mapping has the matrix's linear part. A display matrix maps a decoded
    /// point (p, q) to (m0·p + m3·q, m1·p + m4·q) on screen, y down.
    static func modelOrientation(for matrix: [Int32]) -> Orientation? {
        let sign = { (v: Int32) in v > 0 ? 1 : v < 0 ? -1 : 0 }
        return Orientation.allCases.first { orientation in
            let origin = OrientationModel.uprightPixel(orientation, p: 1, q: 1, w: 3, h: 3)
            let right = OrientationModel.uprightPixel(orientation, p: 2, q: 1, w: 3, h: 3)
            let down = OrientationModel.uprightPixel(orientation, p: 1, q: 2, w: 3, h: 3)
            return (right.x - origin.x, right.y - origin.y) == (sign(matrix[0]), sign(matrix[1]))
                && (down.x - origin.x, down.y - origin.y) == (sign(matrix[3]), sign(matrix[4]))
        }
    }

    @Test("The Swift ports agree with libavutil 5.1 (values recorded from the C library)", arguments: [
        (90.0, false, false, [0, 65536, 0, -65536, 0, 0, 0, 0, 1 << 30] as [Int32], -90.0),
        (90, true, false, [0, 65536, 0, 65536, 0, 0, 0, 0, 1 << 30], -90),
        (90, false, true, [0, -65536, 0, -65536, 0, 0, 0, 0, 1 << 30], 90),
        (270, false, false, [0, -65536, 0, 65536, 0, 0, 0, 0, 1 << 30], 90),
        (180, false, false, [-65536, 0, 0, 0, -65536, 0, 0, 0, 1 << 30], -180),
        (0, true, false, [-65536, 0, 0, 0, 65536, 0, 0, 0, 1 << 30], -180),
        (45, false, false, [46340, 46340, 0, -46340, 46340, 0, 0, 0, 1 << 30], -45),
    ])
    func portsMatchLibavutil(angle: Double, hflip: Bool, vflip: Bool, matrix: [Int32], rotation: Double) {
        let built = Self.flipped(Self.rotationMatrix(clockwise: angle), horizontally: hflip, vertically: vflip)
        #expect(built == matrix)
        #expect(abs(Self.rotation(of: matrix) - rotation) < 1e-9)
    }

    @Test("Plain turns read as FFmpeg's CLI autorotates them", arguments: [
        (0.0, Orientation.up), (90, .rotatedClockwise), (180, .upsideDown), (270, .rotatedCounterClockwise),
        (-90, .rotatedCounterClockwise), (360, .up), (89.6, .rotatedClockwise), (0.4, .up),
    ])
    func plainTurns(clockwise angle: Double, expected: Orientation) {
        let matrix = Self.rotationMatrix(clockwise: angle)
        #expect(Orientation(displayMatrix: matrix, counterClockwiseDegrees: Self.rotation(of: matrix)) == expected)
    }

    @Test("Every turn with every flip matches the pixel model",
          arguments: [0.0, 90, 180, 270], [(false, false), (true, false), (false, true), (true, true)])
    func flips(clockwise angle: Double, flips: (Bool, Bool)) throws {
        let matrix = Self.flipped(Self.rotationMatrix(clockwise: angle), horizontally: flips.0, vertically: flips.1)
        let expected = try #require(Self.modelOrientation(for: matrix))
        #expect(Orientation(displayMatrix: matrix, counterClockwiseDegrees: Self.rotation(of: matrix)) == expected,
                "matrix \(matrix)")
    }

    @Test("The rotated90.mp4 fixture's matrix (ffprobe: rotation=-90) turns clockwise")
    func fixtureMatrix() {
        // `ffprobe -show_entries stream_side_data Fixtures/rotated90.mp4`
        let matrix: [Int32] = [0, 65536, 0, -65536, 0, 0, 0, 0, 1_073_741_824]
        #expect(Self.rotation(of: matrix) == -90)
        #expect(Orientation(displayMatrix: matrix, counterClockwiseDegrees: -90) == .rotatedClockwise)
        // rotated270.mp4 (rotation=90) and rotated180.mp4 (rotation=-180).
        #expect(Orientation(displayMatrix: [0, -65536, 0, 65536, 0, 0, 0, 0, 1 << 30], counterClockwiseDegrees: 90)
                == .rotatedCounterClockwise)
        #expect(Orientation(displayMatrix: [-65536, 0, 0, 0, -65536, 0, 0, 0, 1 << 30], counterClockwiseDegrees: -180)
                == .upsideDown)
    }

    @Test("Angles off a quarter turn are not orientations", arguments: [45.0, 135, 30, 91, 269, 200])
    func offAngles(clockwise angle: Double) {
        let matrix = Self.rotationMatrix(clockwise: angle)
        #expect(Orientation(displayMatrix: matrix, counterClockwiseDegrees: Self.rotation(of: matrix)) == nil)
    }

    @Test("Malformed matrices read as upright")
    func malformed() {
        #expect(Orientation(displayMatrix: [], counterClockwiseDegrees: 90) == .up)
        #expect(Orientation(displayMatrix: [0, 65536, 0, -65536, 0, 0, 0, 0], counterClockwiseDegrees: -90) == .up)
        #expect(Orientation(displayMatrix: [Int32](repeating: 0, count: 10), counterClockwiseDegrees: -90) == .up)
        let zero = [Int32](repeating: 0, count: 9)
        #expect(Orientation(displayMatrix: zero, counterClockwiseDegrees: Self.rotation(of: zero)) == .up)
    }

    @Test("Degrees and axis swaps agree with the model", arguments: Orientation.allCases)
    func properties(orientation: Orientation) {
        #expect(orientation.swapsAxes == OrientationModel.isQuarterTurn(orientation))
        // Writing the orientation as hflip-if-mirrored then a turn, the turn is where "right" goes, negated
        // when the linear map reverses handedness (negative determinant).
        let origin = OrientationModel.uprightPixel(orientation, p: 1, q: 1, w: 3, h: 3)
        let right = OrientationModel.uprightPixel(orientation, p: 2, q: 1, w: 3, h: 3)
        let down = OrientationModel.uprightPixel(orientation, p: 1, q: 2, w: 3, h: 3)
        let r = (right.x - origin.x, right.y - origin.y), d = (down.x - origin.x, down.y - origin.y)
        let isMirror = r.0 * d.1 - r.1 * d.0 < 0
        let degrees = switch isMirror ? (-r.0, -r.1) : r {
        case (1, 0): 0
        case (0, 1): 90
        case (-1, 0): 180
        default: 270
        }
        #expect(orientation.clockwiseDegrees == degrees)
    }

    @Test("The pixel model is a bijection and matches hand-turned 3x2 grids")
    func modelSanity() {
        // Decoded rows [0 1 2] [3 4 5]; upright rows listed top to bottom.
        let expected: [Orientation: [[Int]]] = [
            .up: [[0, 1, 2], [3, 4, 5]], .rotatedClockwise: [[3, 0], [4, 1], [5, 2]],
            .rotatedCounterClockwise: [[2, 5], [1, 4], [0, 3]], .upsideDown: [[5, 4, 3], [2, 1, 0]],
            .mirrored: [[2, 1, 0], [5, 4, 3]], .flipped: [[3, 4, 5], [0, 1, 2]],
            .transposed: [[0, 3], [1, 4], [2, 5]], .transverse: [[5, 2], [4, 1], [3, 0]],
        ]
        for orientation in Orientation.allCases {
            let size = OrientationModel.uprightSize(orientation, Size(width: 3, height: 2))
            let grid = (0..<size.height).map { y in
                (0..<size.width).map { x in
                    let d = OrientationModel.decodedPixel(orientation, x: x, y: y, w: 3, h: 2)
                    #expect(OrientationModel.uprightPixel(orientation, p: d.x, q: d.y, w: 3, h: 2) == (x, y))
                    return d.y * 3 + d.x
                }
            }
            #expect(grid == expected[orientation], "\(orientation)")
        }
    }

    @Test("decodedRect covers exactly the decoded pixels of every upright rectangle",
          arguments: Orientation.allCases, [Size(width: 5, height: 3), Size(width: 2, height: 4), Size(width: 1, height: 1)])
    func decodedRect(orientation: Orientation, decoded: Size) {
        let upright = OrientationModel.uprightSize(orientation, decoded)
        for x0 in 0..<upright.width { for x1 in (x0 + 1)...upright.width {
            for y0 in 0..<upright.height { for y1 in (y0 + 1)...upright.height {
                var wanted = Set<Int>()
                for x in x0..<x1 { for y in y0..<y1 {
                    let d = OrientationModel.decodedPixel(orientation, x: x, y: y, w: decoded.width, h: decoded.height)
                    wanted.insert(d.y * decoded.width + d.x)
                } }
                let rect = Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
                let result = orientation.decodedRect(forUpright: rect, decodedSize: decoded)
                guard FrameLayoutTests.isInside(result, decoded) else {
                    Issue.record("\(orientation): \(rect) → \(result) lies outside \(decoded)")
                    continue
                }
                var got = Set<Int>()
                for p in result.x..<(result.x + result.width) { for q in result.y..<(result.y + result.height) {
                    got.insert(q * decoded.width + p)
                } }
                #expect(got == wanted, "\(orientation): upright \(rect) → decoded \(result)")
            } }
        } }
    }
}
