import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
#if canImport(Glibc)
import Glibc
#endif

/// Outputs under failure, on the real binary: directory outputs swapped in whole (old contents kept on
/// a full disk, no stale files after a shorter re-run, user files never deleted), signals leaving no
/// temporary behind (exit 130/143), replaced files keeping their mode, and lost standard output
/// reported.
@Suite("Outputs: transactional directories, signals, modes, standard output", .timeLimit(.minutes(10)))
struct OutputSafetyTests {
    let clip = TestPaths.fixture("landscape.mp4")      // 4 s

    /// The names in a directory, hidden ones included, sorted.
    private func names(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// Each file's bytes, by name.
    private func snapshot(_ directory: String) -> [String: Data] {
        Dictionary(uniqueKeysWithValues: names(directory).map { ($0, FileManager.default.contents(atPath: directory + "/" + $0) ?? Data()) })
    }

    // MARK: - Directory outputs

    @Test("sprites: a shorter re-run leaves no stale sheet; a directory holding other files is refused and left as it was")
    func spritesReplaceWhole() throws {
        let root = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let output = root + "/sp"
        let many = try Child.cli(["sprites", clip, "-o", output, "--every", "0.2", "--grid", "2x2"])
        #expect(many.status == 0, "\(many.stderr)")
        #expect(names(output).count == 6)                     // 20 tiles on 5 sheets + the track
        let few = try Child.cli(["sprites", clip, "-o", output, "--every", "1", "--grid", "2x1"])
        #expect(few.status == 0, "\(few.stderr)")
        #expect(names(output) == ["sprites-1.jpg", "sprites-2.jpg", "thumbnails.vtt"], "\(names(output))")
        #expect(names(root) == ["sp"], "left beside it: \(names(root))")

        try Data("mine".utf8).write(to: URL(fileURLWithPath: output + "/notes.txt"))
        let before = snapshot(output)
        let refused = try Child.cli(["sprites", clip, "-o", output, "--every", "2"])
        #expect(refused.status == 1 && refused.errorLines.count == 1 && refused.stderr.hasPrefix("Error: "), "\(refused.stderr)")
        #expect(refused.stderr.contains("notes.txt"), "\(refused.stderr)")
        #expect(snapshot(output) == before)
        #expect(names(root) == ["sp"], "left beside it: \(names(root))")
    }

    @Test("card -o DIR: a shorter re-run leaves no stale frame; other files are refused; the directory keeps its mode")
    func cardDirectoryReplaceWhole() throws {
        let root = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let output = root + "/frames"
        let long = try Child.cli(["card", clip, "-o", output, "--size", "64x36", "--fps", "10", "--play-length", "2"])
        #expect(long.status == 0, "\(long.stderr)")
        let longCount = names(output).count
        chmod(output, 0o750)
        let short = try Child.cli(["card", clip, "-o", output, "--size", "64x36", "--fps", "10", "--play-length", "1"])
        #expect(short.status == 0, "\(short.stderr)")
        let shortNames = names(output)
        #expect(shortNames.count == longCount - 10, "\(longCount) then \(shortNames.count)")
        #expect(shortNames.last == "card-\(String(format: "%05d", shortNames.count)).png", "\(shortNames)")
        var status = stat()
        #expect(stat(output, &status) == 0 && status.st_mode & 0o777 == 0o750)
        #expect(names(root) == ["frames"], "left beside it: \(names(root))")

        try Data("mine".utf8).write(to: URL(fileURLWithPath: output + "/README"))
        let before = snapshot(output)
        let refused = try Child.cli(["card", clip, "-o", output, "--size", "64x36", "--fps", "10"])
        #expect(refused.status == 1 && refused.errorLines.count == 1, "\(refused.stderr)")
        #expect(snapshot(output) == before)
        // The library says the same.
        let card = try PreviewCard(source: .file(clip), style: CardStyle(size: Size(width: 64, height: 36)))
        #expect(errorCode { try card.render(to: output, framesPerSecond: 10) } == .outputNotWritable)
        #expect(snapshot(output) == before)
        #expect(names(root) == ["frames"], "left beside it: \(names(root))")
    }

    @Test("sprites on a full disk (a 400 KB tmpfs): the failed re-run keeps every file of the previous run")
    func spritesFullDiskKeepsOldRun() throws {
        let mountPoint = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        let mounted = try Child.run("/bin/mount", ["-t", "tmpfs", "-o", "size=400k", "tmpfs", mountPoint])
        guard mounted.status == 0 else {
            // Not root: the same failure cannot be staged without a small file system.
            Issue.record("cannot mount a tmpfs (\(mounted.stderr)); run the suite as root")
            return
        }
        defer { _ = try? Child.run("/bin/umount", [mountPoint]) }
        let output = mountPoint + "/sp"
        let first = try Child.cli(["sprites", clip, "-o", output, "--every", "1", "--grid", "2x1"])
        #expect(first.status == 0, "\(first.stderr)")
        let before = snapshot(output)
        #expect(before.count == 3)
        // 80 full-size sheets at quality 100 do not fit in what is left.
        let full = try Child.cli(["sprites", clip, "-o", output, "--every", "0.05", "--grid", "1x1", "--size", "320x180", "-q", "100"])
        #expect(full.status == 1 && full.errorLines.count == 1, "\(full.stderr)")
        #expect(full.stderr.contains("No space left"), "\(full.stderr)")
        #expect(!full.stderr.contains(".tmp"), "the error names the staging directory: \(full.stderr)")
        #expect(snapshot(output) == before, "the previous run's files changed")
        #expect(names(mountPoint) == ["sp"], "left behind: \(names(mountPoint))")
    }

    // MARK: - Signals

    /// A 60 s `testsrc2` clip of `size` at 25 fps, made here and removed when the tests end.
    private static func makeLongClip(_ size: String) -> Result<String, OracleError> {
        let path = NSTemporaryDirectory() + "previewloop-long-\(size)-" + UUID().uuidString + ".mp4"
        do {
            let made = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25",
                                               "-t", "60", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", path])
            guard made.status == 0 else { return .failure(OracleError(message: made.stderr)) }
        } catch {
            return .failure(OracleError(message: "\(error)"))
        }
        return .success(path)
    }

    /// A clip long enough for a job to be mid-write when the signal comes (60 s, 320x180).
    private static let longClip: Result<String, OracleError> = {
        let made = makeLongClip("320x180")
        atexit { if case .success(let path) = OutputSafetyTests.longClip { unlink(path) } }
        return made
    }()

    /// A 60 s 1280x720 clip, for a strip whose exact frames take seconds to decode however fast the
    /// machine (the 320x180 clip's 1,500 frames decode in about 0.3 s, as long as the signal takes to come).
    private static let longLargeClip: Result<String, OracleError> = {
        let made = makeLongClip("1280x720")
        atexit { if case .success(let path) = OutputSafetyTests.longLargeClip { unlink(path) } }
        return made
    }()

    /// Starts the CLI, waits until `isMidWrite` sees its temporary (up to 20 s), sends `signal`, and
    /// returns the exit status and standard error.
    private func interrupt(_ arguments: [String], with signal: Int32, isMidWrite: () -> Bool) throws -> (status: Int32, stderr: String, wasMidWrite: Bool) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPaths.cliBinary)
        process.arguments = arguments
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        var wasMidWrite = false
        while process.isRunning && Date() < deadline {
            if isMidWrite() { wasMidWrite = true; break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        kill(process.processIdentifier, signal)
        let stop = Date().addingTimeInterval(10)
        while process.isRunning && Date() < stop { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, text, wasMidWrite)
    }

    @Test("A signal mid-write: render, sprites and card remove their temporaries, keep earlier outputs, exit 130/143",
          arguments: [SIGINT, SIGTERM])
    func signalsLeaveNothing(signal: Int32) throws {
        let input = try Self.longClip.get()
        let root = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Earlier outputs at every destination.
        try Data("earlier render".utf8).write(to: URL(fileURLWithPath: root + "/out.mp4"))
        try FileManager.default.createDirectory(atPath: root + "/sp", withIntermediateDirectories: false)
        try Data("WEBVTT\n".utf8).write(to: URL(fileURLWithPath: root + "/sp/thumbnails.vtt"))
        try FileManager.default.createDirectory(atPath: root + "/frames", withIntermediateDirectories: false)
        try Data("earlier frame".utf8).write(to: URL(fileURLWithPath: root + "/frames/card-00001.png"))
        let before = (names(root), snapshot(root + "/sp"), snapshot(root + "/frames"))
        let hasTemporary = { self.names(root).contains { $0.hasPrefix(".") && $0.hasSuffix(".tmp") } }
        let jobs: [(String, [String])] = [
            ("render", ["render", input, "-o", root + "/out.mp4", "--length", "60", "--size", "640x360"]),
            ("sprites", ["sprites", input, "-o", root + "/sp", "--every", "0.1", "--grid", "2x2", "--accuracy", "exact"]),
            ("card", ["card", input, "-o", root + "/frames", "--play-length", "50", "--fps", "30"]),
        ]
        for (name, arguments) in jobs {
            let outcome = try interrupt(arguments, with: signal, isMidWrite: hasTemporary)
            #expect(outcome.wasMidWrite, "\(name): no temporary appeared")
            #expect(outcome.status == 128 + signal, "\(name): exit \(outcome.status): \(outcome.stderr)")
            let lines = outcome.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].hasPrefix("Error: ") && lines[0].contains("interrupted"), "\(name): \(outcome.stderr)")
            #expect(names(root) == before.0, "\(name) left: \(names(root))")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/out.mp4")) == Data("earlier render".utf8))
        #expect(snapshot(root + "/sp") == before.1)
        #expect(snapshot(root + "/frames") == before.2)
    }

    @Test("A signal to strip while it decodes: exit 130/143, one Error: line, no file, no temporary", arguments: [SIGINT, SIGTERM])
    func signalDuringStrip(signal: Int32) throws {
        let input = try Self.longLargeClip.get()
        let root = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        // 1,000 exact frames across 60 s: seconds of decoding before anything is written.
        var polls = 0
        let outcome = try interrupt(["strip", input, "-o", root + "/strip.png", "--count", "1000", "--span", "all",
                                     "--accuracy", "exact", "--size", "16x9"], with: signal) { polls += 1; return polls > 15 }
        #expect(outcome.status == 128 + signal, "exit \(outcome.status): \(outcome.stderr)")
        #expect(outcome.stderr.split(separator: "\n").count == 1 && outcome.stderr.hasPrefix("Error: "), "\(outcome.stderr)")
        #expect(names(root).isEmpty, "left: \(names(root))")
    }

    @Test("loop --frames and --capture-dir under SIGTERM: the loop stops cleanly, every frame file whole, no temporary")
    func loopFramesUnderSignal() throws {
        let root = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let frames = root + "/frames", captures = root + "/captures"
        let outcome = try interrupt(["loop", clip, "--loops", "0", "--frames", frames, "--capture-dir", captures,
                                     "--record", "0-1000", "--size", "64x36"], with: SIGTERM) { self.names(frames).count > 20 }
        #expect(outcome.wasMidWrite)
        // The documented rule for loop: a signal after the first frame ends it cleanly (exit 0).
        #expect(outcome.status == 0, "exit \(outcome.status): \(outcome.stderr)")
        for directory in [frames, captures] {
            let written = names(directory)
            #expect(!written.isEmpty && written.allSatisfy { $0.hasSuffix(".ppm") && !$0.hasPrefix(".") }, "\(directory): \(written.suffix(3))")
            let size = 3 * 64 * 36 + "P6\n64 36\n255\n".utf8.count
            #expect(written.allSatisfy { FileManager.default.contents(atPath: directory + "/" + $0)?.count == size })
        }
        #expect(names(root) == ["captures", "frames"], "\(names(root))")
    }

    // MARK: - Modes and standard output

    @Test("Replacing a 0600 file keeps 0600 (thumb, render, loop --log); a new file gets the umask's mode")
    func modesKept() throws {
        let root = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let outputs = [("thumb.png", ["thumb", clip, "-o", root + "/thumb.png", "--at", "1"]),
                       ("r.webp", ["render", clip, "-o", root + "/r.webp", "--length", "0.5", "--size", "64x36"]),
                       ("log.csv", ["loop", clip, "--length", "0.5", "--log", root + "/log.csv"])]
        func mode(_ name: String) -> mode_t {
            var status = stat()
            return stat(root + "/" + name, &status) == 0 ? status.st_mode & 0o7777 : 0
        }
        let mask = umask(0o022); umask(mask)
        for (name, arguments) in outputs {
            let fresh = try Child.cli(arguments)
            #expect(fresh.status == 0, "\(fresh.stderr)")
            #expect(mode(name) == 0o666 & ~mask, "\(name): \(String(mode(name), radix: 8))")
            chmod(root + "/" + name, 0o600)
            let again = try Child.cli(arguments)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(mode(name) == 0o600, "\(name) became \(String(mode(name), radix: 8))")
        }
    }

    @Test("Standard output on a full disk (/dev/full): probe, timing and loop --log - exit 1 with one Error: line")
    func fullStandardOutput() throws {
        let root = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let log = root + "/log.csv"
        #expect(try Child.cli(["loop", clip, "--length", "0.5", "--log", log]).status == 0)
        for arguments in [["probe", clip], ["probe", clip, "--json"], ["timing", log], ["timing", log, "--json"],
                          ["loop", clip, "--length", "0.5", "--log", "-"]] {
            let result = try Child.run("/bin/sh", ["-c", "exec \"$0\" \"$@\" > /dev/full", TestPaths.cliBinary] + arguments, killAfter: 30)
            #expect(result.status == 1, "\(arguments): exit \(result.status)")
            #expect(result.errorLines.count == 1 && result.stderr.hasPrefix("Error: "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("standard output"), "\(arguments): \(result.stderr)")
        }
    }
}
