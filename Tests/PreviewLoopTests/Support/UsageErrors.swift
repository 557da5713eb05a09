@testable import PreviewLoopCLI

/// The usage error arguments raise, or `nil` when they parse; shared by the CLI parsing suites.
func usageError(_ arguments: [String]) -> UsageError? {
    do {
        _ = try CommandLineParser.parse(arguments)
        return nil
    } catch {
        return error
    }
}
