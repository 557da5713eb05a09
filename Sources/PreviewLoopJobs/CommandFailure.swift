import PreviewLoop

/// The tool's name and version: what `--version` prints, the manual page's header and part of every
/// validator the server hands out.
package enum Tool {
    /// The program name as users type it.
    package static let name = "preview-loop"
    /// The version `--version` prints.
    package static let version = "0.2.0"
}

/// The process's exit statuses.
package enum ExitStatus {
    /// The job was done.
    package static let success: Int32 = 0
    /// The job failed at run time (unreadable input, unwritable output…); the message names the input.
    package static let failure: Int32 = 1
    /// The command line was wrong (`EX_USAGE` from sysexits.h).
    package static let usage: Int32 = 64

    /// The shell's status for a process ended by a signal: 128 + its number (130 for SIGINT).
    package static func interrupted(by signal: Int32) -> Int32 { 128 + signal }
}

/// How a command's failure reaches the user: one `Error:` line naming the input, and the exit status.
package enum CommandFailure {
    /// Runs a command that reads `source`; errors are reported as ``reporting(for:timeout:deadline:_:)`` does,
    /// naming the input group's `--timeout` or `--deadline` when one fired.
    static func reporting(for source: InputOptions, _ body: () throws -> Int32) -> Int32 {
        reporting(for: source.input, timeout: source.timeout, deadline: source.deadline, body)
    }

    /// Runs a command; a thrown error becomes one `Error: <input>: <description>` line and status 1.
    /// A timeout names the flag that fired (`--timeout` or `--deadline`) and its value.
    package static func reporting(for input: String, timeout: Double? = nil, deadline: Double? = nil,
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
    package static func timeoutNote(for error: PreviewLoopError, timeout: Double?, deadline: Double?) -> String {
        if let deadline, error.message.contains("job's limit") {
            return "; --deadline \(Format.limit(deadline)) fired (the whole job took longer; raise or drop it)"
        }
        guard let timeout else { return "" }
        return "; --timeout \(Format.limit(timeout)) fired (nothing was read for that long; raise it for a slow source)"
    }

    /// `Error: <input>: <description>` on one line; the input is not repeated when the description
    /// already starts with it.
    package static func errorLine(for error: any Error, input: String) -> String {
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
    package static func limit(_ seconds: Double) -> String {
        if seconds == seconds.rounded() && abs(seconds) < 1e15 { return String(Int(seconds)) }
        var text = fixed(seconds, 3)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
