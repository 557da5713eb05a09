import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// `--fit smartcrop` on the built binary: the written still is the ffmpeg CLI's crop of the chosen
/// window, the same bytes on every run, and every command that takes `--fit` takes it.
@Suite("--fit smartcrop end to end", .timeLimit(.minutes(10)))
struct SmartCropCLITests {
    @Test("thumb --fit smartcrop writes ffmpeg's crop of a window holding the object, the same bytes twice")
    func thumb() throws {
        let clip = try SmartCropClips.make("object")
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var written: [Data] = []
        for run in 0..<2 {
            let output = folder + "/smart\(run).png"
            let result = try Child.cli(["thumb", clip, "--at", "0.45", "--size", "180x180", "--fit", "smartcrop", "-o", output])
            #expect(result.status == 0, "\(result.stderr)")
            written.append(try Data(contentsOf: URL(fileURLWithPath: output)))
        }
        #expect(written[0] == written[1], "two runs wrote different bytes")

        // The window, as the library reports it for the same frame; then ffmpeg's own crop there.
        let size = Size(width: 180, height: 180)
        let window = try #require(try FrameSampler(source: .file(clip)).frame(at: 0.45, size: size, mode: .smartCrop).uprightCrop)
        #expect(SmartCropClips.coverage(of: SmartCropClips.object, by: window) >= 0.9, "\(window)")
        let index = try Oracle.frameTimes(of: clip).lastIndex { $0 <= 0.45 }!
        let reference = try Oracle.frames(of: clip, filter: SmartCropClips.cropFilter(window, output: size), size: size)[index]
        let still = try #require(try Oracle.frames(of: folder + "/smart0.png", filter: "null", size: size).first)
        #expect(Compare.psnr(still, reference) >= 35, "PSNR \(Compare.psnr(still, reference)) dB")
        // --fit fill crops the centre, which the object is not in.
        let centred = try Child.cli(["thumb", clip, "--at", "0.45", "--size", "180x180", "--fit", "fill", "-o", folder + "/fill.png"])
        #expect(centred.status == 0)
        let fill = try #require(try Oracle.frames(of: folder + "/fill.png", filter: "null", size: size).first)
        #expect(Compare.psnr(fill, reference) < 25)
    }

    @Test("strip, sprites, render and loop take --fit smartcrop", arguments: [
        ["strip", "--count", "3", "--size", "96x96"],
        ["sprites", "--count", "4", "--size", "64x64"],
        ["render", "--length", "0.5", "--size", "96x96", "--fps", "10"],
    ])
    func otherCommands(_ command: [String]) throws {
        let clip = try SmartCropClips.make("object")
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // sprites writes a folder: its first sheet is the picture.
        let name = command[0] == "render" ? "out.webp" : command[0] == "sprites" ? "sprites" : "out.png"
        var outputs: [Data] = []
        for fit in ["smartcrop", "fill"] {
            let output = folder + "/\(fit)-\(name)"
            let result = try Child.cli([command[0], clip, "-o", output, "--fit", fit] + command.dropFirst())
            #expect(result.status == 0, "\(command[0]) --fit \(fit): \(result.stderr)")
            let picture = command[0] == "sprites" ? output + "/sprites-1.jpg" : output
            outputs.append((try? Data(contentsOf: URL(fileURLWithPath: picture))) ?? Data())
        }
        #expect(!outputs[0].isEmpty && outputs[0] != outputs[1], "\(command[0]): smartcrop wrote what fill wrote")
    }

    @Test("An unknown --fit names smartcrop among the choices")
    func unknownFit() throws {
        let result = try Child.cli(["thumb", TestPaths.fixture("landscape.mp4"), "--fit", "smart", "-o", "/tmp/never.png"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("fill, smartcrop, fit or stretch"), "\(result.stderr)")
    }
}
