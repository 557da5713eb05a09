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

    @Test("thumb --json --fit smartcrop reports the window, which holds the object; without smartcrop, no window")
    func jsonWindow() throws {
        let clip = try SmartCropClips.make("object")
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func entry(_ fit: String) throws -> [String: Any] {
            let result = try Child.cli(["thumb", clip, "--at", "0.45", "--size", "180x180", "--fit", fit,
                                        "-o", folder + "/\(fit).png", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let record = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
            let outputs = try #require(record["outputs"] as? [[String: Any]])
            return try #require(outputs.first)
        }
        let smart = try #require(try entry("smartcrop")["smart_crop"] as? [String: Any])
        let numbers = ["x", "y", "width", "height"].compactMap { smart[$0] as? Int }
        try #require(numbers.count == 4, "\(smart)")
        let window = Rect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
        // The whole height of the 640x360 frame, square, over the object on the right.
        #expect(window.size == Size(width: 360, height: 360), "\(window)")
        #expect(SmartCropClips.coverage(of: SmartCropClips.object, by: window) >= 0.9, "\(window)")
        #expect(smart["chosen_by"] as? String == "interest" || smart["chosen_by"] as? String == "faces", "\(smart)")
        // The library's window for the same frame.
        let library = try FrameSampler(source: .file(clip)).frame(at: 0.45, size: Size(width: 180, height: 180), mode: .smartCrop)
        #expect(library.uprightCrop == window)
        #expect(try entry("fill")["smart_crop"] == nil)
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
