import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// Clips with steady motion for the seam tests, made once with the ffmpeg CLI.
enum SeamClips {
    /// A grey sawtooth (period 68 px) scrolling 4 px a frame at 15 fps, 204x96, lossless H.264: the
    /// picture repeats exactly every 17 frames, and every step between frames differs by the same amount.
    static let periodic: String = make("periodic.mp4", [
        "-f", "lavfi", "-i", "nullsrc=s=204x96:r=15:d=4,format=yuv420p,geq=lum='mod(X+4*N\\,68)*3':cb=128:cr=128",
        "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p",
    ])

    /// A still picture panned 3 px a frame (a crop sliding over testsrc2's first frame), 15 fps, 4 s.
    static let pan: String = make("pan.mp4", [
        "-f", "lavfi", "-i", "testsrc2=s=480x180:r=15:d=1", "-vf",
        "select=eq(n\\,0),loop=loop=-1:size=1,crop=240:180:'3*n':0,setpts=N/15/TB", "-frames:v", "60", "-r", "15",
        "-c:v", "libx264", "-crf", "18", "-pix_fmt", "yuv420p",
    ])

    static let directory = TestPaths.temporaryDirectory()

    static func make(_ name: String, _ arguments: [String]) -> String {
        let path = directory + "/" + name
        let result = try? Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y"] + arguments + [path])
        precondition(result?.status == 0, "ffmpeg could not make \(name): \(result?.stderr ?? "")")
        return path
    }

    /// Frames and duration of a written video, per ffprobe.
    static func probe(_ path: String) throws -> (frames: Int, duration: Double) {
        let result = try Child.tool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                             "stream=nb_read_frames:format=duration", "-of", "default=nw=1:nk=1", path])
        let values = result.stdoutText.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard values.count >= 2, let frames = Int(values[0]), let duration = Double(values[1]) else {
            throw OracleError(message: "ffprobe gave '\(result.stdoutText)' for \(path): \(result.stderr)")
        }
        return (frames, duration)
    }

    static func render(_ input: String, size: Size, length: Double, loopPoint: LoopEnd, seam: LoopSeam,
                       output: String) throws -> RenderSummary {
        let loop = try LoopPlayer(source: .file(input), configuration: .init(
            size: size, windowLength: .seconds(length), threads: 1))
        return try loop.render(to: output, framesPerSecond: 15, loopPoint: loopPoint, seam: seam)
    }
}

@Suite("render --loop-point auto and --seam crossfade: seamless hover loops")
struct SeamTests {
    @Test("One loop-end type: a time is the player's window end, and render refuses it without writing")
    func loopEndAtATimeIsRefusedByRender() throws {
        let output = TestPaths.temporaryDirectory() + "/at.mp4"
        do {
            _ = try SeamClips.render(TestPaths.fixture("short.mp4"), size: Size(width: 64, height: 36), length: 1,
                                         loopPoint: .at(.seconds(0.5)), seam: .cut, output: output)
            Issue.record("render took a loop end at a time")
        } catch let error as PreviewLoopError {
            #expect(error.code == .invalidArgument)
        }
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(LoopEnd.at(.seconds(2)).loopPoint == .length && LoopEnd.auto.loopPoint == .auto)
        #expect(LoopEnd.at(.seconds(2)).windowEnd == .seconds(2) && LoopEnd.length.windowEnd == nil)
    }

    @Test("The seam measure: a small-luma mean difference, the median step, their ratio")
    func measure() {
        func image(_ value: UInt8) -> RGBImage { RGBImage(uncheckedWidth: 128, height: 64, pixels: .init(repeating: value, count: 128 * 64 * 3)) }
        var meter = SeamMeter()
        for value: UInt8 in [10, 12, 14, 16, 30] { meter.add(image(value)) }
        let seam = meter.measure
        // Steps 2, 2, 2, 14 (median 2); last → first 20.
        #expect(abs(seam.seamDifference - 20) < 0.01 && abs(seam.medianDifference - 2) < 0.01 && abs(seam.ratio - 10) < 0.01)
        #expect(SeamThumbnail(image(0)).width == 64 && SeamThumbnail(image(0)).height == 32)
    }

    @Test("auto picks the frame most like the first, within ±25 % of the length; crossfade is at most half")
    func plan() {
        // A picture that repeats every 7 frames.
        let thumbnails = (0..<30).map { index in
            SeamThumbnail(RGBImage(uncheckedWidth: 8, height: 8, pixels: .init(repeating: UInt8(index % 7 * 30), count: 192)))
        }
        #expect(LoopSeamPlan.plan(thumbnails: thumbnails, target: 8, loopPoint: .auto, crossfade: 0)
                == LoopSeamPlan(frameCount: 7, crossfadeFrames: 0))
        #expect(LoopSeamPlan.plan(thumbnails: thumbnails, target: 8, loopPoint: .length, crossfade: 6)
                == LoopSeamPlan(frameCount: 8, crossfadeFrames: 4))
        // 12 → 9…15: 14 repeats the first picture.
        #expect(LoopSeamPlan.plan(thumbnails: thumbnails, target: 12, loopPoint: .auto, crossfade: 3)
                == LoopSeamPlan(frameCount: 14, crossfadeFrames: 3))
        // A clip shorter than the window and the fade: the fade takes at most a third of what there is.
        #expect(LoopSeamPlan.plan(thumbnails: Array(thumbnails.prefix(9)), target: 12, loopPoint: .length, crossfade: 6)
                == LoopSeamPlan(frameCount: 6, crossfadeFrames: 3))
    }

    @Test("A clip repeating every 17 frames: auto finds the period; the MP4 has exactly those frames")
    func periodicLoopPoint() throws {
        let directory = TestPaths.temporaryDirectory()
        let size = Size(width: 204, height: 96)
        // 1.2 s at 15 fps = 18 frames; 17 (the period) is the only exact match within 14…22.
        let auto = try SeamClips.render(SeamClips.periodic, size: size, length: 1.2, loopPoint: .auto, seam: .cut,
                                        output: directory + "/auto.mp4")
        #expect(auto.frameCount == 17)
        #expect(abs(auto.duration.seconds - 17.0 / 15) < 1e-6)
        #expect(auto.seam.medianDifference > 1)
        #expect(auto.seam.seamDifference <= auto.seam.medianDifference * (1 + 1e-9), "\(auto.seam)")
        let probed = try SeamClips.probe(directory + "/auto.mp4")
        #expect(probed.frames == 17)
        #expect(abs(probed.duration - 17.0 / 15) < 0.01, "\(probed)")

        // 1.4 s = 21 frames, 4 past the period: the wrap jumps 3 steps back, and the ratio says so.
        let plain = try SeamClips.render(SeamClips.periodic, size: size, length: 1.4, loopPoint: .length, seam: .cut,
                                         output: directory + "/plain.mp4")
        #expect(plain.frameCount == 21)
        #expect(plain.seam.ratio > 2, "\(plain.seam)")
        #expect(try SeamClips.probe(directory + "/plain.mp4").frames == 21)

        let faded = try SeamClips.render(SeamClips.periodic, size: size, length: 1.2, loopPoint: .auto,
                                         seam: .crossfade(.milliseconds(400)), output: directory + "/faded.mp4")
        #expect(faded.frameCount == 17 && faded.crossfade == .fromSeconds(6.0 / 15))
        #expect(faded.seam.seamDifference <= faded.seam.medianDifference * (1 + 1e-9), "\(faded.seam)")
        #expect(try SeamClips.probe(directory + "/faded.mp4").frames == 17)
    }

    @Test("A steady pan that never returns: auto + crossfade hides the jump a plain cut shows")
    func panCrossfade() throws {
        let directory = TestPaths.temporaryDirectory()
        let size = Size(width: 240, height: 180)
        let plain = try SeamClips.render(SeamClips.pan, size: size, length: 2, loopPoint: .length, seam: .cut,
                                         output: directory + "/plain.webp")
        #expect(plain.frameCount == 30)
        #expect(plain.seam.ratio > 5, "\(plain.seam)")
        let seamless = try SeamClips.render(SeamClips.pan, size: size, length: 2, loopPoint: .auto, seam: .crossfade(),
                                            output: directory + "/seamless.mp4")
        #expect(seamless.seam.seamDifference <= seamless.seam.medianDifference, "\(seamless.seam)")
        let probed = try SeamClips.probe(directory + "/seamless.mp4")
        #expect(probed.frames == seamless.frameCount && (23...37).contains(probed.frames))
        #expect(abs(probed.duration - Double(seamless.frameCount) / 15) < 0.01, "\(probed)")
    }

    @Test("The CLI reports the seam and the crossfade on the summary line")
    func summaryLine() throws {
        let directory = TestPaths.temporaryDirectory()
        let result = try Child.run(TestPaths.cliBinary, ["render", SeamClips.periodic, "-o", directory + "/a.mp4",
                                                           "-s", "204x96", "--length", "1.2", "--loop-point", "auto",
                                                           "--seam", "crossfade=0.4"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.contains("17 frames at 15 fps = 1.133 s"), "\(result.stdoutText)")
        #expect(result.stdoutText.contains("seam 1.00× the median step") && result.stdoutText.contains("crossfade 0.400 s)"),
                "\(result.stdoutText)")
        let bad = try Child.run(TestPaths.cliBinary, ["render", SeamClips.periodic, "-o", directory + "/b.mp4",
                                                        "--seam", "crossfade=0"])
        #expect(bad.status == 64 && bad.stderr.hasPrefix("Error: ") && !FileManager.default.fileExists(atPath: directory + "/b.mp4"))
    }

    @Test("Parsing: --loop-point auto|time, --seam cut|crossfade[=T]; bad values are usage errors")
    func parsing() throws {
        guard case .command(let options as RenderCommand) = try CommandLineParser.parse(["render", "c.mp4", "-o", "p.mp4", "--loop-point", "auto",
                                                                      "--seam", "crossfade"]) else {
            Issue.record("not a render command")
            return
        }
        #expect(options.loopPoint == .auto && options.seam == .crossfade(.milliseconds(500)))
        guard case .command(let timed as RenderCommand) = try CommandLineParser.parse(["render", "c.mp4", "-o", "p.mp4", "--start", "1",
                                                                    "--loop-point", "3.5", "--seam=crossfade=0.25"]) else {
            Issue.record("not a render command")
            return
        }
        #expect(timed.loopPoint == .at(.seconds(3.5)) && timed.seam == .crossfade(.milliseconds(250)))
        for seam in ["crossfade=0", "crossfade=-1", "crossfade=3", "crossfade=4", "crossfade=abc", "crossfade=", "fade", "crossfade=nan"] {
            #expect(usageError(["render", "c.mp4", "-o", "p.mp4", "--seam", seam])?.kind == .invalidValue(option: "seam", value: seam))
        }
        // T must be below the length set by --loop-point (2 s here).
        #expect(usageError(["render", "c.mp4", "-o", "p.mp4", "--start", "1", "--loop-point", "3", "--seam", "crossfade=2"])?.kind
                == .invalidValue(option: "seam", value: "crossfade=2"))
        for point in ["soon", "-1", "auto=1"] {
            #expect(usageError(["render", "c.mp4", "-o", "p.mp4", "--loop-point", point])?.kind
                    == .invalidValue(option: "loop-point", value: point))
        }
        #expect(usageError(["render", "c.mp4", "-o", "p.mp4", "--start", "5", "--loop-point", "4"])?.kind
                == .invalidValue(option: "loop-point", value: "4"))
    }
}
