import Foundation
import Glibc
@testable import PreviewLoop
import Testing
import PreviewLoopTestSupport

/// The third attack's findings, each as a reproducer: what the engine did not make it never deletes,
/// replaces or truncates; results files are never lost or torn; every fatal signal cleans up; reads
/// that could wait for ever (a named pipe, a stalled server) are refused or interrupted.
@Suite("Hostile input: ownership, results files, signals, hangs", .serialized, .timeLimit(.minutes(10)))
struct HostileOwnershipTests {
    static let fixture = TestPaths.fixture("landscape.mp4")

    /// SHA-256-free byte comparison: the file's bytes, or `nil` when it is gone.
    static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    static func writeManifest(_ lines: [String], to path: String) throws {
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func errorLines(_ result: ChildResult) -> [Substring] {
        result.errorLines.filter { $0.hasPrefix("Error:") }
    }

    // MARK: - 1, 2: batch replaces nothing it did not make

    @Test("An id naming the manifest's own input with -o . leaves the input alone (exit 65, one Error line)")
    func inputIsNeverReplaced() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = directory + "/a.mp4"
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: input)
        let original = try #require(Self.bytes(input))
        try Self.writeManifest([#"{"id":"a.mp4","input":"a.mp4"}"#], to: directory + "/m.jsonl")
        let result = try Child.run(TestPaths.cliBinary, ["batch", directory + "/m.jsonl", "-o", directory, "--quiet"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(Self.bytes(input) == original, "the source video must survive byte for byte")
        let errors = Self.errorLines(result)
        #expect(errors.count == 1 && errors.first?.contains(directory + "/a.mp4") == true, "\(result.stderr)")
        // A folder whose files include an input is left alone too.
        try FileManager.default.createDirectory(atPath: directory + "/videos", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: directory + "/videos/b.mp4")
        try Self.writeManifest([#"{"id":"videos","input":"videos/b.mp4"}"#], to: directory + "/m2.jsonl")
        let second = try Child.run(TestPaths.cliBinary, ["batch", directory + "/m2.jsonl", "-o", directory, "--quiet"])
        #expect(second.status == 65, "\(second.stderr)")
        #expect(Self.bytes(directory + "/videos/b.mp4") == original)
    }

    @Test("A user's file or folder named like an id survives; the clip is made once the path is free")
    func userFilesSurvive() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let out = directory + "/OUT"
        try FileManager.default.createDirectory(atPath: out + "/photos", withIntermediateDirectories: true)
        try Data("my notes\n".utf8).write(to: URL(fileURLWithPath: out + "/notes"))
        try Data("beach\n".utf8).write(to: URL(fileURLWithPath: out + "/photos/holiday.txt"))
        symlink("/etc", out + "/linked")
        let manifest = directory + "/m.jsonl"
        try Self.writeManifest(["notes", "photos", "linked", "fine"].map { "{\"id\":\"\($0)\",\"input\":\"\(Self.fixture)\"}" }, to: manifest)
        let recipe = directory + "/r.json"
        try #"{"poster":{}}"#.write(toFile: recipe, atomically: true, encoding: .utf8)
        let result = try Child.run(TestPaths.cliBinary, ["batch", manifest, "-o", out, "--recipe", recipe, "--quiet"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(Self.bytes(out + "/notes") == Data("my notes\n".utf8))
        #expect(Self.bytes(out + "/photos/holiday.txt") == Data("beach\n".utf8))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: out + "/linked")) == "/etc")
        #expect(FileManager.default.fileExists(atPath: out + "/fine/poster.jpg"))
        #expect(Self.errorLines(result).count == 3, "\(result.stderr)")
        let text = try String(contentsOfFile: out + "/results.jsonl", encoding: .utf8)
        #expect(text.components(separatedBy: "\"reason\":\"output_conflict\"").count - 1 == 3)
        // Not remembered as a failure: with the file moved away, a rerun makes the clip.
        try FileManager.default.removeItem(atPath: out + "/notes")
        let rerun = try Child.run(TestPaths.cliBinary, ["batch", manifest, "-o", out, "--recipe", recipe, "--quiet"])
        #expect(rerun.status == 65)
        #expect(FileManager.default.fileExists(atPath: out + "/notes/poster.jpg"))
        #expect(Self.bytes(out + "/photos/holiday.txt") == Data("beach\n".utf8))
    }

    // MARK: - 3, 4: results files are never lost or torn

    @Test("A rerun appends to results.jsonl, so a kill during it loses none of the earlier records")
    func resultsSurviveAKilledRerun() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let out = directory + "/OUT"
        let manifest = directory + "/m.jsonl"
        try Self.writeManifest((1...6).map { "{\"id\":\"c\($0)\",\"input\":\"\(Self.fixture)\"}" }, to: manifest)
        let recipe = directory + "/r.json"
        try #"{"poster":{},"hover":{"length":2}}"#.write(toFile: recipe, atomically: true, encoding: .utf8)
        let first = try Child.run(TestPaths.cliBinary, ["batch", manifest, "-o", out, "--recipe", recipe, "--quiet"])
        #expect(first.status == 0, "\(first.stderr)")
        let earlier = try #require(Self.bytes(out + "/results.jsonl"))
        #expect(String(decoding: earlier, as: UTF8.self).split(separator: "\n").count == 7)
        // --force redoes every clip; SIGKILL once the first clip is recorded again.
        let killed = try Child.run(TestPaths.cliBinary, ["batch", manifest, "-o", out, "--recipe", recipe, "--force", "--progress", "--jobs", "1"],
                                   signal: ChildSignal(SIGKILL, .standardErrorContains("\"done\":1,")))
        #expect(killed.signal == SIGKILL || killed.status == 0)
        let after = try #require(Self.bytes(out + "/results.jsonl"))
        #expect(after.prefix(earlier.count) == earlier, "the earlier run's records must survive byte for byte")
        let report = try Child.run(TestPaths.cliBinary, ["batch", "report", out, "--json"])
        #expect(report.status == 0, "\(report.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: report.stdout) as? [String: Any])
        #expect(summary["clips"] as? Int == 6 && summary["ok"] as? Int == 6, "\(report.stdoutText)")
    }

    @Test("batch report skips and counts a torn last line; the next run cuts it off before appending")
    func tornLastLine() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let out = directory + "/OUT"
        let manifest = directory + "/m.jsonl"
        try Self.writeManifest(["{\"id\":\"c1\",\"input\":\"\(Self.fixture)\"}"], to: manifest)
        let recipe = directory + "/r.json"
        try #"{"poster":{}}"#.write(toFile: recipe, atomically: true, encoding: .utf8)
        #expect(try Child.run(TestPaths.cliBinary, ["batch", manifest, "-o", out, "--recipe", recipe, "--quiet"]).status == 0)
        let results = out + "/results.jsonl"
        let whole = try #require(Self.bytes(results))
        let handle = try #require(FileHandle(forWritingAtPath: results))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"type":"clip","id":"c2","inp"#.utf8))
        handle.closeFile()
        let report = try Child.run(TestPaths.cliBinary, ["batch", "report", out, "--json"])
        #expect(report.status == 0, "\(report.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: report.stdout) as? [String: Any])
        #expect(summary["torn"] as? Int == 1 && summary["ok"] as? Int == 1)
        #expect(try Child.run(TestPaths.cliBinary, ["batch", manifest, "-o", out, "--recipe", recipe, "--quiet"]).status == 0)
        let after = try #require(Self.bytes(results))
        #expect(after.prefix(whole.count) == whole)
        for line in after.split(separator: UInt8(ascii: "\n")) {
            #expect((try? JSONSerialization.jsonObject(with: Data(line))) != nil, "every line is whole JSON")
        }
    }

    @Test("A full disk mid-append leaves only whole lines (a 64 KiB tmpfs, as root)",
          .enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func fullDiskLeavesWholeLines() throws {
        let mountPoint = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        let mounted = try Child.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mount failed: \(mounted.stderr)")
        defer { _ = try? Child.run("/bin/umount", [mountPoint]) }
        let path = mountPoint + "/results.jsonl"
        let writer = try BatchLineWriter(path: path)
        let record = "{\"type\":\"clip\",\"id\":\"x\",\"pad\":\"" + String(repeating: "y", count: 5000) + "\"}"
        var written = 0
        var failure: PreviewLoopError?
        for _ in 0..<100 {
            do { try writer.append(record); written += 1 } catch { failure = error; break }
        }
        #expect(failure != nil && written > 0, "the 64 KiB disk must fill")
        let bytes = try #require(Self.bytes(path))
        #expect(bytes.count == written * (record.utf8.count + 1), "only the whole lines written stay")
        #expect(bytes.last == UInt8(ascii: "\n"))
    }

    @Test("batch report refuses a named pipe and a device at once, and streams a large file")
    func reportRefusesNonRegularFiles() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/results.jsonl"
        #expect(mkfifo(fifo, 0o644) == 0)
        for path in [fifo, "/dev/zero"] {
            let result = try Child.run(TestPaths.cliBinary, ["batch", "report", path], killAfter: 10)
            #expect(result.status != 0 && !result.wasKilled, "\(path): \(result.stderr)")
            #expect(Self.errorLines(result).count == 1, "\(result.stderr)")
        }
        // 100,000 records: memory follows the clips kept, not the file (about 60 MB here).
        let big = directory + "/big.jsonl"
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: big))
        var chunk = ""
        for index in 0..<100_000 {
            chunk += "{\"type\":\"clip\",\"id\":\"c\(index % 10)\",\"input\":\"x\",\"status\":\"ok\",\"skipped\":false,\"attempts\":1,"
                + "\"outputs\":[],\"timings\":{\"total_ms\":1},\"finished_at\":\(index),\"pad\":\"" + String(repeating: "z", count: 500) + "\"}\n"
            if index % 1000 == 999 { handle.write(Data(chunk.utf8)); chunk = "" }
        }
        handle.closeFile()
        let (report, peak, _) = try Child.measuredCLI(["batch", "report", big, "--json"])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(peak > 0 && peak < 200 << 20, "batch report peaked at \(peak >> 20) MB on a 57 MB file")
    }

    @Test("A manifest input longer than 8192 bytes is refused before any work")
    func longInputRefused() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.writeManifest(["{\"id\":\"a\",\"input\":\"" + String(repeating: "a", count: 9000) + ".mp4\"}"], to: directory + "/m.jsonl")
        let result = try Child.run(TestPaths.cliBinary, ["batch", directory + "/m.jsonl", "-o", directory + "/OUT"])
        #expect(result.status != 0 && Self.errorLines(result).count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("at most 8192"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/OUT/results.jsonl"))
    }

    // MARK: - 6, 18: signals

    @Test("SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGALRM end render and card with 128+N, one Error line and no temporaries",
          arguments: [SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM])
    func everyFatalSignalCleansUp(_ number: Int32) throws {
        for command in ["render", "card"] {
            let directory = TestPaths.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let arguments = command == "render"
                ? ["render", Self.fixture, "-o", directory + "/out.mp4", "--length", "3", "--size", "1280x720", "--progress"]
                : ["card", TestPaths.fixture("card.mp4"), "-o", directory + "/out.mp4", "--size", "1280x720"]
            // render: once its first progress line is out; card (no progress) after 1.5 s of its ~13 s.
            let trigger: ChildSignal.Trigger = command == "render" ? .standardErrorContains("\n") : .after(1.5)
            let result = try Child.run(TestPaths.cliBinary, arguments, signal: ChildSignal(number, trigger))
            #expect(result.status == 128 + number, "\(command): \(result.status) \(result.stderr)")
            let errors = Self.errorLines(result)
            #expect(errors.count == 1 && errors.first?.contains("interrupted by") == true, "\(command): \(result.stderr)")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            #expect(left.isEmpty, "\(command) left \(left)")
        }
    }

    @Test("SIGTERM with every clip in flight: all interrupted, and the summary says stopped")
    func stoppedWithEveryClipInFlight() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try HostileServer(.hold(file: Self.fixture, burst: 2000))
        defer { server.stop() }
        try Self.writeManifest(["{\"id\":\"slow\",\"input\":\"\(server.url(for: "a.mp4").absoluteString)\"}"], to: directory + "/m.jsonl")
        let result = try Child.run(TestPaths.cliBinary, ["batch", directory + "/m.jsonl", "-o", directory + "/OUT", "--timeout", "30"],
                                   signal: ChildSignal(SIGTERM, .after(1.5)))
        #expect(result.status == 75, "\(result.stderr)")
        let text = try String(contentsOfFile: directory + "/OUT/results.jsonl", encoding: .utf8)
        let summary = try #require(text.split(separator: "\n").last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(summary["stopped"] as? Bool == true, "\(summary)")
        #expect(text.contains("\"reason\":\"interrupted\""))
    }

    // MARK: - 13, 14: hangs

    @Test("wall stops on SIGTERM while a loop opens a stalled URL, long before its --timeout 60")
    func wallStopsDuringAStalledOpen() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try HostileServer(.silent)
        defer { server.stop() }
        let result = try Child.run(TestPaths.cliBinary, ["wall", server.url(for: "a.mp4").absoluteString, "--log", directory + "/logs",
                                                         "--timeout", "60"], signal: ChildSignal(SIGTERM, .after(1)), killAfter: 30)
        #expect(result.status == 143, "\(result.stderr)")
        // A liveness bound only: without the signal reaching the open, it would wait out --timeout 60.
        #expect(!result.wasKilled && result.elapsed < 15, "wall took \(result.elapsed) s")
    }

    @Test("sheet --font naming a named pipe or a device is refused at once")
    func fontMustBeARegularFile() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/font.ttf"
        #expect(mkfifo(fifo, 0o644) == 0)
        for font in [fifo, "/dev/zero"] {
            let result = try Child.run(TestPaths.cliBinary, ["sheet", Self.fixture, "-o", directory + "/s.jpg", "--font", font], killAfter: 10)
            #expect(result.status != 0 && !result.wasKilled, "\(font): \(result.stderr)")
            #expect(Self.errorLines(result).count == 1 && result.stderr.contains("not a regular file"), "\(result.stderr)")
        }
    }

    // MARK: - 17, 19 and the rest

    @Test("-o - is refused by card, render and sprites (exit 64), and no folder named '-' appears")
    func dashIsNotAFolder() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for command in ["card", "render", "sprites"] {
            let result = try Child.run("/usr/bin/env", ["--chdir=" + directory, TestPaths.cliBinary, command, Self.fixture, "-o", "-"])
            #expect(result.status == 64, "\(command): \(result.stderr)")
            #expect(Self.errorLines(result).count == 1 && result.stderr.contains("standard output"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory + "/-"))
        }
    }

    @Test("A still image named .jpg or .png is read as a one-frame clip, the same picture as the bytes named .bin")
    func stillImagesAreClips() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for format in ["jpg", "png"] {
            let still = directory + "/still.\(format)"
            let made = try Child.tool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240", "-frames:v", "1", still])
            #expect(made.status == 0)
            try FileManager.default.copyItem(atPath: still, toPath: directory + "/still-\(format).bin")
            let named = try Child.run(TestPaths.cliBinary, ["thumb", still, "-o", directory + "/a-\(format).ppm"])
            let plain = try Child.run(TestPaths.cliBinary, ["thumb", directory + "/still-\(format).bin", "-o", directory + "/b-\(format).ppm"])
            #expect(named.status == 0 && plain.status == 0, "\(named.stderr) \(plain.stderr)")
            #expect(Self.bytes(directory + "/a-\(format).ppm") == Self.bytes(directory + "/b-\(format).ppm"))
        }
    }

    @Test("A path that is not valid UTF-8 reaches its file, and the output gets exactly its name")
    func nonUTF8PathsKept() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Through the shell: Foundation's arguments are Strings and cannot carry the byte 0xFF.
        let script = #"cd "$1" && cp "$2" "$(printf 'bad\377.mp4')" && exec "$0" thumb "$(printf 'bad\377.mp4')" -o "$(printf 'out\377.jpg')""#
        let result = try Child.run("/bin/sh", ["-c", script, TestPaths.cliBinary, directory, Self.fixture])
        #expect(result.status == 0, "\(result.stderr)")
        // Listed by the shell, byte for byte: the output's name holds 0xFF, not U+FFFD's three bytes.
        let listing = try Child.run("/bin/sh", ["-c", #"cd "$0" && for name in *; do printf '%s' "$name" | od -An -tx1; done"#, directory])
        let hex = String(decoding: listing.stdout, as: UTF8.self).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(hex.contains("62 61 64 ff 2e 6d 70 34") && hex.contains("6f 75 74 ff 2e 6a 70 67") && !hex.contains("ef bf bd"), "\(hex)")
    }

    @Test("ftp:// and gopher:// inputs are refused by policy, not reported missing")
    func otherSchemesRefused() throws {
        for url in ["ftp://127.0.0.1/a.mp4", "gopher://127.0.0.1/a"] {
            let result = try Child.run(TestPaths.cliBinary, ["thumb", url, "-o", NSTemporaryDirectory() + "never-written.jpg"])
            #expect(result.status != 0 && Self.errorLines(result).count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("URLs are not read"), "\(result.stderr)")
        }
    }
}

@Suite("https: certificates are verified by default", .serialized, .timeLimit(.minutes(10)))
struct CertificateVerificationTests {
    @Test("A self-signed certificate for another name is refused; --insecure accepts it; --ca-file trusts a private CA for its host")
    func certificatesVerified() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: TestPaths.fixture("landscape.mp4"), toPath: directory + "/a.mp4")
        let evil = try TLSServer(directory: directory, subject: "/CN=evil.invalid", alternativeName: nil)
        defer { evil.stop() }
        let url = "https://127.0.0.1:\(evil.port)/a.mp4"
        let refused = try Child.run(TestPaths.cliBinary, ["thumb", url, "-o", directory + "/refused.jpg"])
        #expect(refused.status != 0 && !FileManager.default.fileExists(atPath: directory + "/refused.jpg"), "\(refused.stderr)")
        #expect(refused.errorLines.count == 1 && refused.stderr.contains("TLS certificate was not accepted"), "\(refused.stderr)")
        // Its own certificate as the authority: the chain holds, the name (evil.invalid, not 127.0.0.1) does not.
        let misnamed = try Child.run(TestPaths.cliBinary, ["thumb", url, "-o", directory + "/misnamed.jpg", "--ca-file", evil.certificate])
        #expect(misnamed.status != 0 && misnamed.stderr.contains("TLS certificate"), "\(misnamed.stderr)")
        let insecure = try Child.run(TestPaths.cliBinary, ["thumb", url, "-o", directory + "/insecure.jpg", "--insecure"])
        #expect(insecure.status == 0, "\(insecure.stderr)")
        // The same refusal in batch: permanent, with the reason named.
        try "{\"id\":\"a\",\"input\":\"\(url)\"}\n".write(toFile: directory + "/m.jsonl", atomically: true, encoding: .utf8)
        let batch = try Child.run(TestPaths.cliBinary, ["batch", directory + "/m.jsonl", "-o", directory + "/OUT", "--quiet"])
        #expect(batch.status == 65, "\(batch.stderr)")
        let results = try String(contentsOfFile: directory + "/OUT/results.jsonl", encoding: .utf8)
        #expect(results.contains("\"reason\":\"refused_by_policy\"") && results.contains("TLS certificate"))

        let trusted = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: trusted) }
        try FileManager.default.copyItem(atPath: TestPaths.fixture("landscape.mp4"), toPath: trusted + "/a.mp4")
        let good = try TLSServer(directory: trusted, subject: "/CN=127.0.0.1", alternativeName: "IP:127.0.0.1")
        defer { good.stop() }
        let goodURL = "https://127.0.0.1:\(good.port)/a.mp4"
        let withCA = try Child.run(TestPaths.cliBinary, ["thumb", goodURL, "-o", trusted + "/ok.jpg", "--ca-file", good.certificate])
        #expect(withCA.status == 0, "\(withCA.stderr)")
        let withoutCA = try Child.run(TestPaths.cliBinary, ["thumb", goodURL, "-o", trusted + "/no.jpg"])
        #expect(withoutCA.status != 0, "not in the system's store: \(withoutCA.stderr)")
        let both = try Child.run(TestPaths.cliBinary, ["thumb", goodURL, "-o", trusted + "/x.jpg", "--ca-file", good.certificate, "--insecure"])
        #expect(both.status == 64)
    }
}

@Suite("Hostile input: causes named, limits named, refused before work", .serialized, .timeLimit(.minutes(10)))
struct RefusalMessageTests {
    /// The clip record batch wrote for `id` in `out`.
    static func record(_ out: String, _ id: String) throws -> [String: Any] {
        let text = try String(contentsOfFile: out + "/results.jsonl", encoding: .utf8)
        for line in text.split(separator: "\n") {
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], object["id"] as? String == id {
                return object
            }
        }
        throw OracleError(message: "no record for \(id) in \(text)")
    }

    @Test("A reset while opening a non-faststart MP4, or a server hanging up, is a transient network failure")
    func networkFailuresWhileOpeningAreTransient() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let late = directory + "/late.mp4"
        #expect(try Child.tool("ffmpeg", ["-v", "error", "-i", TestPaths.fixture("landscape.mp4"), "-c", "copy", "-f", "mp4", late]).status == 0)
        let reset = try HostileServer(.resetOnce(file: late, burst: 3000))
        defer { reset.stop() }
        let hangUp = try HostileServer(.hangUp)
        defer { hangUp.stop() }
        let manifest = directory + "/m.jsonl"
        try ["{\"id\":\"reset\",\"input\":\"\(reset.url(for: "late.mp4").absoluteString)\"}",
             "{\"id\":\"hangup\",\"input\":\"\(hangUp.url(for: "a.mp4").absoluteString)\"}"]
            .joined(separator: "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let recipe = directory + "/r.json"
        try #"{"poster":{"at":0}}"#.write(toFile: recipe, atomically: true, encoding: .utf8)
        let result = try Child.run(TestPaths.cliBinary, ["batch", manifest, "-o", directory + "/OUT", "--recipe", recipe,
                                                         "--retries", "0", "--jobs", "1", "--quiet", "--timeout", "10"])
        #expect(result.status == 75, "\(result.stderr)")
        for id in ["reset", "hangup"] {
            let record = try Self.record(directory + "/OUT", id)
            #expect(record["permanence"] as? String == "transient", "\(id): \(record)")
            #expect(record["reason"] as? String != "not_media_file", "\(id): \(record)")
        }
    }

    @Test("Limits FFmpeg words badly are named: too many streams, a declared picture too large")
    func limitsNamed() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let y4m = directory + "/huge.y4m"
        try (Data("YUV4MPEG2 W65535 H65535 F25:1 Ip A1:1 C420jpeg\nFRAME\n".utf8) + Data(count: 1000)).write(to: URL(fileURLWithPath: y4m))
        let huge = try Child.run(TestPaths.cliBinary, ["probe", y4m])
        #expect(huge.status != 0 && huge.errorLines.count == 1 && huge.stderr.contains("65535x65535"), "\(huge.stderr)")
        #expect(!huge.stderr.contains("Device or resource busy"))
        var arguments = ["-v", "error", "-f", "lavfi", "-i", "testsrc2=d=0.2:size=64x48"]
        for _ in 0..<70 { arguments += ["-f", "lavfi", "-i", "sine=d=0.2"] }
        for index in 0...70 { arguments += ["-map", "\(index)"] }
        let many = directory + "/many.mkv"
        #expect(try Child.tool("ffmpeg", arguments + ["-c:v", "ffv1", "-c:a", "pcm_s16le", many]).status == 0)
        let streams = try Child.run(TestPaths.cliBinary, ["probe", many])
        #expect(streams.status != 0 && streams.stderr.contains("more streams than the limit of 64"), "\(streams.stderr)")
    }

    @Test("Recipe sizes go through the encoder and memory rules the commands use, refused before any work (exit 64)")
    func recipeSizesChecked() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let manifest = directory + "/m.jsonl"
        try "{\"id\":\"a\",\"input\":\"\(TestPaths.fixture("landscape.mp4"))\"}\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        for (recipe, mention) in [(#"{"hover":{"size":"16000x16000"}}"#, "\"hover\".\"size\""),
                                  (#"{"poster":{"size":"16384x16384"}}"#, "\"poster\".\"size\""),
                                  (#"{"poster":{"size":"16000x16000"}}"#, "MB"),
                                  (#"{"strip":{"size":"4000x4000","count":4}}"#, "\"strip\""),
                                  (#"{"sprites":{"size":"1600x1600","grid":"10x10"}}"#, "\"sprites\""),
                                  (#"{"poster":{"quality":50.5}}"#, "whole number"),
                                  (#"{"poster":{"quality":1e400}}"#, "whole number")] {
            try recipe.write(toFile: directory + "/r.json", atomically: true, encoding: .utf8)
            let result = try Child.measuredCLI(["batch", manifest, "-o", directory + "/OUT", "--recipe", directory + "/r.json"])
            #expect(result.result.status == 64, "\(recipe): \(result.result.stderr)")
            #expect(result.result.errorLines.count == 1 && result.result.stderr.contains(mention), "\(recipe): \(result.result.stderr)")
            #expect(result.peakBytes < 200 << 20 && !FileManager.default.fileExists(atPath: directory + "/OUT"), "\(recipe)")
        }
    }

    @Test("A sheet too large to hold or encode is refused before decoding, naming its size")
    func largeSheetRefused() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for format in ["jpg", "png"] {
            let result = try Child.measuredCLI(["sheet", TestPaths.fixture("landscape.mp4"), "-o", directory + "/s.\(format)",
                                                "--grid", "1x1", "--width", "16383"])
            #expect(result.result.status != 0 && result.result.errorLines.count == 1, "\(result.result.stderr)")
            #expect(result.result.stderr.contains("16383x") && result.peakBytes < 300 << 20, "\(result.result.stderr) \(result.peakBytes)")
        }
    }

    @Test("render's --max-memory estimate counts the encoder's frames: 4096x4096 MP4 is refused at the default")
    func renderEstimateCountsTheEncoder() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let refused = try Child.run(TestPaths.cliBinary, ["render", TestPaths.fixture("landscape.mp4"), "-o", directory + "/r.mp4",
                                                          "--size", "4096x4096", "--length", "1"])
        #expect(refused.status == 64 && refused.stderr.contains("--max-memory"), "\(refused.stderr)")
        // Allowed with the room it asks for, it stays within its estimate.
        let allowed = try Child.measuredCLI(["render", TestPaths.fixture("landscape.mp4"), "-o", directory + "/r.mp4",
                                             "--size", "2048x2048", "--length", "1", "--max-memory", "1024"])
        #expect(allowed.result.status == 0, "\(allowed.result.stderr)")
        let estimate = OutputLimits.renderBytes(frames: 15, size: Size(width: 2048, height: 2048), format: .mp4)
        #expect(Double(allowed.peakBytes) < estimate * 1.25 + Double(64 << 20), "peak \(allowed.peakBytes >> 20) MB, estimate \(Int(estimate) >> 20) MB")
    }
}

@Suite("Batch sizes follow the clip's orientation, as the single commands do", .serialized, .timeLimit(.minutes(10)))
struct BatchOrientationTests {
    @Test("A portrait clip's poster, strip, sprites and hover are the files thumb, strip, sprites and render write")
    func portraitOutputsEqualTheCommands() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = TestPaths.fixture("rotated90.mp4")
        try "{\"id\":\"p\",\"input\":\"\(clip)\"}\n".write(toFile: directory + "/m.jsonl", atomically: true, encoding: .utf8)
        try #"{"poster":{},"strip":{},"sprites":{"every":1},"hover":{"length":2}}"#
            .write(toFile: directory + "/r.json", atomically: true, encoding: .utf8)
        let batch = try Child.run(TestPaths.cliBinary, ["batch", directory + "/m.jsonl", "-o", directory + "/OUT", "--recipe", directory + "/r.json"])
        #expect(batch.status == 0, "\(batch.stderr)")
        let commands: [(String, [String], String)] = [
            ("poster.jpg", ["thumb", clip, "-o", directory + "/poster.jpg"], directory + "/poster.jpg"),
            ("strip.jpg", ["strip", clip, "-o", directory + "/strip.jpg", "--span", "all"], directory + "/strip.jpg"),
            ("sprites-1.jpg", ["sprites", clip, "-o", directory + "/sprites", "--every", "1"], directory + "/sprites/sprites-1.jpg"),
            ("hover.mp4", ["render", clip, "-o", directory + "/hover.mp4", "--length", "2"], directory + "/hover.mp4"),
        ]
        for (name, arguments, made) in commands {
            let result = try Child.run(TestPaths.cliBinary, arguments)
            #expect(result.status == 0, "\(result.stderr)")
            let ours = FileManager.default.contents(atPath: directory + "/OUT/p/" + name)
            #expect(ours != nil && ours == FileManager.default.contents(atPath: made), "\(name) differs from \(arguments[0])'s")
        }
        let size = try Child.tool("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0:s=x",
                                              directory + "/OUT/p/poster.jpg"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(size == "180x320")
    }

    @Test("Recipe sizes take the commands' forms: W keeps the aspect, source is the clip's size, xH")
    func sizeForms() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = TestPaths.fixture("rotated90.mp4")
        try "{\"id\":\"p\",\"input\":\"\(clip)\"}\n".write(toFile: directory + "/m.jsonl", atomically: true, encoding: .utf8)
        for (form, expected) in [("320", "320x427"), ("source", "240x320"), ("x100", "75x100")] {
            try "{\"poster\":{\"size\":\"\(form)\"}}".write(toFile: directory + "/r.json", atomically: true, encoding: .utf8)
            let out = directory + "/OUT-" + form
            let batch = try Child.run(TestPaths.cliBinary, ["batch", directory + "/m.jsonl", "-o", out, "--recipe", directory + "/r.json"])
            #expect(batch.status == 0, "\(form): \(batch.stderr)")
            let thumb = try Child.run(TestPaths.cliBinary, ["thumb", clip, "-o", directory + "/t.jpg", "--size", form])
            #expect(thumb.status == 0 && thumb.stdoutText.contains(expected), "\(form): \(thumb.stdoutText)")
            #expect(FileManager.default.contents(atPath: out + "/p/poster.jpg") == FileManager.default.contents(atPath: directory + "/t.jpg"), "\(form)")
        }
    }
}
