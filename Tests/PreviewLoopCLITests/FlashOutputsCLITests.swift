import Foundation
import Testing
import PreviewLoopCLI
import PreviewLoopJobs
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// 6 s of mid grey at 60 fps, 160x90, lossless, with a full-screen 10 Hz white strobe over `[from, to)`.
private func strobe(_ name: String, in directory: String, seconds: Double = 6, from: Double = 2, to: Double = 3.5) throws -> String {
    let path = directory + "/" + name
    let graph = "color=0x808080:s=160x90:r=60:d=\(seconds)[b];color=white:s=160x90:r=60:d=\(seconds)[w];"
        + "[b][w]overlay=enable='gte(t\\,\(from))*lt(t\\,\(to - 0.005))*lt(mod(n\\,6)\\,3)'"
    let result = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", graph,
                                           "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", path])
    guard result.status == 0 else { throw OracleError(message: "ffmpeg: \(result.stderr)") }
    return path
}

private func record(_ result: ChildResult) throws -> [String: Any] {
    let record = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
    return try #require((record["outputs"] as? [[String: Any]])?.first)
}

@Suite("CLI: --flash-safety avoid, and the check in card, wall and serve", .serialized, .timeLimit(.minutes(10)))
struct FlashOutputsCLITests {
    @Test("render --flash-safety avoid from standard input (read once): moves the window, says where, records it")
    func renderAvoidFromStandardInput() throws {
        let directory = TestPaths.temporaryDirectory()
        let clip = try Data(contentsOf: URL(fileURLWithPath: try strobe("strobe.mp4", in: directory)))
        let arguments = ["render", "-", "--start", "2", "--length", "1", "-s", "96x54", "--flash-safety", "avoid"]
        // A pipe can be read only once: a second read would find it empty and fail.
        let moved = try Child.cli(arguments + ["-o", directory + "/a.mp4", "--json"], input: .piped(clip))
        #expect(moved.status == 0, "\(moved.stderr)")
        // Candidates every 4 frames at render's 15 fps: the nearest clean one is 16 frames before 2 s.
        #expect(moved.errorLines.count == 1)
        #expect(moved.errorLines.first?.hasPrefix("moved the loop window from 2.000 s to 0.933 s, the nearest start clear of "
            + "photosensitive flashes (--flash-safety avoid; ") == true)
        let output = try record(moved)
        #expect(abs((output["time"] as? Double ?? 0) - 2 + 16.0 / 15) < 1e-6)
        #expect(output["time_asked"] as? Double == 2)
        #expect(output["choice"] as? String == "moved clear of flashes")
        #expect((output["flashes"] as? [String: Any])?["verdict"] as? String == "pass")
        // Everything strobes: exit 1, one error line naming the reason, no file.
        let all = try Data(contentsOf: URL(fileURLWithPath: try strobe("all.mp4", in: directory, seconds: 4, from: 0, to: 5)))
        let none = try Child.cli(arguments + ["-o", directory + "/b.mp4"], input: .piped(all))
        #expect(none.status == 1)
        #expect(none.errorLines.count == 1)
        #expect(none.stderr.contains("is free of photosensitive flashes") && none.stderr.contains("nothing written"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/b.mp4"))
    }

    @Test("card checks its animation (warning, --json), not its stills; avoid is not a card's value")
    func card() throws {
        let directory = TestPaths.temporaryDirectory()
        let clip = try strobe("strobe.mp4", in: directory, from: 0, to: 6)
        let base = ["card", clip, "--size", "160x90", "--fps", "15", "--play-length", "2"]
        let animated = try Child.cli(base + ["-o", directory + "/card.webp", "--json"])
        #expect(animated.status == 0, "\(animated.stderr)")
        #expect(animated.errorLines.contains { $0.hasPrefix("Warning: \(directory)/card.webp flashes: failure (WCAG 2.3.1)") })
        #expect((try record(animated)["flashes"] as? [String: Any])?["verdict"] as? String == "failure")
        let still = try Child.cli(base + ["-o", directory + "/card.png", "--at", "2", "--json"])
        #expect(still.status == 0 && still.errorLines.isEmpty)
        #expect(try record(still)["flashes"] == nil)
        let off = try Child.cli(base + ["-o", directory + "/off.webp", "--flash-safety", "off"])
        #expect(off.status == 0 && off.errorLines.isEmpty)
        #expect(try Child.cli(base + ["-o", directory + "/avoid.webp", "--flash-safety", "avoid"]).status == 64)
    }

    @Test("wall checks each loop's window: a warning for the one that strobes, a count in the summary line")
    func wall() throws {
        let directory = TestPaths.temporaryDirectory()
        let bad = try strobe("bad.mp4", in: directory, from: 0, to: 6)
        let calm = try strobe("calm.mp4", in: directory, from: 5, to: 6)
        let result = try Child.cli(["wall", bad, calm, "--log", directory + "/logs", "--length", "2", "--size", "96x54"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.errorLines.contains { $0.hasPrefix("Warning: \(bad) flashes: failure (WCAG 2.3.1)") && $0.hasSuffix("its loop plays anyway") })
        #expect(!result.errorLines.contains { $0.contains(calm) })
        #expect(result.errorLines.contains { $0.hasPrefix("wall: 2 loops logged") && $0.contains("flashes: 1 of 2 loops extended_failure or failure") })
        let off = try Child.cli(["wall", bad, "--log", directory + "/logs-off", "--length", "2", "--size", "96x54", "--flash-safety", "off"])
        #expect(off.status == 0 && !off.stderr.contains("flashes"))
    }

    @Test("serve: animated.* says the verdict in Flash-Safety, kept with the disk cache's entry; avoid and off; stills carry none")
    func serve() throws {
        let root = TestPaths.temporaryDirectory(), cache = TestPaths.temporaryDirectory() + "/cache"
        _ = try strobe("strobe.mp4", in: root)
        _ = try strobe("all.mp4", in: root, seconds: 4, from: 0, to: 5)
        func start() throws -> PreviewServer { try ServeCacheTests.start(root: root, cache: cache) }
        var server = try start()
        var base = "http://127.0.0.1:\(server.port)"
        let url = "/strobe.mp4/animated.webp?start=2&length=1&width=96&height=54"
        let checked = try ServeTests.fetch(base + url)
        #expect(checked.status == 200)
        #expect(checked.headers["flash-safety"] == "failure")
        #expect(checked.headers["flash-safety-start"] == nil)
        let avoided = try ServeTests.fetch(base + url + "&flash_safety=avoid")
        #expect(avoided.status == 200)
        #expect(avoided.headers["flash-safety"] == "pass")
        #expect(avoided.headers["flash-safety-start"] == "0.933")
        #expect(try ServeTests.fetch(base + url + "&flash_safety=off").headers["flash-safety"] == nil)
        #expect(try ServeTests.fetch(base + "/all.mp4/animated.webp?start=1&length=1&flash_safety=avoid").status == 422)
        #expect(try ServeTests.fetch(base + url + "&flash_safety=maybe").status == 400)
        #expect(try ServeTests.fetch(base + "/strobe.mp4/card.png?width=160&height=90").headers["flash-safety"] == nil)
        #expect(try ServeTests.fetch(base + "/strobe.mp4/card.webp?width=160&height=90&flash_safety=avoid").status == 400)
        #expect(ServeCacheTests.eventually { ServeCacheTests.entries(cache).count >= 3 })
        server.stop(grace: 5)
        // A new server answers from the disk cache, with the header kept with the entry.
        server = try start()
        defer { server.stop(grace: 5) }
        base = "http://127.0.0.1:\(server.port)"
        let again = try ServeTests.fetch(base + url)
        #expect(again.status == 200)
        #expect(again.headers["flash-safety"] == "failure")
        #expect(again.body == checked.body)
        #expect(try ServeCacheTests.metric("previewloop_disk_cache_hits_total", base) == 1)
        let ranged = try ServeTests.fetch(base + url, headers: ["Range: bytes=0-9"])
        #expect(ranged.status == 206 && ranged.body == checked.body.prefix(10))
    }

    @Test("batch: the hover records its flash verdicts (flash_safety check by default); avoid moves it and says where")
    func batch() throws {
        let bench = BatchBench()
        let clip = try strobe("strobe.mp4", in: bench.directory)
        try bench.writeManifest([("strobe", clip)])
        let checkRecipe = bench.directory + "/check.json", avoidRecipe = bench.directory + "/avoid.json"
        try #"{"hover": {"start": 2, "length": 1, "size": "96x54"}}"#.write(toFile: checkRecipe, atomically: true, encoding: .utf8)
        try #"{"hover": {"start": 2, "length": 1, "size": "96x54", "flash_safety": "avoid"}}"#
            .write(toFile: avoidRecipe, atomically: true, encoding: .utf8)
        let checked = try bench.batch(["--recipe", checkRecipe])
        #expect(checked.status == 0, "\(checked.stderr)")
        let hover = try #require((try bench.records()["strobe"]?["outputs"] as? [[String: Any]])?.first { $0["kind"] as? String == "hover" })
        #expect((hover["flashes"] as? [String: Any])?["verdict"] as? String == "failure")
        let avoided = try bench.batch(["--recipe", avoidRecipe])
        #expect(avoided.status == 0, "\(avoided.stderr)")
        let moved = try #require((try bench.records()["strobe"]?["outputs"] as? [[String: Any]])?.first { $0["kind"] as? String == "hover" })
        #expect(abs((moved["time"] as? Double ?? 0) - 2 + 16.0 / 15) < 1e-6)
        #expect(moved["time_asked"] as? Double == 2)
        #expect(moved["choice"] as? String == "moved clear of flashes")
        #expect((moved["flashes"] as? [String: Any])?["verdict"] as? String == "pass")
    }
}
