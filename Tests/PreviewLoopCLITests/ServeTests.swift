import Foundation
import Glibc
import Testing
import PreviewLoopCLI
import PreviewLoopJobs
import Synchronization
@testable import PreviewLoopServer
import PreviewLoopRemote
import PreviewLoopTestSupport

/// `serve` and the embeddable ``PreviewServer`` on real fixtures, over real HTTP (curl as the client):
/// a served thumbnail is the bytes `preview-loop thumb` writes, a swapped path is never read, signed URLs,
/// CORS and hostile clients are handled, and the render queue admits, coalesces, refuses and times out as
/// documented. Byte ranges, validators, problems and metrics run in-process: ServeInProcessTests.
@Suite("serve: the image API", .serialized, .timeLimit(.minutes(10)))
struct ServeTests {
    /// A response as curl saw it.
    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// GETs (or `method`s) `url` with curl; the header names are lowercased.
    static func fetch(_ url: String, method: String = "GET", headers: [String] = []) throws -> Reply {
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var arguments = ["-s", "--globoff", "--path-as-is", "-o", folder + "/body", "-D", folder + "/headers",
                         "-w", "%{http_code} %{size_download}", "--max-time", "60"]
        arguments += method == "HEAD" ? ["-I"] : ["-X", method]
        for header in headers { arguments += ["-H", header] }
        arguments.append(url)
        let result = try Child.tool("curl", arguments, killAfter: 90)
        let written = result.stdoutText.split(separator: " ")
        let status = written.first.flatMap { Int($0) } ?? 0
        var fields: [String: String] = [:]
        let lines = (try? String(contentsOfFile: folder + "/headers", encoding: .utf8)) ?? ""
        for line in lines.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        // With -I curl writes the headers where the body would go: a HEAD's body is what it downloaded.
        let downloaded = written.last.flatMap { Int($0) } ?? 0
        let body = method == "HEAD" ? Data(count: downloaded) : (try? Data(contentsOf: URL(fileURLWithPath: folder + "/body"))) ?? Data()
        return Reply(status: status, headers: fields, body: body)
    }

    /// Starts the built binary's `serve` on a free port with `arguments` (and `--listen 127.0.0.1:0
    /// --json`); the process and its start-up line's JSON object.
    static func launchServe(_ arguments: [String], environment: [String: String]? = nil,
                            standardError: Any = FileHandle.nullDevice) throws -> (Process, [String: Any]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPaths.cliBinary)
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--json"] + arguments
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = standardError
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        return (process, (try? JSONSerialization.jsonObject(with: line) as? [String: Any]) ?? [:])
    }

    /// Writes 20 s of 720p H.264 (2 s GOPs) to `path`: a 10-second animation of it takes seconds.
    static func makeLongClip(_ path: String) throws {
        let made = try Child.tool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-t", "20",
                                             "-c:v", "libx264", "-preset", "ultrafast", "-g", "60", path],
                                  killAfter: 120)
        try #require(made.status == 0, "\(made.stderr)")
    }

    /// A root holding two fixtures, a text file, a link out of the root and a subfolder.
    static func makeRoot() throws -> String {
        let root = TestPaths.temporaryDirectory()
        let manager = FileManager.default
        try manager.createDirectory(atPath: root + "/sub dir", withIntermediateDirectories: true)
        try manager.copyItem(atPath: TestPaths.fixture("landscape.mp4"), toPath: root + "/landscape.mp4")
        try manager.copyItem(atPath: TestPaths.fixture("landscape.mp4"), toPath: root + "/sub dir/clip é.mp4")
        try Data("not a video\n".utf8).write(to: URL(fileURLWithPath: root + "/notes.mp4"))
        try manager.createSymbolicLink(atPath: root + "/outside.mp4", withDestinationPath: "/etc/passwd")
        try manager.createSymbolicLink(atPath: root + "/inside.mp4", withDestinationPath: root + "/landscape.mp4")
        return root
    }

    static func withServer<T>(_ configure: (inout ServeCommand) -> Void = { _ in },
                              _ body: (String, String) throws -> T) throws -> T {
        let root = try makeRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var options = ServeCommand(root: root)
        options.workers = 2
        configure(&options)
        let server = try PreviewServer(options: options, accessLog: nil)
        defer { server.stop(grace: 5) }
        return try body("http://127.0.0.1:\(server.port)", root)
    }

    @Test("A served thumbnail is byte for byte what `thumb` writes, for each format and fit")
    func servedBytesAreThumbBytes() throws {
        try Self.withServer { base, root in
            let cases: [(query: String, route: String, thumb: [String])] = [
                ("width=320&height=180&time=1", "thumbnail.jpg", ["--size", "320x180", "--at", "1"]),
                ("", "thumbnail.webp", []),
                ("width=200&time=50%25&accuracy=keyframe", "thumbnail.png", ["--size", "200x-1", "--at", "50%", "--accuracy", "keyframe"]),
                ("height=90&fit_mode=pad&quality=60&time=2", "thumbnail.jpg", ["--size", "x90", "--fit", "fit", "--quality", "60", "--at", "2"]),
                ("width=90&height=90&fit_mode=smartcrop&time=2", "thumbnail.png", ["--size", "90x90", "--fit", "smartcrop", "--at", "2"]),
                ("width=160&quality=40&time=1", "thumbnail.avif", ["--size", "160x-1", "--quality", "40", "--at", "1"]),
            ]
            for item in cases {
                let reply = try Self.fetch("\(base)/landscape.mp4/\(item.route)?\(item.query)")
                #expect(reply.status == 200, "\(item.route)?\(item.query): \(reply.text)")
                let output = TestPaths.temporaryDirectory() + "/\(item.route)"
                defer { try? FileManager.default.removeItem(atPath: (output as NSString).deletingLastPathComponent) }
                let thumb = try Child.cli(["thumb", root + "/landscape.mp4", "-o", output] + item.thumb)
                #expect(thumb.status == 0, "\(thumb.stderr)")
                let written = try Data(contentsOf: URL(fileURLWithPath: output))
                #expect(reply.body == written, "\(item.route)?\(item.query): \(reply.body.count) bytes served, \(written.count) written")
                #expect(reply.headers["content-length"] == String(written.count))
            }
            let types = ["thumbnail.jpg": "image/jpeg", "thumbnail.png": "image/png", "thumbnail.webp": "image/webp",
                         "thumbnail.avif": "image/avif"]
            for (route, type) in types {
                #expect(try Self.fetch("\(base)/landscape.mp4/\(route)?width=64").headers["content-type"] == type)
            }
            // fit_mode=preserve fits inside the box: the 4:3 clip into 200x200 keeps its shape, 200 wide.
            let preserved = try Self.fetch("\(base)/landscape.mp4/thumbnail.png?width=200&height=200&fit_mode=preserve")
            #expect(preserved.status == 200)
            #expect(Self.pngSize(preserved.body) == [200, 150])
            // A path with an escaped space and a UTF-8 name, in a subfolder.
            #expect(try Self.fetch("\(base)/sub%20dir/clip%20%C3%A9.mp4/thumbnail.jpg?width=64").status == 200)
            let probe = try Self.fetch("\(base)/landscape.mp4/probe.json")
            #expect(probe.status == 200 && probe.headers["content-type"] == "application/json")
            #expect(probe.text.contains("\"codec\": \"h264\""))
        }
    }

    @Test("animated.*, strip.*, sheet.* and card.* are byte for byte what render, strip, sheet and card write; caps are 413")
    func servedAnimationsStripsAndSheets() throws {
        try Self.withServer { base, root in
            let cases: [(route: String, query: String, command: [String])] = [
                ("animated.webp", "length=1&width=160", ["render", "--length", "1", "--size", "160x-1"]),
                ("animated.mp4", "start=1&end=2&fps=10", ["render", "--start", "1", "--loop-point", "2", "--fps", "10"]),
                ("animated.gif", "length=1&height=90&fit_mode=pad", ["render", "--length", "1", "--size", "x90", "--fit", "fit"]),
                ("animated.webp", "length=1&width=90&height=90&fit_mode=smartcrop",
                 ["render", "--length", "1", "--size", "90x90", "--fit", "smartcrop"]),
                ("strip.jpg", "count=4&width=96", ["strip", "--count", "4", "--size", "96x-1"]),
                ("sheet.png", "grid=2x2&header=false", ["sheet", "--grid", "2x2", "--no-header"]),
            ("card.webp", "width=240&height=136&play_length=1&poster_hold=0.5&fps=10",
             ["card", "--size", "240x136", "--play-length", "1", "--poster-hold", "0.5", "--fps", "10"]),
            ("card.mp4", "aspect=4:3&play_length=1&close=true&reveal=fade&fps=10",
             ["card", "--aspect", "4:3", "--play-length", "1", "--close", "--reveal", "fade", "--fps", "10"]),
            ("card.png", "at=1.3&play_button=false&corner_radius=8", ["card", "--at", "1.3", "--no-play-button", "--corner-radius", "8"]),
            ("card.jpg", "width=320&height=180&background=%23ff0000", ["card", "--size", "320x180", "--background", "#ff0000"]),
            ]
            for item in cases {
                let reply = try Self.fetch("\(base)/landscape.mp4/\(item.route)?\(item.query)")
                #expect(reply.status == 200, "\(item.route)?\(item.query): \(reply.text)")
                let output = TestPaths.temporaryDirectory() + "/\(item.route)"
                defer { try? FileManager.default.removeItem(atPath: (output as NSString).deletingLastPathComponent) }
                let made = try Child.cli([item.command[0], root + "/landscape.mp4", "-o", output] + item.command.dropFirst())
                #expect(made.status == 0, "\(made.stderr)")
                let written = try Data(contentsOf: URL(fileURLWithPath: output))
                #expect(reply.body == written, "\(item.route)?\(item.query): \(reply.body.count) bytes served, \(written.count) written")
            }
            #expect(try Self.fetch("\(base)/landscape.mp4/animated.mp4").headers["content-type"] == "video/mp4")
            // Mux's caps by default: 640 px, 30 fps, 10 s.
            for query in ["width=641", "fps=31", "length=11"] {
                let reply = try Self.fetch("\(base)/landscape.mp4/animated.webp?\(query)")
                #expect(reply.status == 413, "\(query): \(reply.text)")
            }
            #expect(try Self.fetch("\(base)/landscape.mp4/animated.mp4?end=2&length=1").status == 400)
            // A card animation is capped like any animation; a card still is not; at is for stills.
            for (query, parameter) in [("play_length=20", "play_length"), ("fps=31", "fps"), ("width=642&height=360", "width")] {
                let reply = try Self.fetch("\(base)/landscape.mp4/card.webp?\(query)")
                #expect(reply.status == 413 && reply.text.contains("\"parameter\":\"\(parameter)\""), "\(query): \(reply.text)")
            }
            #expect(try Self.fetch("\(base)/landscape.mp4/card.png?width=1280&height=720").status == 200)
            for query in ["at=1", "width=320", "close=maybe", "reveal=spin"] {
                let reply = try Self.fetch("\(base)/landscape.mp4/card.\(query == "at=1" ? "mp4" : "webp")?\(query)")
                #expect(reply.status == 400, "\(query): \(reply.text)")
            }
            #expect(try Self.fetch("\(base)/landscape.mp4/sheet.jpg?header=maybe").status == 400)
        }
    }

    @Test("storyboard.{jpg,webp} is sprites' one sheet; storyboard.vtt is its track pointing at the picture; .json agrees")
    func servedStoryboards() throws {
        try Self.withServer { base, root in
            let output = TestPaths.temporaryDirectory() + "/sprites"
            defer { try? FileManager.default.removeItem(atPath: (output as NSString).deletingLastPathComponent) }
            for format in ["jpg", "webp"] {
                let query = "count=7&columns=3&width=96&quality=70"
                let picture = try Self.fetch("\(base)/landscape.mp4/storyboard.\(format)?\(query)")
                #expect(picture.status == 200 && picture.headers["content-type"] == "image/\(format == "jpg" ? "jpeg" : "webp")")
                // The same thumbnails as sprites writes on a 3x3 sheet: 7 tiles, 3 rows.
                let made = try Child.cli(["sprites", root + "/landscape.mp4", "-o", output, "--count", "7", "--grid", "3x3",
                                          "--size", "96x-1", "--quality", "70", "--format", format])
                #expect(made.status == 0, "\(made.stderr)")
                let sheet = try Data(contentsOf: URL(fileURLWithPath: output + "/sprites-1.\(format)"))
                #expect(picture.body == sheet, "storyboard.\(format): \(picture.body.count) bytes served, \(sheet.count) written")
                let index = try Self.fetch("\(base)/landscape.mp4/storyboard.vtt?\(query)&format=\(format)")
                #expect(index.status == 200 && index.headers["content-type"] == "text/vtt; charset=utf-8")
                let track = try String(contentsOfFile: output + "/thumbnails.vtt", encoding: .utf8)
                #expect(index.text == track.replacing("sprites-1.\(format)", with: "storyboard.\(format)?\(query.split(separator: "&").sorted().joined(separator: "&"))"),
                        "\(index.text)")
            }
            // The JSON index: Mux's members, one tile per cue, positions on the grid.
            let json = try Self.fetch("\(base)/landscape.mp4/storyboard.json?count=5&columns=2&width=100&height=50&time_unused=1")
            #expect(json.status == 400 && json.headers["content-type"] == "application/problem+json")
            let reply = try Self.fetch("\(base)/landscape.mp4/storyboard.json?count=5&columns=2&width=100&height=50")
            #expect(reply.status == 200 && reply.headers["content-type"] == "application/json")
            let object = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
            #expect(object["url"] as? String == "storyboard.jpg?columns=2&count=5&height=50&width=100")
            #expect(object["tile_width"] as? Int == 100 && object["tile_height"] as? Int == 50)
            #expect(object["columns"] as? Int == 2 && object["rows"] as? Int == 3)
            let tiles = try #require(object["tiles"] as? [[String: Any]])
            #expect(tiles.map { $0["x"] as? Int } == [0, 100, 0, 100, 0] && tiles.map { $0["y"] as? Int } == [0, 0, 50, 50, 100])
            #expect(tiles.first?["start"] as? Double == 0 && tiles.last?["end"] as? Double == object["duration"] as? Double)
            // More thumbnails than 100 rows hold is refused before any work; bad values name the parameter.
            let tooMany = try Self.fetch("\(base)/landscape.mp4/storyboard.jpg?every=0.02&columns=1")
            #expect(tooMany.status == 413 && tooMany.text.contains("200 thumbnails"), "\(tooMany.text)")
            for bad in ["columns=0", "columns=101", "count=0", "every=-1", "format=png"] {
                let route = bad.hasPrefix("format") ? "storyboard.vtt" : "storyboard.jpg"
                let reply = try Self.fetch("\(base)/landscape.mp4/\(route)?\(bad)")
                #expect(reply.status == 400 && reply.text.contains("\"parameter\":\"\(bad.split(separator: "=")[0])\""), "\(bad): \(reply.text)")
            }
            #expect(try Self.fetch("\(base)/landscape.mp4/storyboard.jpg?format=webp").status == 400)
        }
    }

    @Test("A storyboard too large for its picture is refused naming the parameter sent and the limit; one tile of 2000 is served")
    func storyboardSides() throws {
        try Self.withServer { base, _ in
            func problem(_ query: String) throws -> (status: Int, parameter: String?, detail: String) {
                let reply = try Self.fetch("\(base)/landscape.mp4/storyboard.jpg?\(query)")
                let object = try JSONSerialization.jsonObject(with: reply.body) as? [String: Any]
                return (reply.status, object?["parameter"] as? String, object?["detail"] as? String ?? "")
            }
            // 10 columns (the default) of 2000-pixel tiles: 20000 wide. columns was not sent, width was.
            let wide = try problem("count=12&width=2000&height=2000")
            #expect(wide.status == 413 && wide.parameter == "width", "\(wide)")
            #expect(wide.detail.contains("16383") && wide.detail.contains("(the default)") && !wide.detail.contains("--"), "\(wide)")
            let sent = try problem("count=12&columns=9&width=2000")
            #expect(sent.status == 413 && sent.parameter == "width" && sent.detail.contains("9 columns make"), "\(sent)")
            // Rows follow the count: 100 rows of 200-pixel tiles is past the side; the message speaks in parameters.
            let tall = try problem("count=100&columns=1&height=200")
            #expect(tall.status == 413 && tall.detail.contains("16383") && tall.detail.contains("(width, height)")
                        && !tall.detail.contains("--"), "\(tall)")
            // The rows are the count's, not a default grid's: one row of 2000-pixel-high tiles fits.
            let fits = try Self.fetch("\(base)/landscape.mp4/storyboard.jpg?count=3&width=1000&height=2000")
            #expect(fits.status == 200 && fits.headers["content-type"] == "image/jpeg", "\(fits.text.prefix(300))")
            // The rows message says one thing: rows are at most 100, thumbnails at most columns × 100.
            let many = try problem("every=0.02&columns=1")
            #expect(many.status == 413 && many.detail.contains("at most 100 rows") && many.detail.contains("at most 100 thumbnails"),
                    "\(many)")
        }
    }

    @Test("A path swapped after it was resolved is never read: the open file is checked, not its name")
    func swappedSourcesAreRefused() throws {
        let root = try Self.makeRoot(), outside = TestPaths.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: outside)
        }
        let real = try #require(SourcePath.realPath(root))
        func opens(_ source: ResolvedSource) -> Bool {
            guard let opened = SourcePath.open(source, under: real) else { return false }
            defer { close(opened.descriptor) }
            return opened.path.hasPrefix("/proc/self/fd/")
        }
        // The file replaced by a link out of the root after the request resolved it.
        let file = try #require(SourcePath.resolve(["landscape.mp4"], under: real))
        #expect(opens(file))
        #expect(rename(root + "/landscape.mp4", root + "/moved.mp4") == 0)
        #expect(symlink("/etc/passwd", root + "/landscape.mp4") == 0)
        #expect(!opens(file))
        // A folder on the path swapped for a link to one outside holding a hard link to the very same
        // file (same device, inode, size and time): the kernel names the open file outside the root.
        let inner = try #require(SourcePath.resolve(["sub dir", "clip é.mp4"], under: real))
        #expect(opens(inner))
        #expect(link(root + "/sub dir/clip é.mp4", outside + "/clip é.mp4") == 0)
        #expect(rename(root + "/sub dir", root + "/old dir") == 0)
        #expect(symlink(outside, root + "/sub dir") == 0)
        #expect(!opens(inner))
        // A FIFO swapped in: refused at once instead of blocking on open.
        let notes = try #require(SourcePath.resolve(["notes.mp4"], under: real))
        #expect(unlink(root + "/notes.mp4") == 0 && mkfifo(root + "/notes.mp4", 0o644) == 0)
        #expect(!opens(notes))
        // A file changed in place (new size and time) is another identity: its old validator is not served.
        let moved = try #require(SourcePath.resolve(["moved.mp4"], under: real))
        let handle = try #require(FileHandle(forWritingAtPath: root + "/moved.mp4"))
        handle.seekToEndOfFile()
        handle.write(Data([0]))
        handle.closeFile()
        #expect(!opens(moved))
    }

    /// A PNG's width and height from its IHDR chunk.
    static func pngSize(_ data: Data) -> [Int] {
        guard data.count > 24 else { return [] }
        let bytes = [UInt8](data)
        func be32(_ offset: Int) -> Int { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        return [be32(16), be32(20)]
    }

    @Test("100 identical concurrent cold requests make exactly one render, and all get the same bytes")
    func coalescing() throws {
        // 100 connections from one address: above the default per-address cap of 64.
        try Self.withServer({ $0.maxConnectionsPerAddress = 128 }) { base, _ in
            let folder = TestPaths.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let url = "\(base)/landscape.mp4/thumbnail.jpg?time=2&width=480"
            var arguments = ["-s", "--parallel", "--parallel-immediate", "--parallel-max", "100", "-w", "%{http_code}\\n"]
            for index in 0..<100 { arguments += ["-o", "\(folder)/\(index).jpg", url] }
            let run = try Child.tool("curl", arguments, killAfter: 120)
            let codes = run.stdoutText.split(separator: "\n")
            #expect(codes.count == 100 && codes.allSatisfy { $0 == "200" }, "\(run.stdoutText)")
            let bodies = Set(try (0..<100).map { try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\($0).jpg")) })
            #expect(bodies.count == 1 && bodies.first?.isEmpty == false)
            let metrics = try Self.fetch("\(base)/metrics").text
            #expect(metrics.contains("\npreviewloop_renders_total 1\n"), "\(metrics)")
        }
    }

    /// A render that blocks until the test lets it go.
    final class Gate: @unchecked Sendable {
        let semaphore = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        func work(_ bytes: [UInt8]) -> RenderWork {
            RenderWork(memoryEstimate: 1, contentType: "text/plain") { [self] in
                started.signal()
                semaphore.wait()
                return RenderedBody(body: bytes)
            }
        }
    }

    @Test("The render queue coalesces equal keys, refuses past the queue, times out waiters and drains on stop")
    func renderQueue() throws {
        let metrics = ServerMetrics()
        let cache = ResponseCache(capacity: 1 << 20, metrics: metrics)
        let queue = try RenderQueue(workers: 1, queueLimit: 1, memoryBudget: 100, cache: cache, metrics: metrics)
        let results = Mutex<[String: [RenderResult]]>([:])
        func deliver(_ name: String) -> @Sendable (RenderResult) -> Void {
            { result in results.withLock { $0[name, default: []].append(result) } }
        }
        let far = ContinuousClock.now + .seconds(60)
        let gate = Gate()
        #expect(queue.submit(key: "a", work: gate.work([1]), deadline: far, deliver: deliver("a1")) == .queued)
        gate.started.wait()
        #expect(queue.submit(key: "a", work: gate.work([9]), deadline: far, deliver: deliver("a2")) == .coalesced)
        // The worker is busy: one more may wait, the next is refused.
        let waiting = Gate()
        #expect(queue.submit(key: "b", work: waiting.work([2]), deadline: far, deliver: deliver("b")) == .queued)
        #expect(queue.submit(key: "c", work: gate.work([3]), deadline: far, deliver: deliver("c")) == .full)
        #expect(queue.submit(key: "d", work: RenderWork(memoryEstimate: 101, contentType: "x") { RenderedBody(body: []) }, deadline: far,
                             deliver: deliver("d")) == .tooLarge)
        // A waiter whose deadline passes is answered 504; its queued render, with nobody left, is dropped.
        #expect(queue.submit(key: "a", work: gate.work([9]), deadline: .now + .milliseconds(50), deliver: deliver("a3")) == .coalesced)
        let soon = ContinuousClock.now + .seconds(10)
        while results.withLock({ $0["a3"] == nil }) && ContinuousClock.now < soon { usleep(10_000) }
        #expect(results.withLock { $0["a3"] }.map { $0.map { (try? $0.get()) == nil } } == [true])
        gate.semaphore.signal()
        while results.withLock({ $0["a2"] == nil }) && ContinuousClock.now < soon { usleep(10_000) }
        let first = results.withLock { $0 }
        #expect(first["a1"].map { $0.map { try? $0.get().body } } == [[1]])
        #expect(first["a2"].map { $0.map { try? $0.get().body } } == [[1]])
        #expect(cache.value(for: "a")?.body == [1])
        waiting.started.wait()
        // Stopping answers nobody twice; the running render finishes, its waiters were answered 503.
        let stopper = Thread { queue.stop() }
        stopper.start()
        usleep(50_000)
        waiting.semaphore.signal()
        while !stopper.isFinished && ContinuousClock.now < soon { usleep(10_000) }
        let final = results.withLock { $0 }
        #expect(final["b"]?.count == 1)
        if case .failure(let problem)? = final["b"]?.first { #expect(problem.status == 503) } else { Issue.record("b: \(String(describing: final["b"]))") }
        #expect(final["c"] == nil && final["d"] == nil)
    }

    @Test("SHA-256 and HMAC-SHA256 agree with FIPS 180-4's and RFC 4231's vectors and with Python's hashlib")
    func sha256() throws {
        #expect(SHA256.hex(SHA256.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(SHA256.hmac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // Every length around the block and padding edges, and a key longer than a block, against Python.
        let lengths = [1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000]
        let script = """
        import hashlib, hmac, sys
        for n in map(int, sys.argv[1:]):
            data = bytes((i * 7 + 3) % 256 for i in range(n))
            print(hashlib.sha256(data).hexdigest(), hmac.new(bytes(range(100)), data, hashlib.sha256).hexdigest())
        """
        let python = try Child.tool("python3", ["-c", script] + lengths.map(String.init))
        let lines = python.stdoutText.split(separator: "\n")
        #expect(lines.count == lengths.count, "\(python.stderr)")
        for (length, line) in zip(lengths, lines) {
            let data = (0..<length).map { UInt8(($0 * 7 + 3) % 256) }
            #expect(line == "\(SHA256.hex(SHA256.hash(data))) \(SHA256.hex(SHA256.hmac(key: Array(0..<100), message: data)))", "\(length)")
        }
    }

    /// The signature of `path?query` with the key in `keyFile`, made by the Python recipe of
    /// Docs/serve.md (the oracle).
    static func signature(keyFile: String, path: String, query: String) throws -> String {
        let script = """
        import hashlib, hmac, sys
        key = open(sys.argv[1], "rb").read().removesuffix(b"\\n")
        print(hmac.new(key, f"{sys.argv[2]}?{sys.argv[3]}".encode(), hashlib.sha256).hexdigest())
        """
        let python = try Child.tool("python3", ["-c", script, keyFile, path, query])
        return python.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("Signed URLs: a request signed as the documented recipes sign it is served; unsigned, wrong, altered or expired is 403")
    func signedURLs() throws {
        let keyFolder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: keyFolder) }
        let keyFile = keyFolder + "/key.txt"
        try Data("correct horse battery staple\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        try Self.withServer({ $0.signingKeyFile = keyFile }) { base, _ in
            let path = "/landscape.mp4/thumbnail.jpg"
            let expires = Int(Date().timeIntervalSince1970) + 600
            func signed(_ query: String) throws -> String { try Self.signature(keyFile: keyFile, path: path, query: query) }
            let query = "expires=\(expires)&time=1&width=160"
            let signature = try signed(query)
            #expect(signature.count == 64)
            let good = try Self.fetch("\(base)\(path)?\(query)&signature=\(signature)")
            #expect(good.status == 200, "\(good.text)")
            // The parameters in another order carry the same signature; the ETag ignores expires and signature.
            let shuffled = try Self.fetch("\(base)\(path)?width=160&signature=\(signature)&time=1&expires=\(expires)")
            #expect(shuffled.status == 200 && shuffled.headers["etag"] == good.headers["etag"])
            // The shell recipe (openssl) signs the same string the same way.
            let shell = try Child.tool("sh", ["-c", "printf '%s' \"$1?$2\" | openssl dgst -sha256 -mac HMAC -macopt \"key:$(cat \"$3\")\" | awk '{print $NF}'",
                                              "sh", path, query, keyFile])
            #expect(shell.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == signature, "\(shell.stderr)")
            let expired = "expires=\(expires - 1200)&time=1&width=160"
            let refused: [String] = [
                "\(base)\(path)?time=1&width=160",
                "\(base)\(path)?\(query)",
                "\(base)\(path)?\(query)&signature=\(String(repeating: "0", count: 64))",
                "\(base)\(path)?\(query)&signature=\(signature.dropLast())",
                "\(base)\(path)?expires=\(expires)&time=1&width=320&signature=\(signature)",
                "\(base)/landscape.mp4/thumbnail.png?\(query)&signature=\(signature)",
                "\(base)\(path)?\(expired)&signature=\(try signed(expired))",
                "\(base)/missing.mp4/thumbnail.jpg?time=1",
                "\(base)\(path)?\(query)&signature=\(signature)&signature=\(signature)",
            ]
            for url in refused {
                let reply = try Self.fetch(url)
                #expect(reply.status == 403 && reply.headers["content-type"] == "application/problem+json", "\(url): \(reply.text)")
            }
            #expect(try Self.fetch("\(base)/healthz").status == 200)

            // A storyboard index points at its picture by a signed URL with the request's expiry.
            let indexQuery = "count=4&expires=\(expires)"
            let indexPath = "/landscape.mp4/storyboard.vtt"
            let script = """
            import hashlib, hmac, sys
            key = open(sys.argv[1], "rb").read().removesuffix(b"\\n")
            print(hmac.new(key, f"{sys.argv[2]}?{sys.argv[3]}".encode(), hashlib.sha256).hexdigest())
            """
            let indexSignature = try Child.tool("python3", ["-c", script, keyFile, indexPath, indexQuery]).stdoutText
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let index = try Self.fetch("\(base)\(indexPath)?\(indexQuery)&signature=\(indexSignature)")
            #expect(index.status == 200, "\(index.text)")
            let cue = try #require(index.text.split(separator: "\n").first { $0.hasPrefix("storyboard.jpg?") })
            #expect(cue.contains("expires=\(expires)") && cue.contains("signature="), "\(cue)")
            let picture = try Self.fetch("\(base)/landscape.mp4/" + cue.prefix { $0 != "#" })
            #expect(picture.status == 200 && picture.headers["content-type"] == "image/jpeg", "\(picture.text)")
            let later = "count=4&expires=\(expires + 60)"
            let laterSignature = try Child.tool("python3", ["-c", script, keyFile, indexPath, later]).stdoutText
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let laterIndex = try Self.fetch("\(base)\(indexPath)?\(later)&signature=\(laterSignature)")
            #expect(laterIndex.status == 200 && laterIndex.headers["etag"] != index.headers["etag"] && laterIndex.body != index.body)
        }
        // A key file that is missing or too short stops the server before it listens.
        try Data("short\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        var options = ServeCommand(root: keyFolder)
        options.signingKeyFile = keyFile
        #expect(throws: ServerStartError.self) { try PreviewServer(options: options, accessLog: nil) }
        options.signingKeyFile = keyFolder + "/none"
        #expect(throws: ServerStartError.self) { try PreviewServer(options: options, accessLog: nil) }
    }

    /// Raw-socket clients for the hostile tests, in Python: `trickle`, `header`, `path` or `cap`.
    static let rawClient = """
    import select, socket, sys, time
    port, mode = int(sys.argv[1]), sys.argv[2]
    def connect():
        return socket.create_connection(("127.0.0.1", port), timeout=10)
    def send(s, data):
        try:
            s.sendall(data)
        except OSError:
            pass
    def reply(s):
        data = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
        except OSError:
            pass
        return data
    if mode == "trickle":
        s = connect(); send(s, b"GET /landscape.mp4/thumb"); start = time.time()
        data = reply(s); print("closed after", round(time.time() - start, 1), data[:12])
    elif mode == "header":
        s = connect(); send(s, b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\nX-Big: " + b"a" * 200000 + b"\\r\\n\\r\\n")
        print(reply(s).split(b"\\r\\n")[0])
    elif mode == "path":
        s = connect(); send(s, b"GET /" + b"a/" * 10000 + b"thumbnail.jpg HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
        print(reply(s).split(b"\\r\\n")[0])
    elif mode == "cap":
        held = [connect() for _ in range(8)]
        time.sleep(0.3)
        readable, _, _ = select.select(held, [], [], 0.5)
        closed = 0
        for s in readable:
            s.setblocking(False)
            try:
                if s.recv(1) == b"": closed += 1
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
        print("closed", closed, "of", len(held))
    """

    @Test("Hostile clients: trickled requests are cut at the timeout, huge headers and paths refused, connections capped, absurd sizes 413")
    func hostileClients() throws {
        try Self.withServer({ $0.connectionTimeout = 1 }) { base, _ in
            let port = String(base.split(separator: ":").last ?? "")
            func client(_ mode: String) throws -> String {
                let run = try Child.tool("python3", ["-c", Self.rawClient, port, mode], killAfter: 60)
                #expect(run.status == 0, "\(mode): \(run.stderr)")
                return run.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            // A request trickled and never finished is closed at the 1 s timeout (libmicrohttpd's), with margin.
            let trickle = try client("trickle")
            let seconds = Double(trickle.split(separator: " ").dropFirst(2).first ?? "") ?? 99
            #expect(seconds >= 0.5 && seconds <= 8, "\(trickle)")
            // A 200 KB header and a 20 KB path are refused, never buffered whole: an error status or a closed connection.
            let header = try client("header")
            #expect(header.contains(" 431 ") || header.contains(" 413 ") || header.contains(" 400 ") || header == "b''", "\(header)")
            let path = try client("path")
            #expect(path.contains(" 414 ") || path.contains(" 404 ") || path.contains(" 400 ") || path == "b''", "\(path)")
            // Absurd sizes are refused by thumb's own work limit, with a problem body.
            let huge = try Self.fetch("\(base)/landscape.mp4/thumbnail.png?width=16384&height=16384")
            #expect(huge.status == 413, "\(huge.text)")
            // And the server still serves.
            #expect(try Self.fetch("\(base)/healthz").status == 200)
            #expect(try Self.fetch("\(base)/landscape.mp4/thumbnail.jpg?width=64").status == 200)
        }
        // Connections past --max-connections-per-address are closed at once; those within it stay open.
        try Self.withServer({ $0.maxConnectionsPerAddress = 4 }) { base, _ in
            let port = String(base.split(separator: ":").last ?? "")
            let run = try Child.tool("python3", ["-c", Self.rawClient, port, "cap"], killAfter: 60)
            #expect(run.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "closed 4 of 8", "\(run.stdoutText) \(run.stderr)")
            #expect(try Self.fetch("\(base)/healthz").status == 200)
        }
    }

    @Test("--allow-origin: allowed pages may read responses and placeholders, preflights get 204; without it no CORS header")
    func crossOrigin() throws {
        let page = "Origin: https://www.example.com"
        try Self.withServer { base, _ in
            let reply = try Self.fetch("\(base)/landscape.mp4/thumbnail.jpg?width=64", headers: [page])
            #expect(reply.status == 200)
            #expect(reply.headers["access-control-allow-origin"] == nil && reply.headers["vary"] == nil)
            let options = try Self.fetch("\(base)/landscape.mp4/thumbnail.jpg", method: "OPTIONS", headers: [page])
            #expect(options.status == 405 && options.headers["allow"] == "GET, HEAD")
        }
        try Self.withServer({ $0.allowedOrigins = ["https://www.example.com"] }) { base, _ in
            // Rendered, then from the memory cache, a 304, a problem, the feed page: all carry the headers.
            let picture = "\(base)/landscape.mp4/thumbnail.jpg?width=64"
            let first = try Self.fetch(picture, headers: [page])
            let cached = try Self.fetch(picture, headers: [page])
            let unchanged = try Self.fetch(picture, headers: [page, "If-None-Match: \(first.headers["etag"] ?? "")"])
            let problem = try Self.fetch("\(base)/landscape.mp4/thumbnail.jpg?width=0", headers: [page])
            let placeholder = try Self.fetch("\(base)/landscape.mp4/placeholder.json?width=64")
            let feed = try Self.fetch("\(base)/")
            let statuses: [Int] = [first.status, cached.status, unchanged.status, problem.status, placeholder.status, feed.status]
            #expect(statuses == [200, 200, 304, 400, 200, 200])
            for reply in [first, cached, unchanged, problem, placeholder, feed] {
                #expect(reply.headers["access-control-allow-origin"] == "https://www.example.com")
                #expect(reply.headers["access-control-expose-headers"]?.contains("Thumbhash, Blurhash, Dominant-Color") == true)
                // The feed page varies by the hint that shapes it; the pictures by nothing.
                #expect(reply.headers["vary"] == (reply.status == feed.status && reply.body == feed.body ? "Sec-CH-Prefers-Reduced-Motion" : nil))
            }
            #expect(first.headers["thumbhash"] != nil && cached.headers["thumbhash"] == first.headers["thumbhash"])
            let preflight = try Self.fetch(picture, method: "OPTIONS", headers: [
                page, "Access-Control-Request-Method: GET", "Access-Control-Request-Headers: range"])
            #expect(preflight.status == 204 && preflight.body.isEmpty)
            #expect(preflight.headers["access-control-allow-origin"] == "https://www.example.com")
            #expect(preflight.headers["access-control-allow-methods"] == "GET, HEAD")
            #expect(preflight.headers["access-control-allow-headers"]?.lowercased().contains("range") == true)
            #expect(preflight.headers["access-control-max-age"] == "86400")
            let post = try Self.fetch(picture, method: "POST", headers: [page])
            #expect(post.status == 405 && post.headers["allow"] == "GET, HEAD, OPTIONS")
        }
        try Self.withServer({ $0.allowedOrigins = ["https://a.example", "http://b.example:8080"] }) { base, _ in
            let picture = "\(base)/landscape.mp4/thumbnail.jpg?width=64"
            for (origin, allowed) in [("https://a.example", true), ("http://b.example:8080", true), ("https://c.example", false),
                                      ("https://a.example.evil.test", false), (nil, false)] as [(String?, Bool)] {
                let reply = try Self.fetch(picture, headers: origin.map { ["Origin: \($0)"] } ?? [])
                #expect(reply.status == 200 && reply.headers["vary"] == "Origin", "\(origin ?? "no origin")")
                #expect(reply.headers["access-control-allow-origin"] == (allowed ? origin : nil), "\(origin ?? "no origin")")
            }
        }
        try Self.withServer({ $0.allowedOrigins = ["*"] }) { base, _ in
            let reply = try Self.fetch("\(base)/landscape.mp4/probe.json", headers: [page])
            #expect(reply.headers["access-control-allow-origin"] == "*" && reply.headers["vary"] == nil)
        }
    }

    @Test("The access log's strings are JSON: quotes, backslashes and control characters escaped")
    func accessLogQuoting() throws {
        for text in ["/plain/thumbnail.jpg", "/a\"b\\c/thumbnail.jpg", "/tab\there/\u{1}x", "/é/%22"] {
            let quoted = AccessLog.quoted(text)
            let decoded = try JSONSerialization.jsonObject(with: Data(("[" + quoted + "]").utf8)) as? [String]
            #expect(decoded == [text], "\(quoted)")
        }
    }

    @Test("preview-loop serve: the start-up line names the port; SIGTERM ends it with status 0")
    func serveCommand() throws {
        let root = try Self.makeRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let err = Pipe()
        let (process, object) = try Self.launchServe(["--root", root, "--grace", "5"], standardError: err)
        let watchdog = DispatchWorkItem { kill(process.processIdentifier, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        defer { watchdog.cancel() }
        let port = try #require(object["port"] as? Int)
        #expect(object["listening"] as? String == "http://127.0.0.1:\(port)/")
        #expect(try Self.fetch("http://127.0.0.1:\(port)/landscape.mp4/thumbnail.jpg?width=64").status == 200)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let record = try #require(log.split(separator: "\n").first { $0.hasPrefix("{") })
        let entry = try #require(try JSONSerialization.jsonObject(with: Data(record.utf8)) as? [String: Any])
        #expect(entry["status"] as? Int == 200 && entry["method"] as? String == "GET" && entry["cache"] as? String == "miss")
        // A root that is not a folder, and a busy port: one line, status 1.
        let missing = try Child.cli(["serve", "--root", root + "/nothing"])
        #expect(missing.status == 1 && missing.errorLines.count == 1, "\(missing.stderr)")
        let bad = try Child.cli(["serve", "--root", root, "--listen", "127.0.0.1:99999"])
        #expect(bad.status == 64 && bad.errorLines.first?.hasPrefix("Error: Invalid value") == true, "\(bad.stderr)")
    }
}
