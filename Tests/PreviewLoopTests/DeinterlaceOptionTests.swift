import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// `--deinterlace` on `wall`, and the batch fingerprint that tells a rerun whether a clip's outputs are
/// up to date: made with another deinterlacing, they are not.
@Suite("--deinterlace on wall; the batch fingerprint counts it")
struct DeinterlaceOptionTests {
    @Test("wall --deinterlace auto|on|off reaches every loop's SourceOptions; auto by default; anything else is a usage error")
    func wallTakesDeinterlace() throws {
        for mode in Deinterlacing.allCases {
            guard case .command(let options as WallCommand) = try CommandLineParser.parse(["wall", "a.mp4", "b.mp4", "--log", "logs",
                                                                           "--deinterlace", mode.rawValue]) else {
                Issue.record("not a wall command")
                return
            }
            #expect(options.deinterlacing == mode)
            #expect(options.loopConfiguration.sourceOptions.deinterlacing == mode)
        }
        guard case .command(let plain as WallCommand) = try CommandLineParser.parse(["wall", "a.mp4", "--log", "logs"]) else {
            Issue.record("not a wall command")
            return
        }
        #expect(plain.deinterlacing == .auto && plain.loopConfiguration.sourceOptions.deinterlacing == .auto)
        #expect(HelpText.help(for: Subcommand(WallCommand.self)).contains("--deinterlace <mode>"))
        let bad = try Child.run(TestPaths.cliBinary, ["wall", TestPaths.fixture("short.mp4"), "--log",
                                                        TestPaths.temporaryDirectory() + "/logs", "--deinterlace", "yes"])
        #expect(bad.status == 64 && bad.stderr.hasPrefix("Error:"), "\(bad.stderr)")
    }

    @Test("wall --deinterlace on runs its loops (the real binary)")
    func wallRuns() throws {
        let logs = TestPaths.temporaryDirectory() + "/logs"
        defer { try? FileManager.default.removeItem(atPath: logs) }
        let result = try Child.run(TestPaths.cliBinary, ["wall", TestPaths.fixture("short.mp4"), "--log", logs,
                                                           "--length", "0.5", "--size", "64x36", "--deinterlace", "on"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: logs + "/summary.txt"))
    }

    /// Runs a one-clip strip batch into `directory` with `deinterlacing`; whether the clip was skipped.
    private func batchSkipped(_ directory: String, _ deinterlacing: Deinterlacing) async throws -> Bool {
        var options = BatchOptions(outputDirectory: directory)
        options.recipe = BatchRecipe(strip: .init())
        options.deinterlacing = deinterlacing
        // The previous run's worker thread lets its runner (and the directory's batch lock) go just after
        // the last record: on a loaded machine the next runner can come first and find the lock held.
        var attempt: BatchRunner?
        for _ in 0..<100 where attempt == nil {
            let result = Result { () throws(PreviewLoopError) -> BatchRunner in
                try BatchRunner(manifest: [BatchClip(id: "a", input: TestPaths.fixture("short.mp4"))], options: options)
            }
            if case .failure(let error) = result, error.message.contains("another batch is running") {
                try await Task.sleep(for: .milliseconds(50))
                continue
            }
            attempt = try result.get()
        }
        let runner = try #require(attempt)
        var skipped: [Bool] = []
        for await record in runner.results() {
            #expect(record.status == .ok)
            skipped.append(record.skipped)
        }
        #expect(skipped.count == 1)
        return skipped.first ?? false
    }

    @Test("A batch rerun with another --deinterlace redoes the clip; with the same one it is skipped")
    func batchFingerprint() async throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try await batchSkipped(directory, .auto) == false)
        #expect(try await batchSkipped(directory, .auto) == true)
        #expect(try await batchSkipped(directory, .off) == false)
        #expect(try await batchSkipped(directory, .off) == true)
        #expect(try await batchSkipped(directory, .on) == false)
        #expect(try await batchSkipped(directory, .auto) == false)

        // Three settings, three fingerprints; auto's is the one made before the setting counted.
        let clip = BatchClip(id: "a", input: "clip.mp4")
        var prints: [String] = []
        for mode in Deinterlacing.allCases {
            var options = BatchOptions(outputDirectory: TestPaths.temporaryDirectory())
            options.deinterlacing = mode
            let runner = try BatchRunner(manifest: [clip], options: options)
            prints.append(runner.fingerprint(of: clip))
            if mode == .auto {
                #expect(runner.fingerprint(of: clip) == StableHash.hex("clip.mp4\n- - -\n" + options.recipe.canonical))
            }
        }
        #expect(Set(prints).count == 3)
    }
}
