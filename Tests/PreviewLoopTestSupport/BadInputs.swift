import Foundation
import Testing
import PreviewLoop
#if canImport(Glibc)
import Glibc
#endif

/// The bad-input catalogue: `Fixtures/make-bad-inputs.sh` run once per test process into a new
/// temporary directory (removed again when the process exits). Nothing it makes is committed.
package enum BadInputs {
    /// The directory holding the catalogue, or why it could not be made.
    private static let made: Result<String, OracleError> = {
        let directory = NSTemporaryDirectory() + "previewloop-bad-inputs-" + UUID().uuidString
        let script = TestPaths.packageRoot.appendingPathComponent("Fixtures/make-bad-inputs.sh").path
        do {
            let result = try Child.run("/bin/bash", [script, directory], killAfter: 600)
            guard result.status == 0, FileManager.default.fileExists(atPath: directory + "/.complete") else {
                return .failure(OracleError(message: "make-bad-inputs.sh failed (\(result.status)): \(result.stderr)"))
            }
        } catch {
            return .failure(OracleError(message: "cannot run make-bad-inputs.sh: \(error)"))
        }
        atexit { if case .success(let directory) = BadInputs.made { try? FileManager.default.removeItem(atPath: directory) } }
        return .success(directory)
    }()

    /// The catalogue's directory (made on first use).
    package static func directory() throws -> String { try made.get() }

    /// The path of one catalogue input.
    package static func path(_ name: String) throws -> String { try directory() + "/" + name }
}

/// Asserts what the CLI must do on a bad input: exit status 1, exactly one line on standard error,
/// starting `Error: ` and naming the input as given, nothing on standard output, and nothing written to
/// `outputDirectory` (no image, no leftover temporary file).
package func expectCLIFailure(_ result: ChildResult, input: String, outputDirectory: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(!result.wasKilled, "killed after \(result.elapsed) s: the CLI hung on \(input)", sourceLocation: sourceLocation)
    #expect(result.status == 1, "exit status \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.errorLines.count == 1, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stderr.hasPrefix("Error: "), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stderr.contains(input), "the error does not name \(input): \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stdout.isEmpty, "stdout: \(String(decoding: result.stdout, as: UTF8.self))", sourceLocation: sourceLocation)
    let left = (try? FileManager.default.contentsOfDirectory(atPath: outputDirectory)) ?? []
    #expect(left.isEmpty, "left behind in the output directory: \(left)", sourceLocation: sourceLocation)
}

/// The error code a library call threw, or `nil` when it succeeded (any other error is recorded).
package func errorCode(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> PreviewLoopError.Code? {
    do {
        try body()
        return nil
    } catch let error as PreviewLoopError {
        return error.code
    } catch {
        Issue.record("not a PreviewLoopError: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
