import Foundation
import Testing
import PreviewLoop
#if canImport(Glibc)
import Glibc
#endif

/// The bad-input catalogue: `Fixtures/make-bad-inputs.sh` run once per test process into a new
/// temporary directory (removed again when the process exits). Nothing it makes is committed.
enum BadInputs {
    /// The directory holding the catalogue, or why it could not be made.
    private static let made: Result<String, OracleError> = {
        let directory = NSTemporaryDirectory() + "previewloop-bad-inputs-" + UUID().uuidString
        let script = TestPaths.packageRoot.appendingPathComponent("Fixtures/make-bad-inputs.sh").path
        do {
            let result = try Run.program("/bin/bash", [script, directory])
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
    static func directory() throws -> String { try made.get() }

    /// The path of one catalogue input.
    static func path(_ name: String) throws -> String { try directory() + "/" + name }
}

/// What a child process did: its status, output, wall time, and whether the deadline killed it.
struct ChildResult {
    var status: Int32
    var stdout: Data
    var stderr: String
    var elapsed: Double
    var wasKilled: Bool
    /// The signal that ended the child (a trap is SIGILL or SIGTRAP), if one did.
    var signal: Int32?
    /// The non-empty lines of standard error.
    var errorLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: true) }
}

/// Where a child's standard input comes from.
enum ChildInput {
    /// `/dev/null`.
    case none
    /// A real pipe fed these bytes by a writer thread, then closed (like `cat file | …`).
    case piped(Data)
    /// A pipe whose write end stays open and silent until the child exits (a stalled producer).
    case stalledPipe
    /// A pipe that stays silent for `after` seconds, then gets these bytes and is closed.
    case delayed(Data, after: Double)
}

/// Runs programs with a hard deadline: a child still running when it passes is killed with SIGKILL
/// (which, unlike SIGTERM, cannot be blocked by the signal mask children inherit from test threads),
/// so a hang fails one test instead of stalling the suite.
enum Child {
    static func run(_ path: String, _ arguments: [String], input: ChildInput = .none,
                    killAfter deadline: Double = 60) throws -> ChildResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        var inputPipe: Pipe?
        switch input {
        case .none: process.standardInput = FileHandle.nullDevice
        case .piped, .stalledPipe, .delayed:
            inputPipe = Pipe()
            process.standardInput = inputPipe
        }
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        let started = Date()
        try process.run()
        var pending: (bytes: Data, delay: Double)?
        if case .piped(let bytes) = input { pending = (bytes, 0) }
        if case .delayed(let bytes, let delay) = input { pending = (bytes, delay) }
        if let (bytes, delay) = pending, let writer = inputPipe?.fileHandleForWriting {
            Thread.detachNewThread {
                if delay > 0 { Thread.sleep(forTimeInterval: delay) }
                // The child may exit before reading everything. A write to a pipe with no reader
                // raises SIGPIPE in the writing thread, which would kill the test process: with the
                // signal blocked in this thread, the write fails with EPIPE instead, and the pending
                // signal is taken back before the thread ends.
                var pipeSignal = sigset_t()
                sigemptyset(&pipeSignal)
                sigaddset(&pipeSignal, SIGPIPE)
                pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
                defer {
                    var pending = sigset_t()
                    sigpending(&pending)
                    if sigismember(&pending, SIGPIPE) == 1 {
                        var zero = timespec()
                        _ = sigtimedwait(&pipeSignal, nil, &zero)
                    }
                }
                bytes.withUnsafeBytes { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        let written = Glibc.write(writer.fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                        if written <= 0 { break }
                        offset += written
                    }
                }
                try? writer.close()
            }
        }
        nonisolated(unsafe) var errorData = Data(), outputData = Data()
        let readers = DispatchGroup()
        DispatchQueue.global().async(group: readers) { errorData = err.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: readers) { outputData = out.fileHandleForReading.readDataToEndOfFile() }
        var wasKilled = false
        if exited.wait(timeout: .now() + deadline) == .timedOut {
            wasKilled = true
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
        }
        let elapsed = Date().timeIntervalSince(started)
        if case .stalledPipe = input { try? inputPipe?.fileHandleForWriting.close() }
        readers.wait()
        return ChildResult(status: process.terminationStatus, stdout: outputData,
                           stderr: String(decoding: errorData, as: UTF8.self), elapsed: elapsed, wasKilled: wasKilled,
                           signal: process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil)
    }

    /// Runs the debug `preview-loop` binary.
    static func cli(_ arguments: [String], input: ChildInput = .none, killAfter deadline: Double = 60) throws -> ChildResult {
        try run(TestPaths.cliBinary, arguments, input: input, killAfter: deadline)
    }

    /// Runs `preview-loop` under `/usr/bin/time` and returns its result with peak RSS (bytes) and
    /// CPU time (user + system seconds).
    static func measuredCLI(_ arguments: [String]) throws -> (result: ChildResult, peakBytes: Int, cpuSeconds: Double) {
        let report = NSTemporaryDirectory() + "previewloop-time-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: report) }
        let result = try run("/usr/bin/time", ["-f", "%M %U %S", "-o", report, TestPaths.cliBinary] + arguments)
        let fields = (try String(contentsOfFile: report, encoding: .utf8)).split(whereSeparator: \.isWhitespace)
        // GNU time prints "Command exited with non-zero status N" first when the status is not 0.
        let numbers = fields.suffix(3).compactMap { Double($0) }
        guard numbers.count == 3 else { throw OracleError(message: "unexpected /usr/bin/time output: \(fields)") }
        return (result, Int(numbers[0]) * 1024, numbers[1] + numbers[2])
    }
}

/// Asserts what the CLI must do on a bad input: exit status 1, exactly one line on standard error,
/// starting `Error: ` and naming the input as given, nothing on standard output, and nothing written to
/// `outputDirectory` (no image, no leftover temporary file).
func expectCLIFailure(_ result: ChildResult, input: String, outputDirectory: String,
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
func errorCode(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> PreviewLoopError.Code? {
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
