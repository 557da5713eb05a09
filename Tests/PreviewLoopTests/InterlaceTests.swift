import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs
import PreviewLoopFFmpeg

/// An interlaced clip made with the ffmpeg CLI: a still panned 6 px a field at 50 fields a second,
/// woven top field first into 25 fps frames and coded as interlaced H.264 (`+ilme+ildct -top 1`).
/// Every frame's two fields are 6 px apart: combed wherever it is shown woven.
private let interlacedClip: String = {
    let path = TestPaths.temporaryDirectory() + "/interlaced.mp4"
    let result = try? Child.tool("ffmpeg", [
        "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
        "testsrc2=s=480x240:r=50:d=1,select=eq(n\\,0),loop=loop=-1:size=1,crop=240:240:'6*n':0,setpts=N/50/TB,"
            + "tinterlace=mode=interleave_top,setfield=tff",
        "-frames:v", "12", "-c:v", "libx264", "-flags", "+ilme+ildct", "-top", "1", "-crf", "16", "-pix_fmt", "yuv420p", path,
    ])
    precondition(result?.status == 0, "ffmpeg could not make the interlaced clip: \(result?.stderr ?? "")")
    return path
}()

/// The same woven fields coded as progressive MPEG-4 Part 2 frames in Matroska whose FieldOrder says
/// top field first: the decoder flags no frame interlaced, only the stream declares it.
private let declaredOnlyClip: String = {
    let path = TestPaths.temporaryDirectory() + "/declared-tt.mkv"
    let result = try? Child.tool("ffmpeg", [
        "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
        "testsrc2=s=480x240:r=50:d=1,select=eq(n\\,0),loop=loop=-1:size=1,crop=240:240:'6*n':0,setpts=N/50/TB,"
            + "tinterlace=mode=interleave_top,setfield=tff",
        "-frames:v", "12", "-c:v", "mpeg4", "-q:v", "2", "-pix_fmt", "yuv420p", "-field_order", "tt", path,
    ])
    precondition(result?.status == 0, "ffmpeg could not make the declared-interlaced clip: \(result?.stderr ?? "")")
    return path
}()

private let clipSize = Size(width: 240, height: 240)

@Suite("Interlaced sources: --deinterlace auto|on|off and the combing measure", .tags(.slow))
struct InterlaceTests {
    private func thumb(_ input: String, _ extra: [String]) throws -> RGBImage {
        let output = TestPaths.temporaryDirectory() + "/thumb.png"
        let result = try Child.run(TestPaths.cliBinary, ["thumb", input, "-o", output, "--at", "0.2", "--size", "source"] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        return try WebOracle.firstFrame(of: output, size: clipSize)
    }

    /// The 240x240 tiles of a picture `columns` tiles wide placed `left`/`top` pixels in, `gap` apart.
    private func tiles(of image: RGBImage, count: Int, left: Int = 0, top: Int = 0, gap: Int = 0) -> [RGBImage] {
        (0..<count).map { index in
            var tile = RGBImage(uncheckedWidth: clipSize.width, height: clipSize.height)
            let x0 = left + index * (clipSize.width + gap)
            for row in 0..<clipSize.height {
                let from = ((top + row) * image.width + x0) * 3
                tile.pixels.replaceSubrange(row * clipSize.width * 3..<(row + 1) * clipSize.width * 3,
                                            with: image.pixels[from..<from + clipSize.width * 3])
            }
            return tile
        }
    }

    @Test("The combing score: woven fields score high, their rebuilt picture and progressive pictures low")
    func combingScore() throws {
        // ffmpeg's own frames of the clip, as decoded (woven) and through bwdif (deinterlaced).
        let woven = try Oracle.frames(of: interlacedClip, filter: "null", size: clipSize)
        let bwdif = try Oracle.frames(of: interlacedClip, filter: "bwdif=mode=send_frame:parity=tff", size: clipSize)
        #expect(woven.count == 12 && bwdif.count == 12)
        #expect(woven[5].pixels != bwdif[5].pixels)
        #expect(Combing.score(woven[5]) > 2, "\(Combing.score(woven[5]))")
        #expect(Combing.score(bwdif[5]) < 1, "\(Combing.score(bwdif[5]))")
        let progressive = try Oracle.frames(of: TestPaths.fixture("landscape.mp4"), filter: "select=eq(n\\,10),scale=240:240",
                                            size: clipSize)
        #expect(Combing.score(progressive[0]) < 1)
        // Pure cases: alternate lines 0/255 (all comb) and a vertical ramp (none).
        let comb = RGBImage(uncheckedWidth: 4, height: 8, pixels: (0..<8).flatMap { row in [UInt8](repeating: row % 2 == 0 ? 0 : 255, count: 12) })
        let ramp = RGBImage(uncheckedWidth: 4, height: 8, pixels: (0..<8).flatMap { row in [UInt8](repeating: UInt8(row * 30), count: 12) })
        #expect(Combing.score(comb) == .infinity)
        #expect(abs(Combing.score(ramp) - 0.25) < 1e-9)
        #expect(Combing.score(RGBImage(uncheckedWidth: 4, height: 8)) == 0)
    }

    @Test("thumb on an interlaced clip: combed with --deinterlace off, not with auto (the default) or on")
    func thumbDeinterlaced() throws {
        let off = try thumb(interlacedClip, ["--deinterlace", "off"])
        let auto = try thumb(interlacedClip, [])
        let on = try thumb(interlacedClip, ["--deinterlace", "on"])
        #expect(Combing.score(off) > 2, "\(Combing.score(off))")
        #expect(Combing.score(auto) < 1, "\(Combing.score(auto))")
        #expect(auto == on)
        // The kept (top) field is ffmpeg's: the top rows are close to ffmpeg's (woven) decode of the
        // same frame (not equal: their chroma is upsampled from rebuilt chroma rows too).
        let reference = try Oracle.frames(of: interlacedClip, filter: "select=eq(n\\,5),scale=flags=bicubic+full_chroma_int+accurate_rnd,format=rgb24", size: clipSize)[0]
        let rowBytes = 240 * 3
        var topRows = 0.0
        for row in stride(from: 0, to: 240, by: 2) {
            for index in row * rowBytes..<(row + 1) * rowBytes {
                topRows += abs(Double(auto.pixels[index]) - Double(reference.pixels[index])) / Double(120 * rowBytes)
            }
        }
        #expect(topRows < 8, "mean difference of the top rows: \(topRows)")
        // Close to ffmpeg's bwdif on the whole picture (measured 30.2 dB; the intra-field bob this
        // deinterlacer replaced measured 28.6 dB against bwdif on the same frame).
        let bwdif = try Oracle.frames(of: interlacedClip, filter: "bwdif=mode=send_frame:parity=tff,select=eq(n\\,5),scale=flags=bicubic+full_chroma_int+accurate_rnd,format=rgb24", size: clipSize)[0]
        #expect(Compare.psnr(auto, bwdif) > 26, "\(Compare.psnr(auto, bwdif)) dB against bwdif")
    }

    @Test("A stream that declares its field order (frames not flagged) is deinterlaced by auto too")
    func declaredFieldOrder() throws {
        let probe = try Child.tool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=field_order",
                                             "-show_entries", "frame=interlaced_frame", "-read_intervals", "%+#1", "-of", "csv=p=0",
                                             declaredOnlyClip])
        #expect(probe.stdoutText.contains("tt") && probe.stdoutText.contains("0"), "ffprobe: \(probe.stdoutText)")
        let off = try thumb(declaredOnlyClip, ["--deinterlace", "off"])
        let auto = try thumb(declaredOnlyClip, [])
        #expect(Combing.score(off) > 2, "\(Combing.score(off))")
        #expect(Combing.score(auto) < 1, "\(Combing.score(auto))")
    }

    @Test("render on an interlaced clip: no combing in the written loop's frames")
    func renderDeinterlaced() throws {
        let directory = TestPaths.temporaryDirectory()
        for (mode, combed) in [("auto", false), ("off", true)] {
            let output = directory + "/\(mode).webp"
            let result = try Child.run(TestPaths.cliBinary, ["render", interlacedClip, "-o", output, "--size", "240x240",
                                                               "--fps", "25", "-q", "100", "--deinterlace", mode])
            #expect(result.status == 0, "\(result.stderr)")
            let frame = try WebOracle.webpFrame(6, of: output, size: clipSize)
            #expect((Combing.score(frame) > 2) == combed, "\(mode): \(Combing.score(frame))")
        }
    }

    @Test("strip, sheet, sprites, loop and card deinterlace too: combed with off, clean with auto", arguments: ["auto", "off"])
    func everyOutput(mode: String) throws {
        let directory = TestPaths.temporaryDirectory()
        let combed = mode == "off"
        func run(_ arguments: [String]) throws {
            let result = try Child.run(TestPaths.cliBinary, arguments + ["--deinterlace", mode])
            #expect(result.status == 0, "\(arguments.first ?? ""): \(result.stderr)")
        }
        func expectCombing(_ image: RGBImage, _ what: String) {
            let score = Combing.score(image)
            #expect(combed ? score > 2 : score < 1, "\(what) --deinterlace \(mode): combing \(score)")
        }
        // strip: two source-size tiles side by side.
        try run(["strip", interlacedClip, "-o", directory + "/strip.png", "--count", "2", "--size", "240x240"])
        let strip = try WebOracle.firstFrame(of: directory + "/strip.png", size: Size(width: 480, height: 240))
        for (index, tile) in tiles(of: strip, count: 2).enumerated() { expectCombing(tile, "strip tile \(index)") }
        // sheet: a 2x1 grid of 240-wide tiles, no header or times, 12 px margins, 6 px gap.
        try run(["sheet", interlacedClip, "-o", directory + "/sheet.png", "--grid", "2x1", "--tile-width", "240",
                 "--no-header", "--no-timestamps"])
        let sheet = try WebOracle.firstFrame(of: directory + "/sheet.png", size: Size(width: 12 + 240 + 6 + 240 + 12, height: 12 + 240 + 12))
        for (index, tile) in tiles(of: sheet, count: 2, left: 12, top: 12, gap: 6).enumerated() { expectCombing(tile, "sheet tile \(index)") }
        // sprites: lossless-enough WebP tiles every 0.2 s.
        try run(["sprites", interlacedClip, "-o", directory + "/sprites", "--every", "0.2", "--size", "240x240",
                 "--grid", "2x1", "--format", "webp", "-q", "100"])
        let sprites = try WebOracle.firstFrame(of: directory + "/sprites/sprites-1.webp", size: Size(width: 480, height: 240))
        for (index, tile) in tiles(of: sprites, count: 2).enumerated() { expectCombing(tile, "sprite \(index)") }
        // loop: the frames it delivers.
        try run(["loop", interlacedClip, "--size", "240x240", "--length", "0.2", "--frames", directory + "/frames"])
        let frame = try PPM.decode([UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/frames/001-00003.ppm"))))
        expectCombing(frame, "loop frame 3")
        // card: a still of the playing part (no play button, square corners).
        try run(["card", interlacedClip, "-o", directory + "/card.png", "--size", "240x240", "--corner-radius", "0",
                 "--no-play-button", "--at", "0.1"])
        expectCombing(try WebOracle.firstFrame(of: directory + "/card.png", size: clipSize), "card still")
    }

    @Test("The library deinterlaces through SourceOptions: sampler and loop frames, auto against off")
    func library() throws {
        for mode in [Deinterlacing.auto, .on, .off] {
            let options = SourceOptions(deinterlacing: mode)
            let sampled = try FrameSampler(source: .file(interlacedClip), options: options).frame(at: 0.2, size: clipSize)
            var looped: [VideoFrame] = []
            try LoopPlayer(source: .file(interlacedClip), configuration: .init(size: clipSize, sourceOptions: options))
                .run(loops: 1) { looped.append($0) }
            #expect(looped.count == 12)
            for (what, image) in [("sampled", sampled.image), ("looped", looped[7].image)] {
                let score = Combing.score(image)
                #expect(mode == .off ? score > 2 : score < 1, "\(what), \(mode): \(score)")
            }
        }
    }

    @Test("Progressive input is untouched by auto: the same bytes as with --deinterlace off")
    func progressiveUnchanged() throws {
        let directory = TestPaths.temporaryDirectory()
        let input = TestPaths.fixture("landscape.mp4")
        var outputs: [Data] = []
        for mode in ["auto", "off"] {
            let output = directory + "/\(mode).png"
            let result = try Child.run(TestPaths.cliBinary, ["thumb", input, "-o", output, "--at", "1.5", "--deinterlace", mode])
            #expect(result.status == 0, "\(result.stderr)")
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: output)))
        }
        #expect(outputs[0] == outputs[1])
        // And the library never engages the deinterlacer on it.
        let decoder = try VideoDecoder(source: .file(input), options: SourceOptions(), threads: 1)
        let scaler = FrameScaler(outputSize: Size(width: 64, height: 36), mode: .aspectFill, orientation: decoder.info.orientation,
                                 deinterlacing: .auto)
        var frames = 0
        while frames < 10, let timed = try decoder.nextFrame() {
            _ = try scaler.image(from: timed.frame, sampleAspectRatio: decoder.info.sampleAspectRatio)
            frames += 1
        }
        #expect(frames == 10 && scaler.deinterlacer?.deinterlacedCount == 0)
    }

    /// Runs ``FieldInterpolation/rebuild(current:previous:into:destinationStride:layout:)`` on rows of
    /// `width` samples (vertical interpolation only).
    private func rebuild(_ current: [UInt8], previous: [UInt8]? = nil, width: Int, keepsEvenRows: Bool = true,
                         bytesPerComponent: Int = 1) -> [UInt8] {
        var destination = [UInt8](repeating: 0, count: current.count)
        let layout = FieldInterpolation.Layout(rows: current.count / width, rowBytes: width, keepsEvenRows: keepsEvenRows,
                                               bytesPerComponent: bytesPerComponent, step: 0, significantBits: 8 * bytesPerComponent)
        current.withUnsafeBufferPointer { from in
            destination.withUnsafeMutableBufferPointer { to in
                if let previous {
                    previous.withUnsafeBufferPointer { earlier in
                        FieldInterpolation.rebuild(current: .init(base: from.baseAddress!, stride: width),
                                                   previous: .init(base: earlier.baseAddress!, stride: width),
                                                   into: to.baseAddress!, destinationStride: width, layout: layout)
                    }
                } else {
                    FieldInterpolation.rebuild(current: .init(base: from.baseAddress!, stride: width), previous: nil,
                                               into: to.baseAddress!, destinationStride: width, layout: layout)
                }
            }
        }
        return destination
    }

    @Test("The field rebuild: kept rows copied; the other field woven where the fields agree, interpolated where they comb")
    func fieldRebuild() {
        // One column, top field kept. Rows 1 and 3 agree with their kept neighbours (within 10): woven.
        #expect(rebuild([10, 15, 20, 28, 30, 40, 50], width: 1) == [10, 15, 20, 28, 30, 40, 50])
        // A comb: the other field uniform at 200, the kept field at 10 → rebuilt as the kept rows' mean.
        #expect(rebuild([10, 200, 20, 200, 30, 200, 40], width: 1) == [10, 15, 20, 25, 30, 35, 40])
        // Fine still detail: the other field alternating by itself (200, 90, 200) disagrees with its own
        // rows two away, so it is woven although it lies outside its kept neighbours' range.
        #expect(rebuild([10, 200, 20, 90, 30, 200, 40], width: 1) == [10, 200, 20, 90, 30, 200, 40])
        // Bottom field kept: row 0 rebuilt from row 1 alone (the edge), rows 2 and 4 from their neighbours.
        #expect(rebuild([200, 10, 200, 20, 200, 30], width: 1, keepsEvenRows: false) == [10, 10, 15, 20, 25, 30])
        // With the previous frame: still one-row stripes (the comb pattern in one picture) are kept exactly…
        let stripes: [UInt8] = [10, 200, 10, 200, 10, 200, 10]
        #expect(rebuild(stripes, width: 1) == [10, 10, 10, 10, 10, 10, 10])
        #expect(rebuild(stripes, previous: stripes, width: 1) == stripes)
        // …and where the other field changed since (moved), it is interpolated.
        #expect(rebuild(stripes, previous: [10, 10, 10, 10, 10, 10, 10], width: 1) == [10, 10, 10, 10, 10, 10, 10])
        // A small change is trusted part of the way: the spatial mean (10) clamped to the temporal
        // estimate (the fields' mean, 105) give or take the change (half the field's: 5) → 100.
        #expect(rebuild([10, 110, 10], previous: [10, 100, 10], width: 1) == [10, 100, 10])
        // 16-bit little endian, combed: 0x0100 and 0x0301 around 0xFFFF (with 0xFFFF two rows away) → 0x0201.
        #expect(rebuild([0x00, 0x01, 0xFF, 0xFF, 0x01, 0x03, 0xFF, 0xFF, 0x01, 0x03], width: 2, bytesPerComponent: 2)
                == [0x00, 0x01, 0x01, 0x02, 0x01, 0x03, 0x01, 0x03, 0x01, 0x03])
    }

    @Test("The edge-directed interpolation follows a diagonal the vertical mean would blur")
    func edgeDirected() {
        // Kept rows 0 and 2: the same detail, row 2 shifted two columns left of row 0 (a diagonal one
        // column per row). Row 1 (the other field) is a comb (0 against kept samples of 40 and more,
        // as two rows away), so it is interpolated: along the diagonal, it is row 0 shifted one column.
        let detail: [UInt8] = [40, 90, 60, 120, 250, 70, 100, 50, 80, 110, 65, 45, 95]
        let width = 11
        var picture = Array(detail[0..<width]) + [UInt8](repeating: 0, count: width) + Array(detail[2..<width + 2])
        picture += [UInt8](repeating: 0, count: width) + [UInt8](repeating: 40, count: width)
        var destination = [UInt8](repeating: 0, count: picture.count)
        let layout = FieldInterpolation.Layout(rows: 5, rowBytes: width, keepsEvenRows: true, bytesPerComponent: 1, step: 1, significantBits: 8)
        picture.withUnsafeBufferPointer { from in
            destination.withUnsafeMutableBufferPointer { to in
                FieldInterpolation.rebuild(current: .init(base: from.baseAddress!, stride: width), previous: nil,
                                           into: to.baseAddress!, destinationStride: width, layout: layout)
            }
        }
        let rebuilt = Array(destination[width..<2 * width])
        // Columns 3 to 7 have the farthest direction's windows inside the row.
        #expect(Array(rebuilt[3...7]) == Array(detail[4...8]), "\(rebuilt)")
        // (The vertical mean would give column 3 (120 + 70 + 1) / 2 = 95, not 250.)
    }

    @Test("Parsing: --deinterlace auto|on|off on every command that decodes pictures; anything else is a usage error")
    func parsing() throws {
        let commands: [[String]] = [
            ["thumb", "c.mp4", "-o", "a.png"], ["strip", "c.mp4", "-o", "a.png"], ["sheet", "c.mp4", "-o", "a.png"],
            ["loop", "c.mp4"], ["render", "c.mp4", "-o", "a.mp4"], ["sprites", "c.mp4", "-o", "dir"],
            ["card", "c.mp4", "-o", "a.png"],
        ]
        for command in commands {
            for mode in Deinterlacing.allCases {
                let parsed = try CommandLineParser.parse(command + ["--deinterlace", mode.rawValue])
                let source: InputOptions? = switch parsed {
                case .command(let options as ThumbCommand): options.source
                case .command(let options as StripCommand): options.source
                case .command(let options as SheetCommand): options.source
                case .command(let options as LoopCommand): options.source
                case .command(let options as RenderCommand): options.source
                case .command(let options as SpritesCommand): options.source
                case .command(let options as CardCommand): options.source
                default: nil
                }
                #expect(source?.deinterlacing == mode && source?.sourceOptions.deinterlacing == mode, "\(command[0]) \(mode)")
            }
            #expect(usageError(command + ["--deinterlace", "yes"])?.kind == .invalidValue(option: "deinterlace", value: "yes"))
            #expect(HelpText.help(for: Subcommand(rawValue: command[0])!).contains("--deinterlace <mode>"))
        }
        guard case .command(let batch as BatchCommand) = try CommandLineParser.parse(["batch", "m.txt", "-o", "out", "--deinterlace", "off"]) else {
            Issue.record("not a batch command")
            return
        }
        #expect(batch.deinterlacing == .off)
        // The default is auto everywhere.
        guard case .command(let strip as StripCommand) = try CommandLineParser.parse(["strip", "c.mp4", "-o", "a.png"]) else {
            Issue.record("not a strip command")
            return
        }
        #expect(strip.source.deinterlacing == .auto && SourceOptions().deinterlacing == .auto)
    }
}
