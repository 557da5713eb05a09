import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// Flashing clips made with the ffmpeg CLI (lavfi sources), 160x90, lossless H.264.
enum FlashClips {
    static let directory = TestPaths.temporaryDirectory()

    /// Makes `name` from a lavfi graph; extra options before the output.
    static func make(_ name: String, _ graph: String, _ options: [String] = []) throws -> String {
        let path = directory + "/" + name
        let result = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", graph] + options
                                        + ["-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", path])
        guard result.status == 0 else { throw OracleError(message: "ffmpeg could not make \(name): \(result.stderr)") }
        return path
    }

    /// `on` over `off` (a `color` source each) for the first half of every `period` frames, at 60 fps for
    /// `seconds`; `on` covers `onWidth` of the 160 columns from the left. Frame numbers keep the periods exact.
    static func flashing(_ name: String, period: Int, seconds: Double, on: String = "white", off: String = "black",
                         onWidth: Int = 160) throws -> String {
        try make(name, "color=\(off):s=160x90:r=60:d=\(seconds)[b];color=\(on):s=\(onWidth)x90:r=60:d=\(seconds)[w];"
                     + "[b][w]overlay=enable='lt(mod(n\\,\(period))\\,\(Double(period) / 2))'")
    }

    static func analyse(_ path: String, toneMapping: ToneMapping = .auto) throws -> FlashAnalysis {
        var options = SourceOptions()
        options.toneMapping = toneMapping
        return try MediaProbe.flashes(.file(path), options: options, threads: 1)
    }
}

@Suite("Flashes found in clips made with ffmpeg (probe --flashes' library call)")
struct FlashClipTests {
    @Test("Full-screen black and white at 1, 2, 3, 4 and 10 Hz (a flash = white → black → white)",
          arguments: [(1, FlashVerdict.pass), (2, .warning), (3, .warning), (4, .failure), (10, .failure)])
    func fullScreen(hertz: Int, verdict: FlashVerdict) throws {
        let analysis = try FlashClips.analyse(try FlashClips.flashing("full-\(hertz).mp4", period: 60 / hertz, seconds: 3))
        let report = analysis.report
        #expect(analysis.size == Size(width: 96, height: 54))
        #expect(analysis.frameCount == 180)
        #expect(report.verdict == verdict)
        #expect(report.seconds.map(\.second) == [0, 1, 2])
        // A second's worst window ends inside it; the first second starts white, so it holds one transition less.
        #expect(report.seconds.dropFirst().map(\.luminanceFlashes) == [hertz, hertz])
        #expect(report.seconds.allSatisfy { $0.redFlashes == 0 && $0.area == 1 })
        #expect(report.spans.isEmpty == (verdict == .pass))
    }

    @Test("Three flashes a second for six seconds: an extended failure")
    func extended() throws {
        let report = try FlashClips.analyse(try FlashClips.flashing("full-3-long.mp4", period: 20, seconds: 6)).report
        #expect(report.verdict == .extendedFailure)
        #expect(report.seconds.map(\.luminanceFlashes) == [2, 3, 3, 3, 3, 3])
        // Reported from the fifth second of the run on, as IRIS reports it.
        #expect(report.spans == [FlashSpan(start: 0, end: 4, verdict: .warning), FlashSpan(start: 4, end: 6, verdict: .extendedFailure)])
    }

    @Test("4 Hz over 10 % of the picture passes (under the area threshold); over 40 % it fails")
    func area() throws {
        let small = try FlashClips.analyse(try FlashClips.flashing("area-10.mp4", period: 15, seconds: 2, onWidth: 16)).report
        #expect(small.verdict == .pass)
        #expect(small.seconds.allSatisfy { $0.luminanceFlashes == 0 && abs($0.area - 0.1) < 0.02 })
        let large = try FlashClips.analyse(try FlashClips.flashing("area-40.mp4", period: 15, seconds: 2, onWidth: 64)).report
        #expect(large.verdict == .failure)
        #expect(large.seconds[1].luminanceFlashes == 4)
        #expect(large.seconds.allSatisfy { abs($0.area - 0.4) < 0.02 })
    }

    @Test("Saturated red against a grey as bright at 4 Hz: a red failure, no luminance flash")
    func red() throws {
        let report = try FlashClips.analyse(try FlashClips.flashing("red.mp4", period: 15, seconds: 2, on: "red", off: "0x808080")).report
        #expect(report.verdict == .failure)
        #expect(report.seconds.map(\.redFlashes) == [3, 4])
        #expect(report.seconds.allSatisfy { $0.luminanceFlashes == 0 })
    }

    @Test("A slow dissolve and a fast pan over testsrc2 pass")
    func calm() throws {
        let dissolve = try FlashClips.make("dissolve.mp4", "nullsrc=s=160x90:r=30:d=4,format=yuv420p,geq=lum='16+219*T/4':cb=128:cr=128")
        let pan = try FlashClips.make("pan.mp4", "testsrc2=s=640x360:r=30:d=3,crop=240:180:'t*130':'t*50'")
        for path in [dissolve, pan] {
            let report = try FlashClips.analyse(path).report
            #expect(report.verdict == .pass, "\(path)")
            #expect(report.seconds.allSatisfy { $0.luminanceFlashes == 0 && $0.redFlashes == 0 }, "\(path)")
        }
    }

    @Test("Odd inputs: one frame, under a second, variable frame intervals, a 1 fps slideshow of cuts")
    func oddInputs() throws {
        let one = try FlashClips.analyse(try FlashClips.make("one.mp4", "color=white:s=160x90:r=25:d=1", ["-frames:v", "1"]))
        #expect(one.frameCount == 1)
        #expect(one.report.seconds == [FlashSecond(second: 0, luminanceFlashes: 0, redFlashes: 0, area: 0, verdict: .pass)])
        // Seven transitions in 0.4 s: three complete flashes and a fourth begun.
        let short = try FlashClips.analyse(try FlashClips.flashing("short.mp4", period: 6, seconds: 0.4)).report
        #expect(short.seconds.count == 1 && short.seconds[0].luminanceFlashes == 3 && short.verdict == .failure)
        // 4 Hz with every third frame 4 ms late: counted on time.
        let variable = try FlashClips.analyse(try FlashClips.make(
            "variable.mkv", "color=black:s=160x90:r=60:d=3[b];color=white:s=160x90:r=60:d=3[w];"
                + "[b][w]overlay=enable='lt(mod(n\\,15)\\,7.5)',setpts='N/60/TB+mod(N\\,3)*0.004/TB'", ["-fps_mode", "passthrough"])).report
        #expect(variable.verdict == .failure && variable.seconds[1].luminanceFlashes == 4)
        // A cut from black to white or back each second: one transition a second, never a flash.
        let slides = try FlashClips.analyse(try FlashClips.make(
            "slides.mp4", "color=black:s=160x90:r=1:d=6[b];color=white:s=160x90:r=1:d=6[w];[b][w]overlay=enable='lt(mod(n\\,2)\\,1)'"))
        #expect(slides.frameCount == 6 && slides.report.seconds.count == 6)
        #expect(slides.report.verdict == .pass && slides.report.seconds.allSatisfy { $0.luminanceFlashes == 0 })
    }

    @Test("A portrait clip is decoded 96 high and judged whole: 4 Hz over 40 % of it fails")
    func portrait() throws {
        let path = try FlashClips.make("portrait.mp4", "color=black:s=90x160:r=60:d=2[b];color=white:s=90x64:r=60:d=2[w];"
                                           + "[b][w]overlay=enable='lt(mod(n\\,15)\\,7.5)'")
        let analysis = try FlashClips.analyse(path)
        #expect(analysis.size == Size(width: 54, height: 96))
        #expect(analysis.report.verdict == .failure)
        #expect(analysis.report.seconds.allSatisfy { abs($0.area - 0.4) < 0.03 })
    }

    @Test("Extreme shapes are analysed at their own shape, never enlarged: 16x4000 at 1x96, 4000x16 at 96x1, 2x2 at 2x2",
          arguments: [(Size(width: 16, height: 4000), Size(width: 1, height: 96)),
                      (Size(width: 4000, height: 16), Size(width: 96, height: 1)),
                      (Size(width: 2, height: 2), Size(width: 2, height: 2))])
    func extremeShapes(source: Size, analysed: Size) throws {
        // Full-picture black and white at 4 Hz for 2 s: a failure at any size.
        let path = try FlashClips.make("shape-\(source).mp4",
                                       "color=black:s=\(source):r=60:d=2[b];color=white:s=\(source):r=60:d=2[w];"
                                           + "[b][w]overlay=enable='lt(mod(n\\,15)\\,7.5)'")
        let analysis = try FlashClips.analyse(path)
        #expect(analysis.size == analysed)
        #expect(analysis.frameCount == 120)
        #expect(analysis.report.verdict == .failure)
    }

    @Test("HDR10 input is tone mapped, then analysed: a 4 Hz PQ flash fails")
    func hdr() throws {
        let path = FlashClips.directory + "/flash-pq.mp4"
        try HDRClips.encode(source: "color=black:s=160x90:r=60[b];color=white:s=160x90:r=60[w];"
                                + "[b][w]overlay=enable='lt(mod(n\\,15)\\,7.5)',format=yuv420p",
                            filter: HDRClips.toHDR("smpte2084"), transfer: "smpte2084", x265: "", frames: 120, to: path)
        let analysis = try FlashClips.analyse(path)
        #expect(analysis.info.hdrFormat != .sdr)
        #expect(analysis.report.verdict == .failure)
        #expect(analysis.report.seconds.map(\.luminanceFlashes) == [3, 4])
    }
}

@Suite("render --flash-safety: the frames written, on repeat through the seam")
struct RenderFlashCheckTests {
    /// One second of white, then one of black, 30 fps: made once (tests run in parallel, and one
    /// rewriting the file while another reads it would fail the reader).
    static let cutClip = Result { try FlashClips.make("cut.mp4", "color=white:s=160x90:r=30:d=1[a];color=black:s=160x90:r=30:d=1[b];[a][b]concat=n=2:v=1") }

    static func cut() throws -> String { try cutClip.get() }

    static func render(_ input: String, start: Double, length: Double, safety: FlashSafety, name: String) throws -> RenderSummary {
        let loop = try LoopPlayer(source: .file(input), configuration: .init(
            size: Size(width: 96, height: 54), windowStart: .seconds(start), windowLength: .seconds(length), threads: 1))
        return try loop.render(to: FlashClips.directory + "/" + name, framesPerSecond: 15, flashSafety: safety)
    }

    @Test("A 0.3 s loop across a hard cut from a bright shot to a dark one fails through its seam")
    func seam() throws {
        let summary = try Self.render(try Self.cut(), start: 0.85, length: 0.3, safety: .check, name: "seam.mp4")
        let report = try #require(summary.flashes)
        // One pass alone holds one transition; played on repeat: white → black inside, black → white at the seam.
        #expect(summary.frameCount == 5 && abs(summary.duration.seconds - 0.3) < 1e-6)
        #expect(report.verdict == .failure)
        #expect(report.seconds.count == 7)
        #expect(report.seconds.dropFirst().allSatisfy { $0.verdict == .failure && $0.luminanceFlashes == 3 })
        #expect(report.spans.last == FlashSpan(start: 1, end: 6.3, verdict: .failure))
    }

    @Test("A loop within one shot passes; --flash-safety off analyses nothing")
    func calmAndOff() throws {
        let calm = try Self.render(try Self.cut(), start: 0.1, length: 0.5, safety: .check, name: "calm.mp4")
        #expect(calm.flashes?.verdict == .pass)
        #expect(calm.flashes?.spans == [])
        let off = try Self.render(try Self.cut(), start: 0.85, length: 0.3, safety: .off, name: "off.mp4")
        #expect(off.flashes == nil)
    }
}
