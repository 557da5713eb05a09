import Glibc
import PreviewLoop

/// `--json` of the single-clip commands (thumb, strip, sheet, sprites, render, card, loop), declared once.
enum ReportOptions {
    /// `--json`: the batch record instead of the summary line.
    static let json = Flag(
        "json",
        help: "Print one JSON object on standard output instead of the summary line, in the schema of a batch "
            + "results record: status (ok or failed), for a failure its reason code and whether it is "
            + "permanent or transient, the outputs with their sizes and what was chosen, the clip (duration, "
            + "size, codec, rotation, HDR kind) and timings. A failure prints its record too, and the Error: line "
            + "on standard error.")
}

/// What one single-clip command did, printed with `--json` as a ``BatchRecord`` (the batch's own type
/// and encoder): the clip once opened, each output as it is written (its size measured at the end),
/// and timings in milliseconds from the command's start.
///
/// Used on the command's thread only.
final class ClipReport {
    /// The command reporting.
    let command: Subcommand
    /// The input as given.
    let input: String
    /// What the probe found, once the input is open.
    private(set) var info: VideoInfo?
    /// The outputs written so far.
    private(set) var outputs: [BatchRecord.Output] = []
    /// `open_ms`, `<kind>_ms`, `total_ms`.
    private(set) var timings: [String: Double] = [:]
    private let started = ContinuousClock.now
    private var lastMark = ContinuousClock.now

    init(command: Subcommand, input: String) {
        self.command = command
        self.input = input
    }

    /// Notes the clip's metadata and the time taken to open it.
    func opened(_ info: VideoInfo) {
        self.info = info
        timings["open_ms"] = milliseconds(since: started)
        lastMark = ContinuousClock.now
    }

    /// Adds a written output; `timing` names the time since the last mark (`poster` → `poster_ms`).
    func add(_ output: BatchRecord.Output, timing: String? = nil) {
        outputs.append(output)
        if let timing {
            timings[timing + "_ms"] = milliseconds(since: lastMark)
            lastMark = ContinuousClock.now
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
        var measured = outputs
        guard !measured.isEmpty || !requiresOutput else { throw PreviewLoopError(.outputNotWritable, "\(input): no output was written") }
        for index in measured.indices {
            let path = measured[index].path
            guard let size = Self.size(of: path, kind: measured[index].kind), size > 0 else {
                throw PreviewLoopError(.outputNotWritable, "\(input): \(path) is missing or empty after writing")
            }
            measured[index].bytes = size
        }
        var timings = timings
        timings["total_ms"] = milliseconds(since: started)
        var record = BatchRecord(id: BatchManifest.derivedID(for: input), input: input, status: .ok, attempts: 1,
                                 outputs: measured, clip: info.map(BatchRecord.ClipInfo.init), timings: timings,
                                 shard: nil, fingerprint: nil)
        record.command = command.rawValue
        return record
    }

    /// The `failed` record of `error`: its reason code, permanence and message, with what was known.
    func failure(_ error: any Error) -> BatchRecord {
        var timings = timings
        timings["total_ms"] = milliseconds(since: started)
        var record = BatchRecord(id: BatchManifest.derivedID(for: input), input: input, status: .failed, attempts: 1,
                                 clip: info.map(BatchRecord.ClipInfo.init), timings: timings, shard: nil, fingerprint: nil)
        record.command = command.rawValue
        let failure: PreviewLoopError
        switch error {
        case let error as PreviewLoopError: failure = error
        // A request refused by a work limit (--max-memory, --max-frames, an encoder's size).
        case let error as WorkLimitError: failure = PreviewLoopError(.tooLarge, error.message)
        default: failure = PreviewLoopError(.invalidArgument, String(describing: error))
        }
        record.reason = BatchFailure.reason(for: failure)
        record.permanence = BatchFailure.permanence(of: failure)
        record.message = Format.oneLine(String(describing: error))
        return record
    }

    /// Prints the record of a finished command on standard output (a failure if an output is missing).
    ///
    /// - Parameter requiresOutput: whether writing nothing is a failure (`loop` may write nothing).
    func print(requiresOutput: Bool = true) throws(PreviewLoopError) {
        Console.writeOutput(try record(requiresOutput: requiresOutput).jsonLine() + "\n")
    }

    /// Sets a timing measured elsewhere (`loop` → `loop_ms`).
    func addTiming(_ name: String, milliseconds: Double) {
        timings[name + "_ms"] = (milliseconds * 1000).rounded() / 1000
    }

    /// A file's size, or for a directory of frames (`frames` kinds) the sum of its regular files.
    private static func size(of path: String, kind: String) -> Int? {
        if let size = BatchFiles.fileSize(path) { return size }
        guard kind.hasSuffix("frames"), let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var total = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard !name.hasPrefix(".") else { continue }
            total += BatchFiles.fileSize(path + "/" + name) ?? 0
        }
        return total
    }

    private func milliseconds(since instant: ContinuousClock.Instant) -> Double {
        let elapsed = (ContinuousClock.now - instant).components
        return ((Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15) * 1000).rounded() / 1000
    }
}

extension CommandLineTool {
    /// Runs a single-clip command that reads `source`, errors reported as ``reportingErrors(for:_:)``
    /// does; with a report (`--json`), a failure also prints its record on standard output.
    static func reportingErrors(for source: InputOptions, report: ClipReport?, _ body: () throws -> Int32) -> Int32 {
        reportingErrors(for: source) {
            do {
                return try body()
            } catch {
                if let report { Console.writeOutput(report.failure(error).jsonLine() + "\n") }
                throw error
            }
        }
    }
}
