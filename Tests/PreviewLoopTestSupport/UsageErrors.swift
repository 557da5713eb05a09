import PreviewLoopCLI
import PreviewLoopJobs

/// The usage error arguments raise, or `nil` when they parse; shared by the CLI parsing suites.
package func usageError(_ arguments: [String]) -> UsageError? {
    UsageError(checking: arguments)
}
