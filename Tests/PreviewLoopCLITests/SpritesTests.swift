import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// A WebVTT thumbnail track as a player reads it, parsed here independently of the writer.
struct ParsedVTT {
    struct Cue: Equatable {
        var start: Double
        var end: Double
        var sheet: String
        var rect: Rect
    }

    var cues: [Cue]

    /// Parses `WEBVTT`, a blank line, then cues of a `HH:MM:SS.mmm --> HH:MM:SS.mmm` line and a
    /// `URL#xywh=x,y,w,h` line, separated by blank lines; anything else fails.
    init(_ text: String) throws {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.first == "WEBVTT", lines.count > 1, lines[1].isEmpty else { throw OracleError(message: "no WEBVTT header") }
        func seconds(_ stamp: String) throws -> Double {
            let parts = stamp.split(separator: ":")
            guard parts.count == 3, parts[0].count >= 2, parts[1].count == 2, parts[2].count == 6,
                  let hours = Int(parts[0]), let minutes = Int(parts[1]), let rest = Double(parts[2]) else {
                throw OracleError(message: "bad timestamp '\(stamp)'")
            }
            return Double(hours * 3600 + minutes * 60) + rest
        }
        cues = []
        var index = 2
        while index < lines.count {
            if lines[index].isEmpty && index == lines.count - 1 { break }     // the file's final newline
            let times = lines[index].components(separatedBy: " --> ")
            guard times.count == 2, index + 1 < lines.count else { throw OracleError(message: "bad cue line '\(lines[index])'") }
            let url = lines[index + 1].components(separatedBy: "#xywh=")
            let numbers = url.count == 2 ? url[1].split(separator: ",").compactMap { Int($0) } : []
            guard numbers.count == 4 else { throw OracleError(message: "bad URL line '\(lines[index + 1])'") }
            cues.append(Cue(start: try seconds(times[0]), end: try seconds(times[1]), sheet: url[0],
                            rect: Rect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])))
            index += 2
            if index < lines.count {
                guard lines[index].isEmpty else { throw OracleError(message: "no blank line after a cue") }
                index += 1
            }
        }
    }
}

@Suite("sprites: sheets and a WebVTT track that tile the clip")
struct SpritesTests {
    static let tile = Size(width: 160, height: 90)

    func cli(_ arguments: [String]) throws -> ChildResult {
        try Child.run(TestPaths.cliBinary, arguments)
    }

    @Test("The track parses, tiles the clip without gaps, and each tile shows a frame from its own cue",
          arguments: ["auto", "exact"])
    func trackMatchesFrames(accuracy: String) throws {
        let directory = TestPaths.temporaryDirectory() + "/thumbs"
        let result = try cli(["sprites", TestPaths.fixture("landscape.mp4"), "-o", directory, "--every", "0.5",
                              "--grid", "3x2", "--accuracy", accuracy])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "no progress when standard error is not a terminal")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["sprites-1.jpg", "sprites-2.jpg", "thumbnails.vtt"])
        let vtt = try ParsedVTT(String(contentsOfFile: directory + "/thumbnails.vtt", encoding: .utf8))
        #expect(vtt.cues.count == 8)
        #expect(vtt.cues.first?.start == 0)
        #expect(abs((vtt.cues.last?.end ?? 0) - 4.0) < 0.0005, "the last cue ends at the duration")
        for (cue, next) in zip(vtt.cues, vtt.cues.dropFirst()) { #expect(cue.end == next.start && cue.start < cue.end) }

        let reference = try Oracle.reference("landscape.mp4", upright: Size(width: 400, height: 300), size: Self.tile)
        var sheets: [String: RGBImage] = [:]
        for (index, cue) in vtt.cues.enumerated() {
            #expect(cue.sheet == (index < 6 ? "sprites-1.jpg" : "sprites-2.jpg"))
            if sheets[cue.sheet] == nil {
                let report = try WebOracle.probe(directory + "/" + cue.sheet)
                sheets[cue.sheet] = try WebOracle.firstFrame(of: directory + "/" + cue.sheet,
                                                            size: Size(width: report.width, height: report.height))
            }
            let sheet = try #require(sheets[cue.sheet])
            #expect(cue.rect.size == Self.tile)
            #expect(cue.rect.x >= 0 && cue.rect.y >= 0 && cue.rect.x + cue.rect.width <= sheet.width
                    && cue.rect.y + cue.rect.height <= sheet.height, "\(cue.rect) outside \(sheet.size)")
            var tile = try RGBImage(width: Self.tile.width, height: Self.tile.height)
            tile.draw(sheet, atX: -cue.rect.x, y: -cue.rect.y)
            let best = Compare.best(tile, among: reference.images)
            let time = reference.times[best.index]
            #expect(best.psnr > 30, "cue \(index): tile matches no frame well (\(best.psnr) dB)")
            #expect(time >= cue.start - 1e-6 && time < cue.end, "cue \(index) [\(cue.start), \(cue.end)) shows the frame at \(time) s")
        }
        #expect(sheets["sprites-1.jpg"]?.size == Size(width: 480, height: 180))
        #expect(sheets["sprites-2.jpg"]?.size == Size(width: 320, height: 90), "the last sheet holds only what it needs")
    }

    @Test("The library's cues give each tile's frame time inside its cue, for every accuracy but keyframe")
    func libraryFrameTimes() throws {
        for accuracy in [SeekAccuracy.auto, .exact] {
            let sampler = try FrameSampler(source: .file(TestPaths.fixture("landscape.mp4")))
            var sheets: [Int] = []
            let track = try sampler.thumbnailTrack(every: 0.7, layout: .init(tileSize: Self.tile, columns: 4, rows: 1),
                                                   accuracy: accuracy) { index, sheet in
                sheets.append(index)
                #expect(sheet.height == 90)
            }
            #expect(sheets == [0, 1])
            #expect(track.cues.count == 6 && track.sheetCount == 2)
            #expect(abs(track.cues.last!.end - 4) < 1e-9 && abs(track.cues.last!.start - 3.5) < 1e-9)
            for cue in track.cues { #expect(cue.frameTime >= cue.start - 1e-6 && cue.frameTime < cue.end, "\(accuracy) \(cue)") }
        }
    }

    @Test("WebP sheets; a failure leaves nothing")
    func webpAndFailures() throws {
        let directory = TestPaths.temporaryDirectory()
        let ok = try cli(["sprites", TestPaths.fixture("short.mp4"), "-o", directory + "/w", "--every", "0.1", "--format", "webp",
                          "-q", "60"])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(try WebOracle.probe(directory + "/w/sprites-1.webp").codec == "webp")
        #expect(try String(contentsOfFile: directory + "/w/thumbnails.vtt", encoding: .utf8).contains("sprites-1.webp#xywh=0,0,160,90"))
        _ = FileManager.default.createFile(atPath: directory + "/file", contents: Data())
        let blocked = try cli(["sprites", TestPaths.fixture("short.mp4"), "-o", directory + "/file"])
        #expect(blocked.status == 1 && blocked.stderr.hasPrefix("Error: "))
        let bad = try cli(["sprites", TestPaths.fixture("not-video.txt"), "-o", directory + "/never"])
        #expect(bad.status == 1)
        #expect(!FileManager.default.fileExists(atPath: directory + "/never"))
        let huge = try cli(["sprites", TestPaths.fixture("short.mp4"), "-o", directory + "/x", "--grid", "100x1", "-s", "170x90"])
        #expect(huge.status == 64, "a 17000-pixel-wide sheet is refused before any work")
    }

    @Test("Intervals and WebVTT timestamps")
    func pureParts() {
        let intervals = ThumbnailTrack.intervals(duration: 25, every: 10)
        #expect(intervals.map(\.start) == [0, 10, 20] && intervals.map(\.end) == [10, 20, 25])
        #expect(ThumbnailTrack.intervals(duration: 60.0000001, every: 10).count == 6)
        // A trailing sliver under half an interval joins the last cue; half or more is a cue of its own.
        let long = ThumbnailTrack.intervals(duration: 1800.012, every: 10)
        #expect(long.count == 180 && long.last?.start == 1790 && long.last?.end == 1800.012)
        #expect(ThumbnailTrack.intervals(duration: 24.9, every: 10).map(\.end) == [10, 24.9])
        #expect(ThumbnailTrack.intervals(duration: 4, every: 10).map(\.end) == [4])
        #expect(ThumbnailTrack.thumbnailCount(duration: 1800.012, every: 10) == 180)
        #expect(ThumbnailTrack.timestamp(0) == "00:00:00.000")
        #expect(ThumbnailTrack.timestamp(3723.4567) == "01:02:03.457")
        #expect(ThumbnailTrack.timestamp(59.9996) == "00:01:00.000")
        #expect(ThumbnailTrack.timestamp(360_000) == "100:00:00.000")
        let layout = ThumbnailTrack.Layout(tileSize: Size(width: 10, height: 5), columns: 2, rows: 2)
        #expect(layout.place(5).sheet == 1 && layout.place(5).rect == Rect(x: 10, y: 0, width: 10, height: 5))
        let track = ThumbnailTrack(layout: layout, cues: [
            .init(start: 0, end: 10, sheet: 0, rect: Rect(x: 0, y: 0, width: 10, height: 5), frameTime: 5),
            .init(start: 10, end: 12.5, sheet: 0, rect: Rect(x: 10, y: 0, width: 10, height: 5), frameTime: 11),
        ])
        #expect(track.webVTT { "s\($0 + 1).jpg" } == """
            WEBVTT

            00:00:00.000 --> 00:00:10.000
            s1.jpg#xywh=0,0,10,5

            00:00:10.000 --> 00:00:12.500
            s1.jpg#xywh=10,0,10,5

            """)
    }

    @Test("A sheet too wide names the grid as sent, or says it is the default, and the limit")
    func sheetTooWide() throws {
        let output = TestPaths.temporaryDirectory() + "/sprites"
        defer { try? FileManager.default.removeItem(atPath: (output as NSString).deletingLastPathComponent) }
        let defaulted = try Child.cli(["sprites", TestPaths.fixture("landscape.mp4"), "--count", "1", "--size", "2000x2000", "-o", output])
        #expect(defaulted.status == 64, "\(defaulted.stderr)")
        #expect(defaulted.stderr.hasPrefix("Error: A sheet of 10x10 (the default --grid) tiles of 2000x2000") && defaulted.stderr.contains("16383"),
                "\(defaulted.stderr)")
        let given = try Child.cli(["sprites", TestPaths.fixture("landscape.mp4"), "--grid", "9x1", "--size", "2000x", "-o", output])
        #expect(given.status == 64 && given.stderr.contains("A sheet of 9x1 tiles of 2000x") && !given.stderr.contains("default"),
                "\(given.stderr)")
    }

    @Test("Invalid thumbnail arguments throw invalidArgument or give nothing: never a trap")
    func invalidArgumentsDoNotTrap() throws {
        #expect(ThumbnailTrack.intervals(duration: 0, every: 10).isEmpty)
        #expect(ThumbnailTrack.intervals(duration: 10, every: -1).isEmpty)
        #expect(ThumbnailTrack.intervals(duration: .infinity, every: 1).isEmpty)
        let empty = ThumbnailTrack.Layout(columns: 0, rows: 3)
        #expect(empty.place(4).sheet == 4)
        let sampler = try FrameSampler(source: .file(TestPaths.fixture("short.mp4")))
        for layout in [empty, ThumbnailTrack.Layout(tileSize: Size(width: 0, height: 90))] {
            do {
                _ = try sampler.thumbnailTrack(every: 1, layout: layout) { _, _ in }
                Issue.record("\(layout) was accepted")
            } catch {
                #expect(error.code == .invalidArgument)
            }
        }
    }
}
