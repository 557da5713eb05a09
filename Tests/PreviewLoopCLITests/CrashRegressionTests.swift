import Foundation
import Testing
import PreviewLoopTestSupport
import PreviewLoop

/// No crash: the inputs the fuzzer found (saved in `Fuzz/crashes/`) and time arguments far out of
/// range must end in an `Error:` line and exit status 1 (or 64 for a usage error), never in a trap.
/// Run through the CLI in a child process, so that a crash fails one test instead of the test run.
@Suite("No crash on fuzz findings and out-of-range times", .timeLimit(.minutes(10)))
struct CrashRegressionTests {
    /// Every saved reproducer (`Fuzz/crashes/`, small files, named after what they are).
    static let reproducers: [String] = {
        let directory = TestPaths.packageRoot.appendingPathComponent("Fuzz/crashes").path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { !$0.hasSuffix(".md") }.sorted().map { directory + "/" + $0 }
    }()

    /// Reproducers whose crash the lead has not fixed yet.
    static let knownCrashes: [String: String] = [:]

    /// Asserts a CLI run ended on its own with status 0 or 1 (and an `Error:` line for 1).
    private func expectNoCrash(_ result: ChildResult, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.signal == nil, "\(what): killed by signal \(result.signal ?? 0): \(result.stderr.prefix(300))",
                sourceLocation: sourceLocation)
        #expect(result.status == 0 || result.status == 1 || result.status == 64, "\(what): exit \(result.status)",
                sourceLocation: sourceLocation)
        if result.status != 0 {
            #expect(result.stderr.hasPrefix("Error: "), "\(what): \(result.stderr.prefix(300))", sourceLocation: sourceLocation)
        }
    }

    @Test("Saved fuzz reproducers: thumb, strip and a loop end with a status, not a signal", arguments: reproducers)
    func fuzzReproducer(_ path: String) throws {
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let runs = [
            ["thumb", path, "-o", output + "/thumb.ppm", "--at", "0"],
            ["strip", path, "-o", output + "/strip.ppm", "--count", "3", "--length", "1"],
            ["loop", path, "--loops", "2", "--length", "1"],
        ]
        let check = {
            for arguments in runs {
                let result = try Child.cli(arguments, killAfter: 20)
                self.expectNoCrash(result, arguments[0])
            }
        }
        if let issue = Self.knownCrashes[URL(fileURLWithPath: path).lastPathComponent] {
            withKnownIssue(Comment(rawValue: issue)) { try check() }
        } else {
            try check()
        }
    }

    @Test("Times far beyond any clip are refused, not trapped on (Double → Int64 / Duration overflow)")
    func hugeTimes() throws {
        let clip = try BadInputs.path("raw.h264")          // no duration: nothing clamps the times
        let huge = "99999999999999999999"
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let runs = [
            ["thumb", clip, "-o", output + "/a.ppm", "--at", huge],
            ["strip", clip, "-o", output + "/b.ppm", "--start", huge, "--length", "1"],
            ["strip", clip, "-o", output + "/c.ppm", "--length", huge],
            ["loop", clip, "--start", huge, "--length", "1"],
            ["loop", clip, "--length", huge],
            ["loop", TestPaths.fixture("short.mp4"), "--start", huge],
        ]
        for arguments in runs {
            let result = try Child.cli(arguments, killAfter: 20)
            expectNoCrash(result, arguments.joined(separator: " "))
            #expect(result.status != 0, "\(arguments.joined(separator: " ")) succeeded")
        }
    }
}
