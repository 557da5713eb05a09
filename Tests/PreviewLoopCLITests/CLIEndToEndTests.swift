import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// Runs the built `preview-loop` binary.
private func cli(_ arguments: [String]) throws -> ChildResult {
    try Child.run(TestPaths.cliBinary, arguments)
}

/// Reads a PPM the CLI wrote, checking the exact `P6` header and length on the way.
private func readPPM(_ path: String, size: Size) throws -> RGBImage {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let header = Array("P6\n\(size.width) \(size.height)\n255\n".utf8)
    #expect(Array(bytes.prefix(header.count)) == header, "header of \(path)")
    #expect(bytes.count == header.count + size.area * 3, "length of \(path)")
    return try PPM.decode(bytes)
}

/// Tile `index` of a sheet tiled row by row, `columns` per row.
private func tile(_ sheet: RGBImage, _ index: Int, columns: Int, size: Size) -> RGBImage {
    var pixels: [UInt8] = []
    let x = (index % columns) * size.width, y = (index / columns) * size.height
    for row in y..<(y + size.height) {
        let start = (row * sheet.width + x) * 3
        pixels += sheet.pixels[start..<(start + size.width * 3)]
    }
    return try! RGBImage(width: size.width, height: size.height, pixels: pixels)
}

/// The sorted names in a directory (empty when it does not exist).
private func contents(_ directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
}

/// The `preview-loop` binary end to end: `probe` against ffprobe's JSON, `thumb` and `strip` images
/// against ffmpeg's frames (frame choice by best match, geometry and colour by PSNR ≥ 35 dB), `loop`'s
/// frame files and CSV log, failures (exit 1, one `Error:` line naming the input, nothing written),
/// usage errors (exit 64), interruption and help.
@Suite("CLI end to end", .timeLimit(.minutes(10)))
struct CLIEndToEndTests {
    struct ProbeCase: CustomTestStringConvertible, Sendable {
        var fixture: String, displayWidth: Int, displayHeight: Int, rotation: Int
        var testDescription: String { fixture }
    }

    @Test("probe --json agrees with ffprobe; plain probe prints the same numbers, aligned", arguments: [
        ProbeCase(fixture: "landscape.mp4", displayWidth: 400, displayHeight: 300, rotation: 0),
        ProbeCase(fixture: "rotated90.mp4", displayWidth: 240, displayHeight: 320, rotation: 90),
        ProbeCase(fixture: "anamorphic.mp4", displayWidth: 540, displayHeight: 240, rotation: 0),
        ProbeCase(fixture: "offset.ts", displayWidth: 320, displayHeight: 240, rotation: 0),
    ])
    func probe(_ item: ProbeCase) throws {
        let path = TestPaths.fixture(item.fixture)
        let result = try cli(["probe", path, "--json"])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        let oracle = try Child.tool("ffprobe", ["-v", "error", "-show_streams", "-show_format", "-of", "json", path])
        let probe = try #require(try JSONSerialization.jsonObject(with: oracle.stdout) as? [String: Any])
        let streams = try #require(probe["streams"] as? [[String: Any]])
        let format = try #require(probe["format"] as? [String: Any])
        let video = try #require(streams.first { $0["codec_type"] as? String == "video" })
        func number(_ object: [String: Any], _ key: String) -> Double { Double(object[key] as? String ?? "") ?? .nan }

        #expect(json["codec"] as? String == video["codec_name"] as? String)
        #expect(json["width"] as? Int == video["width"] as? Int)
        #expect(json["height"] as? Int == video["height"] as? Int)
        #expect(json["frame_rate"] as? String == video["avg_frame_rate"] as? String)
        #expect(json["sample_aspect_ratio"] as? String == video["sample_aspect_ratio"] as? String)
        #expect(json["audio_streams"] as? Int == streams.filter { $0["codec_type"] as? String == "audio" }.count)
        #expect(json["video_streams"] as? Int == streams.filter { $0["codec_type"] as? String == "video" }.count)
        // start_time is the video stream's; duration the container's, measured from that start.
        let start = number(video, "start_time")
        let duration = number(format, "duration") - (start - number(format, "start_time"))
        #expect(abs((json["start_time"] as? Double ?? .nan) - start) < 1e-5, "start_time \(json["start_time"] ?? "nil") vs \(start)")
        #expect(abs((json["duration"] as? Double ?? .nan) - duration) < 1e-5, "duration \(json["duration"] ?? "nil") vs \(duration)")
        // ffprobe's display-matrix rotation is counter-clockwise (-90 = a quarter turn clockwise).
        let matrixRotation = (video["side_data_list"] as? [[String: Any]])?.compactMap { $0["rotation"] as? Int }.first ?? 0
        #expect(json["rotation"] as? Int == ((-matrixRotation) % 360 + 360) % 360)
        #expect(json["rotation"] as? Int == item.rotation)
        #expect(json["display_width"] as? Int == item.displayWidth)
        #expect(json["display_height"] as? Int == item.displayHeight)

        let text = try cli(["probe", path])
        #expect(text.status == 0)
        let lines = text.stdoutText.split(separator: "\n").map(String.init)
        var fields: [String: String] = [:]
        var valueColumns = Set<Int>()
        for line in lines {
            let colon = try #require(line.firstIndex(of: ":"), "no label in '\(line)'")
            let value = line[line.index(after: colon)...]
            valueColumns.insert(line.distance(from: line.startIndex, to: colon) + 1 + value.prefix { $0 == " " }.count)
            fields[String(line[..<colon])] = value.trimmingCharacters(in: .whitespaces)
        }
        #expect(valueColumns.count == 1, "values are not aligned: \(lines)")
        #expect(fields["duration"] == String(format: "%.3f s", duration))
        #expect(fields["start time"] == String(format: "%.3f s", start))
        #expect(fields["codec"] == video["codec_name"] as? String)
        #expect(fields["coded size"] == "\(video["width"] as? Int ?? 0)x\(video["height"] as? Int ?? 0)")
        #expect(fields["display size"] == "\(item.displayWidth)x\(item.displayHeight)")
        #expect(fields["frame rate"]?.hasPrefix(video["avg_frame_rate"] as? String ?? "?") == true)
        #expect(fields["streams"]?.contains("\(json["audio_streams"] as? Int ?? -1) audio") == true)
    }

    @Test("thumb writes ffmpeg's frame displayed at --at, in every time spelling and accuracy")
    func thumb() throws {
        let path = TestPaths.fixture("landscape.mp4"), size = Size(width: 320, height: 180)
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let reference = try Oracle.reference("landscape.mp4", upright: Size(width: 400, height: 300), size: size)
        func thumb(_ name: String, _ options: [String]) throws -> (RGBImage, Data) {
            let output = directory + "/" + name
            let result = try cli(["thumb", path, "-o", output, "--size", "320x180"] + options)
            #expect(result.status == 0, "\(options): \(result.stderr)")
            return (try readPPM(output, size: size), try Data(contentsOf: URL(fileURLWithPath: output)))
        }
        func expectFrame(_ image: RGBImage, index: Int, _ label: String) {
            let best = Compare.bestMatch(image, among: reference.images)
            #expect(best.index == index, "\(label): closest ffmpeg frame \(best.index), wanted \(index)")
            #expect(best.psnr >= 35, "\(label): PSNR \(best.psnr) dB")
        }
        let (image, bytes) = try thumb("seconds.ppm", ["--at", "1.5"])
        expectFrame(image, index: Oracle.displayedIndex(at: 1.5, times: reference.times), "--at 1.5")
        // 37.5% of 4 s and 00:01.5 are the same instant; 50% is 2.0 s.
        #expect(try thumb("percent.ppm", ["--at", "37.5%"]).1 == bytes)
        #expect(try thumb("clock.ppm", ["--at", "00:01.5"]).1 == bytes)
        expectFrame(try thumb("half.ppm", ["--at", "50%"]).0, index: Oracle.displayedIndex(at: 2.0, times: reference.times), "--at 50%")
        let keyframe = reference.keyframes[...Oracle.displayedIndex(at: 1.9, times: reference.times)].lastIndex(of: true)!
        #expect(reference.times[keyframe] == 1.0)
        expectFrame(try thumb("key.ppm", ["--at", "1.9", "--accuracy", "keyframe"]).0, index: keyframe, "keyframe at 1.9")
        expectFrame(try thumb("end.ppm", ["--at", "100%"]).0, index: reference.images.count - 1, "--at 100%")
        #expect(contents(directory).allSatisfy { $0.hasSuffix(".ppm") }, "leftovers: \(contents(directory))")
    }

    @Test("thumb --fit fit pillarboxes a portrait picture on black; --fit stretch fills the frame with all of it")
    func thumbFitModes() throws {
        let path = TestPaths.fixture("rotated90.mp4"), size = Size(width: 320, height: 180)
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // --at 10% of 2 s = 0.2 s.
        let times = try Oracle.relativeFrameTimes(of: path)
        let wanted = Oracle.displayedIndex(at: 0.2, times: times)
        #expect(try cli(["thumb", path, "-o", directory + "/fit.ppm", "--fit", "fit", "--at", "10%", "--size", "320x180"]).status == 0)
        let fit = try readPPM(directory + "/fit.ppm", size: size)
        // 240x320 upright fitted into 320x180 is 135x180: bars of about 92 px on either side.
        func isBlack(_ x: Int, _ y: Int) -> Bool { let p = fit[x, y]; return max(p.red, p.green, p.blue) <= 4 }
        for y in 0..<180 {
            #expect((0..<90).allSatisfy { isBlack($0, y) } && (230..<320).allSatisfy { isBlack($0, y) }, "row \(y) has no bars")
        }
        #expect((95..<225).filter { !isBlack($0, 90) }.count > 100, "the picture is missing between the bars")
        let fitReference = try Oracle.frames(of: path, filter: "scale=135:180:flags=bicubic+full_chroma_int+accurate_rnd,"
                                                 + "pad=320:180:92:0:black,setsar=1", size: size)
        let fitBest = Compare.bestMatch(fit, among: fitReference)
        #expect(fitBest.index == wanted && fitBest.psnr >= 35, "fit: best \(fitBest)")

        #expect(try cli(["thumb", path, "-o", directory + "/stretch.ppm", "--fit", "stretch", "--at", "10%", "--size", "320x180"]).status == 0)
        let stretch = try readPPM(directory + "/stretch.ppm", size: size)
        let stretchReference = try Oracle.frames(of: path, filter: "scale=320:180:flags=bicubic+full_chroma_int+accurate_rnd,setsar=1",
                                                 size: size)
        let best = Compare.bestMatch(stretch, among: stretchReference)
        #expect(best.index == wanted && best.psnr >= 35, "stretch: best \(best)")
        let blackColumns = (0..<320).filter { x in (0..<180).allSatisfy { y in max(stretch[x, y].red, stretch[x, y].green, stretch[x, y].blue) <= 4 } }
        #expect(blackColumns.isEmpty, "stretch has black columns \(blackColumns.prefix(5))…")
    }

    struct StripCase: CustomTestStringConvertible, Sendable {
        var options: [String], count: Int, columns: Int, sheet: Size
        /// The times whose displayed frame (or keyframe at or before) each tile must be.
        var times: [Double]
        var keyframes = false
        var testDescription: String { options.joined(separator: " ") }
    }

    @Test("strip tiles ffmpeg's frames at the middles of equal slices of the span", arguments: [
        // Default window [0, min(15, 4)] → middles of four 1 s slices.
        StripCase(options: ["--count", "4", "--columns", "2", "--accuracy", "exact"], count: 4, columns: 2,
                  sheet: Size(width: 320, height: 180), times: [0.5, 1.5, 2.5, 3.5]),
        StripCase(options: ["--count", "3", "--span", "all", "--accuracy", "exact"], count: 3, columns: 3,
                  sheet: Size(width: 480, height: 90), times: [2.0 / 3, 2.0, 10.0 / 3]),
        StripCase(options: ["--count", "4", "--accuracy", "keyframe"], count: 4, columns: 4,
                  sheet: Size(width: 640, height: 90), times: [0.5, 1.5, 2.5, 3.5], keyframes: true),
        StripCase(options: ["--count", "2", "--start", "1", "--length", "2", "--accuracy", "exact"], count: 2, columns: 2,
                  sheet: Size(width: 320, height: 90), times: [1.5, 2.5]),
        // Default accuracy auto, one 2 s slice centred on 1.3 s: the keyframe at 1.0 s is within half a slice.
        StripCase(options: ["--count", "1", "--start", "0.3", "--length", "2"], count: 1, columns: 1,
                  sheet: Size(width: 160, height: 90), times: [1.0]),
    ])
    func strip(_ item: StripCase) throws {
        let size = Size(width: 160, height: 90)
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/strip.ppm"
        let result = try cli(["strip", TestPaths.fixture("landscape.mp4"), "-o", output, "--size", "160x90"] + item.options)
        #expect(result.status == 0, "\(result.stderr)")
        let sheet = try readPPM(output, size: item.sheet)
        let reference = try Oracle.reference("landscape.mp4", upright: Size(width: 400, height: 300), size: size)
        for (index, time) in item.times.enumerated() {
            var expected = Oracle.displayedIndex(at: time, times: reference.times)
            if item.keyframes { expected = reference.keyframes[...expected].lastIndex(of: true)! }
            let best = Compare.bestMatch(tile(sheet, index, columns: item.columns, size: size), among: reference.images)
            #expect(best.index == expected, "tile \(index) at \(time): closest ffmpeg frame \(best.index), wanted \(expected)")
            #expect(best.psnr >= 35, "tile \(index): PSNR \(best.psnr) dB")
        }
        #expect(contents(directory) == ["strip.ppm"])
    }

    @Test("loop writes numbered frame files and a CSV log; pass 2 repeats pass 1 byte for byte")
    func loopFramesAndLog() throws {
        let path = TestPaths.fixture("short.mp4")
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let frames = directory + "/frames", log = directory + "/log.csv"
        let result = try cli(["loop", path, "--loops", "2", "--frames", frames, "--log", log])
        #expect(result.status == 0, "\(result.stderr)")
        let names = (1...2).flatMap { pass in (1...10).map { String(format: "%03d-%05d.ppm", pass, $0) } }
        #expect(contents(frames) == names)
        let times = try Oracle.relativeFrameTimes(of: path)
        let reference = try Oracle.frames(of: path, filter: Oracle.aspectFillFilter(uprightWidth: 320, uprightHeight: 240, sampleAspect: 1,
                                                                                     output: Size(width: 320, height: 180)),
                                          size: Size(width: 320, height: 180))
        for index in 1...10 {
            let first = String(format: "%@/001-%05d.ppm", frames, index), second = String(format: "%@/002-%05d.ppm", frames, index)
            #expect(FileManager.default.contentsEqual(atPath: first, andPath: second), "pass 2 frame \(index) differs")
            let best = Compare.bestMatch(try readPPM(first, size: Size(width: 320, height: 180)), among: reference)
            #expect(best.index == index - 1 && best.psnr >= 35, "frame \(index): best \(best)")
        }
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "pass,index,presentation_time,wall_time,decode_ms,scale_ms,lateness_ms,dropped")
        #expect(lines.count == 22 && lines.last == "", "\(lines.count) lines")
        let rows = lines.dropFirst().filter { !$0.isEmpty }.map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.count == 20)
        var lastWall = 0.0
        #expect(rows.allSatisfy { $0.count == 8 }, "8 columns")
        for (position, row) in rows.enumerated() where row.count == 8 {
            let (pass, index) = (position / 10 + 1, position % 10 + 1)
            #expect(row[0] == "\(pass)" && row[1] == "\(index)", "row \(position): \(row)")
            #expect(row[2] == String(format: "%.6f", times[index - 1]), "row \(position) presentation_time \(row[2])")
            let wall = Double(row[3]) ?? -1
            #expect(wall >= lastWall, "wall_time goes backwards at row \(position)")
            lastWall = wall
            #expect(Double(row[4]) != nil && Double(row[5]) != nil, "row \(position): \(row)")
            #expect(row[6].isEmpty, "offline lateness must be empty: \(row)")
            #expect(row[7] == "0", "offline nothing is dropped: \(row)")
        }
        #expect(rows.allSatisfy { $0.count == 8 })
        // --log - streams the same CSV to standard output; the summary goes to standard error.
        let streamed = try cli(["loop", path, "--log", "-"])
        #expect(streamed.status == 0)
        let streamedLines = streamed.stdoutText.split(separator: "\n")
        #expect(streamedLines.first == lines.first && streamedLines.count == 11, "\(streamed.stdoutText)")
        #expect(streamedLines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false)[2] }
                == times.map { Substring(String(format: "%.6f", $0)) })
    }

    @Test("loop --realtime paces a 0.4 s clip at playback speed and logs lateness")
    func realtimeLoop() throws {
        let started = Date()
        let result = try cli(["loop", TestPaths.fixture("short.mp4"), "--realtime", "--loops", "1", "--log", "-"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 0, "\(result.stderr)")
        // The 10th frame is due 0.36 s after the first; the process also opens the file first.
        #expect(elapsed >= 0.36, "took \(elapsed) s")
        let rows = result.stdoutText.split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(rows.count == 10)
        for row in rows where row.count == 7 {
            let presentation = Double(row[2]) ?? .nan, wall = Double(row[3]) ?? .nan
            let lateness = Double(row[6])
            #expect(lateness != nil && lateness! >= 0 && lateness! < 250, "lateness '\(row[6])'")
            #expect(wall >= presentation - 0.001, "frame handed over early: wall \(wall) < due \(presentation)")
        }
    }
}

/// The binary's failure contract: a bad input exits 1 with exactly one `Error:` line on standard error
/// naming the input and leaves nothing behind; usage mistakes exit 64; an endless loop stops cleanly on
/// SIGINT or SIGTERM with a complete log; every subcommand has help.
@Suite("CLI end to end: failures, signals, help", .timeLimit(.minutes(10)))
struct CLIFailureTests {
    enum BadInput: String, CaseIterable, Sendable {
        case missing, empty, randomBytes, text, audioOnly, directory

        /// Creates the input inside `directory` (or names a fixture) and returns its path.
        func make(in directory: String) throws -> String {
            switch self {
            case .missing: return directory + "/missing.mp4"
            case .empty:
                _ = FileManager.default.createFile(atPath: directory + "/empty.mp4", contents: Data())
                return directory + "/empty.mp4"
            case .randomBytes:
                var generator = SystemRandomNumberGenerator()
                let bytes = (0..<4096).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
                _ = FileManager.default.createFile(atPath: directory + "/random.mp4", contents: Data(bytes))
                return directory + "/random.mp4"
            case .text: return TestPaths.fixture("not-video.txt")
            case .audioOnly: return TestPaths.fixture("audio-only.m4a")
            case .directory:
                try FileManager.default.createDirectory(atPath: directory + "/clip.mp4", withIntermediateDirectories: false)
                return directory + "/clip.mp4"
            }
        }
    }

    @Test("A bad input exits 1 with one Error: line naming it, and writes nothing",
          arguments: BadInput.allCases, ["probe", "thumb", "strip", "loop"])
    func badInput(_ input: BadInput, subcommand: String) throws {
        let inputs = TestPaths.temporaryDirectory(), outputs = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: inputs); try? FileManager.default.removeItem(atPath: outputs) }
        let path = try input.make(in: inputs)
        let options: [String] = switch subcommand {
        case "thumb", "strip": ["-o", outputs + "/out.ppm"]
        case "loop": ["--log", outputs + "/log.csv", "--frames", outputs + "/frames"]
        default: []
        }
        let result = try cli([subcommand, path] + options)
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines.last == "", "want exactly one line: \(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: ") && result.stderr.contains(path), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "stdout: \(result.stdoutText)")
        #expect(contents(outputs).isEmpty, "left behind: \(contents(outputs))")
    }

    @Test("Writing into a missing directory exits 1 and creates nothing",
          arguments: [["thumb", "-o", "OUT/x.ppm"], ["strip", "-o", "OUT/x.ppm"], ["loop", "--log", "OUT/x.csv"]])
    func missingOutputDirectory(_ template: [String]) throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = [template[0], TestPaths.fixture("short.mp4")]
            + template.dropFirst().map { $0.replacingOccurrences(of: "OUT", with: directory + "/missing") }
        let result = try cli(arguments)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("Error: ") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains(directory + "/missing") || result.stderr.contains("missing/x."), "\(result.stderr)")
        #expect(contents(directory).isEmpty, "left behind: \(contents(directory))")
    }

    @Test("Usage mistakes exit 64 with an Error: first line and write nothing", arguments: [
        ["thumb", "IN", "-o", "OUT/x.ppm", "--bogus"],
        ["thumb", "IN", "-o", "OUT/x.ppm", "--size", "0x0"],
        ["thumb", "IN", "-o", "OUT/x.gif"],
        ["thumb", "IN"],
        ["strip", "IN", "-o", "OUT/x.ppm", "--count", "0"],
        ["loop", "IN", "--loops", "-1"],
        ["probe"],
        ["frobnicate", "IN"],
    ])
    func usageErrors(_ template: [String]) throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = template.map {
            $0.replacingOccurrences(of: "IN", with: TestPaths.fixture("landscape.mp4")).replacingOccurrences(of: "OUT", with: directory)
        }
        let result = try cli(arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: "), "\(result.stderr)")
        #expect(contents(directory).isEmpty)
    }

    @Test("An endless loop stops on SIGINT or SIGTERM with exit 0 and a complete log", arguments: [SIGINT, SIGTERM])
    func interrupted(signal: Int32) throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = directory + "/log.csv"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPaths.cliBinary)
        process.arguments = ["loop", TestPaths.fixture("landscape.mp4"), "--loops", "0", "--log", log]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: 0.5)
        #expect(process.isRunning, "an endless loop ended by itself")
        if signal == SIGINT { process.interrupt() } else { process.terminate() }
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0,
                "\(process.terminationReason == .exit ? "exit" : "signal") \(process.terminationStatus)")
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.hasSuffix("\n"), "the last line is cut off")
        let lines = text.split(separator: "\n")
        #expect(lines.first == "pass,index,presentation_time,wall_time,decode_ms,scale_ms,lateness_ms,dropped")
        #expect(lines.count > 2, "\(lines.count) lines")
        #expect(lines.dropFirst().allSatisfy { $0.split(separator: ",", omittingEmptySubsequences: false).count == 8 })
        #expect(contents(directory) == ["log.csv"], "\(contents(directory))")
    }

    /// The signal mask is inherited across exec, and this test process's threads may block signals its
    /// children then inherit: perl sets the mask explicitly, then execs the CLI. Unblocked is what a
    /// shell gives (the signal's default action could end the process before the stop handling is in
    /// place); blocked is what some supervisors give (the handling must not depend on delivery to a
    /// thread: libdispatch reads the signals it watches from a signalfd).
    @Test("SIGTERM and SIGINT stop an endless loop whether the parent left them blocked or not",
          arguments: [(SIGINT, false), (SIGTERM, false), (SIGINT, true), (SIGTERM, true)])
    func interruptedWithEitherMask(signal: Int32, blocked: Bool) throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = directory + "/log.csv"
        let script = "use POSIX; sigprocmask(\(blocked ? "SIG_BLOCK" : "SIG_UNBLOCK"), POSIX::SigSet->new(SIGINT, SIGTERM)) "
            + "or die \"sigprocmask\"; exec @ARGV or die \"exec\""
        let result = try Child.run("/usr/bin/perl", ["-e", script, TestPaths.cliBinary, "loop", TestPaths.fixture("landscape.mp4"),
                                                     "--loops", "0", "--log", log],
                                   signal: ChildSignal(signal, .after(1.0)), killAfter: 20)
        #expect(!result.wasKilled, "still running 19 s after the signal: it was never seen")
        #expect(result.signal == nil && result.status == 0,
                "status \(result.status), signal \(result.signal ?? 0): \(result.stderr.prefix(300))")
        #expect(result.signalSentAt != nil)
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(text.hasSuffix("\n") && text.split(separator: "\n").count > 2, "log: \(text.prefix(200))")
    }

    /// A shell pipeline that closes early (`| head`) sends SIGPIPE on the next write. perl restores
    /// SIGPIPE's default action (a parent may leave it ignored, and children inherit that) and execs the CLI.
    @Test("A progress pipe closed midway (`2>&1 | head -c 1`) does not end a render: the file is whole, no temporary left")
    func closedPipeMidRender() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = directory + "/ten.mp4"
        let made = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=10",
                                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", clip])
        #expect(made.status == 0, "\(made.stderr)")
        let output = directory + "/out.mp4"
        // Progress lines come every 0.5 s; head leaves after the first byte, so later ones meet a closed pipe.
        let pipeline = "perl -e '$SIG{PIPE} = q(DEFAULT); exec @ARGV or die' \"$0\" render \"$1\" -o \"$2\" --length 10 "
            + "--fps 25 --size 640x360 --progress 2>&1 | head -c 1 >/dev/null; exit ${PIPESTATUS[0]}"
        let result = try Child.run("/bin/bash", ["-c", pipeline, TestPaths.cliBinary, clip, output], killAfter: 120)
        // Not ended by SIGPIPE (141); 1 when the closing "wrote" line could not be written.
        #expect(result.status == 0 || result.status == 1, "status \(result.status)")
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
        #expect(left == ["out.mp4", "ten.mp4"], "\(left)")
        let frames = try Child.tool("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames",
                                                "-of", "csv=p=0", output])
        #expect(frames.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "250", "\(frames.stdoutText) \(frames.stderr)")
    }

    @Test("Each subcommand's --help exits 0 with USAGE and OPTIONS", arguments: ["probe", "thumb", "strip", "loop"])
    func help(subcommand: String) throws {
        for arguments in [[subcommand, "--help"], ["help", subcommand]] {
            let result = try cli(arguments)
            #expect(result.status == 0 && result.stderr.isEmpty, "\(arguments): \(result.stderr)")
            #expect(result.stdoutText.contains("USAGE: preview-loop \(subcommand)"), "\(arguments)")
            #expect(result.stdoutText.contains("OPTIONS:"), "\(arguments)")
        }
    }

    @Test("--version exits 0 and prints a version")
    func version() throws {
        let result = try cli(["--version"])
        #expect(result.status == 0)
        #expect(result.stdoutText.range(of: #"^preview-loop [0-9]+\.[0-9]+\.[0-9]+\n$"#, options: .regularExpression) != nil,
                "\(result.stdoutText)")
    }

    @Test("The binary links FoundationEssentials only, not full Foundation and its ICU (about 6 MB of peak memory)")
    func noFullFoundation() throws {
        let result = try Child.tool("ldd", [TestPaths.cliBinary])
        #expect(result.status == 0)
        for library in ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so"] {
            #expect(!result.stdoutText.contains(library), "\(library) is linked")
        }
    }
}
