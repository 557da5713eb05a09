import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
import PreviewLoopFFmpeg

/// Woven fields (a still panned 6 px a field, 50 fields a second, top field first) coded as progressive
/// MPEG-4 Part 2 frames in MP4 without any field order: neither the frames nor the stream say
/// interlaced, only the pictures show it.
private let undeclaredClip: String = {
    let path = TestPaths.temporaryDirectory() + "/undeclared.mp4"
    let result = try? Child.tool("ffmpeg", [
        "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
        "testsrc2=s=480x240:r=50:d=1,select=eq(n\\,0),loop=loop=-1:size=1,crop=240:240:'6*n':0,setpts=N/50/TB,"
            + "tinterlace=mode=interleave_top",
        "-frames:v", "12", "-c:v", "mpeg4", "-q:v", "2", "-pix_fmt", "yuv420p", path,
    ])
    precondition(result?.status == 0, "ffmpeg could not make the undeclared interlaced clip: \(result?.stderr ?? "")")
    return path
}()

@Suite("Interlacing detected from the pictures when neither frames nor stream say so")
struct InterlaceDetectionTests {
    private let size = Size(width: 240, height: 240)

    private func thumb(_ input: String, _ mode: String) throws -> (image: RGBImage, bytes: Data) {
        let output = TestPaths.temporaryDirectory() + "/thumb-\(mode).png"
        let result = try Child.run(TestPaths.cliBinary, ["thumb", input, "-o", output, "--at", "0.2", "--size", "source",
                                                           "--deinterlace", mode])
        #expect(result.status == 0, "\(result.stderr)")
        return (try WebOracle.firstFrame(of: output, size: size), try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    @Test("The clip says progressive: ffprobe finds no field order, the decoder flags no frame")
    func clipSaysProgressive() throws {
        let probe = try Child.tool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=field_order",
                                             "-of", "default=nw=1:nk=1", undeclaredClip])
        let order = probe.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(order == "progressive" || order == "unknown" || order.isEmpty, "\(order)")
        let decoder = try VideoDecoder(source: .file(undeclaredClip), options: SourceOptions(), threads: 1)
        #expect(decoder.info.declaredTopFieldFirst == nil)
    }

    @Test("thumb: combed with --deinterlace off; auto detects it from the pictures and deinterlaces like on")
    func autoDetects() throws {
        let off = try thumb(undeclaredClip, "off"), auto = try thumb(undeclaredClip, "auto"), on = try thumb(undeclaredClip, "on")
        #expect(Combing.score(off.image) > 2, "\(Combing.score(off.image))")
        #expect(Combing.score(auto.image) < 1, "\(Combing.score(auto.image))")
        #expect(Combing.score(on.image) < 1, "\(Combing.score(on.image))")
        // Not the same bytes: with on, the decoder keeps each frame's predecessor as the deinterlacer's
        // motion evidence; with auto on a stream that says progressive it keeps none (it cannot know
        // before the pictures are looked at), so this still is deinterlaced from the frame alone.
        #expect(auto.bytes != off.bytes)
        #expect(Compare.psnr(auto.image, on.image) > 25, "\(Compare.psnr(auto.image, on.image)) dB")
    }

    @Test("The library: the detector votes interlaced on the clip, progressive on progressive fixtures (untouched)",
          arguments: ["landscape.mp4", "short.mp4", "dark.mp4"])
    func detector(progressive: String) throws {
        func run(_ input: String) throws -> FieldDeinterlacer? {
            let decoder = try VideoDecoder(source: .file(input), options: SourceOptions(), threads: 1)
            let scaler = FrameScaler(outputSize: Size(width: 64, height: 64), mode: .aspectFill, for: decoder)
            var frames = 0
            while frames < 8, let timed = try decoder.nextFrame() {
                _ = try scaler.image(from: timed.frame, sampleAspectRatio: decoder.info.sampleAspectRatio)
                frames += 1
            }
            #expect(frames == 8)
            return scaler.deinterlacer
        }
        let interlaced = try #require(try run(undeclaredClip))
        #expect(interlaced.detectedInterlaced == true && interlaced.deinterlacedCount == 8)
        let plain = try #require(try run(TestPaths.fixture(progressive)))
        #expect(plain.detectedInterlaced == false && plain.deinterlacedCount == 0)
        // And the CLI's output is the same bytes with auto as with off.
        let directory = TestPaths.temporaryDirectory()
        var outputs: [Data] = []
        for mode in ["auto", "off"] {
            let output = directory + "/\(mode).png"
            let result = try Child.run(TestPaths.cliBinary, ["strip", TestPaths.fixture(progressive), "-o", output, "-n", "3",
                                                               "--deinterlace", mode])
            #expect(result.status == 0, "\(result.stderr)")
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: output)))
        }
        #expect(outputs[0] == outputs[1])
    }
}
