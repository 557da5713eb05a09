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
    /// When a ``ChildSignal`` was sent, in seconds after the start; `nil` when it was not (the child
    /// ended first, or its trigger never came).
    package var signalSentAt: Double?
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

/// A signal to send to a running child: after a delay, or once its standard error shows a text (a
/// progress line: the job is under way, past its start-up). Never sent to a child that has ended.
package struct ChildSignal: Sendable {
    /// When to send it.
    package enum Trigger: Sendable {
        /// This many seconds after the start.
        case after(Double)
        /// As soon as standard error, read so far, satisfies this test (for example: shows a second progress line).
        case standardError(@Sendable (String) -> Bool)

        /// As soon as standard error, read so far, contains this text.
        package static func standardErrorContains(_ text: String) -> Trigger {
            .standardError { $0.contains(text) }
        }
    }
    /// The signal's number (`SIGTERM`, `SIGINT`…).
    package var number: Int32
    package var trigger: Trigger

    package init(_ number: Int32, _ trigger: Trigger) {
        self.number = number
        self.trigger = trigger
    }
}

/// The tests' one process runner: runs a program to its end and captures its output, with a hard
/// deadline — a child still running when it passes is killed with SIGKILL (which, unlike SIGTERM,
/// cannot be blocked by the signal mask children inherit from test threads), so a hang fails one test
/// instead of stalling the suite. Both pipes are read concurrently, so a full pipe never blocks the child.
/// `signal` sends a signal mid-run (``ChildSignal``).
package enum Child {
    package static func run(_ path: String, _ arguments: [String], input: ChildInput = .none,
                            signal: ChildSignal? = nil, killAfter deadline: Double = 60) throws -> ChildResult {
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
        // Under `lock`: whether the child has ended, and when the signal was sent (never to an ended child).
        let lock = NSLock()
        nonisolated(unsafe) var hasEnded = false, signalSentAt: Double?
        process.terminationHandler = { _ in
            lock.withLock { hasEnded = true }
            exited.signal()
        }
        let started = Date()
        try process.run()
        let pid = process.processIdentifier
        let sendSignal = { @Sendable in
            guard let signal else { return }
            lock.withLock {
                guard !hasEnded, signalSentAt == nil else { return }
                signalSentAt = Date().timeIntervalSince(started)
                kill(pid, signal.number)
            }
        }
        if case .after(let seconds)? = signal?.trigger {
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: sendSignal)
        }
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
        // The readers get threads of their own: on a loaded machine dispatch's shared pool can be slow to
        // grow while test threads block in `wait`, and a child whose pipe nobody drains stalls with it.
        readers.enter()
        Thread.detachNewThread {
            defer { readers.leave() }
            // Read as it comes, so a trigger text is seen while the child runs.
            while true {
                let chunk = err.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                errorData.append(chunk)
                if case .standardError(let isDue)? = signal?.trigger, isDue(String(decoding: errorData, as: UTF8.self)) {
                    sendSignal()
                }
            }
        }
        readers.enter()
        Thread.detachNewThread {
            defer { readers.leave() }
            outputData = out.fileHandleForReading.readDataToEndOfFile()
        }
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
                           signal: process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil,
                           signalSentAt: lock.withLock { signalSentAt })
    }

    /// Runs `/usr/bin/<name>` (the `ffmpeg`/`ffprobe` oracles, libwebp's tools, …).
    package static func tool(_ name: String, _ arguments: [String], input: ChildInput = .none,
                             killAfter deadline: Double = 60) throws -> ChildResult {
        try run("/usr/bin/" + name, arguments, input: input, killAfter: deadline)
    }

    /// Runs the debug `preview-loop` binary.
    package static func cli(_ arguments: [String], input: ChildInput = .none, signal: ChildSignal? = nil,
                            killAfter deadline: Double = 60) throws -> ChildResult {
        try run(TestPaths.cliBinary, arguments, input: input, signal: signal, killAfter: deadline)
    }

    /// Runs `preview-loop` under `/usr/bin/time` and returns its result with peak RSS (bytes) and
    /// CPU time (user + system seconds).
    ///
    /// The deadline is longer than `run`'s: these runs measure memory, not time, and on a loaded
    /// machine a large one (100,000 batch records) can take over a minute.
    package static func measuredCLI(_ arguments: [String], killAfter deadline: Double = 240) throws
        -> (result: ChildResult, peakBytes: Int, cpuSeconds: Double) {
        let report = NSTemporaryDirectory() + "previewloop-time-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: report) }
        let result = try run("/usr/bin/time", ["-f", "%M %U %S", "-o", report, TestPaths.cliBinary] + arguments,
                             killAfter: deadline)
        if result.wasKilled {
            throw OracleError(message: "preview-loop \(arguments.first ?? "") still ran after \(Int(deadline)) s and was killed")
        }
        let fields = (try String(contentsOfFile: report, encoding: .utf8)).split(whereSeparator: \.isWhitespace)
        // GNU time prints "Command exited with non-zero status N" first when the status is not 0.
        let numbers = fields.suffix(3).compactMap { Double($0) }
        guard numbers.count == 3 else { throw OracleError(message: "unexpected /usr/bin/time output: \(fields)") }
        return (result, Int(numbers[0]) * 1024, numbers[1] + numbers[2])
    }
}
