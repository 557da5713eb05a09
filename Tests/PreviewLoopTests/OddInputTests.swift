import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// An odd but valid picture format, checked against ffmpeg's own decoding.
struct OddPicture: CustomTestStringConvertible, Sendable {
    var name: String
    var width: Int, height: Int
    var about: String
    var testDescription: String { "\(name): \(about)" }
}

/// The bad-input catalogue, part 2: damaged-but-usable and odd-but-valid inputs, which must give
/// pictures, not errors: truncated fast-start files wrap at their real end, damage in the middle is
/// concealed, picture-size changes, extreme and odd sizes, 10-bit full range, alpha, interlacing,
/// fragmented MP4, raw H.264 without a duration, a single frame, cover art, and standard input. Each
/// case is run through the library and the CLI. The inputs come from `Fixtures/make-bad-inputs.sh`.
@Suite("Odd but valid inputs give pictures", .timeLimit(.minutes(10)))
struct OddInputTests {
    let size = Size(width: 320, height: 180)

    /// Every frame of `loops` passes.
    private func loopFrames(_ path: String, loops: Int = 1, size: Size = Size(width: 320, height: 180),
                            deinterlacing: Deinterlacing = .auto) throws -> [VideoFrame] {
        var frames: [VideoFrame] = []
        try LoopPlayer(source: .file(path), configuration: .init(size: size, sourceOptions: SourceOptions(deinterlacing: deinterlacing)))
            .run(loops: loops) { frames.append($0) }
        return frames
    }

    /// How many frames ffmpeg decodes from the file.
    private func oracleFrameCount(_ path: String) throws -> Int {
        let result = try Child.tool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                             "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path])
        return Int(result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: ",", with: "")) ?? -1
    }

    /// Runs `thumb` and checks it succeeded with a PPM of `size`.
    private func expectThumb(_ input: String, at time: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try Child.cli(["thumb", input, "-o", output + "/out.ppm", "--at", time, "--size", size.description], killAfter: 30)
        #expect(result.status == 0, "thumb \(input) --at \(time): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.isEmpty, "thumb \(input) --at \(time) printed: \(result.stderr)", sourceLocation: sourceLocation)
        let image = try? PPM.decode([UInt8](Data(contentsOf: URL(fileURLWithPath: output + "/out.ppm"))))
        #expect(image?.size == size, sourceLocation: sourceLocation)
    }

    @Test("A fast-start MP4 cut short plays what it has; a second pass wraps at the real end",
          arguments: [10, 50, 90])
    func truncatedFastStart(percent: Int) throws {
        let path = try BadInputs.path("faststart-cut\(percent).mp4")
        let whole = try oracleFrameCount(path)
        #expect(whole > 0 && whole < 50, "ffmpeg decodes \(whole) frames")
        let frames = try loopFrames(path, loops: 2)
        let passes = Dictionary(grouping: frames, by: \.loopIndex).mapValues(\.count)
        // The last frame or two may be cut through; a concealed partial frame is fine.
        #expect(passes.count == 2 && passes[0] == passes[1], "\(passes)")
        #expect(abs((passes[0] ?? 0) - whole) <= 1, "pass of \(passes[0] ?? 0) frames, ffmpeg decodes \(whole)")
        try expectThumb(path, at: "50%")
    }

    @Test("Garbage in the middle of the media data is concealed: frames still come, no error")
    func corruptMiddle() throws {
        let path = try BadInputs.path("corrupt-middle.mp4")
        let frames = try loopFrames(path)
        // ffmpeg's count: the frames whose packets were hit are dropped by the decoder, the rest concealed.
        let decodable = try oracleFrameCount(path)
        #expect(decodable >= 40, "ffmpeg decodes \(decodable) frames")
        #expect(frames.count == decodable, "\(frames.count) frames, ffmpeg decodes \(decodable)")
        try expectThumb(path, at: "1.0")
    }

    @Test("A picture-size change mid-stream keeps the output size; every frame is delivered")
    func sizeChange() throws {
        let path = try BadInputs.path("size-change.ts")
        let frames = try loopFrames(path)
        #expect(frames.count == 50)
        #expect(frames.allSatisfy { $0.image.size == size })
        // The 480x270 part (16:9) fills 320x180 without a crop: compare a frame after the change with
        // ffmpeg's decoding of that part alone (the same packets).
        let sampler = try FrameSampler(source: .file(path))
        let late = try sampler.frame(at: 1.6, size: size)
        let oracle = try Oracle.frames(of: try BadInputs.path("size-change-part2.ts"),
                                       filter: "scale=320:180:flags=bicubic+full_chroma_int+accurate_rnd", size: size)
        let best = Compare.best(late.image, among: oracle)
        #expect(best.index == 15 && best.psnr > 30, "best match \(best)")
        try expectThumb(path, at: "75%")
    }

    /// (The interlaced clip is decoded with `--deinterlace off` here, as ffmpeg decodes it: woven. Its
    /// default, deinterlaced decoding is checked against ffmpeg's deinterlacers by ``interlacedDefault()``.)
    @Test("Odd picture formats match ffmpeg's decoding (aspect-fill crop, PSNR > 30 dB)", arguments: [
        OddPicture(name: "wide-4000x16.mp4", width: 4000, height: 16, about: "aspect 250:1"),
        OddPicture(name: "tall-16x4000.mp4", width: 16, height: 4000, about: "aspect 1:250"),
        OddPicture(name: "odd-321x241.mkv", width: 321, height: 241, about: "odd width and height, FFV1 4:2:0"),
        OddPicture(name: "10bit-fullrange.mp4", width: 320, height: 240, about: "yuv420p10le, full range"),
        OddPicture(name: "interlaced.mp4", width: 320, height: 240, about: "interlaced H.264 (field coding)"),
    ])
    func oddPicture(_ item: OddPicture) throws {
        let path = try BadInputs.path(item.name)
        let info = try MediaProbe.probe(.file(path))
        #expect(info.width == item.width && info.height == item.height)
        let frames = try loopFrames(path, deinterlacing: .off)
        #expect(frames.count == (try oracleFrameCount(path)))
        #expect(frames.allSatisfy { $0.image.size == size })
        let oracle = try Oracle.frames(of: path, filter: Oracle.aspectFillFilter(uprightWidth: item.width, uprightHeight: item.height,
                                                                                sampleAspect: 1, output: size), size: size)
        // (A 28-pixel crop of testsrc2 can look the same in neighbouring frames: compare like with like.)
        try #require(oracle.count == frames.count)
        for index in [0, frames.count / 2, frames.count - 1] {
            let psnr = Compare.psnr(frames[index].image, oracle[index])
            #expect(psnr > 30, "frame \(index): \(psnr) dB")
        }
        try expectThumb(path, at: "50%")
    }

    /// interlaced.mp4 holds testsrc2 coded as interlaced H.264 (both fields of a frame from one instant),
    /// so the woven picture is the truth here and a deinterlacer can only lose vertical detail. The
    /// engine's motion-adaptive deinterlacer keeps the other field wherever it agrees with the kept one
    /// (or, from frame 1 on, wherever it did not change since the previous frame): it must stay much
    /// closer to the woven decode than libpostproc's linear-interpolating deinterlacer (ffmpeg's `pp=li`,
    /// the intra-field algorithm it replaced; `pp` always keeps the top field, so for this
    /// bottom-field-first clip the picture is flipped around it), and close to `bwdif`.
    @Test("Interlaced H.264 is deinterlaced by default: closer to the (true) woven picture than pp=li, close to bwdif")
    func interlacedDefault() throws {
        let path = try BadInputs.path("interlaced.mp4")
        let frames = try loopFrames(path)
        let probe = try Child.tool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-read_intervals", "%+#1", "-show_entries",
                                             "frame=interlaced_frame,top_field_first", "-of", "csv=p=0", path])
        let flags = probe.stdoutText.split(separator: "\n").first.map { $0.split(separator: ",").map(String.init) } ?? []
        try #require(flags.count == 2 && flags[0] == "1", "ffprobe: \(probe.stdoutText)")
        let linearFilter = flags[1] == "1" ? "pp=li" : "vflip,pp=li,vflip"
        let crop = Oracle.aspectFillFilter(uprightWidth: 320, uprightHeight: 240, sampleAspect: 1, output: size)
        let linear = try Oracle.frames(of: path, filter: linearFilter + "," + crop, size: size)
        let bwdif = try Oracle.frames(of: path, filter: "bwdif=mode=send_frame:parity=auto:deint=all," + crop, size: size)
        let woven = try Oracle.frames(of: path, filter: crop, size: size)
        try #require(linear.count == frames.count && bwdif.count == frames.count && woven.count == frames.count)
        for index in [0, frames.count / 2, frames.count - 1] {
            let image = frames[index].image
            let (toWoven, linearToWoven, toBwdif) = (Compare.psnr(image, woven[index]), Compare.psnr(linear[index], woven[index]),
                                                     Compare.psnr(image, bwdif[index]))
            print("interlaced.mp4 frame \(index): ours \(toWoven) dB and \(linearFilter) \(linearToWoven) dB against the woven decode; ours \(toBwdif) dB against bwdif")
            #expect(toWoven > linearToWoven + 3, "frame \(index): \(toWoven) dB against the woven frame, \(linearFilter) \(linearToWoven) dB")
            #expect(toBwdif > 25, "frame \(index): \(toBwdif) dB against bwdif")
        }
    }

    @Test("Alpha is flattened on black: a transparent red area comes out black")
    func alphaOnBlack() throws {
        let path = try BadInputs.path("alpha.mov")
        let frame = try FrameSampler(source: .file(path)).frame(at: 0, size: size)
        // Left half: alpha 0 over red. Right half: opaque green.
        func pixel(_ x: Int, _ y: Int) -> [UInt8] { Array(frame.image.pixels[(y * size.width + x) * 3..<(y * size.width + x) * 3 + 3]) }
        #expect(pixel(240, 90) == [0, 255, 0], "opaque area \(pixel(240, 90))")
        #expect(pixel(80, 90) == [0, 0, 0], "transparent area \(pixel(80, 90))")
        try expectThumb(path, at: "0")
    }

    @Test("Fragmented MP4 (empty moov): duration, frames and seeking all work")
    func fragmented() throws {
        let path = try BadInputs.path("fragmented.mp4")
        let info = try MediaProbe.probe(.file(path))
        #expect(info.duration.map { abs($0 - 2) < 0.05 } == true, "duration \(String(describing: info.duration))")
        #expect(try loopFrames(path).count == 50)
        let frame = try FrameSampler(source: .file(path)).frame(at: 1.6, size: size)
        #expect(abs(frame.sourceTime - 1.6) < 1e-6, "frame at \(frame.sourceTime)")
        try expectThumb(path, at: "10%")
    }

    @Test("Raw H.264 has no duration: a percentage is a clear error, a time in seconds works")
    func rawH264() throws {
        let path = try BadInputs.path("raw.h264")
        #expect(try MediaProbe.probe(.file(path)).duration == nil)
        let frame = try FrameSampler(source: .file(path)).frame(at: 0.5, size: size)
        #expect(abs(frame.sourceTime - 0.48) < 1e-6, "frame at \(frame.sourceTime)")   // frames every 0.04 s from 0
        try expectThumb(path, at: "0.5")
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try Child.cli(["thumb", path, "-o", output + "/out.ppm", "--at", "10%"])
        expectCLIFailure(result, input: path, outputDirectory: output)
        #expect(result.stderr.contains("duration"), "\(result.stderr)")
    }

    @Test("A one-frame clip: a thumbnail at 10%, and every loop pass shows the one frame")
    func singleFrame() throws {
        let path = try BadInputs.path("single-frame.mp4")
        let frames = try loopFrames(path, loops: 3)
        #expect(frames.map(\.loopIndex) == [0, 1, 2])
        #expect(frames.allSatisfy { $0.image == frames[0].image })
        try expectThumb(path, at: "10%")
    }

    @Test("An MP3 with cover art is one still; looping it is a still loop, not an error")
    func coverArt() throws {
        let path = try BadInputs.path("cover-art.mp3")
        let info = try MediaProbe.probe(.file(path))
        #expect(info.isStillPicture && info.audioStreamCount == 1)
        let frames = try loopFrames(path, loops: 2)
        #expect(frames.map(\.loopIndex) == [0, 1])
        try expectThumb(path, at: "10%")
    }

    // MARK: - Standard input

    @Test("`cat clip | preview-loop thumb -` and `strip -` write what the file gives")
    func standardInputStills() throws {
        let clip = TestPaths.fixture("landscape.mp4")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: clip))
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        // A pipe cannot seek, so every strip sample is decoded exactly: compare with --accuracy exact.
        for (command, extra) in [("thumb", ["--at", "30%"]), ("strip", ["--count", "6"])] {
            let piped = try Child.cli([command, "-", "-o", output + "/piped.ppm"] + extra, input: .piped(bytes), killAfter: 30)
            let direct = try Child.cli([command, clip, "-o", output + "/file.ppm", "--accuracy", "exact"] + extra, killAfter: 30)
            #expect(piped.status == 0 && direct.status == 0, "\(piped.stderr) \(direct.stderr)")
            #expect(FileManager.default.contentsEqual(atPath: output + "/piped.ppm", andPath: output + "/file.ppm"), "\(command)")
        }
    }

    @Test("`cat clip | preview-loop loop - --loops 2` plays both passes from the frame cache")
    func standardInputLoop() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixture("landscape.mp4")))
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try Child.cli(["loop", "-", "--loops", "2", "--frames", output + "/frames"], input: .piped(bytes), killAfter: 30)
        #expect(result.status == 0, "\(result.stderr)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: output + "/frames")) ?? []
        #expect(names.count == 200)
    }

    @Test("An MP4 with its moov at the end cannot be streamed through a pipe: one Error line, nothing written")
    func standardInputMoovAtEnd() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: try BadInputs.path("moov-at-end.mp4")))
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try Child.cli(["thumb", "-", "-o", output + "/out.ppm"], input: .piped(bytes), killAfter: 30)
        expectCLIFailure(result, input: "<standard input>", outputDirectory: output)
    }
}
