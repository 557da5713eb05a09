import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
#if canImport(Glibc)
import Glibc
#endif

/// One input the engine must refuse, and how.
struct RefusedInput: CustomTestStringConvertible, Sendable {
    /// A catalogue file (`Fixtures/make-bad-inputs.sh`), or a path as given when `isPath`.
    var name: String
    /// The code the library must throw.
    var expected: PreviewLoopError.Code
    /// What the case is about.
    var about: String
    var isPath = false
    /// A bug the lead has not fixed yet: the case is run under `withKnownIssue`.
    var knownIssue: String?

    var testDescription: String { "\(name): \(about) → \(expected)" }

    func path() throws -> String { isPath ? name : try BadInputs.path(name) }
}

/// The bad-input catalogue, part 1: inputs that must be refused. Each case asserts the exact
/// ``PreviewLoopError/Code`` from the library (open, decode a frame, convert it) and the CLI's
/// behaviour (`thumb`: exit 1, one `Error:` line naming the input, no image and no temporary file left).
/// The inputs are made at test time by `Fixtures/make-bad-inputs.sh`; part 2 is ``OddInputTests``.
@Suite("Bad inputs are refused with the right code", .timeLimit(.minutes(10)))
struct BadInputCatalogTests {
    static let refused: [RefusedInput] = [
        RefusedInput(name: "missing.mp4", expected: .inputNotFound, about: "no such file"),
        RefusedInput(name: "empty.mp4", expected: .notMediaFile, about: "0 bytes"),
        RefusedInput(name: "random.bin", expected: .notMediaFile, about: "64 KiB of random bytes"),
        RefusedInput(name: "text.txt", expected: .notMediaFile, about: "plain text"),
        RefusedInput(name: TestPaths.fixture("audio-only.m4a"), expected: .noVideoStream, about: "AAC only", isPath: true),
        RefusedInput(name: "audio.wav", expected: .refusedByPolicy, about: "WAV, not on the allow-list"),
        RefusedInput(name: "subtitles.srt", expected: .refusedByPolicy, about: "SubRip, not on the allow-list"),
        RefusedInput(name: "directory.mp4", expected: .notMediaFile, about: "a directory"),
        RefusedInput(name: "/dev/zero", expected: .refusedByPolicy, about: "endless zeros: a device, not a regular file", isPath: true),
        RefusedInput(name: "moov-at-end-cut10.mp4", expected: .notMediaFile, about: "moov at the end, cut at 10%"),
        RefusedInput(name: "moov-at-end-cut50.mp4", expected: .notMediaFile, about: "moov at the end, cut at 50%"),
        RefusedInput(name: "moov-at-end-cut90.mp4", expected: .notMediaFile, about: "moov at the end, cut at 90%"),
        RefusedInput(name: "zeroed-moov.mp4", expected: .notMediaFile, about: "moov contents zeroed (no streams at all)"),
        RefusedInput(name: "unknown-fourcc.mp4", expected: .unsupportedCodec, about: "avc1 patched to zzzz"),
        RefusedInput(name: "vvc1-sample-entry.mp4", expected: .unsupportedCodec, about: "avc1 patched to vvc1 (VVC)"),
        RefusedInput(name: "dav1-sample-entry.mp4", expected: .unsupportedCodec, about: "avc1 patched to dav1 (Dolby Vision AV1)"),
        RefusedInput(name: "many-streams.mkv", expected: .tooLarge, about: "70 streams (limit 64)"),
        RefusedInput(name: "many-streams.ts", expected: .tooLarge, about: "70 streams found while reading"),
        RefusedInput(name: "bomb.png", expected: .tooLarge, about: "12000x12000 PNG"),
        RefusedInput(name: "bomb.mkv", expected: .tooLarge, about: "12000x12000 declared by the container"),
        RefusedInput(name: "realmedia.rm", expected: .refusedByPolicy, about: "RealMedia, not on the allow-list"),
        RefusedInput(name: "list.ffconcat", expected: .refusedByPolicy, about: "an ffconcat list naming a local file"),
        RefusedInput(name: "concat:a|b", expected: .inputNotFound, about: "concat protocol syntax is a file name", isPath: true),
        RefusedInput(name: "network.m3u8", expected: .refusedByPolicy, about: "local HLS playlist with an http segment"),
        RefusedInput(name: "mjpeg-zeroed.mkv", expected: .corruptData, about: "MJPEG frames zeroed (FFmpeg logs at FATAL)"),
    ]

    @Test("The library throws the exact code; the CLI exits 1 with one Error line and writes nothing",
          arguments: refused)
    func refusedInput(_ item: RefusedInput) throws {
        let path = try item.path()
        let check = {
            let code = errorCode {
                let sampler = try FrameSampler(source: .file(path))
                _ = try sampler.frame(at: 0, size: Size(width: 64, height: 36))
            }
            #expect(code == item.expected, "\(item.name): got \(code.map { "\($0)" } ?? "success")")
            let output = TestPaths.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: output) }
            let result = try Child.cli(["thumb", path, "-o", output + "/out.ppm", "--at", "0", "--timeout", "10"], killAfter: 20)
            expectCLIFailure(result, input: path, outputDirectory: output)
        }
        if let knownIssue = item.knownIssue {
            withKnownIssue(Comment(rawValue: knownIssue)) { try check() }
        } else {
            try check()
        }
    }

    @Test("A codec FFmpeg does not know is named by its tag, with what would decode it", arguments: [
        ("vvc1-sample-entry.mp4", ["VVC (H.266) video (tag vvc1)", "FFmpeg 7.1 or later"]),
        ("dav1-sample-entry.mp4", ["Dolby Vision AV1 video (tag dav1)", "not take this sample entry as AV1"]),
        ("unknown-fourcc.mp4", ["an unknown video codec (tag zzzz)"]),
    ])
    func unknownCodecNamed(name: String, phrases: [String]) throws {
        let path = try BadInputs.path(name)
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try Child.cli(["thumb", path, "-o", output + "/out.jpg", "--timeout", "10"], killAfter: 20)
        #expect(result.status == 1 && result.errorLines.count == 1, "\(result.stderr)")
        for phrase in phrases { #expect(result.stderr.contains(phrase), "\(name): \(result.stderr)") }
        #expect(!result.stderr.contains("none"), "\(name): \(result.stderr)")
    }

    @Test("A format refused by the allow-list is read when allowedFormats is nil", arguments: [
        ("realmedia.rm", PreviewLoopError.Code?.none), ("audio.wav", .noVideoStream), ("subtitles.srt", .noVideoStream),
    ])
    func allowListOff(name: String, expected: PreviewLoopError.Code?) throws {
        let path = try BadInputs.path(name)
        let open = SourceOptions(allowedFormats: nil)
        let code = errorCode {
            let sampler = try FrameSampler(source: .file(path), options: open)
            let frame = try sampler.frame(at: 0.2, size: Size(width: 64, height: 36))
            #expect(frame.image.width == 64 && frame.image.height == 36)
        }
        #expect(code == expected, "\(name): got \(code.map { "\($0)" } ?? "success")")
    }

    @Test("A file named concat:a|b is a file: read once, not concatenated")
    func concatProtocolNameIsAFile() throws {
        let path = try BadInputs.path("concat:faststart.mp4|faststart.mp4")
        let info = try MediaProbe.probe(.file(path))
        #expect(info.duration.map { abs($0 - 2.0) < 0.05 } == true, "duration \(String(describing: info.duration))")
    }

    @Test("A local HLS playlist with local segments plays (a local input may open local files)")
    func localPlaylist() throws {
        var frames = 0
        try LoopPlayer(source: .file(try BadInputs.path("local.m3u8"))).run { _ in frames += 1 }
        #expect(frames == 25)
    }

    @Test("A 12000x12000 picture is refused as tooLarge by the CLI in < 1 s of CPU and < 200 MB",
          arguments: ["bomb.png", "bomb.mkv"])
    func decompressionBomb(name: String) throws {
        let path = try BadInputs.path(name)
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let (result, peakBytes, cpuSeconds) = try Child.measuredCLI(["thumb", path, "-o", output + "/out.ppm"])
        expectCLIFailure(result, input: path, outputDirectory: output)
        // Decoding it would take 432 MB for the RGB picture alone, and seconds of CPU.
        #expect(peakBytes < 200 << 20, "peak RSS \(peakBytes >> 20) MB")
        #expect(cpuSeconds < 1, "\(cpuSeconds) s of CPU")
        #expect(errorCode { _ = try MediaProbe.probe(.file(path)) } == .tooLarge)
    }

    // MARK: - Pipes: no hang

    @Test("A named pipe given as a path is refused at once instead of blocking for ever")
    func fifoWithoutWriter() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/clip.mp4"
        try #require(mkfifo(fifo, 0o600) == 0)
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try Child.cli(["thumb", fifo, "-o", output + "/out.ppm", "--timeout", "2"], killAfter: 5)
        #expect(!result.wasKilled, "blocked until killed after \(result.elapsed) s")
        expectCLIFailure(result, input: fifo, outputDirectory: output)
        // open(2) of a FIFO blocks until a writer comes, where no timeout reaches: only regular files
        // are read by path (standard input, `-`, is the way to read a pipe).
        #expect(result.stderr.contains("not a regular file"), "\(result.stderr)")
        let outcome = callUnblockingFIFO(fifo, deadline: 3) {
            _ = try MediaProbe.probe(.file(fifo), options: SourceOptions(openTimeout: 2, readTimeout: 2, jobTimeout: 2))
        }
        #expect(outcome == .threw(.refusedByPolicy))
    }

    @Test("A concat list, refused by the allow-list, is never demuxed: its named pipe is not opened")
    func refusedConcatListIsNotRun() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/part.mp4", list = directory + "/list.ffconcat"
        try #require(mkfifo(fifo, 0o600) == 0)
        try "ffconcat version 1.0\nfile 'part.mp4'\n".write(toFile: list, atomically: true, encoding: .utf8)
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try Child.cli(["probe", list, "--timeout", "2"], killAfter: 5)
        #expect(!result.wasKilled, "blocked until killed after \(result.elapsed) s")
        expectCLIFailure(result, input: list, outputDirectory: output)
        let outcome = callUnblockingFIFO(fifo, deadline: 3) {
            _ = try MediaProbe.probe(.file(list), options: SourceOptions(openTimeout: 2, readTimeout: 2, jobTimeout: 2))
        }
        #expect(outcome == .threw(.refusedByPolicy))
    }

    @Test("Standard input from a producer that never writes times out (CLI --timeout 2)")
    func stalledStandardInput() throws {
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try Child.cli(["thumb", "-", "-o", output + "/out.ppm", "--at", "0", "--timeout", "2"],
                                   input: .stalledPipe, killAfter: 5)
        #expect(!result.wasKilled, "blocked until killed after \(result.elapsed) s")
        expectCLIFailure(result, input: "<standard input>", outputDirectory: output)
    }

    @Test("Reading standard input leaves it as it found it: the next reader in the pipeline still blocks")
    func standardInputFlagsRestored() throws {
        // `preview-loop probe -; cat` in one shell, fed by a producer that is late: the probe times
        // out, then cat must wait for the producer's bytes. O_NONBLOCK is a flag of the open file
        // description that cat, the shell and the rest of the pipeline share; left set, cat's first
        // read fails with EAGAIN ("Resource temporarily unavailable").
        let script = "'\(TestPaths.cliBinary)' probe - --timeout 1; cat"
        let result = try Child.run("/bin/sh", ["-c", script], input: .delayed(Data("late bytes\n".utf8), after: 2), killAfter: 10)
        #expect(result.stderr.contains("Error: ") && result.stderr.contains("timed out"), "\(result.stderr)")
        #expect(result.status == 0, "cat failed: \(result.stderr)")
        #expect(String(decoding: result.stdout, as: UTF8.self) == "late bytes\n")
    }

    /// How a call that may block on a named pipe ended.
    private enum PipeOutcome: Equatable {
        case succeeded
        case threw(PreviewLoopError.Code?)
        /// Still blocked at the deadline (then unblocked by the test).
        case hung
    }

    /// Runs `body` on a thread of its own; if it has not returned after `deadline` seconds (blocked in
    /// `open(2)` on the pipe), opens and closes the pipe's write end until it returns, and reports a hang.
    private func callUnblockingFIFO(_ fifo: String, deadline: Double, _ body: @escaping @Sendable () throws -> Void) -> PipeOutcome {
        let finished = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome = PipeOutcome.succeeded
        Thread.detachNewThread {
            do { try body() } catch { outcome = .threw((error as? PreviewLoopError)?.code) }
            finished.signal()
        }
        if finished.wait(timeout: .now() + deadline) == .success { return outcome }
        // A writer appearing and leaving gives the blocked reader end-of-file.
        while finished.wait(timeout: .now() + 0.1) == .timedOut {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        return .hung
    }
}
