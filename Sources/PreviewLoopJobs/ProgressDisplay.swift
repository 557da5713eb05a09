import Glibc
import PreviewLoop
import Synchronization

/// The reporting group: `--progress` and `--quiet`, declared once for every long job.
///
/// The model: on a terminal (standard error is a tty) a long job redraws one status line in place
/// (percent, rate, ETA); anywhere else it is silent unless `--progress` asks for plain lines suited to
/// logs (at most two a second, and always the final 100 % line). `--quiet` prints nothing but errors:
/// no progress, no warnings, no summary line. Data asked for explicitly (`--json`, `--log -`, an image
/// written with `-o -`) is still written.
package struct ReportingOptions: Equatable, Sendable, OptionGroup {
    /// `--progress`: progress lines even when standard error is not a terminal.
    @Flag(ReportingOptions.progress) var forcesProgress = false
    /// `--quiet`: errors only.
    @Flag(ReportingOptions.quiet) package var isQuiet = false

    /// `--progress`.
    static let progress = FlagOption(
        "progress", help: "Print progress on standard error even when it is not a terminal: plain lines "
            + "(percent, done/total, rate, ETA), at most two a second, ending with the 100% line (batch: one "
            + "JSON object per finished clip). A terminal gets one line redrawn in place without it.")
    /// `--quiet`.
    static let quiet = FlagOption("quiet", help: "Print nothing but errors: no progress, no warnings, no summary line.")

    /// `--progress` and `--quiet` contradict each other.
    func validate(for subcommand: Subcommand) throws(UsageError) {
        if forcesProgress && isQuiet {
            throw UsageError(.conflictingOptions("progress", "quiet"), subcommand: subcommand,
                             "'--progress' and '--quiet' contradict each other; give one of them.")
        }
    }

    /// No flag given.
    init() {}

    /// How progress is shown, given whether standard error is a terminal.
    func progressStyle(isTerminal: Bool) -> ProgressDisplay.Style {
        if isQuiet { return .off }
        if isTerminal { return .terminal }
        return forcesProgress ? .lines : .off
    }

    /// How progress is shown on this process's standard error.
    var progressStyle: ProgressDisplay.Style {
        progressStyle(isTerminal: isatty(STDERR_FILENO) == 1)
    }
}

/// A long job's progress on standard error: one line redrawn in place on a terminal, plain
/// newline-terminated lines for logs, or nothing.
///
/// Invariant: all mutable state is in `state`, under its lock; updates may come from the job's own
/// thread (a loop's, a batch's collector) while the main thread finishes.
final class ProgressDisplay: Sendable {
    /// How progress is shown.
    enum Style: Sendable, Equatable {
        /// Nothing.
        case off
        /// One line, redrawn with `\r`, at most ten times a second.
        case terminal
        /// Newline-terminated lines, at most two a second.
        case lines

        /// The shortest time between two lines shown.
        var interval: Duration { self == .terminal ? .milliseconds(100) : .milliseconds(500) }
    }

    /// What is shown so far.
    private struct State {
        /// When the last line was shown.
        var lastShown: ContinuousClock.Instant?
        /// The highest percent shown: later lines never show less.
        var percent = 0
        /// The terminal line's length, to blank what a shorter line leaves.
        var width = 0
        /// Whether the terminal line awaits its newline.
        var isOpen = false
        /// Whether the last line was shown.
        var isFinished = false
    }

    /// The job's name at the line's start (`render`).
    let label: String
    /// What is counted (`frames`).
    let unit: String
    /// The rate's unit (`fps`).
    let rateUnit: String
    /// How the lines are shown.
    let style: Style
    /// Where lines go (standard error; a test's buffer).
    private let write: @Sendable (String) -> Void
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    private let state = Mutex(State())

    /// Starts the display; the rate counts from now.
    init(label: String, unit: String, rateUnit: String, style: Style,
         write: @escaping @Sendable (String) -> Void = { Console.writeError($0) }) {
        self.label = label
        self.unit = unit
        self.rateUnit = rateUnit
        self.style = style
        self.write = write
        started = clock.now
    }

    /// Reports `completed` units of `total` (`nil`: unknown, as for a loop until interrupted); shown
    /// when the last line is old enough. `fraction` replaces `completed / total` for the percent and
    /// ETA when the units are not an exact measure of the work (a loop's frames against its passes).
    func update(completed: Int, total: Int?, fraction: Double? = nil) {
        guard style != .off else { return }
        show(completed: completed, total: total, fraction: fraction, isFinal: false)
    }

    /// Shows the final line (100 % when there is a total) and ends a terminal line.
    func finish(completed: Int, total: Int?) {
        guard style != .off else { return }
        show(completed: completed, total: total.map { max($0, completed) }, fraction: total == nil ? nil : 1, isFinal: true)
    }

    /// Ends a terminal line drawn so far without a final line, so an error starts on a line of its own.
    func abandon() {
        let isOpen = state.withLock { state in
            defer { state.isOpen = false; state.isFinished = true }
            return state.isOpen
        }
        if isOpen { write("\n") }
    }

    private func show(completed: Int, total: Int?, fraction: Double?, isFinal: Bool) {
        let now = clock.now
        let text: String? = state.withLock { state in
            guard !state.isFinished else { return nil }
            if !isFinal, let last = state.lastShown, now - last < style.interval { return nil }
            let elapsed = Format.seconds(now - started)
            var share = fraction ?? total.map { $0 > 0 ? Double(completed) / Double($0) : 0 }
            if let value = share { share = min(1, max(0, value)) }
            var percent = share.map { Int(($0 * 100).rounded(.down)) }
            // Only the final line says 100 %; no line says less than one before it.
            if let value = percent {
                let capped = isFinal ? value : min(value, 99)
                percent = max(state.percent, capped)
                state.percent = percent!
            }
            var line = Self.line(label: label, unit: unit, rateUnit: rateUnit, completed: completed, total: total,
                                 percent: percent, fraction: share, elapsed: elapsed, isFinal: isFinal)
            state.lastShown = now
            state.isFinished = isFinal
            switch style {
            case .off:
                return nil
            case .lines:
                return line + "\n"
            case .terminal:
                let width = line.count
                if width < state.width { line += String(repeating: " ", count: state.width - width) }
                state.width = width
                state.isOpen = !isFinal
                return "\r" + line + (isFinal ? "\n" : "")
            }
        }
        if let text { write(text) }
    }

    /// `render: 45% 120/270 frames, 85.3 fps, ETA 0:02`; without a total `loop: 1200 frames, 850.2 fps`;
    /// the final line gives the time taken instead of the ETA.
    static func line(label: String, unit: String, rateUnit: String, completed: Int, total: Int?, percent: Int?,
                     fraction: Double?, elapsed: Double, isFinal: Bool) -> String {
        var line = "\(label): "
        if let percent { line += "\(percent)% " }
        line += total.map { "\(completed)/\($0) \(unit)" } ?? "\(completed) \(unit)"
        let rate = elapsed > 0 ? Double(completed) / elapsed : 0
        line += ", \(Format.fixed(rate, 1)) \(rateUnit)"
        if isFinal {
            line += ", \(Format.fixed(elapsed, 1)) s"
        } else if let fraction, fraction > 0, elapsed > 0 {
            line += ", ETA \(clockText(elapsed * (1 - fraction) / fraction))"
        }
        return line
    }

    /// `0:05`, `12:34`, `1:02:03`.
    static func clockText(_ seconds: Double) -> String {
        let whole = Int(min(seconds, 359_999).rounded(.up))
        let (hours, minutes, secs) = (whole / 3600, whole / 60 % 60, whole % 60)
        let tail = "\(String(format2: minutes)):\(String(format2: secs))"
        return hours > 0 ? "\(hours):\(tail)" : "\(minutes):\(String(format2: secs))"
    }
}
