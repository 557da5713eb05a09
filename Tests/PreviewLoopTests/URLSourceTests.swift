import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// `Source.url` against a real HTTP server on 127.0.0.1 (a `python3` child process started and
/// stopped by each test): probing, sampling and looping over HTTP give exactly what the same calls
/// give on the local file, and HTTP failures (404, refused connection, no byte ranges) surface as
/// ``PreviewLoopError`` codes within seconds instead of hangs.
@Suite("URL sources over HTTP", .timeLimit(.minutes(10)), .tags(.network))
struct URLSourceTests {
    let fixtures = TestPaths.packageRoot.appendingPathComponent("Fixtures").path
    let size = Size(width: 320, height: 180)

    @Test("Probing over HTTP equals probing the file")
    func probeEqualsFile() throws {
        let server = try HTTPTestServer(directory: fixtures)
        defer { server.stop() }
        for name in ["landscape.mp4", "rotated90.mp4", "offset.ts"] {
            let remote = try MediaProbe.probe(.url(server.url(for: name)))
            let local = try MediaProbe.probe(.file(TestPaths.fixture(name)))
            #expect(remote == local, "\(name)")
        }
    }

    @Test("An exact still over HTTP has the same pixels as from the file")
    func stillEqualsFile() throws {
        let server = try HTTPTestServer(directory: fixtures)
        defer { server.stop() }
        let remote = try FrameSampler(source: .url(server.url(for: "landscape.mp4")))
        let local = try FrameSampler(source: .file(TestPaths.fixture("landscape.mp4")))
        // Out of order, so the remote source must seek backwards as well as forwards.
        for (time, accuracy) in [(1.5, SeekAccuracy.exact), (3.3, .exact), (0.7, .exact), (2.6, .keyframe)] {
            let a = try remote.frame(at: time, size: size, accuracy: accuracy)
            let b = try local.frame(at: time, size: size, accuracy: accuracy)
            #expect(a.sourceTime == b.sourceTime, "at \(time)")
            #expect(a.image == b.image, "pixels differ at \(time) (\(accuracy))")
        }
    }

    @Test("Two loop passes over HTTP deliver the file's 100 frames twice, pixel for pixel",
          arguments: [256 << 20, 0])
    func loopEqualsFile(frameCacheLimit: Int) throws {
        // With no frame cache, pass 2 must rewind the HTTP input (a ranged request).
        let server = try HTTPTestServer(directory: fixtures)
        defer { server.stop() }
        let configuration = LoopPlayer.Configuration(frameCacheLimit: frameCacheLimit)
        let remote = try collect(LoopPlayer(source: .url(server.url(for: "landscape.mp4")), configuration: configuration), loops: 2)
        let local = try collect(LoopPlayer(source: .file(TestPaths.fixture("landscape.mp4"))), loops: 1)
        try #require(local.count == 100)
        try #require(remote.count == 200)
        for index in 0..<200 {
            let (a, b) = (remote[index], local[index % 100])
            #expect(a.image == b.image && a.sourceTime == b.sourceTime && a.loopIndex == index / 100,
                    "frame \(index) differs from the file's")
        }
    }

    @Test("Looping over a server without byte ranges (python's http.server) still wraps",
          arguments: [256 << 20, 0])
    func loopWithoutRangeSupport(frameCacheLimit: Int) throws {
        // Such a server cannot seek: without the frame cache, pass 2 needs a reconnect or a reopen.
        let server = try HTTPTestServer(directory: fixtures, flavour: .plain)
        defer { server.stop() }
        let loop = try LoopPlayer(source: .url(server.url(for: "landscape.mp4")),
                                   configuration: .init(frameCacheLimit: frameCacheLimit))
        var frames: [VideoFrame] = []
        do {
            try loop.run(loops: 2) { frames.append($0) }
        } catch {
            Issue.record("after \(frames.count) frames: \(error.code): \(error)")
        }
        #expect(frames.count == 200)
    }

    @Test("A URL that answers 404 throws inputNotFound")
    func notFound() throws {
        let server = try HTTPTestServer(directory: fixtures)
        defer { server.stop() }
        let url = server.url(for: "no-such-clip.mp4")
        let error = try #require(throws: PreviewLoopError.self) { try MediaProbe.probe(.url(url)) }
        // FFmpeg reports AVERROR_HTTP_NOT_FOUND; PreviewLoopError.Code.inputNotFound documents "or the URL answered 404".
        #expect(error.code == .inputNotFound, "got \(error.code): \(error)")
        #expect(error.description.contains(url.absoluteString))
        #expect(throws: PreviewLoopError.self) { try FrameSampler(source: .url(url)) }
        #expect(throws: PreviewLoopError.self) { try LoopPlayer(source: .url(url)) }
    }

    @Test("A port with nothing listening fails fast with inputNotReadable, not a hang")
    func connectionRefused() throws {
        let url = URL(string: "http://127.0.0.1:\(HTTPTestServer.unusedPort())/landscape.mp4")!
        // A hang would end at the 5 s open deadline as timedOut: the code below tells the two apart.
        let error = try #require(throws: PreviewLoopError.self) {
            try MediaProbe.probe(.url(url), options: SourceOptions(openTimeout: 5, readTimeout: 5))
        }
        // inputNotReadable documents "network failure"; notMediaFile is for bytes that are not media.
        #expect(error.code == .inputNotReadable, "got \(error.code): \(error)")
        #expect(error.description.contains(url.absoluteString))
    }

    @Test("The CLI writes a thumbnail from an http URL identical to the file's")
    func cliThumbnailFromURL() throws {
        let server = try HTTPTestServer(directory: fixtures)
        defer { server.stop() }
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let remoteOut = directory + "/remote.ppm", localOut = directory + "/local.ppm"
        let remote = try Child.run(TestPaths.cliBinary, ["thumb", server.url(for: "landscape.mp4").absoluteString,
                                                           "-o", remoteOut, "--at", "1.5", "--size", "320x180"])
        let local = try Child.run(TestPaths.cliBinary, ["thumb", TestPaths.fixture("landscape.mp4"),
                                                          "-o", localOut, "--at", "1.5", "--size", "320x180"])
        #expect(remote.status == 0, "\(remote.stderr)")
        #expect(local.status == 0, "\(local.stderr)")
        let a = try Data(contentsOf: URL(fileURLWithPath: remoteOut)), b = try Data(contentsOf: URL(fileURLWithPath: localOut))
        #expect(a == b)
        #expect(try PPM.decode([UInt8](a)).size == size)

        let missing = try Child.run(TestPaths.cliBinary, ["thumb", server.url(for: "gone.mp4").absoluteString,
                                                            "-o", directory + "/gone.ppm"])
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("Error: ") && missing.stderr.contains("gone.mp4"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/gone.ppm"))
    }

    private func collect(_ loop: LoopPlayer, loops: Int) throws -> [VideoFrame] {
        var frames: [VideoFrame] = []
        try loop.run(loops: loops) { frames.append($0) }
        return frames
    }
}
