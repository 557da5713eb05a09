import PreviewLoop
import PreviewLoopJobs

extension UsageError {
    /// The full report for standard error: the error, the usage line and where to find help.
    package var report: String {
        let usage = subcommand.map(HelpText.usagePieces(for:)) ?? [HelpText.rootUsage]
        let helpCommand = subcommand.map { "\(HelpText.toolName) \($0.rawValue) --help" } ?? "\(HelpText.toolName) --help"
        return """
            Error: \(Format.oneLine(message))
            \(HelpText.wrap(usage, prefix: "Usage: "))
            See '\(helpCommand)'.
            """
    }
}

extension UsageError {
    /// The usage error `arguments` raise, or `nil` when they parse: a command line checked without
    /// running anything (the test targets' `usageError(_:)`).
    package init?(checking arguments: [String]) {
        do {
            _ = try CommandLineParser.parse(arguments)
            return nil
        } catch {
            self = error
        }
    }
}
