import Foundation
import Glibc
import PreviewLoop
import PreviewLoopCLI
import PreviewLoopJobs
import Synchronization
import Testing
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// What abusive or odd clients get from `serve`, over real sockets: trickled requests cut at their own
/// deadline while health checks are answered, every request answered (bodies, hundreds of parameters),
/// a SIGTERM that cancels renders, a client that leaves logged as such, start-up files that are FIFOs,
/// hard links and signed storyboards keyed on what they show.
@Suite("serve: abusive clients and odd requests", .serialized, .timeLimit(.minutes(10)))
struct ServeAbuseTests {
    /// Runs `script` (Python) with the server's port; its standard output, trimmed.
    static func python(_ script: String, _ arguments: [String], killAfter: Double = 120) throws -> String {
        let run = try Child.tool("python3", ["-c", script] + arguments, killAfter: killAfter)
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// 220 connections from four loopback addresses (55 each, within the per-address cap) send a
    /// request's header a byte at a time and reopen when closed; meanwhile /healthz is asked from
    /// 127.0.0.1. Prints JSON: the longest a trickling connection stayed open, how many were opened,
    /// and the health answers' statuses and latencies.
    static let slowClients = """
    import json, socket, sys, time
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    request = b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\nX-Slow: " + b"a" * 10000
    def connect(source):
        s = socket.socket()
        s.bind((source, 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        s.setblocking(False)
        return [s, time.time(), 0]
    sources = ["127.0.0.%d" % n for n in (2, 3, 4, 5)]
    held = [(src, connect(src)) for src in sources for _ in range(55)]
    opened, longest, statuses, latencies = len(held), 0.0, [], []
    start = time.time(); next_probe = start
    while time.time() - start < seconds:
        now = time.time()
        for index, (src, entry) in enumerate(held):
            s, since, sent = entry
            closed = False
            try:
                if s.recv(1) == b"": closed = True
            except BlockingIOError:
                pass
            except OSError:
                closed = True
            if not closed:
                try:
                    s.send(request[sent:sent + 1]); entry[2] += 1
                except BlockingIOError:
                    pass
                except OSError:
                    closed = True
            if closed:
                longest = max(longest, now - since)
                s.close()
                held[index] = (src, connect(src)); opened += 1
        if now >= next_probe:
            next_probe = now + 0.25
            t = time.time()
            try:
                probe = socket.create_connection(("127.0.0.1", port), timeout=5)
                probe.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
                reply = b""
                while True:
                    chunk = probe.recv(4096)
                    if not chunk: break
                    reply += chunk
                probe.close()
                statuses.append(int(reply.split(b" ")[1]) if reply else 0)
            except OSError:
                statuses.append(0)
            latencies.append(time.time() - t)
        time.sleep(0.2)
    now = time.time()
    still = max(now - entry[1] for _, entry in held)
    print(json.dumps({"longest": max(longest, still), "opened": opened, "statuses": statuses,
                      "latencies": sorted(latencies)}))
    """

    @Test("220 trickling connections are each cut at the connection timeout while /healthz keeps answering")
    func slowClientsAreCut() throws {
        try ServeTests.withServer({ $0.connectionTimeout = 2 }) { base, _ in
            let port = String(base.split(separator: ":").last ?? "")
            let output = try Self.python(Self.slowClients, [port, "7"])
            let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
            let longest = report["longest"] as? Double ?? 99
            let statuses = report["statuses"] as? [Int] ?? []
            let latencies = report["latencies"] as? [Double] ?? []
            // Each connection kept sending, so only the request's own deadline could cut it.
            // Liveness bounds only: a connection never cut stays open the whole 7 s, and a health answer
            // held up by the flood waits for the client's 5 s socket timeout.
            #expect(longest < 2 + 3, "a trickling connection stayed open \(longest) s: \(output)")
            #expect((report["opened"] as? Int ?? 0) > 220, "no trickling connection was ever cut: \(output)")
            #expect(!statuses.isEmpty && statuses.allSatisfy { $0 == 200 }, "\(output)")
            let median = latencies.isEmpty ? 99 : latencies[latencies.count / 2]
            #expect(median < 2, "the median /healthz answer took \(median) s: \(output)")
        }
    }

    /// Sends each request of `requests` (Python bytes literals, by name) on its own connection and prints
    /// `name status allow-header` per line (status 0 when the connection closed without an answer).
    static let oddRequests = """
    import socket, sys
    port = int(sys.argv[1])
    query = "&".join("p%d=1" % i for i in range(500))
    requests = {
        "params500": ("GET /landscape.mp4/thumbnail.jpg?%s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % query).encode(),
        "post": b"POST /landscape.mp4/thumbnail.jpg HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 5\\r\\n\\r\\nhello",
        "put": b"PUT /healthz HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 5\\r\\n\\r\\nhello",
        "getbody": b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 5\\r\\n\\r\\nhello",
        "chunked": b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n5\\r\\nhello\\r\\n0\\r\\n\\r\\n",
        "plain": b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n",
    }
    for name, data in requests.items():
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(data)
        reply = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                reply += chunk
        except OSError:
            pass
        head = reply.split(b"\\r\\n\\r\\n")[0].split(b"\\r\\n")
        status = int(head[0].split(b" ")[1]) if reply else 0
        allow = [line.split(b": ", 1)[1].decode() for line in head[1:] if line.lower().startswith(b"allow:")]
        print(name, status, allow[0].replace(" ", "") if allow else "-")
    """

    @Test("Every request gets an answer: 500 parameters 400, a body on GET 400, POST and PUT 405 with Allow")
    func everyRequestIsAnswered() throws {
        try ServeTests.withServer({ $0.connectionTimeout = 3 }) { base, _ in
            let port = String(base.split(separator: ":").last ?? "")
            let lines = try Self.python(Self.oddRequests, [port]).split(separator: "\n").map(String.init)
            #expect(lines == ["params500 400 -", "post 405 GET,HEAD", "put 405 GET,HEAD", "getbody 400 -", "chunked 400 -",
                              "plain 200 -"], "\(lines)")
        }
    }

    @Test("The query is kept as sent: '+' and escapes reach the signature check and the decoder unchanged")
    func queryIsKeptAsSent() {
        let items = HTTPDaemon.query(of: "/a.mp4/thumbnail.jpg?time=+1&&width=160&flag&x=a%2Bb=c")
        #expect(items.map(\.name) == ["time", "width", "flag", "x"])
        #expect(items.map(\.value) == ["+1", "160", nil, "a%2Bb=c"])
        #expect(HTTPDaemon.query(of: "/healthz").isEmpty)
    }

    @Test("SIGTERM with --grace 1 during a long render: the render is cancelled and the process gone within 2 s, scratch removed")
    func sigtermCancelsRenders() throws {
        let root = TestPaths.temporaryDirectory(), scratch = TestPaths.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: scratch)
        }
        try ServeTests.makeLongClip(root + "/long.mp4")
        let (process, object) = try ServeTests.launchServe(["--root", root, "--grace", "1", "--workers", "1"],
                                                           environment: ["TMPDIR": scratch])
        let watchdog = DispatchWorkItem { kill(process.processIdentifier, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 90, execute: watchdog)
        defer { watchdog.cancel() }
        let base = "http://127.0.0.1:\(try #require(object["port"] as? Int))"
        // A 10-second animation of 720p: seconds of work. curl waits for it in the background.
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-s", "-o", "/dev/null", "--max-time", "60", base + "/long.mp4/animated.mp4?length=10&width=640&height=640"]
        try curl.run()
        defer { if curl.isRunning { curl.terminate() } }
        #expect(ServeCacheTests.eventually { (try? ServeCacheTests.metric("previewloop_renders_in_flight", base)) == 1 })
        let signalled = ContinuousClock.now
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let took = ContinuousClock.now - signalled
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        #expect(took < .milliseconds(2500), "exited \(took) after SIGTERM with --grace 1")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: scratch)) ?? []
        #expect(left.isEmpty, "left in TMPDIR: \(left)")
    }

    @Test("A client that hangs up during a render is logged and counted as 499 with no bytes, not as a 503")
    func hangUpIsLoggedAsClientClosed() throws {
        let root = TestPaths.temporaryDirectory(), logFolder = TestPaths.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: logFolder)
        }
        try ServeTests.makeLongClip(root + "/long.mp4")
        var options = ServeCommand(root: root)
        options.workers = 1
        let logPath = logFolder + "/access.log"
        let server = try PreviewServer(options: options, accessLog: try AccessLog(path: logPath))
        defer { server.stop(grace: 5) }
        let base = "http://127.0.0.1:\(server.port)"
        let hungUp = try Child.tool("curl", ["-s", "-o", "/dev/null", "--max-time", "0.5", base + "/long.mp4/animated.mp4?length=10&width=640"],
                                    killAfter: 60)
        #expect(hungUp.status == 28, "curl should have timed out: \(hungUp.status)")
        #expect(ServeCacheTests.eventually { server.openExchanges == 0 })
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let entry = try #require(log.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.first { ($0["path"] as? String)?.hasSuffix("animated.mp4") == true }, "\(log)")
        #expect(entry["status"] as? Int == 499 && entry["bytes"] as? Int == 0 && entry["closed"] as? Bool == true, "\(entry)")
        let metrics = try ServeTests.fetch(base + "/metrics").text
        #expect(metrics.contains("previewloop_http_requests_total{route=\"animated.mp4\",status=\"499\"} 1"), "\(metrics)")
        #expect(!metrics.contains("status=\"503\""), "\(metrics)")
    }

    @Test("--signing-key-file and --feed-manifest naming a FIFO: refused at once in one line, exit 1")
    func fifosAreRefusedAtStart() throws {
        let folder = TestPaths.temporaryDirectory(), root = TestPaths.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: folder)
            try? FileManager.default.removeItem(atPath: root)
        }
        let fifo = folder + "/fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        for option in ["--signing-key-file", "--feed-manifest"] {
            let run = try Child.cli(["serve", "--root", root, "--listen", "127.0.0.1:0", option, fifo], killAfter: 20)
            #expect(run.status == 1 && run.errorLines.count == 1 && run.stderr.contains("not a regular file"), "\(option): \(run.stderr)")
        }
    }

    @Test("Two hard links to one video: each path's sheet names its own file, under its own ETag")
    func hardLinksKeyOnTheirPath() throws {
        try ServeTests.withServer { base, root in
            try #require(link(root + "/landscape.mp4", root + "/second.mp4") == 0)
            let first = try ServeTests.fetch(base + "/landscape.mp4/sheet.png?grid=2x2&header=true")
            let second = try ServeTests.fetch(base + "/second.mp4/sheet.png?grid=2x2&header=true")
            #expect(first.status == 200 && second.status == 200, "\(first.text) \(second.text)")
            #expect(first.headers["etag"] != second.headers["etag"])
            // Each is the sheet the CLI draws for its own path (the header shows the file's name).
            for (name, reply) in [("second.mp4", second), ("landscape.mp4", first)] {
                let out = TestPaths.temporaryDirectory()
                defer { try? FileManager.default.removeItem(atPath: out) }
                let run = try Child.cli(["sheet", root + "/" + name, "--grid", "2x2", "-o", out + "/s.png"])
                #expect(run.status == 0, "\(run.stderr)")
                #expect(FileManager.default.contents(atPath: out + "/s.png") == reply.body, "\(name)")
            }
        }
    }

    /// The hex HMAC-SHA256 of `path?query` under the key file's bytes less one final `\n` (the documented recipe).
    static func sign(keyFile: String, path: String, query: String) throws -> String {
        try python("""
        import hashlib, hmac, sys
        key = open(sys.argv[1], "rb").read().removesuffix(b"\\n")
        print(hmac.new(key, f"{sys.argv[2]}?{sys.argv[3]}".encode(), hashlib.sha256).hexdigest())
        """, [keyFile, path, query])
    }

    @Test("Signed storyboards: the index's picture URL is signed for its own path and the current key, across links and restarts")
    func signedStoryboards() throws {
        let root = try ServeTests.makeRoot(), keys = TestPaths.temporaryDirectory(), cache = TestPaths.temporaryDirectory() + "/cache"
        defer {
            for folder in [root, keys, cache] { try? FileManager.default.removeItem(atPath: folder) }
        }
        try #require(link(root + "/landscape.mp4", root + "/second.mp4") == 0)
        // The first key ends in CRLF: the \r is part of it, as the recipes read it.
        let first = keys + "/first.key", second = keys + "/second.key"
        try Data("first signing key of the test\r\n".utf8).write(to: URL(fileURLWithPath: first))
        try Data("second signing key of the test\n".utf8).write(to: URL(fileURLWithPath: second))
        let expires = Int(Date().timeIntervalSince1970) + 600
        /// Fetches each clip's signed storyboard.vtt and then the picture its first cue names.
        func pictures(keyFile: String, base: String) throws -> [Int] {
            var statuses: [Int] = []
            for clip in ["landscape.mp4", "second.mp4"] {
                let path = "/\(clip)/storyboard.vtt", query = "count=4&expires=\(expires)"
                let index = try ServeTests.fetch("\(base)\(path)?\(query)&signature=\(try Self.sign(keyFile: keyFile, path: path, query: query))")
                #expect(index.status == 200, "\(clip): \(index.text)")
                let cue = try #require(index.text.split(separator: "\n").first { $0.hasPrefix("storyboard.jpg?") })
                statuses.append(try ServeTests.fetch("\(base)/\(clip)/" + cue.prefix { $0 != "#" }).status)
            }
            return statuses
        }
        for keyFile in [first, second] {
            var options = ServeCommand(root: root)
            options.workers = 1
            options.cacheDirectory = cache
            options.signingKeyFile = keyFile
            let server = try PreviewServer(options: options, accessLog: nil)
            defer { server.stop(grace: 5) }
            let base = "http://127.0.0.1:\(server.port)"
            #expect(try pictures(keyFile: keyFile, base: base) == [200, 200], "\(keyFile)")
            // A '+' is signed and checked as sent.
            let path = "/landscape.mp4/thumbnail.jpg", query = "expires=\(expires)&time=+1&width=64"
            let plus = try ServeTests.fetch("\(base)\(path)?\(query)&signature=\(try Self.sign(keyFile: keyFile, path: path, query: query))")
            #expect(plus.status == 200, "\(plus.text)")
        }
    }
}

/// The memory budget holds renders at what they really take: estimates made at the source's size.
@Suite("serve: memory estimates at the source's size", .serialized, .timeLimit(.minutes(10)))
struct ServeMemoryEstimateTests {
    @Test("A 640x640 animation of a 4K source is estimated above the 150 MB one such render was measured to add")
    func fourKAnimationEstimate() throws {
        let root = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        for (size, name) in [("3840x2160", "4k"), ("400x300", "small")] {
            let made = try Child.tool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30", "-t", "0.2",
                                                 "-c:v", "libx264", "-preset", "ultrafast", root + "/\(name).mp4"],
                                      killAfter: 120)
            try #require(made.status == 0, "\(made.stderr)")
        }
        let sizes = SourceSizes()
        let job = try PreviewRequests.job(route: "animated.mp4", query: [("width", "640"), ("height", "640"), ("length", "6"), ("fps", "30")],
                                          source: root + "/4k.mp4", deadline: 30, caps: AnimationCaps())
        let large = try #require(SourceSizes.resolve(root + "/4k.mp4").flatMap { sizes.frameBytes(of: $0) })
        let small = try #require(SourceSizes.resolve(root + "/small.mp4").flatMap { sizes.frameBytes(of: $0) })
        #expect(large == 3840 * 2160 * 3 / 2 && small == 400 * 300 * 3 / 2)
        // Benchmarks/serve-overload.sh --burst-only: such a render grew the server by 150 MB.
        #expect(job.memoryEstimate(frameBytes: large) >= 150_000_000, "\(job.memoryEstimate(frameBytes: large))")
        #expect(job.memoryEstimate(frameBytes: small) < job.memoryEstimate(frameBytes: large) / 2)
    }

    @Test("A render whose estimate at its source's size passes the whole budget is 413 from the worker")
    func refinedEstimateOverBudget() throws {
        let metrics = ServerMetrics()
        let queue = try RenderQueue(workers: 1, queueLimit: 4, memoryBudget: 100,
                                    cache: ResponseCache(capacity: 1 << 20, metrics: metrics), metrics: metrics)
        defer { queue.stop() }
        var work = RenderWork(memoryEstimate: 10, contentType: "text/plain") { RenderedBody(body: [1]) }
        work.refinedEstimate = { 101 }
        let answer = Mutex<Int?>(nil)
        #expect(queue.submit(key: "k", work: work, deadline: .now + .seconds(30)) { result in
            answer.withLock { $0 = (try? result.get()).map { _ in 200 } ?? { if case .failure(let p) = result { p.status } else { 0 } }() }
        } == .queued)
        #expect(ServeCacheTests.eventually { answer.withLock { $0 } != nil })
        #expect(answer.withLock { $0 } == 413)
    }
}
