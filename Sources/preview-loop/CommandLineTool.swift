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
enum CommandLineTool {
    /// Runs the tool on the arguments after the program name and returns the exit status.
    static func run(_ arguments: [String]) -> Int32 {
        let command: ParsedCommand
        do {
            command = try CommandLineParser.parse(arguments)
        } catch {
            Console.writeError(error.report + "\n")
            return ExitStatus.usage
        }
        switch command {
        case .help(let text):
            Console.writeOutput(text + "\n")
            return ExitStatus.success
        case .version:
            Console.writeOutput("\(HelpText.toolName) \(HelpText.version)\n")
            return ExitStatus.success
        case .probe(let options):
            return reportingErrors(for: options.input) { try ProbeCommand(options: options).run() }
        case .thumb(let options):
            return reportingErrors(for: options.input) { try ThumbCommand(options: options).run() }
        case .strip(let options):
            return reportingErrors(for: options.input) { try StripCommand(options: options).run() }
        case .sheet(let options):
            return reportingErrors(for: options.input) { try SheetCommand(options: options).run() }
        case .loop(let options):
            return reportingErrors(for: options.input) { try LoopCommand(options: options).run() }
        case .timing(let options):
            return reportingErrors(for: options.input) { try TimingCommand(options: options).run() }
        case .render(let options):
            return reportingErrors(for: options.input) { try RenderCommand(options: options).run() }
        case .sprites(let options):
            return reportingErrors(for: options.input) { try SpritesCommand(options: options).run() }
        case .card(let options):
            return reportingErrors(for: options.input) { try CardCommand(options: options).run() }
        case .batch(let options):
            return reportingErrors(for: "batch") { try BatchCommand(options: options).run() }
        }
    }

    /// Runs a command; a thrown error becomes one `Error: <input>: <description>` line and status 1.
    static func reportingErrors(for input: String, _ body: () throws -> Int32) -> Int32 {
        do {
            return try body()
        } catch let error as WorkLimitError {
            Console.writeError(errorLine(for: error, input: input) + "\n")
            return ExitStatus.usage
        } catch {
            Console.writeError(errorLine(for: error, input: input) + "\n")
            return ExitStatus.failure
        }
    }

    /// `Error: <input>: <description>` on one line; the input is not repeated when the description
    /// already starts with it.
    static func errorLine(for error: any Error, input: String) -> String {
        let raw = String(describing: error)
        let description = Format.oneLine(raw)
        // Errors may name the input with its line breaks already turned into spaces.
        let spaced = String(input.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
        let namesInput = raw.hasPrefix(input) || raw.hasPrefix(spaced)
        return namesInput ? "Error: \(description)" : "Error: \(Format.oneLine(input)): \(description)"
    }
}
