import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// Decoders for the card's outputs, all outside the engine: the ffmpeg CLI for PNG, GIF and MP4,
/// libwebp's own `webpmux` + `dwebp` for animated WebP (FFmpeg 5.1 cannot decode animated WebP).
enum CardOracle {
    /// An image file (or a video's first frame) decoded by ffmpeg to RGBA.
    static func rgba(_ path: String, size: Size, frame: Int = 0) throws -> RGBAImage {
        let result = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-i", path, "-vf", "select=eq(n\\,\(frame))",
                                            "-frames:v", "1", "-sws_flags", "bicubic+full_chroma_int+accurate_rnd",
                                            "-f", "rawvideo", "-pix_fmt", "rgba", "-"])
        guard result.status == 0, result.stdout.count == size.area * 4 else {
            throw OracleError(message: "ffmpeg gave \(result.stdout.count) bytes for \(path): \(result.stderr)")
        }
        return try RGBAImage(width: size.width, height: size.height, pixels: [UInt8](result.stdout))
    }

    /// Frame 1 of an animated WebP (the full canvas), with its alpha, via `webpmux -get` and `dwebp -pam`.
    static func firstWebPFrame(_ path: String, size: Size) throws -> RGBAImage {
        let directory = TestPaths.temporaryDirectory()
        let still = directory + "/frame.webp", pam = directory + "/frame.pam"
        let extracted = try Child.run("/usr/bin/webpmux", ["-get", "frame", "1", path, "-o", still])
        let decoded = try Child.run("/usr/bin/dwebp", ["-quiet", still, "-pam", "-o", pam])
        guard extracted.status == 0, decoded.status == 0 else {
            throw OracleError(message: "webpmux/dwebp failed on \(path): \(extracted.stderr) \(decoded.stderr)")
        }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: pam)))
        let marker = Array("ENDHDR\n".utf8)
        guard let end = (0...(bytes.count - marker.count)).first(where: { Array(bytes[$0..<($0 + marker.count)]) == marker }),
              bytes.count - end - marker.count == size.area * 4 else {
            throw OracleError(message: "unexpected PAM from dwebp for \(path)")
        }
        return try RGBAImage(width: size.width, height: size.height, pixels: Array(bytes[(end + marker.count)...]))
    }

    /// PSNR over all four channels.
    static func psnr(_ a: RGBAImage, _ b: RGBAImage) -> Double {
        Compare.psnr(a.pixels, b.pixels)
    }

    /// PSNR over the colour of the pixels both pictures show opaque (corners left out).
    static func opaquePSNR(_ a: RGBAImage, _ b: RGBImage) -> Double {
        var sum = 0.0, count = 0
        for pixel in 0..<(a.width * a.height) where a.pixels[pixel * 4 + 3] == 255 {
            for channel in 0..<3 {
                let d = Double(a.pixels[pixel * 4 + channel]) - Double(b.pixels[pixel * 3 + channel])
                sum += d * d
                count += 1
            }
        }
        let mse = sum / Double(max(1, count))
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }
}

@Suite("Preview card: poster, reveal, play, close — rendered and checked with real decoders")
struct CardTests {
    static let clip = TestPaths.fixture("card.mp4")
    static let size = Size(width: 192, height: 108)

    static func card(_ style: CardStyle = CardStyle(size: size, cornerRadius: 12, playLength: 1)) throws -> PreviewCard {
        try PreviewCard(source: .file(clip), style: style)
    }

    /// ffmpeg's aspect-filled frame of the card fixture at `seconds` (25 fps, frame n at n / 25).
    static func oracleFrame(at seconds: Double) throws -> RGBImage {
        let frames = try Oracle.frames(of: clip, filter: Oracle.aspectFillFilter(uprightWidth: 320, uprightHeight: 180,
                                                                                 sampleAspect: 1, output: size), size: size)
        return frames[Int((seconds * 25 + 1e-6).rounded(.down))]
    }

    @Test("Playing, the card shows ffmpeg's frame at the video's time inside the rounded frame")
    func playingFrameMatchesFFmpeg() throws {
        let card = try Self.card()
        let still = try card.still(at: 1 + 0.6 + 0.48)     // poster hold 1 s, reveal 0.6 s, then 0.48 s of play
        guard case .playing(let videoTime) = still.phase else { Issue.record("phase \(still.phase)"); return }
        #expect(abs(videoTime - 1.08) < 1e-9)
        #expect(abs((still.videoSourceTime ?? -1) - 1.08) < 1e-6)
        #expect(CardOracle.opaquePSNR(still.image, try Self.oracleFrame(at: 1.08)) >= 35)
        #expect(still.image[0, 0].alpha == 0 && still.image[96, 54].alpha == 255)
    }

    @Test("The frame sequence: one picture per 1/fps, each showing the video frame displayed at its instant")
    func sequence() throws {
        let card = try Self.card()
        var frames: [CardFrame] = []
        try card.frames(framesPerSecond: 10) { frames.append($0) }
        let timeline = card.timeline
        #expect(frames.count == PreviewCard.frameCount(duration: timeline.duration, framesPerSecond: 10))
        #expect(frames.count == 26)                                   // 2.6 s at 10 fps
        let poster = try card.poster()
        for (index, frame) in frames.enumerated() {
            #expect(frame.index == index && abs(frame.time - Double(index) / 10) < 1e-9)
            #expect(frame.phase == timeline.phase(at: frame.time))
            if let videoTime = frame.phase.videoTime {
                // The source frame displayed then: the last one at or before the video start + time.
                let expected = (((poster.videoStart + videoTime) * 25 + 1e-6).rounded(.down)) / 25
                #expect(abs((frame.videoSourceTime ?? -1) - expected) < 1e-6, "frame \(index)")
            } else {
                #expect(frame.videoSourceTime == nil && frame.time < 1)
            }
        }
        #expect(abs(card.lastFrameDuration(framesPerSecond: 10) - 0.1) < 1e-9)
    }

    @Test("With --close, the sequence ends on the poster, so a looping file joins without a jump")
    func closingJoinsTheLoop() throws {
        let card = try Self.card(CardStyle(size: Self.size, cornerRadius: 12, playLength: 0.5, closes: true))
        var frames: [RGBAImage] = []
        try card.frames(framesPerSecond: 20) { frames.append($0.image) }
        let first = try #require(frames.first), last = try #require(frames.last)
        // The fade back's end state is the poster, due at the sequence's end = the next play's frame 0:
        // the step from the last picture back to the first is no bigger than the step before it.
        let wrapStep = CardOracle.psnr(last, first), previousStep = CardOracle.psnr(frames[frames.count - 2], last)
        #expect(wrapStep >= previousStep && wrapStep >= 30, "wrap \(wrapStep) dB, previous step \(previousStep) dB")
        // …and in the middle of the play it is the video, far from the poster (the fixture's hues turn).
        #expect(CardOracle.psnr(first, frames[frames.count - 12]) < 25)
    }

    @Test("A given poster time takes that frame, and the video then plays from the window's start")
    func explicitPoster() throws {
        let card = try PreviewCard(source: .file(Self.clip), style: CardStyle(size: Self.size), posterTime: 2)
        let poster = try card.poster()
        #expect(poster.choice == nil && poster.videoStart == 0 && abs(poster.frame.sourceTime - 2) < 1e-6)
        let still = try card.still(at: 1.3)
        #expect(abs((still.videoSourceTime ?? -1) - 0.28) < 1e-6)
    }

    // Golden images: Fixtures/goldens/make-goldens.sh writes them with the CLI (reviewed by eye when
    // made); compared by PSNR, so another FFmpeg build's rounding does not fail them.
    @Test("Golden stills: poster, mid-reveal circle, mid-reveal fade, closing", arguments: [
        ("card-poster.png", CardReveal.circle, 0.0, false),
        ("card-reveal.png", CardReveal.circle, 1.3, false),
        ("card-fade.png", CardReveal.fade, 1.3, false),
        ("card-closing.png", CardReveal.circle, 4.775, true),
    ])
    func golden(name: String, reveal: CardReveal, time: Double, closes: Bool) throws {
        let style = CardStyle(size: Self.size, cornerRadius: 12, reveal: reveal, closes: closes)
        let still = try PreviewCard(source: .file(Self.clip), style: style).still(at: time)
        let golden = try CardOracle.rgba(TestPaths.fixture("goldens/" + name), size: Self.size)
        let psnr = CardOracle.psnr(still.image, golden)
        #expect(psnr >= 38, "\(name): \(psnr) dB")
    }

    @Test("Animated WebP keeps the transparent corners; its frames add up to the sequence")
    func webp() throws {
        let path = TestPaths.temporaryDirectory() + "/card.webp"
        let summary = try Self.card().render(to: path, framesPerSecond: 10)
        #expect(summary.frameCount == 26 && summary.format == .webp)
        let info = try WebOracle.webpAnimation(path)
        #expect(info.loopCount == 0 && info.canvas == "192x108")
        #expect(abs(Double(info.durations.reduce(0, +)) / 1000 - 2.6) <= 0.1 + 1e-9)
        let first = try CardOracle.firstWebPFrame(path, size: Self.size)
        #expect(first[0, 0].alpha == 0 && first[96, 54].alpha == 255 && first[191, 107].alpha == 0)
    }

    @Test("MP4 and GIF with a background show it in the corners; MP4 is H.264 with the sequence's frames")
    func mp4AndGIF() throws {
        let directory = TestPaths.temporaryDirectory()
        let style = CardStyle(size: Self.size, cornerRadius: 12, background: RGBAColor(red: 255, green: 0, blue: 0), playLength: 1)
        try PreviewCard(source: .file(Self.clip), style: style).render(to: directory + "/card.mp4", framesPerSecond: 10)
        let report = try WebOracle.probe(directory + "/card.mp4", countFrames: true)
        #expect(report.codec == "h264" && report.pixelFormat == "yuv420p" && report.streamTypes == ["video"])
        #expect(report.frameCount == 26)
        let mp4 = try CardOracle.rgba(directory + "/card.mp4", size: Self.size)
        #expect(mp4[1, 1].red > 200 && mp4[1, 1].green < 60)
        try PreviewCard(source: .file(Self.clip), style: style).render(to: directory + "/red.gif", framesPerSecond: 10)
        for frame in [0, 15, 25] {
            let gif = try CardOracle.rgba(directory + "/red.gif", size: Self.size, frame: frame)
            #expect(gif[0, 0].alpha == 255 && gif[0, 0].red >= 240 && gif[0, 0].green <= 20, "frame \(frame)")
        }
    }

    @Test("Without a background an MP4's corners are black (H.264 has no alpha), a JPEG still's white")
    func mp4CornersBlackByDefault() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let style = CardStyle(size: Self.size, cornerRadius: 12, playLength: 0.5)
        #expect(style.opaqueBackground(for: .mp4) == .black && style.opaqueBackground(for: nil) == .white)
        let card = try PreviewCard(source: .file(Self.clip), style: style)
        try card.render(to: directory + "/card.mp4", framesPerSecond: 10)
        for frame in [0, 20] {
            let mp4 = try CardOracle.rgba(directory + "/card.mp4", size: Self.size, frame: frame)
            for (x, y) in [(0, 0), (1, 1), (191, 0), (0, 107), (190, 106)] {
                let pixel = mp4[x, y]
                #expect(max(pixel.red, pixel.green, pixel.blue) <= 40, "frame \(frame) corner (\(x), \(y)): \(pixel)")
            }
        }
        let still = card.compositor.flattened(try card.still(at: 0).image)
        #expect(still[0, 0] == (255, 255, 255))
        // A background set is used in both.
        var white = style
        white.background = .white
        try PreviewCard(source: .file(Self.clip), style: white).render(to: directory + "/white.mp4", framesPerSecond: 10)
        #expect(try CardOracle.rgba(directory + "/white.mp4", size: Self.size)[1, 1].green >= 230)
    }

    @Test("GIF corners are transparent by default, on every frame; the card itself is opaque and right")
    func gifTransparentCorners() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let style = CardStyle(size: Self.size, cornerRadius: 12, playLength: 1)
        let card = try PreviewCard(source: .file(Self.clip), style: style)
        try card.render(to: directory + "/card.gif", framesPerSecond: 10)
        for (frame, time) in [(0, 0.0), (15, 1.5), (25, 2.5)] {
            let gif = try CardOracle.rgba(directory + "/card.gif", size: Self.size, frame: frame)
            for (x, y) in [(0, 0), (191, 0), (0, 107), (191, 107), (1, 1)] {
                #expect(gif[x, y].alpha == 0, "frame \(frame) corner (\(x), \(y)): alpha \(gif[x, y].alpha)")
            }
            #expect(gif[96, 54].alpha == 255 && gif[12, 54].alpha == 255 && gif[96, 1].alpha == 255, "frame \(frame)")
            // Inside the corners the picture is the card's own (flattened) at that instant.
            let expected = card.compositor.flattened(try card.still(at: time).image)
            var squared = 0.0, count = 0.0
            for y in 14..<94 { for x in 14..<178 {
                let a = gif[x, y], b = expected[x, y]
                for (p, q) in [(a.red, b.red), (a.green, b.green), (a.blue, b.blue)] {
                    squared += pow(Double(p) - Double(q), 2)
                    count += 1
                }
            } }
            let psnr = 10 * log10(255 * 255 / max(squared / count, 1e-9))
            #expect(psnr >= 28, "frame \(frame): \(psnr) dB inside the corners")
        }
    }

    @Test("A directory gets every picture as a PNG with alpha; a failure midway leaves none of them")
    func directory() throws {
        let directory = TestPaths.temporaryDirectory() + "/frames"
        let summary = try Self.card().render(to: directory, framesPerSecond: 5)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(summary.frameCount == 13 && names.count == 13 && names.first == "card-00001.png" && names.last == "card-00013.png")
        let png = try WebOracle.probe(directory + "/card-00001.png")
        #expect(png.codec == "png" && png.pixelFormat == "rgba")

        // A directory in the way of the third picture is not a file the card wrote: refused, and it stays.
        let blocked = TestPaths.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: blocked + "/card-00003.png", withIntermediateDirectories: false)
        #expect(throws: PreviewLoopError.self) { try Self.card().render(to: blocked, framesPerSecond: 5) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: blocked) == ["card-00003.png"])
    }

    @Test("Bad input and bad settings: clear errors, nothing written")
    func badInput() throws {
        let directory = TestPaths.temporaryDirectory()
        func code(_ body: () throws -> Void) -> PreviewLoopError.Code? {
            do { try body(); return nil } catch let error as PreviewLoopError { return error.code } catch { return nil }
        }
        #expect(code { _ = try PreviewCard(source: .file(directory + "/missing.mp4")) } == .inputNotFound)
        #expect(code { _ = try PreviewCard(source: .file(TestPaths.fixture("not-video.txt"))) } == .notMediaFile)
        #expect(code { _ = try PreviewCard(source: .standardInput) } == .invalidArgument)
        #expect(code { _ = try PreviewCard(source: .file(Self.clip), windowStart: 30) } == .invalidArgument)
        for style in [CardStyle(revealDuration: 0), CardStyle(posterHold: -1), CardStyle(cornerRadius: .nan),
                      CardStyle(playLength: .infinity), CardStyle(size: Size(width: 0, height: 10))] {
            #expect(code { _ = try PreviewCard(source: .file(Self.clip), style: style) } == .invalidArgument)
        }
        let odd = try PreviewCard(source: .file(Self.clip), style: CardStyle(size: Size(width: 191, height: 108)))
        #expect(code { try odd.render(to: directory + "/odd.mp4") } == .invalidArgument)
        #expect(code { try Self.card().render(to: directory + "/no/such/dir/card.webp") } == .outputNotWritable)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }
}

@Suite("preview-loop card: the command line")
struct CardCLITests {
    static func cli(_ arguments: [String]) throws -> ChildResult {
        try Child.run(TestPaths.cliBinary, ["card"] + arguments)
    }

    @Test("Writes an animation and a still, one summary line each")
    func writes() throws {
        let directory = TestPaths.temporaryDirectory()
        let animation = try Self.cli([CardTests.clip, "-o", directory + "/card.webp", "--size", "160x90", "--play-length", "0.5",
                                      "--fps", "10", "--reveal", "fade", "--close"])
        #expect(animation.status == 0 && animation.stderr.isEmpty)
        #expect(animation.stdoutText.hasPrefix("wrote \(directory)/card.webp (webp, 160x90, 25 frames at 10 fps = 2.450 s; poster at 0.000 s"))
        let still = try Self.cli([CardTests.clip, "-o", directory + "/mid.jpg", "--size", "160x90", "--at", "1.3",
                                  "--background", "#0000ff", "--corner-radius", "30"])
        #expect(still.status == 0, "\(still.stderr)")
        #expect(still.stdoutText.contains("card at 1.300 s: revealing 50%"))
        let jpeg = try CardOracle.rgba(directory + "/mid.jpg", size: Size(width: 160, height: 90))
        #expect(jpeg[1, 1].blue > 200 && jpeg[1, 1].red < 60)
    }

    @Test("--background fills an MP4's corners; without it they are black", arguments: [
        ([], RGBAColor.black), (["--background", "white"], RGBAColor.white), (["--background", "#336699"], RGBAColor(red: 0x33, green: 0x66, blue: 0x99)),
    ])
    func mp4Background(arguments: [String], expected: RGBAColor) throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Self.cli([CardTests.clip, "-o", directory + "/card.mp4", "--size", "160x90", "--play-length", "0.5",
                                   "--fps", "10"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let corner = try CardOracle.rgba(directory + "/card.mp4", size: Size(width: 160, height: 90))[1, 1]
        for (got, want) in [(corner.red, expected.red), (corner.green, expected.green), (corner.blue, expected.blue)] {
            #expect(abs(Int(got) - Int(want)) <= 24, "corner \(corner), expected \(expected)")
        }
    }

    @Test("A usable --aspect sets the height; one outside 1:16 to 16:1, not finite or not decimal is a usage error",
          arguments: [("0:9", 0), ("16:0", 0), ("-4:3", 0), ("nan", 0), ("0.0000000001", 0), ("0x10", 0), ("17", 0),
                      ("4:3", 360), ("1", 480), ("16", 30), ("1:16", 7680)])
    func aspect(text: String, height: Int) throws {
        let directory = TestPaths.temporaryDirectory()
        let result = try Self.cli([CardTests.clip, "-o", directory + "/card.png", "--aspect=\(text)"])
        if height == 0 {
            #expect(result.status == 64, "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").filter { $0.hasPrefix("Error:") }.count == 1)
            #expect(result.stderr.contains("1:16 to 16:1"))
            #expect(!FileManager.default.fileExists(atPath: directory + "/card.png"))
        } else {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutText.contains("(480x\(height),"))
        }
    }

    @Test("Usage errors exit 64 with one line and write nothing", arguments: [
        ["--size", "160x90", "--aspect", "4:3"], ["--size", "161x90", "-o", "x.mp4"], ["--at", "1"],
        ["--quality", "50", "-o", "x.png"], ["--reveal", "spiral"], ["--background", "#12345"],
        ["--poster-hold", "-1"], ["--fps", "0"], ["--aspect", "wide"], ["--corner-radius", "-3"],
    ])
    func usageErrors(arguments: [String]) throws {
        let directory = TestPaths.temporaryDirectory()
        var full = [CardTests.clip] + arguments
        if !arguments.contains("-o") { full += ["-o", "card.webp"] }
        full = full.map { $0 == "x.mp4" || $0 == "x.png" || $0 == "card.webp" ? directory + "/" + $0 : $0 }
        let result = try Self.cli(full)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: ") && result.stdoutText.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    @Test("Run-time failures exit 1 with one line naming the input and write nothing", arguments: [
        "missing.mp4", "not-video.txt", "-",
    ])
    func failures(input: String) throws {
        let directory = TestPaths.temporaryDirectory()
        let path = input == "-" ? "-" : (input == "missing.mp4" ? directory + "/missing.mp4" : TestPaths.fixture(input))
        let result = try Self.cli([path, "-o", directory + "/out/card.webp"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("Error: ") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    @Test("thumb --play-button --corner-radius: the card's poster picture; corners transparent in PNG, background in JPEG")
    func thumbOverlays() throws {
        let directory = TestPaths.temporaryDirectory()
        let size = Size(width: 320, height: 180)
        let png = try Child.run(TestPaths.cliBinary, ["thumb", CardTests.clip, "-o", directory + "/poster.png",
                                                        "--play-button", "--corner-radius", "22"])
        #expect(png.status == 0, "\(png.stderr)")
        let picture = try CardOracle.rgba(directory + "/poster.png", size: size)
        #expect(picture[0, 0].alpha == 0 && picture[319, 179].alpha == 0 && picture[160, 0].alpha == 255)
        #expect(picture[160, 90] == .white)                          // the triangle, 72 px button at 320 wide
        #expect(picture[160 - 30, 90].alpha == 255 && picture[160 - 30, 90] != .white)   // the dark disc
        // The same frame without overlays is ffmpeg's frame: the button only darkens the middle.
        let plain = try Child.run(TestPaths.cliBinary, ["thumb", CardTests.clip, "-o", directory + "/plain.png"])
        #expect(plain.status == 0)
        let bare = try CardOracle.rgba(directory + "/plain.png", size: size)
        #expect(bare[100, 20] == picture[100, 20] && bare[0, 0].alpha == 255)
        let jpeg = try Child.run(TestPaths.cliBinary, ["thumb", CardTests.clip, "-o", directory + "/poster.jpg",
                                                         "--corner-radius", "40", "--background", "#00ff00"])
        #expect(jpeg.status == 0)
        let flat = try CardOracle.rgba(directory + "/poster.jpg", size: size)
        #expect(flat[1, 1].green > 200 && flat[1, 1].red < 60 && flat[1, 1].blue < 60)
        // WebP keeps the transparent corners too (decoded by libwebp's dwebp, alpha included).
        let webp = try Child.run(TestPaths.cliBinary, ["thumb", CardTests.clip, "-o", directory + "/poster.webp",
                                                         "--corner-radius", "22"])
        #expect(webp.status == 0)
        let pam = directory + "/poster.pam"
        #expect(try Child.run("/usr/bin/dwebp", ["-quiet", directory + "/poster.webp", "-pam", "-o", pam]).status == 0)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: pam)))
        let pixels = Array(bytes.suffix(size.area * 4))
        #expect(pixels[3] == 0 && pixels[(90 * 320 + 160) * 4 + 3] == 255)
        let bad = try Child.run(TestPaths.cliBinary, ["thumb", CardTests.clip, "-o", directory + "/x.png", "--corner-radius", "-2"])
        #expect(bad.status == 64 && !FileManager.default.fileExists(atPath: directory + "/x.png"))
    }
}
