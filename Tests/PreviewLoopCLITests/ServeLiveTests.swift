import Foundation
import Glibc
import Testing
import PreviewLoop
import PreviewLoopJobs
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// `latest=true` and `program_time` on HLS playlists under the root, one of them written live by the
/// `ffmpeg` CLI while the server reads it. Frames are checked against ffmpeg's decode of the segment
/// files it wrote; the playlist is read here with a few lines of text handling, not the engine's parser.
@Suite("serve: live HLS (latest, program_time)", .serialized, .timeLimit(.minutes(10)))
struct ServeLiveTests {
    /// The picture size asked for: the writer's own, so no scaling stands between the two decodes.
    static let size = Size(width: 320, height: 240)

    /// ffmpeg's conversion to RGB with full chroma interpolation and accurate rounding (its default
    /// shares chroma between pixel pairs, an error of its own on testsrc2's sharp colour edges).
    static let exact = "scale=flags=bicubic+full_chroma_int+accurate_rnd"

    /// An `ffmpeg` writing `testsrc2` as a live HLS playlist (1-second segments, the last `listSize`
    /// listed, each dated) into `folder` in real time; killed by ``stop()``. Segments that leave the
    /// list stay on disk, so a test slowed by a loaded machine can still decode the one it was answered from.
    final class LiveWriter {
        let process = Process()
        let folder: String
        var playlistPath: String { folder + "/stream.m3u8" }

        init(folder: String, listSize: Int = 6) throws {
            self.folder = folder
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
            process.arguments = ["-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                                 "-c:v", "libx264", "-g", "25", "-f", "hls", "-hls_time", "1", "-hls_list_size", "\(listSize)",
                                 "-hls_flags", "program_date_time", folder + "/stream.m3u8"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// Kills the writer (SIGKILL: a child of a process that blocks SIGTERM for its own handling
        /// inherits the block) and waits for it, at most 10 seconds.
        func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            let end = Date().addingTimeInterval(10)
            while process.isRunning && Date() < end { usleep(20_000) }
        }

        /// The playlist's segments now: file name and `EXT-X-PROGRAM-DATE-TIME` text, oldest first.
        func segments() -> [(name: String, date: String?)] {
            ServeLiveTests.segments(of: (try? String(contentsOfFile: playlistPath, encoding: .utf8)) ?? "")
        }

        /// Waits (at most `seconds`) until `condition` holds of the listed segments' names.
        func wait(seconds: Double = 20, until condition: ([String]) -> Bool) throws {
            let end = Date().addingTimeInterval(seconds)
            while !condition(segments().map(\.name)) {
                guard Date() < end, process.isRunning else { throw OracleError(message: "the live playlist did not advance in time") }
                usleep(100_000)
            }
        }
    }

    /// A playlist's segments: each URI line, with the date tag before it.
    static func segments(of text: String) -> [(name: String, date: String?)] {
        var result: [(name: String, date: String?)] = []
        var date: String?
        for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.isEmpty {
            if line.hasPrefix("#EXT-X-PROGRAM-DATE-TIME:") { date = String(line.dropFirst("#EXT-X-PROGRAM-DATE-TIME:".count)) }
            if !line.hasPrefix("#") {
                result.append((line, date))
                date = nil
            }
        }
        return result
    }

    /// The sequence number in a segment name of ffmpeg's (`stream12.ts` → 12).
    static func number(_ name: String) -> Int { Int(name.filter(\.isNumber)) ?? -1 }

    /// A response body (a PNG) as ffmpeg decodes it.
    static func picture(_ body: Data, size: Size = size) throws -> RGBImage {
        let path = TestPaths.temporaryDirectory() + "/picture.png"
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try body.write(to: URL(fileURLWithPath: path))
        let frames = try Oracle.frames(of: path, filter: "null", size: size)
        guard let first = frames.first else { throw OracleError(message: "the body is not a picture") }
        return first
    }

    /// Every frame of the segments `names` in `folder`, as ffmpeg decodes them, with the segment and index of each.
    static func frames(of names: [String], in folder: String) throws -> [(segment: String, index: Int, image: RGBImage)] {
        try names.flatMap { name in
            try Oracle.frames(of: folder + "/" + name, filter: exact, size: size).enumerated().map { (name, $0, $1) }
        }
    }

    /// `text` (a date tag's value, `2026-12-07T03:10:50.885+0000`) moved on by `seconds`, written with
    /// milliseconds in the zone +01:00.
    static func programTime(_ text: String, plus seconds: Double) throws -> String {
        let reader = DateFormatter()
        reader.locale = Locale(identifier: "en_US_POSIX")
        reader.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
        guard let date = reader.date(from: text) else { throw OracleError(message: "unreadable date \(text)") }
        let writer = ISO8601DateFormatter()
        writer.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        writer.timeZone = TimeZone(secondsFromGMT: 3600)
        return writer.string(from: date.addingTimeInterval(seconds))
    }

    /// A query value percent-encoded (`+` and `:` included).
    static func encoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._"))) ?? value
    }

    @Test("latest=true on a live playlist: the newest segment's last frame, briefly cached; a later request a newer frame")
    func latestFollowsTheLiveEdge() throws {
        try ServeInProcessTests.withServer { server, root in
            let writer = try LiveWriter(folder: root + "/live")
            defer { writer.stop() }
            try writer.wait { $0.count >= 3 }
            let url = "/live/stream.m3u8/thumbnail.png?latest=true&width=320&height=240"
            let newestBefore = try #require(writer.segments().last.map { Self.number($0.name) })
            let first = try server.fetch(url)
            let listedAfter = writer.segments().map(\.name)
            #expect(first.status == 200, "\(first.text)")
            let cacheControl = first.headers["cache-control"] ?? ""
            #expect(cacheControl.hasPrefix("public, max-age=") && !cacheControl.contains("immutable"), "\(cacheControl)")
            let firstTag = try #require(first.headers["etag"])
            // The frame is the last of a segment at least as new as the writer's newest when the request
            // was sent, and no newer than its newest once answered (on a quiet machine the two are at
            // most a segment apart; a loaded one may take longer to answer).
            let recent = listedAfter.filter { Self.number($0) >= newestBefore }
            #expect(!recent.isEmpty, "\(listedAfter) after segment \(newestBefore)")
            let candidates = try Self.frames(of: recent, in: writer.folder)
            let match = Compare.best(try Self.picture(first.body), among: candidates.map(\.image))
            let matched = candidates[match.index]
            let countInSegment = candidates.filter { $0.segment == matched.segment }.count
            #expect(match.psnr > 30, "\(match.psnr) dB")
            #expect(matched.index == countInSegment - 1, "frame \(matched.index) of \(countInSegment) in \(matched.segment)")

            // Two segments later: another validator, a newer frame.
            try writer.wait { names in names.last.map { Self.number($0) >= Self.number(matched.segment) + 2 } ?? false }
            let laterBefore = try #require(writer.segments().last.map { Self.number($0.name) })
            let second = try server.fetch(url)
            #expect(second.status == 200)
            #expect(second.headers["etag"] != firstTag)
            let laterNames = writer.segments().map(\.name).filter { Self.number($0) >= laterBefore }
            let later = try Self.frames(of: laterNames, in: writer.folder)
            let laterMatch = Compare.best(try Self.picture(second.body), among: later.map(\.image))
            #expect(laterMatch.psnr > 30, "\(laterMatch.psnr) dB")
            #expect(Self.number(later[laterMatch.index].segment) > Self.number(matched.segment))
            // A validator of the old edge is no longer current.
            let revalidated = try server.fetch(url, headers: ["If-None-Match: " + firstTag])
            #expect(revalidated.status == 200)
        }
    }

    /// Every frame of an animation (an MP4 at quality 100: FFmpeg 5.1 decodes no animated WebP) as ffmpeg decodes it.
    static func animationFrames(_ body: Data, as format: String = "mp4") throws -> [RGBImage] {
        let path = TestPaths.temporaryDirectory() + "/animation." + format
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try body.write(to: URL(fileURLWithPath: path))
        return try Oracle.frames(of: path, filter: exact, size: size)
    }

    /// Checks that `frames` (an animation at the writer's 25 fps) end at the live edge: its last frame is one of the
    /// segments from `newestBefore` − 1 on (within two segment durations of the writer's newest when the
    /// request was sent), and its frames run on, one source frame each, as the writer's do.
    static func expectAtTheLiveEdge(_ frames: [RGBImage], newestBefore: Int, writer: LiveWriter, _ what: String) throws {
        let recent = writer.segments().map(\.name).filter { number($0) >= newestBefore - 1 }
        let candidates = try Self.frames(of: recent, in: writer.folder)
        let last = try #require(frames.last, "\(what): no frames")
        let match = Compare.best(last, among: candidates.map(\.image))
        #expect(match.psnr > 30, "\(what): the last frame is none of segments \(recent) (\(match.psnr) dB)")
        // The frame before it is the writer's frame before (the animation runs on at the source's rate).
        if frames.count >= 2, match.index > 0 {
            let before = Compare.best(frames[frames.count - 2], among: candidates.map(\.image))
            #expect(before.index == match.index - 1, "\(what): frames out of order (\(before.index), \(match.index))")
        }
    }

    @Test("latest=true on animated.*, and render --latest: the newest seconds of a live playlist, never waited on")
    func latestAnimation() throws {
        try ServeInProcessTests.withServer { server, root in
            let writer = try LiveWriter(folder: root + "/live")
            defer { writer.stop() }
            try writer.wait { $0.count >= 4 }
            let newestBefore = try #require(writer.segments().last.map { Self.number($0.name) })
            let reply = try server.fetch("/live/stream.m3u8/animated.mp4?latest=true&length=2&fps=25&quality=100&width=320&height=240")
            #expect(reply.status == 200, "\(reply.text)")
            let cacheControl = reply.headers["cache-control"] ?? ""
            #expect(cacheControl.hasPrefix("public, max-age=") && !cacheControl.contains("immutable"), "\(cacheControl)")
            let served = try Self.animationFrames(reply.body)
            #expect(served.count == 50, "\(served.count) frames")
            try Self.expectAtTheLiveEdge(served, newestBefore: newestBefore, writer: writer, "animated.mp4")

            // The command line: a live playlist is copied and closed, so the render ends rather than waiting.
            let folder = TestPaths.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let cliBefore = try #require(writer.segments().last.map { Self.number($0.name) })
            let cli = try Child.run(TestPaths.cliBinary, ["render", writer.playlistPath, "--latest", "--length", "2", "--fps", "25",
                                                          "-q", "100", "--size", "320x240", "-o", folder + "/latest.mp4"])
            #expect(cli.status == 0, "\(cli.stderr)")
            let written = try Self.animationFrames(try Data(contentsOf: URL(fileURLWithPath: folder + "/latest.mp4")))
            try Self.expectAtTheLiveEdge(written, newestBefore: cliBefore, writer: writer, "render --latest")
            // Its copy of the playlist is gone.
            let tmp = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            let left = (try? FileManager.default.contentsOfDirectory(atPath: tmp))?.filter { $0.hasPrefix(".preview-loop-latest.") } ?? []
            #expect(left.isEmpty, "\(left)")

            // latest places the window: start with it is refused, naming the parameter.
            let refused = try server.fetch("/live/stream.m3u8/animated.webp?latest=true&start=1")
            #expect(refused.status == 400 && refused.text.contains("start"), "\(refused.status) \(refused.text)")
            let usage = try Child.run(TestPaths.cliBinary, ["render", writer.playlistPath, "--latest", "--start", "1", "-o", folder + "/x.webp"])
            #expect(usage.status == 64 && usage.stderr.contains("--latest"), "\(usage.status) \(usage.stderr)")
        }
    }

    /// Checks that `picture` is the last frame of one of the writer's segments from `newestBefore` on.
    static func expectNewestSegmentsLastFrame(_ picture: RGBImage, newestBefore: Int, writer: LiveWriter, _ what: String) throws {
        let recent = writer.segments().map(\.name).filter { number($0) >= newestBefore }
        #expect(!recent.isEmpty, "\(what): nothing listed from segment \(newestBefore)")
        let candidates = try frames(of: recent, in: writer.folder)
        let match = Compare.best(picture, among: candidates.map(\.image))
        let matched = candidates[match.index]
        #expect(match.psnr > 30, "\(what): \(match.psnr) dB")
        #expect(matched.index == candidates.filter { $0.segment == matched.segment }.count - 1, "\(what): frame \(matched.index) of \(matched.segment)")
    }

    @Test("latest=true on a live playlist under an allowed remote prefix, and thumb --latest over http: the newest segment's last frame")
    func latestOverHTTP() throws {
        let top = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: top) }
        let writer = try LiveWriter(folder: top + "/live")
        defer { writer.stop() }
        let origin = try HTTPTestServer(directory: writer.folder)
        defer { origin.stop() }
        try writer.wait { $0.count >= 3 }
        let base = "http://127.0.0.1:\(origin.port)/live/"
        let allowed = try URLAllowList([base])
        try ServeInProcessTests.withServer({ $0.allowedSources = allowed }) { server, _ in
            let newestBefore = try #require(writer.segments().last.map { Self.number($0.name) })
            let reply = try server.fetch("/thumbnail.png?latest=true&width=320&height=240&url=" + Self.encoded(base + "stream.m3u8"))
            #expect(reply.status == 200, "\(reply.text)")
            let cacheControl = reply.headers["cache-control"] ?? ""
            #expect(cacheControl.hasPrefix("public, max-age=") && !cacheControl.contains("immutable"), "\(cacheControl)")
            try Self.expectNewestSegmentsLastFrame(try Self.picture(reply.body), newestBefore: newestBefore, writer: writer, "serve")
            // A segment outside the allowed prefix is never read.
            try "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nhttp://localhost:\(origin.port)/elsewhere/stream0.ts\n"
                .write(toFile: writer.folder + "/away.m3u8", atomically: true, encoding: .utf8)
            let away = try server.fetch("/thumbnail.png?latest=true&url=" + Self.encoded(base + "away.m3u8"))
            #expect(away.status == 403 || away.status == 502, "\(away.status) \(away.text)")
        }
        let output = top + "/latest.png"
        let cliBefore = try #require(writer.segments().last.map { Self.number($0.name) })
        let cli = try Child.run(TestPaths.cliBinary, ["thumb", base + "stream.m3u8", "--latest", "--size", "320x240", "-o", output])
        #expect(cli.status == 0, "\(cli.stderr)")
        try Self.expectNewestSegmentsLastFrame(try Self.picture(try Data(contentsOf: URL(fileURLWithPath: output))),
                                               newestBefore: cliBefore, writer: writer, "thumb --latest")
    }

    /// A playlist's text frozen: `stream.m3u8` as it is now, written to `name` beside it (its segments stay on disk).
    static func freeze(_ writer: LiveWriter, as name: String) throws {
        try String(contentsOfFile: writer.playlistPath, encoding: .utf8).write(toFile: writer.folder + "/" + name, atomically: true, encoding: .utf8)
    }

    /// The lines a ``HTTPTestServer`` request log holds (none when it was never written).
    static func logLines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test("animated.*?latest=true on a live playlist at an allowed URL: the --root answer's frames; a segment outside the prefix never fetched, too many bytes 413")
    func latestAnimationOverHTTP() throws {
        let top = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: top) }
        let writer = try LiveWriter(folder: top + "/live")
        defer { writer.stop() }
        let originLog = top + "/origin.log", elsewhereLog = top + "/elsewhere.log"
        let origin = try HTTPTestServer(directory: writer.folder, requestLog: originLog)
        defer { origin.stop() }
        let elsewhere = try HTTPTestServer(directory: writer.folder, requestLog: elsewhereLog)
        defer { elsewhere.stop() }
        let base = "http://127.0.0.1:\(origin.port)/live/"
        let allowed = try URLAllowList([base])
        try ServeInProcessTests.withServer({ $0.allowedSources = allowed }) { server, root in
            try writer.wait { $0.count >= 4 }
            // One playlist, as the writer left it a moment ago, read from the URL and, copied with its
            // segments, from the root.
            try Self.freeze(writer, as: "frozen.m3u8")
            let frozen = Self.segments(of: try String(contentsOfFile: writer.folder + "/frozen.m3u8", encoding: .utf8)).map(\.name)
            try FileManager.default.createDirectory(atPath: root + "/live", withIntermediateDirectories: true)
            for name in frozen + ["frozen.m3u8"] {
                try FileManager.default.copyItem(atPath: writer.folder + "/" + name, toPath: root + "/live/" + name)
            }
            let query = "latest=true&length=2&fps=25&width=320&height=240"
            let local = try server.fetch("/live/frozen.m3u8/animated.gif?" + query)
            #expect(local.status == 200, "\(local.text)")
            let remote = try server.fetch("/animated.gif?\(query)&url=" + Self.encoded(base + "frozen.m3u8"))
            #expect(remote.status == 200, "\(remote.text)")
            let cacheControl = remote.headers["cache-control"] ?? ""
            #expect(cacheControl.hasPrefix("public, max-age=") && !cacheControl.contains("immutable"), "\(cacheControl)")
            #expect(remote.headers["etag"] != nil)
            let localFrames = try Self.animationFrames(local.body, as: "gif")
            let remoteFrames = try Self.animationFrames(remote.body, as: "gif")
            #expect(remoteFrames.count == localFrames.count && remoteFrames.count == 50, "\(remoteFrames.count) and \(localFrames.count) frames")
            if let last = remoteFrames.last, let localLast = localFrames.last {
                #expect(Compare.psnr(last, localLast) > 40, "\(Compare.psnr(last, localLast)) dB")
            }
            // The newest two segments were fetched, each once.
            let fetched = Self.logLines(originLog).map { String($0.prefix { $0 != " " }) }.filter { $0.hasSuffix(".ts") }
            #expect(fetched == Array(frozen.suffix(2)), "\(fetched) of \(frozen)")

            // fMP4 segments: the initialization section, then the segments; the last frame the newest segment's last.
            let made = try Child.tool("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                                                 "-t", "4", "-c:v", "libx264", "-g", "25", "-f", "hls", "-hls_time", "1",
                                                 "-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "f-init.mp4",
                                                 "-hls_segment_filename", writer.folder + "/f%d.m4s", "-hls_list_size", "0",
                                                 "-hls_flags", "omit_endlist", writer.folder + "/fmp4.m3u8"])
            #expect(made.status == 0, "\(made.stderr)")
            let fragmented = try server.fetch("/animated.mp4?latest=true&length=2&fps=25&quality=100&width=320&height=240&url="
                                              + Self.encoded(base + "fmp4.m3u8"))
            #expect(fragmented.status == 200, "\(fragmented.text)")
            let fragmentedFrames = try Self.animationFrames(fragmented.body)
            let newestPath = top + "/newest.mp4"
            try Data(try Data(contentsOf: URL(fileURLWithPath: writer.folder + "/f-init.mp4"))
                     + Data(contentsOf: URL(fileURLWithPath: writer.folder + "/f3.m4s"))).write(to: URL(fileURLWithPath: newestPath))
            let newest = try Oracle.frames(of: newestPath, filter: Self.exact, size: Self.size)
            #expect(fragmentedFrames.count == 50, "\(fragmentedFrames.count) frames")
            if let last = fragmentedFrames.last {
                let match = Compare.best(last, among: newest)
                #expect(match.index == newest.count - 1 && match.psnr > 30, "frame \(match.index) of \(newest.count) at \(match.psnr) dB")
            }
            // The same fMP4 playlist as a local file, on the command line and under the root: its newest
            // segments joined too (FFmpeg's HLS demuxer cannot seek into them), the same frames.
            let localFMP4 = top + "/local-fmp4.mp4"
            let cliFMP4 = try Child.run(TestPaths.cliBinary, ["render", writer.folder + "/fmp4.m3u8", "--latest", "--length", "2", "--fps", "25",
                                                              "-q", "100", "--size", "320x240", "-o", localFMP4])
            #expect(cliFMP4.status == 0, "\(cliFMP4.stderr)")
            for name in ["fmp4.m3u8", "f-init.mp4"] + (0...3).map({ "f\($0).m4s" }) {
                try FileManager.default.copyItem(atPath: writer.folder + "/" + name, toPath: root + "/live/" + name)
            }
            let rootFMP4 = try server.fetch("/live/fmp4.m3u8/animated.mp4?latest=true&length=2&fps=25&quality=100&width=320&height=240")
            #expect(rootFMP4.status == 200, "\(rootFMP4.text)")
            for (what, frames) in [("render --latest", try Self.animationFrames(try Data(contentsOf: URL(fileURLWithPath: localFMP4)))),
                                   ("--root", try Self.animationFrames(rootFMP4.body))] {
                #expect(frames.count == 50, "\(what): \(frames.count) frames")
                if let last = frames.last {
                    let match = Compare.best(last, among: newest)
                    #expect(match.index == newest.count - 1 && match.psnr > 30, "\(what): frame \(match.index) of \(newest.count) at \(match.psnr) dB")
                }
            }

            // A segment outside the prefix: refused before any segment is fetched, the other host never asked.
            let before = Self.logLines(originLog).count
            try "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n\(frozen[0])\n#EXTINF:1,\nhttp://127.0.0.1:\(elsewhere.port)/live/\(frozen[1])\n"
                .write(toFile: writer.folder + "/away.m3u8", atomically: true, encoding: .utf8)
            let away = try server.fetch("/animated.gif?\(query)&url=" + Self.encoded(base + "away.m3u8"))
            #expect((400..<500).contains(away.status) && away.headers["content-type"] == "application/problem+json", "\(away.status) \(away.text)")
            #expect(Self.logLines(elsewhereLog).isEmpty, "\(Self.logLines(elsewhereLog))")
            let asked = Self.logLines(originLog).dropFirst(before).map { String($0.prefix { $0 != " " }) }
            #expect(asked.allSatisfy { $0 == "away.m3u8" }, "\(asked)")

            // Segments over the byte bound: a 413 problem, after at most the bound.
            let big = [UInt8](repeating: 0x47, count: 5 << 20)
            try Data(big).write(to: URL(fileURLWithPath: writer.folder + "/big.ts"))
            try ("#EXTM3U\n#EXT-X-TARGETDURATION:1\n" + String(repeating: "#EXTINF:0.1,\nbig.ts\n", count: 20))
                .write(toFile: writer.folder + "/big.m3u8", atomically: true, encoding: .utf8)
            let over = try server.fetch("/animated.gif?\(query)&url=" + Self.encoded(base + "big.m3u8"))
            #expect(over.status == 413 && over.headers["content-type"] == "application/problem+json", "\(over.status) \(over.text)")
            #expect(Self.logLines(originLog).filter { $0.hasPrefix("big.ts ") }.count <= 13)
        }
    }

    @Test("program_time on a live playlist: the frame at that offset of the segment dated before it; outside the window a 404")
    func programTimeOnALivePlaylist() throws {
        try ServeInProcessTests.withServer { server, root in
            // A window of 30 segments: the chosen one stays in it however slowly a loaded machine answers.
            let writer = try LiveWriter(folder: root + "/live", listSize: 30)
            defer { writer.stop() }
            try writer.wait { $0.count >= 4 }
            let listed = writer.segments()
            // A segment inside the window, three from its newest.
            let chosen = listed[listed.count - 3]
            let time = try Self.programTime(try #require(chosen.date), plus: 0.5)
            let reply = try server.fetch("/live/stream.m3u8/thumbnail.png?width=320&height=240&program_time=" + Self.encoded(time))
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.headers["cache-control"]?.contains("immutable") == false)
            // 0.5 s in at 25 fps: frame 12 (0.48 s) is the one shown.
            let frames = try Oracle.frames(of: writer.folder + "/" + chosen.name, filter: Self.exact, size: Self.size)
            let match = Compare.best(try Self.picture(reply.body), among: frames)
            #expect(match.index == 12 && match.psnr > 30, "frame \(match.index) at \(match.psnr) dB")

            let outside = try server.fetch("/live/stream.m3u8/thumbnail.png?program_time=2000-01-01T00:00:00Z")
            #expect(outside.status == 404 && outside.text.contains("window") && outside.text.contains("program_time"), "\(outside.text)")
            let both = try server.fetch("/live/stream.m3u8/thumbnail.png?latest=true&time=1")
            #expect(both.status == 400 && both.text.contains("latest") && both.text.contains("time"), "\(both.text)")
            let malformed = try server.fetch("/live/stream.m3u8/thumbnail.png?program_time=yesterday")
            #expect(malformed.status == 400 && malformed.text.contains("program_time"), "\(malformed.text)")
        }
    }

    @Test("Ended playlists and files: latest is the last frame and caches like a file; program_time needs the date tag")
    func endedPlaylistsAndFiles() throws {
        try ServeInProcessTests.withServer { server, root in
            for (name, flags) in [("dated", ["-hls_flags", "program_date_time"]), ("plain", [])] {
                let made = try Child.tool("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                                                     "-t", "3", "-c:v", "libx264", "-g", "25", "-f", "hls", "-hls_time", "1",
                                                     "-hls_playlist_type", "vod"] + flags + [root + "/\(name).m3u8"])
                #expect(made.status == 0, "\(made.stderr)")
            }
            let segments = Self.segments(of: try String(contentsOfFile: root + "/dated.m3u8", encoding: .utf8))
            #expect(segments.count == 3)
            // latest: the last frame of the last segment, cached as a file is.
            let latest = try server.fetch("/dated.m3u8/thumbnail.png?latest=true&width=320&height=240")
            #expect(latest.status == 200, "\(latest.text)")
            #expect(latest.headers["cache-control"]?.contains("immutable") == true)
            let last = try Oracle.frames(of: root + "/" + segments[2].name, filter: Self.exact, size: Self.size)
            let lastMatch = Compare.best(try Self.picture(latest.body), among: last)
            #expect(lastMatch.index == last.count - 1 && lastMatch.psnr > 30, "frame \(lastMatch.index) at \(lastMatch.psnr) dB")
            // program_time works on an ended playlist with dates.
            let time = try Self.programTime(try #require(segments[1].date), plus: 0.5)
            let dated = try server.fetch("/dated.m3u8/thumbnail.png?width=320&height=240&program_time=" + Self.encoded(time))
            #expect(dated.status == 200, "\(dated.text)")
            let middle = try Oracle.frames(of: root + "/" + segments[1].name, filter: Self.exact, size: Self.size)
            let middleMatch = Compare.best(try Self.picture(dated.body), among: middle)
            #expect(middleMatch.index == 12 && middleMatch.psnr > 30, "frame \(middleMatch.index) at \(middleMatch.psnr) dB")
            // Without the tag: a 400 saying so.
            let plain = try server.fetch("/plain.m3u8/thumbnail.png?program_time=2026-12-07T03:00:00Z")
            #expect(plain.status == 400 && plain.text.contains("EXT-X-PROGRAM-DATE-TIME"), "\(plain.text)")
            // A file: latest is its last frame.
            let file = try server.fetch("/landscape.mp4/thumbnail.png?latest=true&width=400&height=300")
            #expect(file.status == 200, "\(file.text)")
            let fileFrames = try Oracle.frames(of: root + "/landscape.mp4", filter: Self.exact, size: Size(width: 400, height: 300))
            let fileMatch = Compare.best(try Self.picture(file.body, size: Size(width: 400, height: 300)), among: fileFrames)
            #expect(fileMatch.index == fileFrames.count - 1 && fileMatch.psnr > 30, "frame \(fileMatch.index) at \(fileMatch.psnr) dB")
            // A file has no wall clock.
            let undated = try server.fetch("/landscape.mp4/thumbnail.png?program_time=2026-12-07T03:00:00Z")
            #expect(undated.status == 400, "\(undated.text)")
        }
    }

    @Test("A playlist's segment outside the root is never read")
    func segmentOutsideTheRoot() throws {
        try ServeInProcessTests.withServer { server, root in
            let outside = TestPaths.fixture("landscape.mp4")
            for (name, uri) in [("absolute", outside), ("climbing", "../../../../../../.." + outside), ("url", "file://" + outside),
                                ("remote", "http://127.0.0.1:9/a.ts")] {
                let text = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PROGRAM-DATE-TIME:2026-12-07T03:00:00Z\n#EXTINF:4,\n\(uri)\n"
                try text.write(toFile: root + "/\(name).m3u8", atomically: true, encoding: .utf8)
                for query in ["latest=true", "program_time=2026-12-07T03:00:01Z", "time=1"] {
                    let reply = try server.fetch("/\(name).m3u8/thumbnail.png?" + query)
                    #expect(reply.status == 404 || reply.status == 413, "\(name) \(query): \(reply.status) \(reply.text)")
                    #expect(!reply.text.contains(outside), "\(name): \(reply.text)")
                }
            }
        }
    }

    @Test("Every route on a playlist under the root: the CLI's bytes (segments found beside the playlist); a key or a variant playlist refused")
    func ordinaryRoutesOnPlaylists() throws {
        try ServeInProcessTests.withServer { server, root in
            try FileManager.default.createDirectory(atPath: root + "/hls", withIntermediateDirectories: true)
            let made = try Child.tool("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                                                 "-t", "4", "-c:v", "libx264", "-g", "25", "-f", "hls", "-hls_time", "1",
                                                 "-hls_playlist_type", "vod", root + "/hls/vod.m3u8"])
            #expect(made.status == 0, "\(made.stderr)")
            let served = try server.fetch("/hls/vod.m3u8/thumbnail.jpg?time=2&width=320&height=240")
            #expect(served.status == 200, "\(served.text)")
            let written = TestPaths.temporaryDirectory() + "/thumb.jpg"
            defer { try? FileManager.default.removeItem(atPath: (written as NSString).deletingLastPathComponent) }
            let cli = try Child.run(TestPaths.cliBinary, ["thumb", root + "/hls/vod.m3u8", "-o", written, "--at", "2", "--size", "320x240"])
            #expect(cli.status == 0, "\(cli.stderr)")
            #expect(served.body == (try Data(contentsOf: URL(fileURLWithPath: written))), "the served thumbnail differs from the CLI's")
            for route in ["animated.webp?start=1&end=3&width=160", "storyboard.vtt", "placeholder.json?time=1"] {
                let reply = try server.fetch("/hls/vod.m3u8/" + route)
                #expect(reply.status == 200, "\(route): \(reply.status) \(reply.text)")
            }
            // An encrypted playlist names a key file; a variant playlist names other playlists: neither is read.
            try "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-KEY:METHOD=AES-128,URI=\"/etc/hostname\"\n#EXTINF:1,\nvod0.ts\n#EXT-X-ENDLIST\n"
                .write(toFile: root + "/hls/key.m3u8", atomically: true, encoding: .utf8)
            try "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\nvod.m3u8\n".write(toFile: root + "/hls/variants.m3u8", atomically: true, encoding: .utf8)
            for name in ["key", "variants"] {
                let reply = try server.fetch("/hls/\(name).m3u8/thumbnail.jpg?time=0")
                #expect(reply.status == 415, "\(name): \(reply.status) \(reply.text)")
                #expect(!reply.text.contains("/etc/hostname"), "\(name): \(reply.text)")
            }
        }
    }
}
