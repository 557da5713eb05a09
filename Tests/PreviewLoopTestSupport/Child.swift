import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a child process did: its status, output, wall time, and whether the deadline killed it.
package struct ChildResult: Sendable {
    package var status: Int32
    package var stdout: Data
    package var stderr: String
    package var elapsed: Double
    package var wasKilled: Bool
    /// The signal that ended the child (a trap is SIGILL or SIGTRAP), if one did.
    package var signal: Int32?
    /// Standard output as UTF-8 text.
    package var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    /// The non-empty lines of standard error.
    package var errorLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: true) }
}

/// Where a child's standard input comes from.
package enum ChildInput: Sendable {
    /// `/dev/null`.
    case none
    /// A real pipe fed these bytes by a writer thread, then closed (like `cat file | …`).
    case piped(Data)
    /// A pipe whose write end stays open and silent until the child exits (a stalled producer).
    case stalledPipe
    /// A pipe that stays silent for `after` seconds, then gets these bytes and is closed.
    case delayed(Data, after: Double)
}

/// The tests' one process runner: runs a program to its end and captures its output, with a hard
/// deadline — a child still running when it passes is killed with SIGKILL (which, unlike SIGTERM,
/// cannot be blocked by the signal mask children inherit from test threads), so a hang fails one test
/// instead of stalling the suite. Both pipes are read concurrently, so a full pipe never blocks the child.
package enum Child {
    package static func run(_ path: String, _ arguments: [String], input: ChildInput = .none,
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

    /// Runs `/usr/bin/<name>` (the `ffmpeg`/`ffprobe` oracles, libwebp's tools, …).
    package static func tool(_ name: String, _ arguments: [String], input: ChildInput = .none,
                             killAfter deadline: Double = 60) throws -> ChildResult {
        try run("/usr/bin/" + name, arguments, input: input, killAfter: deadline)
    }

    /// Runs the debug `preview-loop` binary.
    package static func cli(_ arguments: [String], input: ChildInput = .none, killAfter deadline: Double = 60) throws -> ChildResult {
        try run(TestPaths.cliBinary, arguments, input: input, killAfter: deadline)
    }

    /// Runs `preview-loop` under `/usr/bin/time` and returns its result with peak RSS (bytes) and
    /// CPU time (user + system seconds).
    package static func measuredCLI(_ arguments: [String]) throws -> (result: ChildResult, peakBytes: Int, cpuSeconds: Double) {
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
