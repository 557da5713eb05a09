import Foundation
import Glibc
@testable import PreviewLoop
import Synchronization
import Testing
import PreviewLoopTestSupport

/// A batch directory for one test: a manifest over fixtures, bad inputs made here, and the CLI.
struct BatchBench {
    let directory = TestPaths.temporaryDirectory()
    var out: String { directory + "/OUT" }
    var manifest: String { directory + "/clips.jsonl" }

    /// Writes a manifest, one `{"id", "input"}` object a line.
    func writeManifest(_ clips: [(id: String, input: String)]) throws {
        let lines = clips.map { "{\"id\":\"\($0.id)\",\"input\":\"\($0.input)\"}" }
        try (lines.joined(separator: "\n") + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
    }

    /// A corrupt clip: the landscape fixture (index first) with all its media data zeroed.
    func makeCorrupt() throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixture("landscape.mp4"))))
        let mdat = Array("mdat".utf8)
        let at = (0..<(bytes.count - 4)).first { Array(bytes[$0..<$0 + 4]) == mdat }!
        for index in (at + 4)..<bytes.count { bytes[index] = 0 }
        let path = directory + "/corrupt.mp4"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func batch(_ arguments: [String]) throws -> ChildResult {
        try Child.run(TestPaths.cliBinary, ["batch", manifest, "--out", out] + arguments)
    }

    /// The clip records of a results file, by id.
    func records(_ name: String = "results.jsonl") throws -> [String: [String: Any]] {
        let text = try String(contentsOfFile: out + "/" + name, encoding: .utf8)
        var byID: [String: [String: Any]] = [:]
        for line in text.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            if object["type"] as? String == "clip" { byID[object["id"] as! String] = object }
        }
        return byID
    }

    /// Every file under OUT/<id>/ (hidden batch state and results files excluded) with its bytes.
    func outputs() throws -> [String: Data] {
        var files: [String: Data] = [:]
        let manager = FileManager.default
        for id in try manager.contentsOfDirectory(atPath: out) where !id.hasPrefix(".") && !id.hasSuffix(".jsonl") {
            for name in try manager.contentsOfDirectory(atPath: out + "/" + id) where name != ".complete.json" {
                files[id + "/" + name] = try Data(contentsOf: URL(fileURLWithPath: out + "/" + id + "/" + name))
            }
        }
        return files
    }
}

@Suite("Batch: runs end to end", .serialized, .timeLimit(.minutes(10)), .tags(.slow))
struct BatchRunTests {
    @Test("Good clips ok with every output; corrupt, missing and not-media clips permanent failures; a rerun skips all")
    func honestResultsAndResume() throws {
        let bench = BatchBench()
        let notMedia = bench.directory + "/text.mp4"
        try "not a video\n".write(toFile: notMedia, atomically: true, encoding: .utf8)
        try bench.writeManifest([("land", TestPaths.fixture("landscape.mp4")), ("rot", TestPaths.fixture("rotated90.mp4")),
                                 ("corrupt", try bench.makeCorrupt()), ("missing", bench.directory + "/nope.mp4"),
                                 ("text", notMedia)])
        let first = try bench.batch(["--jobs", "2"])
        #expect(first.status == 65, "\(first.stderr)")
        let records = try bench.records()
        #expect(records.count == 5)
        for id in ["land", "rot"] {
            let record = try #require(records[id])
            #expect(record["status"] as? String == "ok")
            let outputs = record["outputs"] as! [[String: Any]]
            #expect(Set(outputs.map { $0["kind"] as! String }) == ["poster", "webvtt", "sprite_sheet", "hover"])
            for output in outputs {
                let size = try FileManager.default.attributesOfItem(atPath: bench.out + "/" + (output["path"] as! String))[.size] as! Int
                #expect(size > 0 && size == output["bytes"] as? Int)
            }
            #expect((record["clip"] as? [String: Any])?["codec"] as? String == "h264")
            // The poster's placeholders: ThumbHash bytes in base64, a 4x3 BlurHash, `#rrggbb`.
            let poster = try #require(outputs.first { $0["kind"] as? String == "poster" })
            #expect((Data(base64Encoded: poster["thumbhash"] as? String ?? "")?.count ?? 0) > 5)
            #expect((poster["blurhash"] as? String)?.count == 28)
            let color = poster["dominant_color"] as? String ?? ""
            #expect(color.count == 7 && color.hasPrefix("#") && color.dropFirst().allSatisfy(\.isHexDigit))
        }
        #expect((records["rot"]?["clip"] as? [String: Any])?["rotation"] as? Int == 90)
        let expected = ["corrupt": "corrupt_data", "missing": "input_not_found", "text": "not_media_file"]
        for (id, reason) in expected {
            #expect(records[id]?["status"] as? String == "failed")
            #expect(records[id]?["reason"] as? String == reason)
            #expect(records[id]?["permanence"] as? String == "permanent")
            #expect(!FileManager.default.fileExists(atPath: bench.out + "/" + id))
        }
        let before = try bench.outputs()
        let modified = try FileManager.default.attributesOfItem(atPath: bench.out + "/land/poster.jpg")[.modificationDate] as! Date

        // Rerun: nothing redone, the same exit status, every record marked skipped.
        let second = try bench.batch([])
        #expect(second.status == 65)
        let rerun = try bench.records()
        #expect(rerun.values.allSatisfy { $0["skipped"] as? Bool == true && $0["attempts"] as? Int == 0 })
        #expect(try bench.outputs() == before)
        #expect(try FileManager.default.attributesOfItem(atPath: bench.out + "/land/poster.jpg")[.modificationDate] as! Date == modified)

        // --retry-failed tries the bad ones again (and they fail again); --force redoes the good ones.
        let retried = try bench.batch(["--retry-failed"])
        #expect(retried.status == 65)
        let again = try bench.records()
        #expect(again["corrupt"]?["attempts"] as? Int == 1 && again["land"]?["skipped"] as? Bool == true)
        let forced = try bench.batch(["--force"])
        #expect(forced.status == 65)
        #expect(try bench.records()["land"]?["skipped"] as? Bool == false)
        #expect(try bench.outputs() == before)

        // A deleted output makes the clip incomplete: the next run redoes it.
        try FileManager.default.removeItem(atPath: bench.out + "/rot/sprites-1.jpg")
        _ = try bench.batch([])
        #expect(try bench.records()["rot"]?["skipped"] as? Bool == false)
        #expect(try bench.outputs() == before)

        let report = try Child.run(TestPaths.cliBinary, ["batch", "report", bench.out, "--json"])
        #expect(report.status == 0)
        let summary = try JSONSerialization.jsonObject(with: report.stdout) as! [String: Any]
        #expect(summary["ok"] as? Int == 2 && summary["failed"] as? Int == 3 && summary["permanent"] as? Int == 3)
    }

    @Test("Shards on one directory write disjoint results files whose union is the whole manifest")
    func shardedRuns() throws {
        let bench = BatchBench()
        let fixtures = ["landscape.mp4", "rotated90.mp4", "rotated180.mp4", "short.mp4", "vp9.webm", "offset.ts"]
        try bench.writeManifest(fixtures.map { (String($0.split(separator: ".")[0]), TestPaths.fixture($0)) })
        var seen: [String] = []
        for index in 0..<3 {
            let result = try bench.batch(["--shard", "\(index)/3", "--jobs", "1", "--recipe", TestRecipes.posterOnly])
            #expect(result.status == 0, "\(result.stderr)")
            seen += try bench.records("results.shard-\(index)-of-3.jsonl").keys
        }
        #expect(seen.sorted() == fixtures.map { String($0.split(separator: ".")[0]) }.sorted())
        // The same shard from Slurm's environment: everything already done.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPaths.cliBinary)
        process.arguments = ["batch", bench.manifest, "--out", bench.out, "--recipe", TestRecipes.posterOnly]
        process.environment = ["SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(try bench.records("results.shard-1-of-3.jsonl").values.allSatisfy { $0["skipped"] as? Bool == true })
    }

    @Test("A run killed with SIGKILL mid-way, then rerun, leaves exactly the outputs of an uninterrupted run")
    func killedAndResumed() throws {
        let bench = BatchBench(), reference = BatchBench()
        let recipe = bench.directory + "/recipe.json"
        try #"{"poster":{},"sprites":{"every":1},"hover":{"length":2}}"#.write(toFile: recipe, atomically: true, encoding: .utf8)
        let clips = (0..<8).map { ("clip\($0)", TestPaths.fixture(["landscape.mp4", "rotated90.mp4", "card.mp4", "vp9.webm"][$0 % 4])) }
        try bench.writeManifest(clips)
        try reference.writeManifest(clips)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPaths.cliBinary)
        process.arguments = ["batch", bench.manifest, "--out", bench.out, "--recipe", recipe, "--jobs", "2"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Kill it once two clips are recorded, while others are in flight.
        let results = bench.out + "/results.jsonl"
        for _ in 0..<600 {
            let lines = (try? String(contentsOfFile: results, encoding: .utf8))?.split(separator: "\n").count ?? 0
            if lines >= 2 || !process.isRunning { break }
            usleep(10_000)
        }
        let wasRunning = process.isRunning
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(wasRunning, "the batch finished before it could be killed; the test proves nothing")
        // Complete folders or none: every published folder carries its completion record.
        for id in try FileManager.default.contentsOfDirectory(atPath: bench.out) where id.hasPrefix("clip") {
            #expect(FileManager.default.fileExists(atPath: bench.out + "/" + id + "/.complete.json"))
        }
        let resumed = try bench.batch(["--recipe", recipe, "--jobs", "2"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try bench.records().values.contains { $0["skipped"] as? Bool == true })
        let whole = try reference.batch(["--recipe", recipe, "--jobs", "2"])
        #expect(whole.status == 0)
        let resumedFiles = try bench.outputs(), wholeFiles = try reference.outputs()
        #expect(resumedFiles.keys.sorted() == wholeFiles.keys.sorted())
        #expect(resumedFiles.count >= 8 * 4)   // poster, hover, thumbnails.vtt and at least one sheet each
        for (name, bytes) in wholeFiles { #expect(resumedFiles[name] == bytes, "\(name) differs") }
        let staging = try FileManager.default.contentsOfDirectory(atPath: bench.out + "/.staging/all")
        #expect(staging.isEmpty)
    }

    @Test("A stalled HTTP server times the clip out (transient) and the batch goes on", .tags(.network))
    func stalledServer() throws {
        let server = try HostileServer(.silent)
        defer { server.stop() }
        let bench = BatchBench()
        try bench.writeManifest([("stalled", server.url(for: "clip.mp4").absoluteString), ("good", TestPaths.fixture("landscape.mp4"))])
        let started = Date()
        let result = try bench.batch(["--timeout", "1", "--retries", "1", "--retry-delay", "0.1", "--jobs", "1", "--recipe", TestRecipes.posterOnly])
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(result.status == 75)
        let records = try bench.records()
        #expect(records["stalled"]?["reason"] as? String == "timed_out")
        #expect(records["stalled"]?["permanence"] as? String == "transient")
        #expect(records["stalled"]?["attempts"] as? Int == 2)
        #expect(records["good"]?["status"] as? String == "ok")
        #expect(!FileManager.default.fileExists(atPath: bench.out + "/stalled"))
        // A transient failure does not stop the next run from trying again.
        let second = try bench.batch(["--timeout", "1", "--retries", "0", "--jobs", "1", "--recipe", TestRecipes.posterOnly])
        #expect(second.status == 75)
        #expect(try bench.records()["stalled"]?["attempts"] as? Int == 1)
    }

    @Test("A full disk is a transient failure that leaves nothing partial", .enabled(if: getuid() == 0, "needs root to mount a tmpfs"))
    func fullDisk() throws {
        let bench = BatchBench()
        let mount = bench.directory + "/small"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let mounted = try Child.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mount])
        try #require(mounted.status == 0, "mount failed: \(mounted.stderr)")
        defer { _ = try? Child.run("/bin/umount", [mount]) }
        // Leave 24 KB: room for the results, not for a 1080p poster at quality 100 (about 250 KB).
        let filler = try Child.run("/usr/bin/fallocate", ["-l", "\(1024 * 1024 - 24 * 1024)", mount + "/filler"])
        try #require(filler.status == 0)
        let recipe = bench.directory + "/recipe.json"
        try #"{"poster":{"size":"1920x1080","quality":100}}"#.write(toFile: recipe, atomically: true, encoding: .utf8)
        try bench.writeManifest([("big", TestPaths.fixture("landscape.mp4"))])
        let result = try Child.run(TestPaths.cliBinary, ["batch", bench.manifest, "--out", mount + "/OUT", "--recipe", recipe,
                                                           "--retries", "0"])
        #expect(result.status == 75, "\(result.stdoutText) \(result.stderr)")
        let text = try String(contentsOfFile: mount + "/OUT/results.jsonl", encoding: .utf8)
        #expect(text.contains("\"reason\":\"disk_full\"") && text.contains("\"permanence\":\"transient\""))
        #expect(!FileManager.default.fileExists(atPath: mount + "/OUT/big"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: mount + "/OUT/.staging/all").isEmpty)
    }

    @Test("Standard input is never read by accident; the manifest is read from it only when named -")
    func standardInput() throws {
        let bench = BatchBench()
        try bench.writeManifest([("land", TestPaths.fixture("landscape.mp4"))])
        // A pipe with the caller's bytes in it; the child gets a copy of its read end, the test keeps one.
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let payload = Array("keep me: the caller's next command reads this\n".utf8)
        #expect(write(ends[1], payload, payload.count) == payload.count)
        close(ends[1])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPaths.cliBinary)
        process.arguments = ["batch", bench.manifest, "--out", bench.out, "--recipe", TestRecipes.posterOnly]
        process.standardInput = FileHandle(fileDescriptor: dup(ends[0]), closeOnDealloc: true)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        var left = [UInt8](repeating: 0, count: 4096)
        let count = read(ends[0], &left, left.count)
        #expect(count == payload.count && Array(left.prefix(max(0, count))) == payload, "the batch read its standard input")

        // `-`: the manifest itself comes from standard input.
        let fromStdin = Process()
        fromStdin.executableURL = URL(fileURLWithPath: TestPaths.cliBinary)
        fromStdin.arguments = ["batch", "-", "--out", bench.directory + "/OUT2", "--recipe", TestRecipes.posterOnly]
        let manifestPipe = Pipe()
        fromStdin.standardInput = manifestPipe
        fromStdin.standardOutput = FileHandle.nullDevice
        try fromStdin.run()
        manifestPipe.fileHandleForWriting.write(Data((TestPaths.fixture("short.mp4") + "\n").utf8))
        try manifestPipe.fileHandleForWriting.close()
        fromStdin.waitUntilExit()
        #expect(fromStdin.terminationStatus == 0)
        let made = try FileManager.default.contentsOfDirectory(atPath: bench.directory + "/OUT2")
        #expect(made.contains("short"), "a derived id has no hash when no other clip shares the name: \(made)")
    }

    @Test("SIGTERM stops between clips, records where it stopped, exits 75; a rerun finishes")
    func terminated() throws {
        let bench = BatchBench()
        let recipe = bench.directory + "/recipe.json"
        try #"{"poster":{},"hover":{"length":3}}"#.write(toFile: recipe, atomically: true, encoding: .utf8)
        // One clip twelve times, each with its own start: not duplicates, so each is made.
        try (0..<12).map { "{\"id\":\"c\($0)\",\"input\":\"\(TestPaths.fixture("card.mp4"))\",\"start\":0.0\($0 + 10)}" }
            .joined(separator: "\n").write(toFile: bench.manifest, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPaths.cliBinary)
        process.arguments = ["batch", bench.manifest, "--out", bench.out, "--recipe", recipe, "--jobs", "1"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let results = bench.out + "/results.jsonl"
        for _ in 0..<600 {
            if ((try? String(contentsOfFile: results, encoding: .utf8))?.split(separator: "\n").count ?? 0) >= 1 || !process.isRunning { break }
            usleep(10_000)
        }
        #expect(process.isRunning)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 75)
        let lines = try String(contentsOfFile: results, encoding: .utf8).split(separator: "\n")
        let summary = try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as! [String: Any]
        #expect(summary["type"] as? String == "summary" && summary["stopped"] as? Bool == true)
        #expect((summary["not_done"] as? Int ?? 0) > 0 && summary["stopped_before"] is String)
        #expect(try FileManager.default.contentsOfDirectory(atPath: bench.out + "/.staging/all").isEmpty)
        let rerun = try bench.batch(["--recipe", recipe])
        #expect(rerun.status == 0)
        #expect(try bench.records().count == 12)
    }

    @Test("SIGTERM interrupts the clip in flight at once (a stalled read), records it as interrupted, leaves nothing partial; a rerun finishes", .tags(.network))
    func terminatedMidClip() throws {
        let server = try HostileServer(.silent)
        defer { server.stop() }
        let bench = BatchBench()
        try bench.writeManifest([("slow", server.url(for: "clip.mp4").absoluteString), ("good", TestPaths.fixture("short.mp4"))])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPaths.cliBinary)
        // The stalled open alone would take --timeout 120 s: only an interrupt ends it sooner.
        process.arguments = ["batch", bench.manifest, "--out", bench.out, "--jobs", "1", "--timeout", "120", "--retries", "0", "--recipe", TestRecipes.posterOnly]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<3000 where server.receivedRequests.isEmpty && process.isRunning { usleep(10_000) }
        #expect(process.isRunning && !server.receivedRequests.isEmpty, "the clip never started reading")
        usleep(200_000)
        let signalled = Date()
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let seconds = Date().timeIntervalSince(signalled)
        #expect(seconds < 10, "SIGTERM took \(seconds) s to stop the batch")
        #expect(process.terminationStatus == 75)
        let records = try bench.records()
        #expect(records["slow"]?["status"] as? String == "failed")
        #expect(records["slow"]?["reason"] as? String == "interrupted")
        #expect(records["slow"]?["permanence"] as? String == "transient")
        #expect(records["good"] == nil)
        let lines = try String(contentsOfFile: bench.out + "/results.jsonl", encoding: .utf8).split(separator: "\n")
        let summary = try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as! [String: Any]
        #expect(summary["stopped_before"] as? String == "good" && summary["not_done"] as? Int == 1)
        #expect((summary["failures_by_reason"] as? [String: Int])?["interrupted"] == 1)
        // Nothing partial: no folder for the clip, an empty staging area, no failure remembered.
        #expect(!FileManager.default.fileExists(atPath: bench.out + "/slow"))
        #expect(!FileManager.default.fileExists(atPath: bench.out + "/.failures/slow.json"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: bench.out + "/.staging/all").isEmpty)
        // The rerun (the clip now readable) finishes the job.
        try bench.writeManifest([("slow", TestPaths.fixture("landscape.mp4")), ("good", TestPaths.fixture("short.mp4"))])
        let rerun = try bench.batch(["--recipe", TestRecipes.posterOnly])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try bench.records().values.allSatisfy { $0["status"] as? String == "ok" })
        #expect(try bench.records().count == 2)
    }

    @Test("Dolby Vision profile 5: the batch warns on stderr as thumb does, and the record carries the HDR kind")
    func dolbyVisionWarning() throws {
        let bench = BatchBench()
        try bench.writeManifest([("dv", TestPaths.fixture("dolby-vision-p5.mp4")), ("sdr", TestPaths.fixture("short.mp4"))])
        let result = try bench.batch(["--jobs", "1", "--recipe", TestRecipes.posterOnly])
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n").filter { $0.hasPrefix("Warning: ") }
        #expect(warnings.count == 1 && warnings[0].hasPrefix("Warning: dv: Dolby Vision profile 5"), "\(result.stderr)")
        let records = try bench.records()
        let dv = try #require(records["dv"]?["clip"] as? [String: Any])
        #expect(dv["hdr"] as? String == "Dolby Vision" && dv["dolby_vision"] as? String == "5")
        #expect((dv["warning"] as? String)?.contains("green/purple") == true)
        let sdr = try #require(records["sdr"]?["clip"] as? [String: Any])
        #expect(sdr["hdr"] as? String == "SDR" && sdr["dolby_vision"] == nil && sdr["warning"] == nil)
        // sheet warns too.
        let sheet = try Child.run(TestPaths.cliBinary, ["sheet", TestPaths.fixture("dolby-vision-p5.mp4"), "-o",
                                                          bench.directory + "/dv.png", "--grid", "2x1", "--width", "320"])
        #expect(sheet.status == 0 && sheet.stderr.hasPrefix("Warning: Dolby Vision profile 5"), "\(sheet.stderr)")
    }

    @Test("A hover with loop_point and seam is the file render makes with the same options: same bytes, frames, loop point and seam")
    func seamedHover() throws {
        let bench = BatchBench()
        let clip = TestPaths.fixture("card.mp4")
        try bench.writeManifest([("card", clip)])
        let recipe = bench.directory + "/recipe.json"
        let variants: [(recipe: String, render: [String])] = [
            (#"{"hover":{"start":0.5,"length":1.5,"loop_point":"auto","seam":"crossfade=0.3","size":"160x90","fps":10,"quality":70}}"#,
             ["--start", "0.5", "--length", "1.5", "--loop-point", "auto", "--seam", "crossfade=0.3", "--size", "160x90",
              "--fps", "10", "--quality", "70"]),
            (#"{"hover":{"start":0.2,"loop_point":"2.3","size":"160x90","fps":12}}"#,
             ["--start", "0.2", "--loop-point", "2.3", "--size", "160x90", "--fps", "12", "--quality", "75"]),
        ]
        for (index, variant) in variants.enumerated() {
            try variant.recipe.write(toFile: recipe, atomically: true, encoding: .utf8)
            let result = try bench.batch(["--recipe", recipe, "--jobs", "1"])
            #expect(result.status == 0, "\(result.stderr)")
            let record = try #require(try bench.records()["card"])
            #expect(record["skipped"] as? Bool == false, "a changed recipe redoes the clip")
            let hover = try #require((record["outputs"] as? [[String: Any]])?.first { $0["kind"] as? String == "hover" })
            let reference = bench.directory + "/render-\(index).mp4"
            let render = try Child.cli(["render", clip, "-o", reference, "--json"] + variant.render)
            #expect(render.status == 0, "\(render.stderr)")
            let rendered = try #require((try JSONSerialization.jsonObject(with: render.stdout) as? [String: Any])?["outputs"] as? [[String: Any]])[0]
            let made = try Data(contentsOf: URL(fileURLWithPath: bench.out + "/card/hover.mp4"))
            #expect(made == (try Data(contentsOf: URL(fileURLWithPath: reference))), "variant \(index): hover.mp4 differs from render's file")
            for key in ["frames", "loop_point", "width", "height", "bytes"] {
                #expect("\(hover[key] ?? "nil")" == "\(rendered[key] ?? "nil")", "variant \(index): \(key)")
            }
            #expect(abs((hover["duration"] as? Double ?? -1) - (rendered["duration"] as? Double ?? 1)) < 1e-5)
            let seam = try #require(hover["seam"] as? [String: Any])
            #expect(NSDictionary(dictionary: seam).isEqual(to: rendered["seam"] as? [String: Any] ?? [:]), "\(seam) vs \(rendered["seam"] ?? "nil")")
            // ffprobe counts the frames the record claims.
            let probe = try Child.tool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                                   "stream=nb_read_frames", "-of", "csv=p=0", bench.out + "/card/hover.mp4"])
            let counted = Int(String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(counted == hover["frames"] as? Int)
            let loopPoint = try #require(hover["loop_point"] as? Double)
            if index == 0 {
                // Searched within ±25 % of the length after the start, joined by a crossfade of 3 frames at 10 fps.
                #expect(loopPoint >= 0.5 + 1.5 * 0.75 - 1e-9 && loopPoint <= 0.5 + 1.5 * 1.25 + 1e-9, "\(loopPoint)")
                #expect(seam["kind"] as? String == "crossfade" && seam["crossfade"] as? Double == 0.3)
            } else {
                #expect(abs(loopPoint - 2.3) < 1e-3, "\(loopPoint)")
                #expect(seam["kind"] as? String == "cut" && seam["crossfade"] as? Double == 0)
            }
        }
        let again = try bench.batch(["--recipe", recipe, "--jobs", "1"])
        let skipped = try bench.records()["card"]?["skipped"] as? Bool
        #expect(again.status == 0 && skipped == true, "the same recipe skips the clip")
    }

    @Test("A recipe's poster format writes poster.avif (or .webp, .png): thumb's bytes for the same options")
    func posterFormat() throws {
        let bench = BatchBench()
        let clip = TestPaths.fixture("landscape.mp4")
        try bench.writeManifest([("land", clip)])
        let recipe = bench.directory + "/recipe.json"
        try #"{"poster":{"at":1,"size":"160x120","quality":70,"format":"avif"}}"#.write(toFile: recipe, atomically: true, encoding: .utf8)
        let result = try bench.batch(["--recipe", recipe, "--jobs", "1"])
        #expect(result.status == 0, "\(result.stderr)")
        let record = try #require(try bench.records()["land"])
        let poster = try #require((record["outputs"] as? [[String: Any]])?.first { $0["kind"] as? String == "poster" })
        #expect(poster["path"] as? String == "land/poster.avif")
        let reference = bench.directory + "/thumb.avif"
        let thumb = try Child.cli(["thumb", clip, "-o", reference, "--at", "1", "--size", "160x120", "--quality", "70"])
        #expect(thumb.status == 0, "\(thumb.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: bench.out + "/land/poster.avif")) == Data(contentsOf: URL(fileURLWithPath: reference)))
        #expect(try WebOracle.avifFrame(of: bench.out + "/land/poster.avif", size: Size(width: 160, height: 120)).info["Format"] == "YUV444")
        try #"{"poster":{"format":"gif"}}"#.write(toFile: recipe, atomically: true, encoding: .utf8)
        let refused = try bench.batch(["--recipe", recipe, "--jobs", "1"])
        #expect(refused.status != 0 && refused.stderr.contains(#""poster"."format": expected "jpg", "webp", "avif" or "png""#), "\(refused.stderr)")
    }

    @Test("A poster at best is the frame thumb --at best picks; at a time, the frame thumb --at takes")
    func posterAt() throws {
        let bench = BatchBench()
        let clip = TestPaths.fixture("title-card.mp4")
        try bench.writeManifest([("title", clip)])
        let recipe = bench.directory + "/recipe.json"
        for (at, thumbAt) in [(#""best""#, "best"), (#"1.7"#, "1.7"), (#""25%""#, "25%")] {
            try #"{"poster":{"at":\#(at),"size":"160x120","quality":85}}"#.write(toFile: recipe, atomically: true, encoding: .utf8)
            let result = try bench.batch(["--recipe", recipe, "--jobs", "1"])
            #expect(result.status == 0, "\(result.stderr)")
            let record = try #require(try bench.records()["title"])
            #expect(record["skipped"] as? Bool == false, "a changed \"at\" redoes the clip")
            let poster = try #require((record["outputs"] as? [[String: Any]])?.first { $0["kind"] as? String == "poster" })
            let reference = bench.directory + "/thumb.jpg"
            let thumb = try Child.cli(["thumb", clip, "-o", reference, "--at", thumbAt, "--size", "160x120", "--quality", "85", "--json"])
            #expect(thumb.status == 0, "\(thumb.stderr)")
            let chosen = try #require((try JSONSerialization.jsonObject(with: thumb.stdout) as? [String: Any])?["outputs"] as? [[String: Any]])[0]
            let time = try #require(poster["time"] as? Double)
            #expect(time == chosen["time"] as? Double, "\(at): batch \(time) vs thumb \(chosen["time"] ?? "nil")")
            #expect(try Data(contentsOf: URL(fileURLWithPath: bench.out + "/title/poster.jpg")) == Data(contentsOf: URL(fileURLWithPath: reference)),
                    "\(at): poster.jpg differs from thumb's")
            if thumbAt == "best" {
                // Not the title card at the start nor the credits at the end.
                #expect(time > 1.2 && time < 2.8, "\(time)")
                #expect((poster["choice"] as? String)?.hasPrefix("best of the clip") == true, "\(poster["choice"] ?? "nil")")
            } else {
                #expect(poster["choice"] as? String == "the time asked (exact)")
            }
        }
    }

    @Test("contact-sheet.jpg and strip.jpg are the files sheet and strip --span all make with the same options; the record has the picks")
    func sheetAndStrip() throws {
        let bench = BatchBench()
        let clip = TestPaths.fixture("title-card.mp4")
        try bench.writeManifest([("title", clip)])
        let recipe = bench.directory + "/recipe.json"
        let variants: [(recipe: String, sheet: [String], strip: [String])] = [
            (#"{"sheet":{"quality":85},"strip":{"count":4,"columns":2,"gap":3,"timestamps":true}}"#,
             ["-q", "85"], ["-n", "4", "-c", "2", "--gap", "3", "--timestamps"]),
            (#"{"sheet":{"grid":"3x2","tile_width":120,"gap":4,"margin":5,"header":false,"timestamps":false,"pick":"scenes","quality":90},"strip":{"count":5,"pick":"scenes"}}"#,
             ["--grid", "3x2", "--tile-width", "120", "--gap", "4", "--margin", "5", "--no-header", "--no-timestamps", "--pick", "scenes", "-q", "90"],
             ["-n", "5", "--pick", "scenes"]),
        ]
        for (index, variant) in variants.enumerated() {
            try variant.recipe.write(toFile: recipe, atomically: true, encoding: .utf8)
            let result = try bench.batch(["--recipe", recipe, "--jobs", "1"])
            #expect(result.status == 0, "\(result.stderr)")
            let record = try #require(try bench.records()["title"])
            #expect(record["skipped"] as? Bool == false, "a changed recipe redoes the clip")
            let outputs = try #require(record["outputs"] as? [[String: Any]])
            #expect(outputs.map { $0["kind"] as? String } == ["strip", "sheet"])
            for (kind, arguments) in [("sheet", ["sheet"] + variant.sheet), ("strip", ["strip", "--span", "all", "--size", "160x90", "-q", "85"] + variant.strip)] {
                let reference = bench.directory + "/\(kind)-\(index).jpg"
                let made = try Child.cli([arguments[0], clip, "-o", reference, "--json"] + arguments.dropFirst())
                #expect(made.status == 0, "\(made.stderr)")
                let expected = try #require((try JSONSerialization.jsonObject(with: made.stdout) as? [String: Any])?["outputs"] as? [[String: Any]])[0]
                let entry = try #require(outputs.first { $0["kind"] as? String == kind })
                let file = kind == "sheet" ? "contact-sheet.jpg" : "strip.jpg"
                #expect(try Data(contentsOf: URL(fileURLWithPath: bench.out + "/title/" + file)) == Data(contentsOf: URL(fileURLWithPath: reference)),
                        "variant \(index): \(kind).jpg differs from the \(kind) command's file")
                for key in ["width", "height", "tiles", "bytes"] {
                    #expect("\(entry[key] ?? "nil")" == "\(expected[key] ?? "nil")", "variant \(index) \(kind): \(key)")
                }
                let plan = try #require(entry["plan"] as? [String: Any])
                #expect(NSDictionary(dictionary: plan).isEqual(to: expected["plan"] as? [String: Any] ?? [:]), "variant \(index) \(kind): plan")
                #expect(plan["pick"] as? String == (index == 0 ? "even" : "scenes"))
            }
        }
    }

    @Test("A hover as animated WebP or GIF is the file render writes with the same options; a bad format is refused")
    func hoverFormats() throws {
        let bench = BatchBench()
        let clip = TestPaths.fixture("card.mp4")
        try bench.writeManifest([("card", clip)])
        let recipe = bench.directory + "/recipe.json"
        for format in ["webp", "gif"] {
            try #"{"hover":{"start":0.5,"length":1,"size":"161x91","fps":8,"format":"\#(format)"}}"#
                .write(toFile: recipe, atomically: true, encoding: .utf8)
            let result = try bench.batch(["--recipe", recipe, "--jobs", "1"])
            #expect(result.status == 0, "\(result.stderr)")
            let record = try #require(try bench.records()["card"])
            let hover = try #require((record["outputs"] as? [[String: Any]])?.first { $0["kind"] as? String == "hover" })
            #expect(hover["path"] as? String == "card/hover.\(format)")
            let reference = bench.directory + "/render.\(format)"
            let render = try Child.cli(["render", clip, "-o", reference, "--start", "0.5", "--length", "1", "--size", "161x91",
                                        "--fps", "8"] + (format == "gif" ? [] : ["--quality", "75"]))
            #expect(render.status == 0, "\(render.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: bench.out + "/card/hover.\(format)")) == Data(contentsOf: URL(fileURLWithPath: reference)),
                    "hover.\(format) differs from render's file")
            #expect(!FileManager.default.fileExists(atPath: bench.out + "/card/hover.mp4"))
        }
        for (bad, key) in [(#"{"hover":{"format":"avi"}}"#, "format"), (#"{"hover":{"format":"gif","quality":50}}"#, "quality"),
                           (#"{"hover":{"size":"161x91"}}"#, "size")] {
            try bad.write(toFile: recipe, atomically: true, encoding: .utf8)
            let refused = try bench.batch(["--recipe", recipe])
            #expect(refused.status == 64 && refused.stderr.contains("\"hover\".\"\(key)\""), "\(bad): \(refused.stderr)")
        }
    }

    @Test("Identical files under other names are made once: the copies' folders hold hard links, their records say whose")
    func duplicatesLinked() throws {
        let bench = BatchBench()
        try FileManager.default.createDirectory(atPath: bench.directory + "/lib/sub", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestPaths.fixture("landscape.mp4"), toPath: bench.directory + "/lib/a.mp4")
        try FileManager.default.copyItem(atPath: TestPaths.fixture("landscape.mp4"), toPath: bench.directory + "/lib/sub/copy.mp4")
        try FileManager.default.copyItem(atPath: TestPaths.fixture("card.mp4"), toPath: bench.directory + "/lib/b.mp4")
        let result = try Child.run(TestPaths.cliBinary, ["batch", bench.directory + "/lib", "--out", bench.out, "--jobs", "2"])
        #expect(result.status == 0, "\(result.stderr)")
        let records = try bench.records()
        #expect(Set(records.keys) == ["a", "b", "sub_copy"], "ids carry no hash when the names are unique: \(records.keys)")
        let copy = try #require(records["sub_copy"])
        #expect(copy["duplicate_of"] as? String == "a" && copy["status"] as? String == "ok")
        #expect(records["a"]?["duplicate_of"] == nil && records["b"]?["duplicate_of"] == nil)
        for name in ["poster.jpg", "thumbnails.vtt", "sprites-1.jpg"] {
            var original = stat(), linked = stat()
            #expect(stat(bench.out + "/a/" + name, &original) == 0 && stat(bench.out + "/sub_copy/" + name, &linked) == 0)
            #expect(original.st_ino == linked.st_ino, "\(name) is a hard link to a's")
        }
        // A rerun finds both done; a copy with another start is made on its own.
        let again = try Child.run(TestPaths.cliBinary, ["batch", bench.directory + "/lib", "--out", bench.out])
        #expect(again.status == 0 && again.stdoutText.contains("3 left as they were") || again.stderr.contains("3 left as they were"),
                "\(again.stdout)\(again.stderr)")
        try bench.writeManifest([("x", bench.directory + "/lib/a.mp4"), ("y", bench.directory + "/lib/sub/copy.mp4")])
        try (String(contentsOfFile: bench.manifest, encoding: .utf8).replacingOccurrences(of: "copy.mp4\"}", with: "copy.mp4\",\"start\":1}"))
            .write(toFile: bench.manifest, atomically: true, encoding: .utf8)
        let other = BatchBench()
        let overridden = try Child.run(TestPaths.cliBinary, ["batch", bench.manifest, "--out", other.out])
        #expect(overridden.status == 0, "\(overridden.stderr)")
        #expect(try other.records()["y"]?["duplicate_of"] == nil, "another start makes other outputs")
    }

    @Test("A recipe with an unknown key or a value out of range: one Error line naming the key, exit 64, nothing made")
    func recipeRefusals() throws {
        let bench = BatchBench()
        try bench.writeManifest([("short", TestPaths.fixture("short.mp4"))])
        let recipe = bench.directory + "/recipe.json"
        let cases: [(json: String, names: String)] = [
            (#"{"hover":{"seam":"wipe"}}"#, "\"hover\".\"seam\""),
            (#"{"hover":{"start":2,"loop_point":1}}"#, "\"hover\".\"loop_point\""),
            (#"{"hover":{"loop_point":3}}"#, "\"hover\".\"loop_point\""),   // a time needs a start in seconds, not the poster
            (#"{"hover":{"start":"auto"}}"#, "\"hover\".\"start\""),
            (#"{"hover":{"lop_point":"auto"}}"#, "\"lop_point\""),
            (#"{"strip":{"count":0}}"#, "\"strip\".\"count\""),
            (#"{"poster":{"at":"soon"}}"#, "\"poster\".\"at\""),
            (#"{"poster":{"at":"best","start":1}}"#, "\"poster\".\"start\""),
            (#"{"sheet":{"grid":"30x30"}}"#, "\"sheet\".\"grid\""),
            (#"{"sheet":{"pick":"random"}}"#, "\"sheet\".\"pick\""),
            (#"{"strip":{"gap":999}}"#, "\"strip\".\"gap\""),
            (#"{"sheets":{}}"#, "unknown key \"sheets\""),
        ]
        for (json, names) in cases {
            try json.write(toFile: recipe, atomically: true, encoding: .utf8)
            let result = try bench.batch(["--recipe", recipe])
            #expect(result.status == 64, "\(json): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: ") && result.stderr.contains(names), "\(json): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(json): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: bench.out), "\(json): the output directory was made")
        }
    }

    @Test("A manifest input holding a NUL is refused naming its line; the name cut at the NUL is never opened")
    func nulInputRefused() throws {
        let bench = BatchBench()
        defer { try? FileManager.default.removeItem(atPath: bench.directory) }
        // Cut at the NUL, the input would be the landscape fixture, which opens fine.
        let fixture = TestPaths.fixture("landscape.mp4")
        try "{\"id\":\"cut\",\"input\":\"\(fixture)\\u0000.txt\"}\n".write(toFile: bench.manifest, atomically: true, encoding: .utf8)
        let result = try bench.batch([])
        #expect(result.status != 0, "\(result.stdoutText)")
        #expect(result.stderr.hasPrefix("Error: ") && result.stderr.contains("clips.jsonl: line 1: ") && result.stderr.contains("NUL"),
                "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: bench.out + "/cut"), "the clip was made from the cut name")
    }

    @Test("The shard's lock is held until the results file has its summary line")
    func lockHeldUntilSummary() throws {
        let bench = BatchBench()
        try bench.writeManifest([("a", TestPaths.fixture("landscape.mp4")), ("b", TestPaths.fixture("card.mp4"))])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPaths.cliBinary)
        process.arguments = ["batch", bench.manifest, "--out", bench.out, "--jobs", "1", "--recipe", TestRecipes.posterOnly]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        // Wait until the run holds the lock, then wait for it: once ours, the summary must be written.
        let lockPath = bench.out + "/.lock.all"
        var descriptor: Int32 = -1
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            descriptor = open(lockPath, O_RDWR | O_CLOEXEC)
            if descriptor >= 0 {
                if flock(descriptor, LOCK_EX | LOCK_NB) != 0 { break }    // held by the run
                flock(descriptor, LOCK_UN)
                close(descriptor)
                descriptor = -1
            }
            usleep(2_000)
        }
        try #require(descriptor >= 0, "the run never held \(lockPath)")
        defer { close(descriptor) }
        #expect(flock(descriptor, LOCK_EX) == 0)
        let text = try String(contentsOfFile: bench.out + "/results.jsonl", encoding: .utf8)
        let last = try #require(text.split(separator: "\n").last)
        #expect(last.contains("\"type\":\"summary\""), "the lock was free before the summary: \(last)")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test("Usage errors exit 64")
    func usage() throws {
        for arguments in [["batch"], ["batch", "m.jsonl"], ["batch", "m.jsonl", "-o", "x", "--shard", "3/3"],
                          ["batch", "m.jsonl", "-o", "x", "--jobs", "0"], ["batch", "report"],
                          ["batch", "report", "x", "--force"], ["batch", "a", "b", "-o", "x"]] {
            let result = try Child.run(TestPaths.cliBinary, arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: "))
        }
    }

    @Test("The library's results() sequence yields one record per clip")
    func library() async throws {
        let directory = TestPaths.temporaryDirectory()
        let clips = [BatchClip(id: "a", input: TestPaths.fixture("short.mp4")), BatchClip(id: "b", input: TestPaths.fixture("dark.mp4"))]
        var options = BatchOptions(outputDirectory: directory)
        options.recipe = BatchRecipe(strip: .init())
        options.jobs = 2
        let runner = try BatchRunner(manifest: clips, options: options)
        var ids: [String] = []
        for await record in runner.results() {
            #expect(record.status == .ok)
            #expect(record.outputs.map(\.kind) == ["strip"])
            ids.append(record.id)
        }
        #expect(ids.sorted() == ["a", "b"])
        #expect(throws: PreviewLoopError.self) { try BatchRunner(manifest: clips, options: options) }   // the shard is locked while `runner` lives
        _ = runner
    }
}
