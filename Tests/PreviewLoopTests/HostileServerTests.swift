import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
import Synchronization

/// URL sources against hostile servers on 127.0.0.1, started by each test: one that accepts and never
/// answers, one that trickles a byte a second, one that stops sending in the middle of the body. Each
/// must end in ``PreviewLoopError/Code/timedOut`` within its deadline + 1 s (library and CLI), and a
/// loop blocked in a read must stop within 1 s of ``LoopPlayer.Handle/stop()`` (the interrupt callback
/// aborts blocking I/O). HLS playlists must not reach local files or other ports, only their own origin.
@Suite("Hostile servers: no hang, no escape", .timeLimit(.minutes(10)), .tags(.network, .slow))
struct HostileServerTests {
    let clip = TestPaths.fixture("landscape.mp4")      // fast start: its moov ends at byte 4,420
    let size = Size(width: 320, height: 180)

    /// Seconds `body` took, with the code it threw (`nil` for success).
    private func timed(_ body: () throws -> Void) -> (seconds: Double, code: PreviewLoopError.Code?) {
        let started = Date()
        let code = errorCode(body)
        return (Date().timeIntervalSince(started), code)
    }

    /// `thumb URL --timeout 2` must fail with one `Error:` line within 3 s and write nothing.
    private func expectCLITimesOut(_ url: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try Child.cli(["thumb", url.absoluteString, "-o", output + "/out.ppm", "--at", "3.5", "--timeout", "2"],
                                   killAfter: 15)
        #expect(result.elapsed < 6, "the CLI took \(result.elapsed) s", sourceLocation: sourceLocation)
        expectCLIFailure(result, input: url.absoluteString, outputDirectory: output, sourceLocation: sourceLocation)
        #expect(result.stderr.contains("timed out"), "\(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test("A server that accepts and never answers: timedOut within the open deadline + 1 s")
    func silentServer() throws {
        let server = try HostileServer(.silent)
        defer { server.stop() }
        let url = server.url(for: "clip.mp4")
        let probe = timed { _ = try MediaProbe.probe(.url(url), options: SourceOptions(openTimeout: 2, readTimeout: 2)) }
        #expect(probe.code == .timedOut && probe.seconds < 6, "\(String(describing: probe.code)) after \(probe.seconds) s")
        try expectCLITimesOut(url)
    }

    @Test("A server that trickles a byte a second from the first byte: timedOut within the open deadline + 1 s")
    func tricklingServer() throws {
        let server = try HostileServer(.trickle(file: clip, burst: 0))
        defer { server.stop() }
        let url = server.url(for: "clip.mp4")
        // Each read gets a byte within the 10 s read deadline: only the 2 s open deadline can end this.
        let probe = timed { _ = try MediaProbe.probe(.url(url), options: SourceOptions(openTimeout: 2, readTimeout: 10)) }
        #expect(probe.code == .timedOut && probe.seconds < 6, "\(String(describing: probe.code)) after \(probe.seconds) s")
        try expectCLITimesOut(url)
    }

    @Test("Trickling after a good start: the job deadline ends it (each read alone is in time)")
    func trickleAfterHeader() throws {
        // The first 40 kB hold the moov and a second of frames: opening succeeds, then a byte a second.
        let server = try HostileServer(.trickle(file: clip, burst: 40_000))
        defer { server.stop() }
        let url = server.url(for: "clip.mp4")
        let started = Date()
        let code = errorCode {
            let sampler = try FrameSampler(source: .url(url), options: SourceOptions(openTimeout: 10, readTimeout: 10, jobTimeout: 2))
            _ = try sampler.frame(at: 3.5, size: size)
        }
        let seconds = Date().timeIntervalSince(started)
        #expect(code == .timedOut && seconds < 6, "\(String(describing: code)) after \(seconds) s")
        try expectCLITimesOut(url)
    }

    @Test("A body that stops half-way: the read deadline ends it")
    func stallMidBody() throws {
        let server = try HostileServer(.hold(file: clip, burst: 40_000))
        defer { server.stop() }
        let url = server.url(for: "clip.mp4")
        let sampler = try FrameSampler(source: .url(url), options: SourceOptions(openTimeout: 10, readTimeout: 2))
        let read = timed { _ = try sampler.frame(at: 3.5, size: size) }
        // The read deadline is 2 s; without it the stall lasts until the server gives up (60 s). The bound leaves
        // room for a loaded machine (3.2 s seen beside two CPU hogs and the rest of the suite).
        #expect(read.code == .timedOut && read.seconds < 6, "\(String(describing: read.code)) after \(read.seconds) s")
        try expectCLITimesOut(url)
    }

    @Test("stop() on a loop blocked reading a stalled server returns before the read deadline, without an error")
    func stopInterruptsBlockedRead() throws {
        let server = try HostileServer(.hold(file: clip, burst: 40_000))
        defer { server.stop() }
        // No deadline would end this read for 30 s: only stop() can.
        let options = SourceOptions(openTimeout: 10, readTimeout: 30)
        let loop = try LoopPlayer(source: .url(server.url(for: "clip.mp4")),
                                   configuration: .init(sourceOptions: options, frameCacheLimit: 0))
        let frames = FrameCounter()
        let handle = loop.start(loops: nil, onFrame: { _ in frames.increment() })
        // Wait until the frames in the burst are delivered and the loop is blocked in a read.
        let deadline = Date().addingTimeInterval(20)
        var last = -1
        while Date() < deadline {
            Thread.sleep(forTimeInterval: 0.5)
            let now = frames.count
            if now > 0 && now == last { break }
            last = now
        }
        #expect(frames.count > 0 && frames.count < 100, "\(frames.count) frames before the stall")
        let stopped = Date()
        handle.stop()
        let outcome = Result { try handle.wait() }
        let seconds = Date().timeIntervalSince(stopped)
        // A liveness bound only: a stop() that did not reach the read would wait out its 30 s deadline.
        #expect(seconds < 15, "stop() took \(seconds) s")
        if case .failure(let error) = outcome { Issue.record("the loop ended with \(error)") }
    }

    // MARK: - HLS: only the playlist's own origin

    /// A directory served over HTTP with a segment and playlists naming it in different ways.
    private func playlistDirectory(segmentURIs: [String: String]) throws -> String {
        let directory = TestPaths.temporaryDirectory()
        try FileManager.default.copyItem(atPath: try BadInputs.path("segment.ts"), toPath: directory + "/segment.ts")
        for (name, uri) in segmentURIs {
            let playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\n\(uri)\n#EXT-X-ENDLIST\n"
            try playlist.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
        }
        return directory
    }

    @Test("An HLS playlist whose segment is a local file, on another local port or a data: URL is not read; no request reaches that port")
    func crossOriginSegmentsRefused() throws {
        let witness = try HostileServer(.witness)
        defer { witness.stop() }
        // The segment also exists locally, outside the served directory: reading it would succeed.
        let local = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: local) }
        try FileManager.default.copyItem(atPath: try BadInputs.path("segment.ts"), toPath: local + "/local-only.ts")
        let directory = try playlistDirectory(segmentURIs: [
            "file-url.m3u8": "file://\(local)/local-only.ts",
            "other-port.m3u8": "http://127.0.0.1:\(witness.port)/segment.ts",
            "data-url.m3u8": "data:video/mp2t;base64,\(try Data(contentsOf: URL(fileURLWithPath: try BadInputs.path("segment.ts"))).base64EncodedString())",
        ])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let origin = try HTTPTestServer(directory: directory)
        defer { origin.stop() }
        // FFmpeg's HLS demuxer itself refuses data: segments before asking to open them (notMediaFile).
        for (name, expected) in [("file-url.m3u8", PreviewLoopError.Code.refusedByPolicy), ("other-port.m3u8", .refusedByPolicy),
                                 ("data-url.m3u8", .notMediaFile)] {
            let url = origin.url(for: name)
            let code = errorCode { _ = try FrameSampler(source: .url(url)).frame(at: 0, size: size) }
            #expect(code == expected, "\(name): got \(String(describing: code))")
            let output = TestPaths.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: output) }
            let result = try Child.cli(["thumb", url.absoluteString, "-o", output + "/out.ppm", "--at", "0"], killAfter: 20)
            expectCLIFailure(result, input: url.absoluteString, outputDirectory: output)
        }
        #expect(witness.receivedRequests.isEmpty, "the other port was contacted: \(witness.receivedRequests)")
    }

    @Test("Bytes in memory open nothing: a playlist or concat list given as Data is refused, its server never contacted")
    func memoryInputOpensNothing() throws {
        let witness = try HostileServer(.witness)
        defer { witness.stop() }
        let segment = try BadInputs.path("segment.ts")
        let playlist = { (uri: String) in "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\n\(uri)\n#EXT-X-ENDLIST\n" }
        let inputs = [
            ("HLS, http segment", playlist("http://127.0.0.1:\(witness.port)/segment.ts")),
            ("HLS, file: segment", playlist("file://\(segment)")),
            ("HLS, path segment", playlist(segment)),
            ("ffconcat, relative name", "ffconcat version 1.0\nfile 'segment.ts'\n"),
        ]
        for (what, text) in inputs {
            // With every demuxer allowed, so that only the policy on nested opens stands in the way.
            let options = SourceOptions(allowedFormats: nil)
            let code = errorCode { _ = try FrameSampler(source: .data(Data(text.utf8)), options: options).frame(at: 0, size: size) }
            #expect(code != nil, "\(what): read")
            // A list format in memory is refused before FFmpeg demuxes it (probed from the bytes).
            #expect(code == .refusedByPolicy, "\(what): got \(String(describing: code))")
        }
        #expect(witness.receivedRequests.isEmpty, "contacted: \(witness.receivedRequests)")
    }

    @Test("A DASH manifest whose BaseURL names another local port is refused; no request reaches that port")
    func dashCrossOriginBaseURL() throws {
        let witness = try HostileServer(.witness)
        defer { witness.stop() }
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["dash.mpd", "init-stream0.m4s", "chunk-stream0-00001.m4s"] {
            try FileManager.default.copyItem(atPath: try BadInputs.path(name), toPath: directory + "/" + name)
        }
        let manifest = try String(contentsOfFile: directory + "/dash.mpd", encoding: .utf8)
        let elsewhere = manifest.replacingOccurrences(of: "<Period ", with: "<BaseURL>http://127.0.0.1:\(witness.port)/</BaseURL>\n<Period ")
        try #require(elsewhere != manifest)
        try elsewhere.write(toFile: directory + "/elsewhere.mpd", atomically: true, encoding: .utf8)
        let origin = try HTTPTestServer(directory: directory)
        defer { origin.stop() }

        // Opted in, the same presentation plays from its own origin: the manifest and segments are sound.
        var trusting = SourceOptions()
        trusting.allowedFormats?.insert("dash")
        var frames = 0
        try LoopPlayer(source: .url(origin.url(for: "dash.mpd")),
                        configuration: .init(size: size, sourceOptions: trusting)).run { _ in frames += 1 }
        #expect(frames == 25)

        // By default DASH is not allowed (FFmpeg 5.1's DASH demuxer opens segments with avio_open2,
        // past the io_open gate): refused from its first bytes, and the other port never hears of it.
        let code = errorCode { _ = try FrameSampler(source: .url(origin.url(for: "elsewhere.mpd"))).frame(at: 0, size: size) }
        #expect(code == .refusedByPolicy, "got \(String(describing: code))")
        #expect(witness.receivedRequests.isEmpty, "the other port was contacted: \(witness.receivedRequests)")
    }

    @Test("A segment named by an absolute path resolves against the playlist's origin, never the local disk")
    func absolutePathSegmentIsRemote() throws {
        let local = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: local) }
        try FileManager.default.copyItem(atPath: try BadInputs.path("segment.ts"), toPath: local + "/local-only.ts")
        let directory = try playlistDirectory(segmentURIs: ["path.m3u8": "\(local)/local-only.ts"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let origin = try HTTPTestServer(directory: directory)
        defer { origin.stop() }
        // http://127.0.0.1:PORT/tmp/…/local-only.ts: the server has no such file, so nothing is read.
        let code = errorCode { _ = try FrameSampler(source: .url(origin.url(for: "path.m3u8"))).frame(at: 0, size: size) }
        #expect(code != nil, "the local file was read")
    }

    @Test("An HLS playlist with same-origin segments (relative and absolute URLs) plays")
    func sameOriginSegmentsPlay() throws {
        let directory = try playlistDirectory(segmentURIs: ["relative.m3u8": "segment.ts"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let origin = try HTTPTestServer(directory: directory)
        defer { origin.stop() }
        let absolute = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\n\(origin.url(for: "segment.ts").absoluteString)\n#EXT-X-ENDLIST\n"
        try absolute.write(toFile: directory + "/absolute.m3u8", atomically: true, encoding: .utf8)
        for name in ["relative.m3u8", "absolute.m3u8"] {
            var frames = 0
            try LoopPlayer(source: .url(origin.url(for: name)), configuration: .init(size: size)).run { _ in frames += 1 }
            #expect(frames == 25, "\(name)")
        }
    }
}

/// A frame count shared between the loop's thread and the test.
private final class FrameCounter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
