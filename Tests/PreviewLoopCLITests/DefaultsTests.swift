import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// The defaults on real-shaped footage: time limits that mean stalls, output shapes that follow
/// the source.
@Suite("Defaults: time limits and shapes", .timeLimit(.minutes(10)), .tags(.slow))
struct DefaultsTests {
    /// A 60 s clip: landscape.mp4 stream-copied 15 times over (made with the ffmpeg CLI).
    private static func longClip(in directory: String) throws -> String {
        let path = directory + "/long60.mp4"
        let made = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-stream_loop", "14", "-i",
                                           TestPaths.fixture("landscape.mp4"), "-c", "copy", "-an", path])
        try #require(made.status == 0, "ffmpeg: \(made.stderr)")
        return path
    }

    @Test("--timeout bounds stalls, not work: a render that works for longer than --timeout succeeds")
    func longJobOutlivesTheTimeout() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = try Self.longClip(in: directory)
        let output = directory + "/preview.mp4"
        // 60 s of source decoded and 900 frames encoded: seconds of work, far past a 1 s timeout.
        let result = try Child.cli(["render", clip, "-o", output, "--length", "60", "--timeout", "1"], killAfter: 90)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.elapsed > 1, "the job took \(result.elapsed) s: too short to show anything about --timeout 1")
        let frames = try Child.tool("ffprobe", ["-v", "error", "-count_packets", "-select_streams", "v:0", "-show_entries",
                                              "stream=nb_read_packets", "-of", "csv=p=0", output])
        #expect(frames.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "900")
    }

    @Test("--deadline bounds the whole job, and its error names it")
    func deadlineBoundsTheJob() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = try Self.longClip(in: directory)
        let outputs = directory + "/out"
        try FileManager.default.createDirectory(atPath: outputs, withIntermediateDirectories: true)
        let result = try Child.cli(["render", clip, "-o", outputs + "/preview.mp4", "--length", "60", "--deadline", "0.5"],
                                   killAfter: 30)
        expectCLIFailure(result, input: clip, outputDirectory: outputs)
        // A liveness bound only: rendering the 60 s window takes far longer, and the message below shows
        // the deadline is what ended it.
        #expect(result.elapsed < 15, "the CLI took \(result.elapsed) s")
        #expect(result.stderr.contains("--deadline 0.5 fired"), "\(result.stderr)")
        #expect(!result.stderr.contains("--timeout"), "\(result.stderr)")
    }

    @Test("A stalled 127.0.0.1 server still times out, and the error names --timeout 2", .tags(.network))
    func stalledServerNamesTheTimeout() throws {
        let server = try HostileServer(.hold(file: TestPaths.fixture("landscape.mp4"), burst: 40_000))
        defer { server.stop() }
        let url = server.url(for: "clip.mp4").absoluteString
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try Child.cli(["thumb", url, "-o", output + "/out.ppm", "--at", "3.5", "--timeout", "2"], killAfter: 10)
        #expect(!result.wasKilled, "the CLI hung until killed after \(result.elapsed) s")
        expectCLIFailure(result, input: url, outputDirectory: output)
        #expect(result.stderr.contains("--timeout 2 fired"), "\(result.stderr)")
        // The library says which limit passed too.
        let code = errorCode {
            let sampler = try FrameSampler(source: .url(URL(string: url)!), options: SourceOptions(openTimeout: 10, readTimeout: 1))
            _ = try sampler.frame(at: 3.5, size: Size(width: 32, height: 18))
        }
        #expect(code == .timedOut)
    }

    // MARK: - Shapes

    @Test("SizeRequest resolves one side with the display aspect, the source's size, and the turned box",
          arguments: [
              (SizeRequest.width(320), Size(width: 180, height: 320), Size(width: 320, height: 569)),
              (.width(320), Size(width: 180, height: 320), Size(width: 320, height: 569)),
              (.height(180), Size(width: 640, height: 360), Size(width: 320, height: 180)),
              (.height(100), Size(width: 540, height: 240), Size(width: 225, height: 100)),
              (.source, Size(width: 180, height: 320), Size(width: 180, height: 320)),
              (.source, Size(width: 32768, height: 100), Size(width: 16384, height: 50)),
              (.orientedBox(Size(width: 320, height: 180)), Size(width: 180, height: 320), Size(width: 180, height: 320)),
              (.orientedBox(Size(width: 320, height: 180)), Size(width: 400, height: 300), Size(width: 320, height: 180)),
              (.orientedBox(Size(width: 320, height: 180)), Size(width: 300, height: 300), Size(width: 320, height: 180)),
              (.exact(Size(width: 320, height: 180)), Size(width: 180, height: 320), Size(width: 320, height: 180)),
          ])
    func resolution(request: SizeRequest, display: Size, expected: Size) {
        #expect(request.resolved(display: display) == expected)
    }

    @Test("Computed sides are even when asked (H.264), explicit ones kept")
    func evenSides() {
        #expect(SizeRequest.width(320).resolved(display: Size(width: 180, height: 320), even: true) == Size(width: 320, height: 568))
        #expect(SizeRequest.source.resolved(display: Size(width: 361, height: 641), even: true) == Size(width: 362, height: 642))
        #expect(SizeRequest.height(100).resolved(display: Size(width: 1, height: 100_000), even: true) == Size(width: 2, height: 100))
    }

    /// The width and height of an image file, from ffprobe.
    private func dimensions(_ path: String) throws -> Size {
        let result = try Child.tool("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", path])
        let parts = String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int($0) }
        return Size(width: parts.first ?? 0, height: parts.last ?? 0)
    }

    @Test("A portrait phone clip (rotation tag) gets portrait outputs by default; --size W and source keep its shape")
    func portraitDefaults() throws {
        let clip = TestPaths.fixture("portrait-phone.mp4")      // coded 320x180, displays 180x320
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cases: [([String], String, Size)] = [
            (["thumb", clip, "-o", directory + "/t.png"], "/t.png", Size(width: 180, height: 320)),
            (["thumb", clip, "-o", directory + "/w.png", "--size", "90"], "/w.png", Size(width: 90, height: 160)),
            (["thumb", clip, "-o", directory + "/h.png", "--size", "x64"], "/h.png", Size(width: 36, height: 64)),
            (["thumb", clip, "-o", directory + "/s.png", "--size", "source"], "/s.png", Size(width: 180, height: 320)),
            (["thumb", clip, "-o", directory + "/e.png", "--size", "320x180"], "/e.png", Size(width: 320, height: 180)),
            (["strip", clip, "-o", directory + "/strip.png", "-n", "2"], "/strip.png", Size(width: 180, height: 160)),
            (["render", clip, "-o", directory + "/r.mp4"], "/r.mp4", Size(width: 270, height: 480)),
        ]
        for (arguments, file, expected) in cases {
            let result = try Child.cli(arguments, killAfter: 60)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(try dimensions(directory + file) == expected, "\(arguments)")
        }
        // An odd width for H.264 is a usage error before any work.
        let odd = try Child.cli(["render", clip, "-o", directory + "/r2.mp4", "--size", "101x-1"], killAfter: 20)
        #expect(odd.status == 64, "\(odd.stderr)")
        // The default portrait thumbnail shows the whole upright picture: compare with ffmpeg's own.
        let ours = try Child.tool("ffmpeg", ["-v", "error", "-i", directory + "/t.png", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        let reference = try Oracle.frames(of: clip, filter: "scale=180:320:flags=bicubic", size: Size(width: 180, height: 320))
        let image = try RGBImage(width: 180, height: 320, pixels: [UInt8](ours.stdout))
        #expect(Compare.best(image, among: reference).psnr > 25, "the whole upright picture, not a crop")
    }

    @Test("sprites with a portrait source: tiles turn too")
    func portraitSprites() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Child.cli(["sprites", TestPaths.fixture("portrait-phone.mp4"), "-o", directory + "/s", "--every", "0.5"],
                                   killAfter: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(String(decoding: result.stdout, as: UTF8.self).contains("of 90x160"), "\(String(decoding: result.stdout, as: UTF8.self))")
    }

    // MARK: - Honest durations

    /// long-audio.mp4: 3.0 s of video, 4.5 s of audio.
    private let longAudio = TestPaths.fixture("long-audio.mp4")

    @Test("probe gives the video's own duration and the container's when they differ")
    func probeShowsBothDurations() throws {
        let json = try Child.cli(["probe", longAudio, "--json"], killAfter: 20)
        let object = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
        #expect(object?["duration"] as? Double == 3.0)
        #expect(object?["container_duration"] as? Double == 4.5)
        let text = try Child.cli(["probe", longAudio], killAfter: 20)
        let output = String(decoding: text.stdout, as: UTF8.self)
        #expect(output.contains("3.000 s (video; the container lasts 4.500 s)"), "\(output)")
        let info = try MediaProbe.probe(.file(longAudio))
        #expect(info.duration == 3.0 && info.containerDuration == 4.5)
    }

    @Test("strip --span all over a clip whose audio outlasts its video ends on the last frames, not frozen copies")
    func stripSpanAllHasNoFrozenTail() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/strip.ppm"
        let result = try Child.cli(["strip", longAudio, "-o", output, "--span", "all", "-n", "6", "-s", "80x60",
                                    "--accuracy", "exact"], killAfter: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(String(decoding: result.stdout, as: UTF8.self).contains("0.000–3.000 s"), "\(String(decoding: result.stdout, as: UTF8.self))")
        let sheet = try PPM.decode(try [UInt8](Data(contentsOf: URL(fileURLWithPath: output))))
        var tiles: [[UInt8]] = []
        for index in 0..<6 {
            var tile: [UInt8] = []
            for row in 0..<60 {
                let start: Int = (row * sheet.width + index * 80) * 3
                tile += sheet.pixels[start..<(start + 240)]
            }
            tiles.append(tile)
        }
        for index in 1..<6 {
            #expect(tiles[index] != tiles[index - 1], "tile \(index) repeats tile \(index - 1)")
        }
    }

    @Test("sprites and percentages use the video's extent")
    func spritesAndPercentagesUseTheVideo() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Child.cli(["sprites", longAudio, "-o", directory + "/s", "--every", "0.5", "-s", "32x24"], killAfter: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let vtt = try String(contentsOfFile: directory + "/s/thumbnails.vtt", encoding: .utf8)
        #expect(vtt.components(separatedBy: " --> ").count - 1 == 6, "\(vtt)")
        #expect(vtt.contains("--> 00:00:03.000"), "\(vtt)")
        let thumb = try Child.cli(["thumb", longAudio, "-o", directory + "/t.ppm", "--at", "100%"], killAfter: 30)
        #expect(String(decoding: thumb.stdout, as: UTF8.self).contains("frame at 2.960 s"), "\(String(decoding: thumb.stdout, as: UTF8.self))")
    }

    // MARK: - Poster: title cards and --at best

    /// The time `thumb` reports in "frame at T s".
    private func chosenTime(_ arguments: [String]) throws -> (time: Double, line: String) {
        let result = try Child.cli(arguments, killAfter: 60)
        let line = String(decoding: result.stdout, as: UTF8.self)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        guard let range = line.range(of: "frame at "), let end = line.range(of: " s", range: range.upperBound..<line.endIndex) else {
            Issue.record("no time in \(line)")
            return (.nan, line)
        }
        return (Double(line[range.upperBound..<end.lowerBound]) ?? .nan, line)
    }

    @Test("The default poster and --at best land in the real footage, past leaders and before credits",
          arguments: [
              // fixture, where the real footage lies (seconds), the leader's rejection the line names
              ("black-start.mp4", 1.0..<2.6, "black"),
              ("title-card.mp4", 1.2..<2.8, "title card"),       // title card 0–1.2 s, credits 2.8–3.8 s
              ("fade-in.mp4", 1.0..<2.6, ""),                    // fully faded in from 1.0 s
              ("slate.mp4", 1.0..<2.6, "flat"),
              ("landscape.mp4", 0.0..<4.0, ""),                  // steady footage
              ("blur-start.mp4", 0.8..<2.6, ""),
          ])
    func posterInTheFootage(fixture: String, footage: Range<Double>, reason: String) throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = TestPaths.fixture(fixture)
        let auto = try chosenTime(["thumb", clip, "-o", directory + "/auto.png"])
        #expect(footage.contains(auto.time), "auto: \(auto.line)")
        #expect(auto.line.contains("first good frame"), "\(auto.line)")
        let best = try chosenTime(["thumb", clip, "-o", directory + "/best.png", "--at", "best"])
        #expect(footage.contains(best.time), "best: \(best.line)")
        #expect(best.line.contains("best of the clip"), "\(best.line)")
        if !reason.isEmpty { #expect(auto.line.contains("\(reason) ×"), "\(auto.line)") }
        // The chosen poster is the frame ffmpeg shows at that time.
        let info = try MediaProbe.probe(.file(clip))
        let filter = Oracle.aspectFillFilter(uprightWidth: info.displaySize.width, uprightHeight: info.displaySize.height,
                                             sampleAspect: 1, output: Size(width: 320, height: 180))
        let reference = try Oracle.frames(of: clip, filter: filter, size: Size(width: 320, height: 180))
        let ours = try Child.tool("ffmpeg", ["-v", "error", "-i", directory + "/best.png", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        let image = try RGBImage(width: 320, height: 180, pixels: [UInt8](ours.stdout))
        let match = Compare.best(image, among: reference)
        #expect(abs(Double(match.index) / 25 - best.time) < 0.001, "best frame is ffmpeg's frame \(match.index), not \(best.time) s")
    }

    @Test("Mostly one colour with a little text is a title card; footage and flat frames are not")
    func titleCardRule() {
        #expect(PosterRules.flaw(of: PosterScores(brightness: 0.02, contrast: 0.06, sharpness: 0.01, uniformity: 0.97)) == .titleCard)
        #expect(PosterRules.flaw(of: PosterScores(brightness: 0.49, contrast: 0.25, sharpness: 0.03, uniformity: 0.15)) == nil)
        #expect(PosterRules.flaw(of: PosterScores(brightness: 0.06, contrast: 0.03, sharpness: 0.003, uniformity: 0.21)) == nil)
        #expect(PosterRules.flaw(of: PosterScores(brightness: 0.0, contrast: 0.0, sharpness: 0.0, uniformity: 1)) == .black)
        #expect(PosterRejection.titleCard.description == "title card")
    }

    @Test("--at best conflicts with --start, --length and --accuracy")
    func bestConflicts() throws {
        for extra in [["--start", "1"], ["--length", "2"], ["--accuracy", "exact"]] {
            let result = try Child.cli(["thumb", "x.mp4", "-o", "a.png", "--at", "best"] + extra, killAfter: 10)
            #expect(result.status == 64, "\(extra): \(result.stderr)")
        }
    }

    @Test("file:// URLs on this host are local paths, percent-decoded; the CLI opens them")
    func fileURLs() throws {
        #expect(Source(argument: "file:///tmp/a%20b.mp4") == .file("/tmp/a b.mp4"))
        #expect(Source(argument: "FILE://localhost/clips/x.mp4") == .file("/clips/x.mp4"))
        #expect(Source(argument: "file://elsewhere/x.mp4") == .file("file://elsewhere/x.mp4"))
        #expect(Source(argument: "file:///a%00b") == .file("file:///a%00b"))
        let fixture = TestPaths.fixture("short.mp4")
        let url = "file://" + (fixture.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? fixture)
        let result = try Child.cli(["probe", url], killAfter: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(String(decoding: result.stdout, as: UTF8.self).contains("h264"))
    }

    @Test("An MP4 whose index follows its frames: from a pipe and from a server without byte ranges the error says why; with the index in front both work", .tags(.network))
    func indexAtTheEnd() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let atEnd = directory + "/end.mp4", atFront = directory + "/front.mp4"
        for (path, flags) in [(atEnd, [String]()), (atFront, ["-movflags", "+faststart"])] {
            let made = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=4",
                                               "-c:v", "libx264", "-preset", "ultrafast", "-g", "25"] + flags + [path])
            try #require(made.status == 0, "ffmpeg: \(made.stderr)")
        }
        let piped = try Child.cli(["thumb", "-", "-o", directory + "/a.png", "--at", "3"],
                                  input: .piped(try Data(contentsOf: URL(fileURLWithPath: atEnd))), killAfter: 30)
        #expect(piped.status == 1)
        #expect(piped.stderr.contains("index comes after its frames") && piped.stderr.contains("standard input"), "\(piped.stderr)")
        #expect(!piped.stderr.contains("Error: -: "), "the input is named once: \(piped.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/a.png"))
        let front = try Child.cli(["thumb", "-", "-o", directory + "/b.png", "--at", "3"],
                                  input: .piped(try Data(contentsOf: URL(fileURLWithPath: atFront))), killAfter: 30)
        #expect(front.status == 0, "\(front.stderr)")

        let server = try HTTPTestServer(directory: directory, flavour: .plain)
        defer { server.stop() }
        let remote = try Child.cli(["thumb", server.url(for: "end.mp4").absoluteString, "-o", directory + "/c.png"], killAfter: 30)
        #expect(remote.status == 1)
        #expect(remote.stderr.contains("index comes after its frames") && remote.stderr.contains("byte ranges"), "\(remote.stderr)")
        let remoteFront = try Child.cli(["thumb", server.url(for: "front.mp4").absoluteString, "-o", directory + "/d.png"], killAfter: 30)
        #expect(remoteFront.status == 0, "\(remoteFront.stderr)")
    }

    @Test("The loop summary's fps and timing's fps delivered over its log are one figure")
    func loopAndTimingAgreeOnFPS() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = directory + "/t.csv"
        let loop = try Child.cli(["loop", TestPaths.fixture("short.mp4"), "--loops", "2", "--log", log], killAfter: 60)
        try #require(loop.status == 0, "\(loop.stderr)")
        let summary = try #require(loop.stderr.split(separator: "\n").last { $0.hasPrefix("loop: ") })
        let loopFPS = try #require(summary.split(separator: ", ").first { $0.hasSuffix(" fps") }?.dropLast(4))
        let timing = try Child.cli(["timing", log], killAfter: 30)
        try #require(timing.status == 0, "\(timing.stderr)")
        let line = try #require(String(decoding: timing.stdout, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("fps delivered:") })
        let timingFPS = line.split(separator: " ").last.map(String.init)
        #expect(String(loopFPS) == timingFPS, "loop says \(summary), timing says \(line)")
    }
}
