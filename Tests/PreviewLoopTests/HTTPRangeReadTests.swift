import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// http(s) inputs read in bounded byte ranges: keyframe samples of an MP4 whose index is at its end
/// fetch a small part of it, never with an open-ended `bytes=N-`; a server that ignores `Range` is still
/// read; a server that drops connections mid-range is asked again; the key packets of keyframe samples
/// are fetched on several connections at once; and every picture is the local file's.
@Suite("http(s) inputs read in bounded ranges", .serialized, .timeLimit(.minutes(10)), .tags(.network))
final class HTTPRangeReadTests {
    let folder = TestPaths.temporaryDirectory()
    let size = Size(width: 320, height: 180)
    /// Keyframe samples as a strip or sprites take them: one seek each.
    let times = [5.0, 15, 25, 35]

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// A 40 s 640x360 clip with a keyframe every 250 frames and its index at the end (as ffmpeg writes
    /// an MP4 without +faststart), at `name` in the folder.
    func makeClip(_ name: String, faststart: Bool = false) throws -> String {
        let clip = folder + "/" + name
        let made = try Child.tool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=40",
                                             "-c:v", "libx264", "-preset", "ultrafast", "-g", "250", "-b:v", "2M", "-pix_fmt", "yuv420p"]
                                  + (faststart ? ["-movflags", "+faststart"] : []) + [clip], killAfter: 240)
        #expect(made.status == 0, "\(made.stderr)")
        return clip
    }

    func samples(_ source: Source) throws -> [VideoFrame] {
        try FrameSampler(source: source).frames(at: times, size: size, accuracy: .keyframe, interval: 10)
    }

    @Test("Keyframe samples of an MP4 indexed at its end fetch under a fifth of it, in bounded ranges only")
    func boundedRanges() throws {
        let clip = try makeClip("indexed-at-end.mp4")
        let fileSize = try #require(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
        let log = folder + "/requests.log"
        let server = try HTTPTestServer(directory: folder, requestLog: log)
        defer { server.stop() }
        let remote = try samples(.url(server.url(for: "indexed-at-end.mp4")))
        let local = try samples(.file(clip))
        #expect(remote.map(\.image) == local.map(\.image))
        let ranges = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map { String($0.split(separator: " ").last ?? "") }
        var fetched = 0
        for range in ranges {
            // `bytes=A-B`: both ends given.
            let ends = range.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
            guard range.hasPrefix("bytes="), ends.count == 2, let first = Int(ends[0]), let last = Int(ends[1]) else {
                Issue.record("an unbounded request: \(range) (all: \(ranges))")
                continue
            }
            fetched += min(last, fileSize - 1) - first + 1
        }
        print("4 keyframe samples of a \(fileSize)-byte MP4 over http: \(fetched) bytes asked for in \(ranges.count) requests")
        #expect(fetched < fileSize / 5, "\(fetched) of \(fileSize) bytes asked for: \(ranges)")
    }

    @Test("Keyframe samples fetch their key packets on several connections at once, and give the local file's pictures")
    func parallelRanges() throws {
        let clip = try makeClip("parallel.mp4")
        let log = folder + "/parallel.log"
        // Each answer waits 50 ms (a slow link), so ranges sent at once are answered at once.
        let server = try HTTPTestServer(directory: folder, requestLog: log, answerDelay: 0.05)
        defer { server.stop() }
        let sampler = try FrameSampler(source: .url(server.url(for: "parallel.mp4")))
        let remote = try sampler.frames(at: times, size: size, accuracy: .keyframe, interval: 10)
        #expect(remote.map(\.image) == (try samples(.file(clip))).map(\.image))
        // `NAME PORT BUSY RANGE`: the client's port names the connection; BUSY counts the requests the
        // server was answering when this one came, itself included.
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ") }
        let connections = Set(lines.map { $0[1] })
        let mostAtOnce = lines.compactMap { Int($0[2]) }.max() ?? 0
        print("4 keyframe samples over http: \(lines.count) requests on \(connections.count) connections, at most \(mostAtOnce) at once")
        #expect(connections.count > 1, "every range on one connection: \(lines)")
        #expect(mostAtOnce > 1, "no two ranges answered at once: \(lines)")
        let reads = try #require(sampler.remoteReads)
        #expect(reads.requests == lines.count, "\(reads.requests) requests counted, \(lines.count) logged by the server")
    }

    @Test("A server that ignores Range is still read (forward, by FFmpeg's protocol), and gives the local file's pictures")
    func serverWithoutRanges() throws {
        let clip = try makeClip("front.mp4", faststart: true)
        let server = try HTTPTestServer(directory: folder, flavour: .plain)
        defer { server.stop() }
        // Exact frames: an input that cannot seek has no keyframe index to seek by.
        func exact(_ source: Source) throws -> [VideoFrame] {
            try FrameSampler(source: source).frames(at: times, size: size, accuracy: .exact, interval: 10)
        }
        let sampler = try FrameSampler(source: .url(server.url(for: "front.mp4")))
        let remote = try sampler.frames(at: times, size: size, accuracy: .exact, interval: 10)
        #expect(remote.map(\.image) == (try exact(.file(clip))).map(\.image))
        #expect(sampler.remoteReads == nil, "a server without ranges is read by FFmpeg's protocol")
    }

    @Test("A server that cuts every other response off mid-range is asked again, and gives the local file's pictures")
    func droppedConnections() throws {
        let clip = try makeClip("cut.mp4")
        let server = try HTTPTestServer(directory: folder, redirects: ["cut.mp4": "!drop"])
        defer { server.stop() }
        let sampler = try FrameSampler(source: .url(server.url(for: "cut.mp4")))
        let remote = try sampler.frames(at: times, size: size, accuracy: .keyframe, interval: 10)
        #expect(remote.map(\.image) == (try samples(.file(clip))).map(\.image))
        let reads = try #require(sampler.remoteReads, "read through FFmpeg's protocol, not in ranges")
        #expect(reads.requests >= 2)
    }
}
