import Glibc
import PreviewLoop
import PreviewLoopJobs

/// The tool: parses the command line, runs the command, reports errors, returns the exit status.
public enum CommandLineTool {
    /// Runs the tool on the arguments after the program name and returns the exit status; output lost
    /// on standard output (a full disk) is a failure, reported in one `Error:` line.
    ///
    /// `serve` runs `preview-loop serve` with its parsed options (the server is a module above this one,
    /// handed in by the executable); without it, `serve` fails with one line.
    public static func run(_ arguments: [String]) -> Int32 { run(arguments, serve: nil) }

    /// The tool's version (`0.2.0`), part of every validator the server hands out.
    package static var version: String { Tool.version }

    /// ``run(_:)`` with the server that runs `serve`.
    package static func run(_ arguments: [String], serve: ((ServeCommand) -> Int32)?) -> Int32 {
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
    private static func runCommand(_ arguments: [String], serve: ((ServeCommand) -> Int32)?) -> Int32 {
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
            Console.writeOutput("\(Tool.name) \(Tool.version)\n")
            return ExitStatus.success
        case .generated(let text):
            Console.writeOutput(text)
            return ExitStatus.success
        case .command(let command):
            return command.run(in: CommandContext(serve: serve, usageReport: { $0.report }))
        }
    }
}
