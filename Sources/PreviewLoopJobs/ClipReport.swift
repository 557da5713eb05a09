import Glibc
import PreviewLoop
import Synchronization

/// `--json` of the single-clip commands (thumb, strip, sheet, sprites, render, card, loop), declared once.
enum ReportOptions {
    /// `--json`: the batch record instead of the summary line.
    static let json = FlagOption(
        "json",
        help: "Print one JSON object on standard output instead of the summary line, in the schema of a batch "
            + "results record: status (ok or failed), for a failure its reason code and whether it is "
            + "permanent or transient, the outputs with their sizes and what was chosen, the clip (duration, "
            + "size, codec, rotation, HDR kind) and timings. A failure prints its record too, and the Error: line "
            + "on standard error; so does a run stopped by SIGINT or SIGTERM (reason interrupted, transient; "
            + "exit 130/143; loop only before its first frame).")
}

/// What one single-clip command did, printed with `--json` as a ``BatchRecord`` (the batch's own type
/// and encoder): the clip once opened, each output as it is written (its size measured at the end),
/// and timings in milliseconds from the command's start.
///
/// Filled on the command's thread; a signal handler reads it from another (``exit(interruptedBy:_:)``).
/// Invariant: the mutable state is touched only under its lock, and at most one record is ever printed
/// (``print(requiresOutput:)``, ``printFailure(_:)``, ``printInterruption(by:)`` and
/// ``exit(interruptedBy:_:)`` print under that lock and mark it printed).
final class ClipReport: Sendable {
    /// The command reporting.
    let command: Subcommand
    /// The input as given.
    let input: String
    private let started = ContinuousClock.now

    private struct State {
        var info: VideoInfo?
        var outputs: [BatchRecord.Output] = []
        var timings: [String: Double] = [:]
        var remote: RemoteReads?
        var lastMark = ContinuousClock.now
        /// Whether a record was printed: a second one never is.
        var isPrinted = false
    }

    /// Everything mutable, under one lock.
    private let state = Mutex(State())

    init(command: Subcommand, input: String) {
        self.command = command
        self.input = input
    }

    /// What the probe found, once the input is open.
    var info: VideoInfo? { state.withLock { $0.info } }
    /// The outputs written so far.
    var outputs: [BatchRecord.Output] { state.withLock { $0.outputs } }
    /// `open_ms`, `<kind>_ms`, `total_ms`.
    var timings: [String: Double] { state.withLock { $0.timings } }

    /// Notes the clip's metadata and the time taken to open it.
    func opened(_ info: VideoInfo) {
        let opened = milliseconds(since: started)
        state.withLock { state in
            state.info = info
            state.timings["open_ms"] = opened
            state.lastMark = ContinuousClock.now
        }
    }

    /// Notes what reading a remote input cost (`nil` for a local one).
    func fetched(_ reads: RemoteReads?) {
        state.withLock { $0.remote = reads }
    }

    /// Adds a written output; `timing` names the time since the last mark (`poster` → `poster_ms`).
    func add(_ output: BatchRecord.Output, timing: String? = nil) {
        state.withLock { state in
            state.outputs.append(output)
            if let timing {
                state.timings[timing + "_ms"] = milliseconds(since: state.lastMark)
                state.lastMark = ContinuousClock.now
            }
        }
    }

    /// An output entry for `path`, its size measured when the record is made.
    static func output(_ kind: String, _ path: String, width: Int? = nil, height: Int? = nil) -> BatchRecord.Output {
        var output = BatchRecord.Output(kind: kind, path: path, bytes: 0)
        output.width = width
        output.height = height
        return output
    }

    /// The `ok` record: every output measured where it lies; a missing or empty one makes it a failure
    /// (never `ok` with a missing or empty output).
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` naming the output.
    func record(requiresOutput: Bool = true) throws(PreviewLoopError) -> BatchRecord {
        try state.withLock { state throws(PreviewLoopError) in try record(state, requiresOutput: requiresOutput) }
    }

    private func record(_ state: State, requiresOutput: Bool) throws(PreviewLoopError) -> BatchRecord {
        var measured = state.outputs
        guard !measured.isEmpty || !requiresOutput else { throw PreviewLoopError(.outputNotWritable, "\(input): no output was written") }
        for index in measured.indices {
            let path = measured[index].path
            guard let size = Self.size(of: path, kind: measured[index].kind), size > 0 else {
                throw PreviewLoopError(.outputNotWritable, "\(input): \(path) is missing or empty after writing")
            }
            measured[index].bytes = size
        }
        var record = BatchRecord(id: BatchManifest.derivedID(for: input), input: input, status: .ok, attempts: 1,
                                 outputs: measured, clip: state.info.map(BatchRecord.ClipInfo.init),
                                 timings: finalTimings(state), shard: nil, fingerprint: nil)
        record.command = command.rawValue
        record.remote = state.remote
        return record
    }

    /// The `failed` record of `error`: its reason code, permanence and message, with what was known.
    func failure(_ error: any Error) -> BatchRecord {
        state.withLock { failure(error, $0) }
    }

    private func failure(_ error: any Error, _ state: State) -> BatchRecord {
        let failure: PreviewLoopError
        switch error {
        case let error as PreviewLoopError: failure = error
        // A request refused by a work limit (--max-memory, --max-frames, an encoder's size).
        case let error as WorkLimitError: failure = PreviewLoopError(.tooLarge, error.message)
        default: failure = PreviewLoopError(.invalidArgument, String(describing: error))
        }
        return failedRecord(state, reason: BatchFailure.reason(for: failure), permanence: BatchFailure.permanence(of: failure),
                            message: String(describing: error))
    }

    /// The `failed` record of a command stopped by `signal`: reason `interrupted`, transient (a rerun
    /// makes it), as a batch records a clip its stop interrupted; the outputs completed before it (an
    /// unfinished one is never listed: it is added only once written), the clip if opened, the timings so far.
    private func interruption(by signal: Int32, _ state: State) -> BatchRecord {
        failedRecord(state, reason: BatchFailure.interrupted, permanence: .transient, message: Self.interruptionMessage(input: input, signal: signal))
    }

    /// `<input>: interrupted by SIGTERM; unfinished outputs removed`: the record's message and the `Error:` line's text.
    static func interruptionMessage(input: String, signal: Int32) -> String {
        "\(Format.oneLine(input)): interrupted by \(SignalWatcher.name(of: signal)); unfinished outputs removed"
    }

    private func failedRecord(_ state: State, reason: String, permanence: BatchRecord.Permanence, message: String) -> BatchRecord {
        var record = BatchRecord(id: BatchManifest.derivedID(for: input), input: input, status: .failed, attempts: 1,
                                 outputs: state.outputs, clip: state.info.map(BatchRecord.ClipInfo.init),
                                 timings: finalTimings(state), shard: nil, fingerprint: nil)
        record.command = command.rawValue
        record.reason = reason
        record.permanence = permanence
        record.message = Format.oneLine(message)
        return record
    }

    private func finalTimings(_ state: State) -> [String: Double] {
        var timings = state.timings
        timings["total_ms"] = milliseconds(since: started)
        return timings
    }

    /// Prints the record of a finished command on standard output (a failure if an output is missing).
    ///
    /// - Parameter requiresOutput: whether writing nothing is a failure (`loop` may write nothing).
    func print(requiresOutput: Bool = true) throws(PreviewLoopError) {
        try state.withLock { state throws(PreviewLoopError) in
            guard !state.isPrinted else { return }
            let line = try record(state, requiresOutput: requiresOutput).jsonLine()
            state.isPrinted = true
            Console.writeOutput(line + "\n")
        }
    }

    /// Prints the `failed` record of `error`, unless a record was printed already.
    func printFailure(_ error: any Error) {
        state.withLock { state in
            guard !state.isPrinted else { return }
            state.isPrinted = true
            Console.writeOutput(failure(error, state).jsonLine() + "\n")
        }
    }

    /// Prints the record of a command that `signal` stopped (``interruption(by:_:)``), unless a record
    /// was printed already.
    func printInterruption(by signal: Int32) {
        state.withLock { state in
            guard !state.isPrinted else { return }
            state.isPrinted = true
            Console.writeOutput(interruption(by: signal, state).jsonLine() + "\n")
        }
    }

    /// Ends the process for `signal` from a signal handler's thread: under the report's lock, never
    /// released, so the command's thread can no longer print a record of its own, `cleanUp` runs (the
    /// unfinished files removed), then the interruption's record is printed (unless the command had
    /// printed its own just before) and `exit` ends the process.
    func exit(interruptedBy signal: Int32, cleanUp: () -> Void, _ exit: () -> Never) -> Never {
        state.withLock { state -> Never in
            cleanUp()
            if !state.isPrinted {
                state.isPrinted = true
                Console.writeOutput(interruption(by: signal, state).jsonLine() + "\n")
            }
            exit()
        }
    }

    /// Sets a timing measured elsewhere (`loop` → `loop_ms`).
    func addTiming(_ name: String, milliseconds: Double) {
        state.withLock { $0.timings[name + "_ms"] = (milliseconds * 1000).rounded() / 1000 }
    }

    /// A file's size, or for a directory of frames (`frames` kinds) the sum of its regular files.
    private static func size(of path: String, kind: String) -> Int? {
        // An object: the size the store accepted from this process.
        if ObjectOutput.isObject(path) { return ObjectOutput.uploadedSize(path) }
        if let size = BatchFiles.fileSize(path) { return size }
        guard kind.hasSuffix("frames"), let names = FileSystem.names(inDirectory: path) else { return nil }
        return names.filter { !$0.hasPrefix(".") }.reduce(0) { $0 + (BatchFiles.fileSize(path + "/" + $1) ?? 0) }
    }

    private func milliseconds(since instant: ContinuousClock.Instant) -> Double {
        let elapsed = (ContinuousClock.now - instant).components
        return ((Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15) * 1000).rounded() / 1000
    }
}

extension CommandFailure {
    /// Runs a single-clip command that reads `source`, errors reported as ``reporting(for:_:)``
    /// does; with a report (`--json`), a failure also prints its record on standard output.
    static func reporting(for source: InputOptions, report: ClipReport?, _ body: () throws -> Int32) -> Int32 {
        reporting(for: source) {
            do {
                return try body()
            } catch {
                SignalCleanup.yieldToSignalExit()
                report?.printFailure(error)
                throw error
            }
        }
    }
}
