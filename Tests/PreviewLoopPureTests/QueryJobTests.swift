import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs
import Testing

/// A query sets a job's options through their declarations, never through a command line: the job a
/// request makes is the very value the command line with the matching options parses to.
@Suite("serve: a query sets the job's options as the command line does")
struct QueryJobTests {
    /// The job a request makes, and the command the same options parse to on the command line, with
    /// what the server sets on every job of the kind (`quiet`) set on both.
    private func pair(_ route: String, _ query: [(String, String)], _ arguments: [String]) throws -> (any ParsableCommand, any ParsableCommand) {
        let job = try PreviewRequests.job(route: route, query: query.map { (name: $0.0, value: $0.1) }, source: "/videos/a clip.mp4")
        guard case .command(let parsed) = try CommandLineParser.parse(arguments + ["--", "/videos/a clip.mp4"]) else {
            Issue.record("\(arguments) did not parse to a command")
            return (job.command, job.command)
        }
        return (job.command, parsed)
    }

    @Test("thumbnail.jpg with time, width, quality and accuracy is thumb --at --size --quality --accuracy")
    func thumbnail() throws {
        let (job, parsed) = try pair("thumbnail.jpg", [("time", "5"), ("width", "320"), ("quality", "70"), ("accuracy", "keyframe")],
                                     ["thumb", "--output=thumbnail.jpg", "--at", "5", "--size", "320x-1", "--quality", "70", "--accuracy", "keyframe"])
        #expect(job.isEqual(to: parsed))
        let (other, _) = try pair("thumbnail.jpg", [("time", "6"), ("width", "320"), ("quality", "70"), ("accuracy", "keyframe")],
                                  ["thumb", "--output=thumbnail.jpg"])
        #expect(!other.isEqual(to: parsed), "a different time makes a different job")
    }

    @Test("rotate, flip_h and flip_v are every picture route's, as --rotate, --flip-h and --flip-v")
    func transforms() throws {
        let (job, parsed) = try pair("thumbnail.webp", [("rotate", "90"), ("flip_h", "true"), ("flip_v", "false")],
                                     ["thumb", "--output=thumbnail.webp", "--rotate", "90", "--flip-h"])
        #expect(job.isEqual(to: parsed))
        let storyboard = try PreviewRequests.job(route: "storyboard.jpg", query: [(name: "rotate", value: "270"), (name: "flip_v", value: "true")],
                                                 source: "/v/a.mp4")
        #expect(storyboard.command.source.sourceOptions.transform == PictureTransform(rotation: .counterClockwise, flipsVertically: true))
        #expect(throws: PreviewRequestError(status: 400, parameter: "rotate", detail: "Expected 0, 90, 180 or 270.")) {
            _ = try PreviewRequests.job(route: "animated.mp4", query: [(name: "rotate", value: "45")], source: "/v/a.mp4")
        }
        #expect(throws: PreviewRequestError.self) {
            _ = try PreviewRequests.job(route: "probe.json", query: [(name: "rotate", value: "90")], source: "/v/a.mp4")
        }
    }

    @Test("dpr multiplies width and height, or the default size, and stays within the limits")
    func devicePixelRatio() throws {
        let (job, parsed) = try pair("thumbnail.jpg", [("width", "160"), ("dpr", "2")], ["thumb", "--output=thumbnail.jpg", "--size", "320x-1"])
        #expect(job.isEqual(to: parsed))
        let (odd, oddParsed) = try pair("strip.png", [("width", "101"), ("height", "57"), ("dpr", "1.5")],
                                        ["strip", "--output=strip.png", "--size", "152x86", "--quiet"])
        #expect(odd.isEqual(to: oddParsed))
        let plain = try PreviewRequests.job(route: "thumbnail.jpg", query: [(name: "dpr", value: "2")], source: "/v/a.mp4")
        #expect((plain.command as? ThumbCommand)?.size == .orientedBox(Size(width: 640, height: 360)))
        #expect(throws: PreviewRequestError(status: 400, parameter: "dpr", detail: "Expected a number from 1 to 4 (2, 1.5).")) {
            _ = try PreviewRequests.job(route: "thumbnail.jpg", query: [(name: "dpr", value: "5")], source: "/v/a.mp4")
        }
        #expect(throws: PreviewRequestError(status: 413, parameter: "dpr",
                                            detail: "At most 640 pixels a side for an animation on this server.")) {
            _ = try PreviewRequests.job(route: "animated.webp", query: [(name: "width", value: "400"), (name: "dpr", value: "2")],
                                        source: "/v/a.mp4")
        }
        #expect(throws: PreviewRequestError.self) {
            _ = try PreviewRequests.job(route: "sheet.jpg", query: [(name: "dpr", value: "2")], source: "/v/a.mp4")
        }
    }

    @Test("strip.png with count, columns, gap, timestamps and fit_mode is strip's options")
    func strip() throws {
        let (job, parsed) = try pair("strip.png", [("count", "6"), ("columns", "3"), ("gap", "4"), ("timestamps", "true"), ("fit_mode", "pad")],
                                     ["strip", "--output=strip.png", "--count=6", "--columns=3", "--gap=4", "--timestamps", "--fit=fit", "--quiet"])
        #expect(job.isEqual(to: parsed))
    }

    @Test("fit_mode=smartcrop is --fit smartcrop on every route with fit_mode; an unknown fit names the five")
    func smartCrop() throws {
        let (job, parsed) = try pair("thumbnail.png", [("fit_mode", "smartcrop")], ["thumb", "--output=thumbnail.png", "--fit", "smartcrop"])
        #expect(job.isEqual(to: parsed))
        let (strip, stripParsed) = try pair("strip.jpg", [("fit_mode", "smartcrop")], ["strip", "--output=strip.jpg", "--fit=smartcrop", "--quiet"])
        #expect(strip.isEqual(to: stripParsed))
        let query = [(name: "fit_mode", value: "smartcrop")]
        #expect((try PreviewRequests.job(route: "animated.webp", query: query, source: "/v/a.mp4").command as? RenderCommand)?.contentMode == .smartCrop)
        #expect((try PreviewRequests.job(route: "storyboard.jpg", query: query, source: "/v/a.mp4").command as? SpritesCommand)?.contentMode == .smartCrop)
        #expect(throws: PreviewRequestError(status: 400, parameter: "fit_mode", detail: "Expected crop, smartcrop, preserve, pad or stretch.")) {
            _ = try PreviewRequests.job(route: "thumbnail.jpg", query: [(name: "fit_mode", value: "smart")], source: "/v/a.mp4")
        }
    }

    @Test("sheet.webp with grid, header=false and background is sheet --grid --no-header --background")
    func sheet() throws {
        let (job, parsed) = try pair("sheet.webp", [("grid", "3x2"), ("header", "false"), ("background", "#102030")],
                                     ["sheet", "--output=sheet.webp", "--grid=3x2", "--no-header", "--background=#102030", "--quiet"])
        #expect(job.isEqual(to: parsed))
    }

    @Test("A value the option's declaration refuses is a 400 naming the parameter, as the command line names the option")
    func refusal() throws {
        #expect(throws: PreviewRequestError(status: 400, parameter: "count", detail: "Expected \(integerExpectation(ValueRanges.stripCount)).")) {
            try PreviewRequests.job(route: "strip.jpg", query: [(name: "count", value: "0")], source: "/videos/a.mp4")
        }
        #expect(UsageError(checking: ["strip", "--count=0", "-o", "s.jpg", "a.mp4"])?.kind == .invalidValue(option: "count", value: "0"))
    }
}
