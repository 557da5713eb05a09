import Foundation
import Testing
@testable import PreviewLoop
@testable import preview_loop

/// An interlaced clip made with the ffmpeg CLI: a still panned 6 px a field at 50 fields a second,
/// woven top field first into 25 fps frames and coded as interlaced H.264 (`+ilme+ildct -top 1`).
private let interlacedClip: String = {
    let path = TestPaths.temporaryDirectory() + "/interlaced.mp4"
    let result = try? Run.tool("ffmpeg", [
        "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
        "testsrc2=s=480x240:r=50:d=1,select=eq(n\\,0),loop=loop=-1:size=1,crop=240:240:'6*n':0,setpts=N/50/TB,"
            + "tinterlace=mode=interleave_top,setfield=tff",
        "-frames:v", "12", "-c:v", "libx264", "-flags", "+ilme+ildct", "-top", "1", "-crf", "16", "-pix_fmt", "yuv420p", path,
    ])
    precondition(result?.status == 0, "ffmpeg could not make the interlaced clip: \(result?.stderr ?? "")")
    return path
}()

@Suite("Interlaced sources: --deinterlace auto|on|off and the combing measure")
struct InterlaceTests {
    private func thumb(_ input: String, _ extra: [String]) throws -> RGBImage {
        let output = TestPaths.temporaryDirectory() + "/thumb.png"
        let result = try Run.program(TestPaths.cliBinary, ["thumb", input, "-o", output, "--at", "0.2", "--size", "source"] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        return try WebOracle.firstFrame(of: output, size: Size(width: 240, height: 240))
    }

    @Test("The combing score: woven fields score high, their rebuilt picture and progressive pictures low")
    func combingScore() throws {
        // ffmpeg's own frames of the clip, as decoded (woven) and through bwdif (deinterlaced).
        let size = Size(width: 240, height: 240)
        let woven = try Oracle.frames(of: interlacedClip, filter: "null", size: size)
        let bwdif = try Oracle.frames(of: interlacedClip, filter: "bwdif=mode=send_frame:parity=tff", size: size)
        #expect(woven.count == 12 && bwdif.count == 12)
        #expect(woven[5].pixels != bwdif[5].pixels)
        #expect(Combing.score(woven[5]) > 2, "\(Combing.score(woven[5]))")
        #expect(Combing.score(bwdif[5]) < 1, "\(Combing.score(bwdif[5]))")
        let progressive = try Oracle.frames(of: TestPaths.fixture("landscape.mp4"), filter: "select=eq(n\\,10),scale=240:240",
                                            size: size)
        #expect(Combing.score(progressive[0]) < 1)
    }

    @Test("thumb on an interlaced clip: combed with --deinterlace off, not with auto (the default) or on")
    func thumbDeinterlaced() throws {
        let off = try thumb(interlacedClip, ["--deinterlace", "off"])
        let auto = try thumb(interlacedClip, [])
        let on = try thumb(interlacedClip, ["--deinterlace", "on"])
        #expect(Combing.score(off) > 2, "\(Combing.score(off))")
        #expect(Combing.score(auto) < 1, "\(Combing.score(auto))")
        #expect(auto == on)
        // The kept (top) field is ffmpeg's, the other rebuilt: the top rows are the closer to ffmpeg's
        // (woven) decode of the same frame. Not equal: the chroma of the top rows is upsampled from
        // rebuilt chroma rows too.
        let reference = try Oracle.frames(of: interlacedClip, filter: "select=eq(n\\,5),scale=flags=bicubic+full_chroma_int+accurate_rnd,format=rgb24", size: Size(width: 240, height: 240))[0]
        let rowBytes = 240 * 3
        var fields = [0.0, 0.0]
        for row in 0..<240 {
            for index in row * rowBytes..<(row + 1) * rowBytes {
                fields[row % 2] += abs(Double(auto.pixels[index]) - Double(reference.pixels[index])) / Double(120 * rowBytes)
            }
        }
        #expect(fields[0] < 8 && fields[0] < fields[1], "mean difference of the top and bottom rows: \(fields)")
    }

    @Test("render on an interlaced clip: no combing in the written loop's frames")
    func renderDeinterlaced() throws {
        let directory = TestPaths.temporaryDirectory()
        for (mode, combed) in [("auto", false), ("off", true)] {
            let output = directory + "/\(mode).webp"
            let result = try Run.program(TestPaths.cliBinary, ["render", interlacedClip, "-o", output, "--size", "240x240",
                                                               "--fps", "25", "-q", "100", "--deinterlace", mode])
            #expect(result.status == 0, "\(result.stderr)")
            let frame = try WebOracle.webpFrame(6, of: output, size: Size(width: 240, height: 240))
            #expect((Combing.score(frame) > 2) == combed, "\(mode): \(Combing.score(frame))")
        }
    }

    @Test("Progressive input is untouched by auto: the same bytes as with --deinterlace off")
    func progressiveUnchanged() throws {
        let directory = TestPaths.temporaryDirectory()
        let input = TestPaths.fixture("landscape.mp4")
        var outputs: [Data] = []
        for mode in ["auto", "off"] {
            let output = directory + "/\(mode).png"
            let result = try Run.program(TestPaths.cliBinary, ["thumb", input, "-o", output, "--at", "1.5", "--deinterlace", mode])
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
            _ = try scaler.image(from: timed.frame.pointer, sampleAspectRatio: decoder.info.sampleAspectRatio)
            frames += 1
        }
        #expect(frames == 10 && scaler.deinterlacer.deinterlacedCount == 0)
    }

    @Test("Parsing: --deinterlace auto|on|off on thumb and render; anything else is a usage error")
    func parsing() throws {
        guard case .thumb(let thumb) = try CommandLineParser.parse(["thumb", "c.mp4", "-o", "a.png", "--deinterlace", "on"]),
              case .render(let render) = try CommandLineParser.parse(["render", "c.mp4", "-o", "a.mp4", "--deinterlace", "off"]) else {
            Issue.record("not parsed")
            return
        }
        #expect(thumb.deinterlacing == .on && render.deinterlacing == .off)
        #expect(usageError(["thumb", "c.mp4", "-o", "a.png", "--deinterlace", "yes"])?.kind
                == .invalidValue(option: "deinterlace", value: "yes"))
    }
}
