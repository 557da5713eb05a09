import FoundationEssentials
import PreviewLoop

/// `preview-loop timing` as a job: its options (declared once, for every front end), checks and work.
struct TimingCommand: Equatable, Sendable {
    /// The CSV timing log written by `loop --log`.
    var input = ""
    /// Whether to print one JSON object (`--json`) rather than aligned text lines.
    @Flag("json", help: "Print one JSON object with sorted keys instead of aligned text.")
    var isJSON = false
}

extension TimingCommand: ParsableCommand {
    /// `preview-loop timing`: its name, summary and argument.
    static let configuration = CommandConfiguration(
        name: "timing",
        abstract: "Summarise a loop's CSV timing log: rates, decode and scale times, lateness, seams, drops.",
        arguments: [PositionalArgument(name: "input", abstract: "A CSV timing log written by 'loop --log'.")])

    func run(in context: CommandContext) -> Int32 {
        CommandFailure.reporting(for: input) { try TimingRun(options: self).run() }
    }
}

extension TimingCommand {
    /// Takes the log's path.
    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        input = try arguments.input()
    }
}

/// `preview-loop timing <log.csv>`: summarises a loop's timing log — frames, passes, fps delivered,
/// decode and scale time p50/p95/p99, lateness p50/p99/max, each seam's lateness, drops.
struct TimingRun {
    /// The parsed options.
    var options: TimingCommand

    /// Reads the log and prints the summary on standard output.
    func run() throws -> Int32 {
        let text: String
        if let data = FileSystem.contents(of: options.input) {
            text = String(decoding: data, as: UTF8.self)
        } else {
            let exists = FileSystem.fileExists(options.input).exists
            throw PreviewLoopError(exists ? .inputNotReadable : .inputNotFound,
                                   "\(options.input): \(exists ? "cannot be read" : "no such file")")
        }
        let summary: TimingSummary
        do {
            summary = try TimingSummary(csv: text)
        } catch {
            throw PreviewLoopError(.invalidArgument, "\(options.input): \(error.description)")
        }
        Console.writeOutput(options.isJSON ? summary.json : summary.text)
        return ExitStatus.success
    }
}
