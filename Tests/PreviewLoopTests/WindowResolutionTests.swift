import Foundation
import PreviewLoop
import Testing
import PreviewLoopTestSupport

/// Windows given as percentages (or `mm:ss`) are resolved by the library, once, from the input it
/// opened: the CLI passes them through, so standard input works too.
@Suite("Windows resolved inside the library", .tags(.slow))
struct WindowResolutionTests {
    static let clip = TestPaths.fixture("landscape.mp4")   // 4 s at 25 fps

    @Test("LoopPlayer and PreviewCard resolve percentages against the video's duration")
    func libraryResolves() throws {
        let loop = try LoopPlayer(source: .file(Self.clip), configuration: .init(windowStart: .percent(10), windowLength: .percent(50)))
        #expect(abs(loop.windowStart.seconds - 0.4) < 1e-9 && abs(loop.windowLength.seconds - 2) < 1e-9)
        #expect(abs((loop.configuration.windowStart.seconds(duration: nil) ?? -1) - 0.4) < 1e-9)
        let frames = try collect(loop)
        #expect(frames.count == 50 && abs(frames[0].sourceTime - 0.4) < 1e-6)
        let card = try PreviewCard(source: .file(Self.clip), windowStart: .percent(25), windowLength: .percent(25), posterTime: .percent(75))
        #expect(abs(card.windowStart - 1) < 1e-9 && abs(card.windowLength - 1) < 1e-9)
        #expect(abs(try card.poster().frame.sourceTime - 3) < 1e-6)
        // An end instead of a length, from the start's own kind or another.
        for (start, end) in [(TimePosition.percent(25), TimePosition.percent(75)), (.seconds(1), .percent(75)), (.percent(25), .seconds(3))] {
            let ended = try LoopPlayer(source: .file(Self.clip), configuration: .init(windowStart: start, windowLength: .seconds(9), windowEnd: end))
            #expect(abs(ended.windowStart.seconds - 1) < 1e-9 && abs(ended.windowLength.seconds - 2) < 1e-9, "\(start) \(end)")
            #expect(ended.configuration.windowEnd == nil && ended.configuration.windowLength == .seconds(2))
        }
        // mm:ss is seconds.
        #expect(TimePosition(parsing: "0:01.5") == .seconds(1.5))
    }

    @Test("Unusable windows throw invalidArgument: past the end, empty, negative, over 100 %")
    func refusals() {
        for (start, length) in [(TimePosition.percent(100), TimePosition.seconds(1)), (.seconds(1), .percent(0)),
                                (.seconds(-1), .seconds(1)), (.percent(120), .seconds(1)), (.seconds(0), .seconds(.infinity))] {
            #expect(errorCode { _ = try LoopPlayer(source: .file(Self.clip), configuration: .init(windowStart: start, windowLength: length)) }
                    == .invalidArgument, "\(start) \(length)")
            #expect(errorCode { _ = try PreviewCard(source: .file(Self.clip), windowStart: start, windowLength: length) }
                    == .invalidArgument, "\(start) \(length)")
        }
        // An end at or before the start: known before opening (same kinds) or only once open.
        for (start, end) in [(TimePosition.seconds(2), TimePosition.seconds(2)), (.percent(50), .percent(10)), (.seconds(3), .percent(50)),
                             (.seconds(1), .percent(150))] {
            #expect(errorCode { _ = try LoopPlayer(source: .file(Self.clip), configuration: .init(windowStart: start, windowEnd: end)) }
                    == .invalidArgument, "\(start) \(end)")
        }
    }

    @Test("`cat clip | preview-loop loop|render - --start 10%` plays what the file plays")
    func standardInputPercentages() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.clip))
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let window = ["--start", "10%", "--length", "25%"]
        // loop: the same frames, pixel for pixel, under the same names.
        let pipedLoop = try Child.cli(["loop", "-", "--frames", output + "/piped"] + window, input: .piped(bytes), killAfter: 60)
        let fileLoop = try Child.cli(["loop", Self.clip, "--frames", output + "/file"] + window, killAfter: 60)
        #expect(pipedLoop.status == 0 && fileLoop.status == 0, "\(pipedLoop.stderr) \(fileLoop.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: output + "/file").sorted()
        #expect(names.count == 25)
        #expect(try FileManager.default.contentsOfDirectory(atPath: output + "/piped").sorted() == names)
        for name in names {
            #expect(FileManager.default.contentsEqual(atPath: output + "/piped/" + name, andPath: output + "/file/" + name), "\(name)")
        }
        // render: the same GIF, byte for byte, from 0.400 s.
        let pipedRender = try Child.cli(["render", "-", "-o", output + "/piped.gif"] + window, input: .piped(bytes), killAfter: 60)
        let fileRender = try Child.cli(["render", Self.clip, "-o", output + "/file.gif"] + window, killAfter: 60)
        #expect(pipedRender.status == 0 && fileRender.status == 0, "\(pipedRender.stderr) \(fileRender.stderr)")
        #expect(FileManager.default.contentsEqual(atPath: output + "/piped.gif", andPath: output + "/file.gif"))
        let summary = String(decoding: pipedRender.stdout, as: UTF8.self)
        #expect(summary.contains("from 0.400 s"), "\(summary)")
        #expect(summary.replacingOccurrences(of: "piped.gif", with: "file.gif") == String(decoding: fileRender.stdout, as: UTF8.self))
    }

    @Test("card --start 10%: resolved in the library from the file; from standard input the card's own refusal, not 'not a media file'")
    func cardPercentages() throws {
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let percent = try Child.cli(["card", Self.clip, "-o", output + "/percent.png", "--start", "10%", "--at", "2"], killAfter: 60)
        let seconds = try Child.cli(["card", Self.clip, "-o", output + "/seconds.png", "--start", "0.4", "--at", "2"], killAfter: 60)
        #expect(percent.status == 0 && seconds.status == 0, "\(percent.stderr) \(seconds.stderr)")
        #expect(FileManager.default.contentsEqual(atPath: output + "/percent.png", andPath: output + "/seconds.png"))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.clip))
        let emptyDirectory = output + "/stdin"
        try FileManager.default.createDirectory(atPath: emptyDirectory, withIntermediateDirectories: true)
        let piped = try Child.cli(["card", "-", "-o", emptyDirectory + "/card.png", "--start", "10%"], input: .piped(bytes), killAfter: 60)
        expectCLIFailure(piped, input: "-", outputDirectory: emptyDirectory)
        #expect(piped.stderr.contains("standard input") && !piped.stderr.contains("not a media file"), "\(piped.stderr)")
    }

    private func collect(_ loop: LoopPlayer) throws -> [VideoFrame] {
        var frames: [VideoFrame] = []
        try loop.run(loops: 1) { frame in frames.append(frame) }
        return frames
    }
}
