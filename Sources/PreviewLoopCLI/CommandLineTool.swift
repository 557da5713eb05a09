import Glibc
import PreviewLoop

/// The process's exit statuses.
enum ExitStatus {
    /// The job was done.
    static let success: Int32 = 0
    /// The job failed at run time (unreadable input, unwritable output…); the message names the input.
    static let failure: Int32 = 1
    /// The command line was wrong (`EX_USAGE` from sysexits.h).
    static let usage: Int32 = 64

    /// The shell's status for a process ended by a signal: 128 + its number (130 for SIGINT).
    static func interrupted(by signal: Int32) -> Int32 { 128 + signal }
}

/// The tool: parses the command line, runs the command, reports errors, returns the exit status.
public enum CommandLineTool {
    /// Runs the tool on the arguments after the program name and returns the exit status; output lost
    /// on standard output (a full disk) is a failure, reported in one `Error:` line.
    ///
    /// `serve` runs `preview-loop serve` with its parsed options (the server is a module above this one,
    /// handed in by the executable); without it, `serve` fails with one line.
    public static func run(_ arguments: [String]) -> Int32 { run(arguments, serve: nil) }

    /// The tool's version (`0.1.0`), part of every validator the server hands out.
    package static var version: String { HelpText.version }

    /// ``run(_:)`` with the server that runs `serve`.
    package static func run(_ arguments: [String], serve: ((ServeOptions) -> Int32)?) -> Int32 {
        // A closed pipe on standard output or error (`| head`) must be a failed write, not SIGPIPE's
        // default end of the process midway through writing a file, leaving its temporary behind:
        // progress and summary writes then fail quietly (remembered for standard output), and data
        // written to a pipe (`-o -`, FFmpeg's `pipe:`) fails its command with one `Error:` line.
        signal(SIGPIPE, SIG_IGN)
        let status = runCommand(arguments, serve: serve)
        SignalCleanup.yieldToSignalExit()
        // A command that failed has said so already; one that "succeeded" into a full disk has not.
        guard status == ExitStatus.success, let code = Console.outputError else { return status }
        let input = (try? CommandLineParser.parse(arguments))?.input
        Console.writeError("Error: \(input.map { "\($0): " } ?? "")cannot write to standard output (\(Format.systemError(code)))\n")
        return ExitStatus.failure
    }

    /// The process's arguments after the program name, read from its raw bytes with ``FilePathBytes``'
    /// escape: a byte that is not UTF-8 (a file named `bad\xff.mp4`) is kept, not replaced with U+FFFD
    /// as `CommandLine.arguments` does, so the path reaches its file and an output gets its exact name.
    public static func processArguments() -> [String] {
        (1..<Int(CommandLine.argc)).compactMap { index in
            CommandLine.unsafeArgv[index].map { FilePathBytes.decode(cString: $0) }
        }
    }

    /// Parses and runs one command.
    private static func runCommand(_ arguments: [String], serve: ((ServeOptions) -> Int32)?) -> Int32 {
        let command: ParsedCommand
        do {
            command = try CommandLineParser.parse(arguments)
        } catch {
            Console.writeError(error.report + "\n")
            return ExitStatus.usage
        }
        Console.isQuiet = command.reporting?.isQuiet ?? false
        switch command {
        case .help(let text):
            Console.writeOutput(text + "\n")
            return ExitStatus.success
        case .version:
            Console.writeOutput("\(HelpText.toolName) \(HelpText.version)\n")
            return ExitStatus.success
        case .generated(let text):
            Console.writeOutput(text)
            return ExitStatus.success
        case .command(let command):
            return command.run(in: CommandContext(serve: serve))
        }
    }

    /// Runs a command that reads `source`; errors are reported as ``reportingErrors(for:timeout:deadline:_:)`` does,
    /// naming the input group's `--timeout` or `--deadline` when one fired.
    static func reportingErrors(for source: InputOptions, _ body: () throws -> Int32) -> Int32 {
        reportingErrors(for: source.input, timeout: source.timeout, deadline: source.deadline, body)
    }

    /// Runs a command; a thrown error becomes one `Error: <input>: <description>` line and status 1.
    /// A timeout names the flag that fired (`--timeout` or `--deadline`) and its value.
    static func reportingErrors(for input: String, timeout: Double? = nil, deadline: Double? = nil,
                                _ body: () throws -> Int32) -> Int32 {
        do {
            return try body()
        } catch let error as WorkLimitError {
            Console.writeError(errorLine(for: error, input: input) + "\n")
            return ExitStatus.usage
        } catch {
            SignalCleanup.yieldToSignalExit()
            var line = errorLine(for: error, input: input)
            if let error = error as? PreviewLoopError, error.code == .timedOut {
                line += timeoutNote(for: error, timeout: timeout, deadline: deadline)
            }
            Console.writeError(line + "\n")
            return ExitStatus.failure
        }
    }

    /// `; --timeout 30 fired (…)` or `; --deadline 60 fired (…)`: which limit ended the job.
    static func timeoutNote(for error: PreviewLoopError, timeout: Double?, deadline: Double?) -> String {
        if let deadline, error.message.contains("job's limit") {
            return "; --deadline \(Format.limit(deadline)) fired (the whole job took longer; raise or drop it)"
        }
        guard let timeout else { return "" }
        return "; --timeout \(Format.limit(timeout)) fired (nothing was read for that long; raise it for a slow source)"
    }

    /// `Error: <input>: <description>` on one line; the input is not repeated when the description
    /// already starts with it.
    static func errorLine(for error: any Error, input: String) -> String {
        let raw = String(describing: error)
        let description = Format.oneLine(raw)
        // Errors may name the input with its line breaks already turned into spaces.
        let spaced = String(input.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
        let namesInput = raw.hasPrefix(input) || raw.hasPrefix(spaced) || (input == "-" && raw.hasPrefix("<standard input>"))
        return namesInput ? "Error: \(description)" : "Error: \(Format.oneLine(input)): \(description)"
    }
}

extension Format {
    /// A limit in seconds as typed: `30`, `2.5`.
    static func limit(_ seconds: Double) -> String {
        if seconds == seconds.rounded() && abs(seconds) < 1e15 { return String(Int(seconds)) }
        var text = fixed(seconds, 3)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
