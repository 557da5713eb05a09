import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// Contact sheets: layout (pure), text drawn by FreeType, `sheet` and `strip --gap --timestamps` end to
/// end against ffmpeg's frames and against text rendered independently of the sheet.
@Suite("Contact sheet")
struct SheetTests {
    static let clip = TestPaths.fixture("landscape.mp4")      // 400x300, 4 s at 25 fps, keyframes every 25
    static let duration = 4.0

    // MARK: Pure

    @Test("Layout: tile width from the sheet width, frames with gaps, margins and a header band")
    func layout() throws {
        #expect(ContactSheetLayout.tileWidth(sheetWidth: 1280, columns: 4, gap: 6, margin: 12) == (1280 - 24 - 18) / 4)
        #expect(ContactSheetLayout.tileWidth(sheetWidth: 30, columns: 4, gap: 6, margin: 12) == nil)
        #expect(ContactSheetLayout.tileHeight(tileWidth: 160, displaySize: Size(width: 400, height: 300)) == 120)
        #expect(ContactSheetLayout.tileHeight(tileWidth: 309, displaySize: Size(width: 1920, height: 1080)) == 174)
        let layout = try ContactSheetLayout(columns: 3, rows: 2, tileSize: Size(width: 100, height: 50), gap: 4, margin: 10,
                                        headerHeight: 30)
        #expect(layout.size == Size(width: 10 + 300 + 8 + 10, height: 10 + 30 + 4 + 100 + 4 + 10))
        #expect(layout.headerFrame == Rect(x: 10, y: 10, width: 308, height: 30))
        #expect(layout.tileFrame(0) == Rect(x: 10, y: 44, width: 100, height: 50))
        #expect(layout.tileFrame(4) == Rect(x: 114, y: 98, width: 100, height: 50))
        let bare = try ContactSheetLayout(columns: 2, rows: 1, tileSize: Size(width: 8, height: 6))
        #expect(bare.size == Size(width: 16, height: 6) && bare.tileFrame(1) == Rect(x: 8, y: 0, width: 8, height: 6))
    }

    @Test("Tile times: hundredths under 10 minutes, whole seconds to an hour, hours after")
    func timestampText() {
        #expect(ContactSheet.timestampText(0, clipDuration: 4) == "0:00.00")
        #expect(ContactSheet.timestampText(1.36, clipDuration: 4) == "0:01.36")
        #expect(ContactSheet.timestampText(75.999, clipDuration: 100) == "1:16.00")
        #expect(ContactSheet.timestampText(754.9, clipDuration: 1200) == "12:34")
        #expect(ContactSheet.timestampText(3723.5, clipDuration: 7200) == "1:02:03")
        #expect(ContactSheet.timestampText(63, clipDuration: 3600) == "0:01:03")
        #expect(ContactSheet.timestampText(-.infinity, clipDuration: nil) == "0:00.00")
    }

    @Test("Header details: duration, display size, codec, frame rate, bit rate, file size")
    func headerDetails() throws {
        let info = try MediaProbe.probe(.file(Self.clip))
        let header = ContactSheetHeader(name: "landscape.mp4", info: info, fileSize: 123_456)
        #expect(header.title == "landscape.mp4")
        let parts = header.details.components(separatedBy: "  ·  ")
        #expect(parts.count == 6, "\(header.details)")
        #expect(parts.first == "Duration 0:04.00" && parts[1] == "400x300" && parts[2] == "h264" && parts[3] == "25 fps")
        #expect(parts[4].hasSuffix(" kb/s") || parts[4].hasSuffix(" Mb/s"))
        #expect(parts.last == "123.5 kB")
        #expect(SheetRun.displayName(of: "/a/b/clip name.mp4") == "clip name.mp4")
        #expect(SheetRun.displayName(of: "https://h/x/v.mp4?token=1") == "v.mp4")
    }

    // MARK: Text

    @Test("FreeType draws anti-aliased glyphs where the text goes, and nothing elsewhere")
    func fontDrawsText() throws {
        let font = try Font(path: Font.defaultSansPath, pixelSize: 16)
        #expect(font.ascender > 10 && font.descender > 0 && font.lineHeight <= 24)
        let width = font.width(of: "Hello 0:12")
        #expect(width > 60 && width < 120)
        #expect(font.width(of: "iiii") < font.width(of: "WWWW"))
        var image = try RGBImage(width: 140, height: 30)
        font.draw("Hello 0:12", in: &image, x: 5, baseline: 20, color: .white)
        var levels = Set<UInt8>(), outside = 0
        for y in 0..<30 { for x in 0..<140 {
            let value = image[x, y].red
            if value > 0 { levels.insert(value) }
            if value > 0 && (x < 5 || x > 5 + width + 1 || y > 20 + font.descender || y < 20 - font.ascender) { outside += 1 }
        } }
        #expect(levels.contains(255) && levels.count > 20, "anti-aliasing gives many grey levels, got \(levels.count)")
        #expect(outside == 0)
        #expect(font.truncated("a very long file name.mp4", toWidth: 60).hasSuffix("…"))
        #expect(font.width(of: font.truncated("a very long file name.mp4", toWidth: 60)) <= 60)
    }

    @Test("A missing font is a clear error, before any work")
    func missingFont() throws {
        #expect(errorCode { _ = try Font(path: "/nonexistent/font.ttf", pixelSize: 12) } == .inputNotFound)
        #expect(errorCode { _ = try Font(path: Self.clip, pixelSize: 12) } == .invalidArgument)
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Child.run(TestPaths.cliBinary, ["sheet", Self.clip, "-o", directory + "/s.png",
                                                            "--font", "/nonexistent/font.ttf"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("Error: ") && result.stderr.contains("font file '/nonexistent/font.ttf' not found")
                    && result.stderr.filter { $0 == "\n" }.count == 1, "\(result.stderr)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).isEmpty)
    }

    // MARK: Parsing

    @Test("sheet: defaults and every option")
    func parsing() throws {
        let defaults = SheetCommand(source: .init(input: "c.mp4"), output: "s.jpg", format: .jpeg)
        #expect(try CommandLineParser.parse(["sheet", "c.mp4", "-o", "s.jpg"]) == .command(defaults))
        #expect(defaults.columns == 4 && defaults.rows == 4 && defaults.sheetWidth == 1280 && defaults.gap == 6
                    && defaults.margin == 12 && defaults.showsHeader && defaults.style.showsTimestamps)
        let parsed = try CommandLineParser.parse(["sheet", "c.mp4", "-o", "s.webp", "--grid", "5x3", "--gap", "2",
                                                  "--margin", "0", "--tile-width", "200", "--background", "#fff",
                                                  "--text-color", "#102030", "--font", "/f.ttf", "--no-header",
                                                  "--no-timestamps", "-q", "70", "--accuracy", "keyframe", "--threads", "3",
                                                  "--timeout", "9"])
        var expected = SheetCommand(source: .init(input: "c.mp4", threads: 3, timeout: 9), output: "s.webp", format: .webp, columns: 5, rows: 3,
                                    sheetWidth: 5 * 200 + 4 * 2, tileWidth: 200, gap: 2, margin: 0, showsHeader: false,
                                    quality: 70, accuracy: .keyframe)
        expected.style.background = .white
        expected.style.textColor = RGBAColor(red: 0x10, green: 0x20, blue: 0x30)
        expected.style.fontPath = "/f.ttf"
        expected.style.showsTimestamps = false
        #expect(parsed == .command(expected))
        guard case .command(let wide as SheetCommand) = try CommandLineParser.parse(["sheet", "c.mp4", "-o", "s.png", "--width", "640"]) else {
            Issue.record("not a sheet")
            return
        }
        #expect(wide.sheetWidth == 640 && wide.tileWidth == nil)
    }

    @Test("sheet: refused combinations", arguments: [
        ["--width", "800", "--tile-width", "100"],
        ["--grid", "21x20"], ["--grid", "0x4"], ["--grid", "4"],
        ["--width", "100", "--grid", "10x1"],
        ["--tile-width", "4096", "--grid", "5x1"],
        ["--gap", "-1"], ["--margin", "2000"],
        ["--background", "transparent"], ["--text-color", "#11223380"], ["--background", "pink"],
        ["--font", ""],
    ])
    func refused(_ options: [String]) {
        #expect(usageError(["sheet", "c.mp4", "-o", "s.jpg"] + options) != nil, "\(options)")
    }

    @Test("sheet: quality is refused for lossless outputs; strip takes --gap and --timestamps")
    func parsingMore() throws {
        #expect(usageError(["sheet", "c.mp4", "-o", "s.png", "-q", "80"]) != nil)
        guard case .command(let strip as StripCommand) = try CommandLineParser.parse(["strip", "c.mp4", "-o", "s.ppm", "--gap", "3",
                                                                    "--timestamps"]) else {
            Issue.record("not a strip")
            return
        }
        #expect(strip.gap == 3 && strip.showsTimestamps)
        #expect(usageError(["strip", "c.mp4", "-o", "s.ppm", "--gap", "300"]) != nil)
        let help = HelpText.help(for: Subcommand(SheetCommand.self))
        for option in ["--grid", "--width", "--tile-width", "--gap", "--margin", "--background", "--text-color", "--font",
                       "--no-header", "--no-timestamps", "--accuracy"] {
            #expect(help.contains(option), "help lacks \(option)")
        }
    }

    // MARK: End to end

    /// ffmpeg's frames of the clip at a tile size, with their times.
    static func reference(tile: Size) throws -> Oracle.Reference {
        try Oracle.reference("landscape.mp4", upright: Size(width: 400, height: 300), size: tile)
    }

    /// The part of an image inside a rectangle.
    static func crop(_ image: RGBImage, _ rect: Rect) -> RGBImage {
        var pixels: [UInt8] = []
        for y in rect.y..<(rect.y + rect.height) {
            let start = y * image.bytesPerRow + rect.x * 3
            pixels += image.pixels[start..<(start + rect.width * 3)]
        }
        return try! RGBImage(width: rect.width, height: rect.height, pixels: pixels)
    }

    /// The sheet `sheet` wrote, decoded by ffmpeg (any of the formats) or read as PPM.
    static func read(_ path: String, size: Size) throws -> RGBImage {
        if path.hasSuffix(".ppm") { return try PPM.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))) }
        let frames = try Oracle.frames(of: path, filter: "null", size: size)
        guard let first = frames.first else { throw OracleError(message: "ffmpeg decoded nothing from \(path)") }
        return first
    }

    @Test("sheet: each tile is ffmpeg's frame at a slice's middle, printed with that frame's time; the header is drawn")
    func sheetTilesAndText() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/sheet.ppm"
        let result = try Child.run(TestPaths.cliBinary, ["sheet", Self.clip, "-o", output, "--grid", "3x2",
                                                            "--tile-width", "160", "--gap", "4", "--margin", "8",
                                                            "--accuracy", "exact"])
        #expect(result.status == 0, "\(result.stderr)")
        let drawer = try ContactSheet()
        let tileSize = Size(width: 160, height: 120)
        let layout = try ContactSheetLayout(columns: 3, rows: 2, tileSize: tileSize, gap: 4, margin: 8,
                                        headerHeight: drawer.headerHeight)
        let sheet = try PPM.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))))
        #expect(sheet.size == layout.size && sheet.width == 8 + 480 + 8 + 8)
        let reference = try Self.reference(tile: tileSize)
        let font = try drawer.timestampFont(tileWidth: 160)
        for index in 0..<6 {
            let time = (Double(index) + 0.5) * Self.duration / 6
            let wanted = Oracle.displayedIndex(at: time, times: reference.times)
            let frame = layout.tileFrame(index)
            let tile = Self.crop(sheet, frame)
            // The picture above the label is ffmpeg's frame at the slice's middle.
            let label = ContactSheet.timestampFrame(ContactSheet.timestampText(reference.times[wanted], clipDuration: 4),
                                                    tile: Rect(x: 0, y: 0, width: 160, height: 120), font: font)
            let picture = Rect(x: 0, y: 0, width: 160, height: label.y)
            let best = Compare.bestMatch(Self.crop(tile, picture), among: reference.images.map { Self.crop($0, picture) })
            #expect(best.index == wanted && best.psnr >= 35, "tile \(index) at \(time) s: best \(best), wanted \(wanted)")
            // The label reads that frame's time: ffmpeg's frame with the expected text drawn on it matches
            // the tile, and clearly better than with the neighbouring frame's time.
            func drawn(_ seconds: Double) -> RGBImage {
                var expected = reference.images[wanted]
                ContactSheet.drawTimestamp(ContactSheet.timestampText(seconds, clipDuration: 4), in: &expected,
                                           tile: Rect(x: 0, y: 0, width: 160, height: 120), font: font, color: .white)
                return expected
            }
            let right = Compare.psnr(Self.crop(tile, label), Self.crop(drawn(reference.times[wanted]), label))
            let wrong = Compare.psnr(Self.crop(tile, label), Self.crop(drawn(reference.times[wanted + 1]), label))
            #expect(right >= 35 && right > wrong + 6, "tile \(index) label: \(right) dB right, \(wrong) dB wrong")
            // Glyph pixels: the label box holds near-white text.
            let box = Self.crop(tile, label)
            let white = stride(from: 0, to: box.pixels.count, by: 3).filter { box.pixels[$0] > 200 && box.pixels[$0 + 2] > 200 }
            #expect(white.count > 30, "tile \(index): \(white.count) text pixels")
        }
        // The header: the title line is the file name in DejaVu Sans Bold, as drawn here on black.
        let header = layout.headerFrame
        let titleFont = try Font(path: Font.defaultBoldPath, pixelSize: 16)
        var title = try RGBImage(width: sheet.width, height: sheet.height)
        titleFont.draw("landscape.mp4", in: &title, x: header.x, baseline: header.y + titleFont.ascender, color: .white)
        let titleBand = Rect(x: 0, y: 0, width: sheet.width, height: header.y + titleFont.lineHeight)
        #expect(Self.crop(sheet, titleBand) == Self.crop(title, titleBand))
        let detailsBand = Rect(x: header.x, y: header.y + titleFont.lineHeight, width: header.width,
                               height: header.height - titleFont.lineHeight)
        let lit = Self.crop(sheet, detailsBand).pixels.filter { $0 > 128 }.count
        #expect(lit > 300, "details line has \(lit) bright channel values")
        // Margins and gaps are the background.
        #expect(sheet[0, 0] == (0, 0, 0) && sheet[sheet.width - 1, sheet.height - 1] == (0, 0, 0))
        #expect(sheet[layout.tileFrame(0).x + 161, layout.tileFrame(0).y + 10] == (0, 0, 0))
    }

    @Test("sheet: colours, no header, no times, width, a font, and JPEG/PNG/WebP outputs")
    func sheetOptions() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func sheet(_ name: String, _ options: [String]) throws -> String {
            let path = directory + "/" + name
            let result = try Child.run(TestPaths.cliBinary, ["sheet", Self.clip, "-o", path, "--grid", "2x2",
                                                                "--accuracy", "exact"] + options)
            #expect(result.status == 0, "\(name): \(result.stderr)")
            #expect(String(decoding: result.stdout, as: UTF8.self).hasPrefix("wrote \(path) ("))
            return path
        }
        // No header, no times: every tile is ffmpeg's frame, edge to edge (no gap, no margin).
        let bare = try Self.read(try sheet("bare.ppm", ["--no-header", "--no-timestamps", "--gap", "0", "--margin", "0",
                                                        "--width", "320"]), size: Size(width: 320, height: 240))
        #expect(bare.size == Size(width: 320, height: 240))
        let reference = try Self.reference(tile: Size(width: 160, height: 120))
        for index in 0..<4 {
            let wanted = Oracle.displayedIndex(at: (Double(index) + 0.5), times: reference.times)
            let frame = try ContactSheetLayout(columns: 2, rows: 2, tileSize: Size(width: 160, height: 120)).tileFrame(index)
            let best = Compare.bestMatch(Self.crop(bare, frame), among: reference.images)
            #expect(best.index == wanted && best.psnr >= 35, "bare tile \(index): best \(best), wanted \(wanted)")
        }
        // Colours: a white background, red text.
        let coloured = try Self.read(try sheet("coloured.ppm", ["--width", "400", "--background", "white",
                                                                "--text-color", "#ff0000"]), size: Size(width: 400, height: 1))
        #expect(coloured[0, 0] == (255, 255, 255) && coloured[399, coloured.height - 1] == (255, 255, 255))
        let reds = stride(from: 0, to: coloured.width * 30 * 3, by: 3).filter {
            coloured.pixels[$0] > 200 && coloured.pixels[$0 + 1] < 60 && coloured.pixels[$0 + 2] < 60
        }
        #expect(reds.count > 50, "header text in red: \(reds.count) pixels")
        #expect(coloured.width == 400 - (400 - 24 - 6) % 2)
        // Another font changes the text, not the layout of the tiles.
        let plain = try Self.read(try sheet("plain.ppm", ["--width", "400"]), size: Size(width: 400, height: 1))
        let serif = try Self.read(try sheet("serif.ppm", ["--width", "400", "--font",
                                                          "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"]),
                                  size: Size(width: 400, height: 1))
        #expect(plain.width == serif.width)
        #expect(Self.crop(plain, Rect(x: 0, y: 0, width: 400, height: 20)) != Self.crop(serif, Rect(x: 0, y: 0, width: 400, height: 20)))
        // Encoded formats decode to the same sheet (by PSNR).
        // Lossy WebP is 4:2:0: saturated colour bars and one-pixel glyph edges cost it more than JPEG's 4:4:4.
        for (name, quality, floor) in [("s.png", nil, 99.0), ("s.jpg", nil, 30.0), ("s.webp", nil, 22.0),
                                       ("lossless.webp", "100", 99.0)] {
            let decoded = try Self.read(try sheet(name, ["--width", "400"] + (quality.map { ["-q", $0] } ?? [])),
                                        size: plain.size)
            let psnr = Compare.psnr(decoded, plain)
            #expect(psnr >= floor, "\(name): \(psnr) dB against the PPM")
        }
    }

    // Golden image: Fixtures/goldens/make-goldens.sh writes it with the CLI (reviewed by eye when made);
    // a regression check by PSNR, so another FreeType or FFmpeg build's rounding does not fail it.
    @Test("Golden sheet")
    func golden() throws {
        let path = TestPaths.temporaryDirectory() + "/sheet.png"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try Child.run(TestPaths.cliBinary, ["sheet", Self.clip, "-o", path, "--grid", "3x2", "--width", "480"])
        #expect(result.status == 0, "\(result.stderr)")
        let golden = try Self.read(TestPaths.fixture("goldens/sheet.png"), size: Size(width: 480, height: 1))
        let sheet = try Self.read(path, size: Size(width: 480, height: 1))
        #expect(sheet.size == golden.size)
        let psnr = Compare.psnr(sheet, golden)
        #expect(psnr >= 38, "\(psnr) dB")
    }

    @Test("strip --gap --timestamps: black gaps between ffmpeg's frames, each with its time")
    func stripGapAndTimes() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/strip.ppm"
        let result = try Child.run(TestPaths.cliBinary, ["strip", Self.clip, "-o", output, "--size", "160x120",
                                                            "--count", "4", "--columns", "2", "--gap", "5",
                                                            "--timestamps", "--accuracy", "exact"])
        #expect(result.status == 0, "\(result.stderr)")
        let strip = try PPM.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))))
        #expect(strip.size == Size(width: 325, height: 245))
        let layout = try ContactSheetLayout(columns: 2, rows: 2, tileSize: Size(width: 160, height: 120), gap: 5)
        let reference = try Self.reference(tile: Size(width: 160, height: 120))
        let font = try ContactSheet().timestampFont(tileWidth: 160)
        for index in 0..<4 {
            let wanted = Oracle.displayedIndex(at: Double(index) + 0.5, times: reference.times)
            var expected = reference.images[wanted]
            let text = ContactSheet.timestampText(reference.times[wanted], clipDuration: 4)
            ContactSheet.drawTimestamp(text, in: &expected, tile: Rect(x: 0, y: 0, width: 160, height: 120), font: font,
                                       color: .white)
            let psnr = Compare.psnr(Self.crop(strip, layout.tileFrame(index)), expected)
            #expect(psnr >= 35, "tile \(index) with '\(text)': \(psnr) dB")
        }
        for y in 0..<245 { #expect(strip[162, y] == (0, 0, 0)) }
    }
}
