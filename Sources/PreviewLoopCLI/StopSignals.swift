import Dispatch
import Glibc
import PreviewLoop
import Synchronization

/// Stops a running loop from any thread, whether the request comes before or after the loop's
/// handle exists; remembers whether a signal asked.
///
/// Invariant: `state` is touched only under its lock; `handle.stop()` is called outside it.
final class LoopStopper: Sendable {
    private struct State {
        /// The running loop, once started.
        var handle: PreviewLoopHandle?
        /// Whether anything asked for a stop.
        var isStopRequested = false
        /// The first signal received, if any.
        var signal: Int32?
    }

    /// Everything mutable, under one lock.
    private let state = Mutex(State())

    /// Creates a stopper with no loop yet.
    init() {}

    /// Gives the stopper the running loop's handle; stops it at once if a stop came first.
    func attach(_ handle: PreviewLoopHandle) {
        let isStopRequested = state.withLock { state in
            state.handle = handle
            return state.isStopRequested
        }
        if isStopRequested { handle.stop() }
    }

    /// Asks the loop to stop (for example after a write failed).
    func stop() {
        let handle = state.withLock { state in
            state.isStopRequested = true
            return state.handle
        }
        handle?.stop()
    }

    /// Asks the loop to stop because of a signal.
    ///
    /// - Returns: `false` when a signal had already asked (the user is insisting).
    func interrupt(by signal: Int32) -> Bool {
        let (handle, isFirst) = state.withLock { state in
            let isFirst = state.signal == nil
            if isFirst { state.signal = signal }
            state.isStopRequested = true
            return (state.handle, isFirst)
        }
        handle?.stop()
        return isFirst
    }

    /// Whether anything asked the loop to stop.
    var isStopRequested: Bool {
        state.withLock { $0.isStopRequested }
    }

    /// The first signal that asked the loop to stop, if any.
    var interruptingSignal: Int32? {
        state.withLock { $0.signal }
    }
}

/// Delivers SIGINT and SIGTERM to a handler on a dispatch queue instead of ending the process, until
/// cancelled; then the signals' default actions come back.
final class SignalWatcher {
    /// The signals watched.
    private let signals: [Int32]
    /// One dispatch source per signal, while watching.
    private var sources: [any DispatchSourceSignal] = []

    /// Starts watching.
    ///
    /// - Parameter handler: called with the signal's number, on a global queue, once per delivery.
    init(signals: [Int32] = [SIGINT, SIGTERM], handler: @escaping @Sendable (Int32) -> Void) {
        self.signals = signals
        for number in signals {
            // The default action (ending the process) is ignored first. libdispatch sees a signal through
            // a handler of its own, installed when it registers the source — on its own thread, once per
            // process — and that handler must be the last word: ignoring after it (as this did) lost
            // SIGTERM from a shell now and then, when the handler went in first.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(number) }
            source.resume()
            sources.append(source)
            Self.settleHandler(number)
        }
    }

    /// libdispatch's handler for each signal once seen: a later watcher puts it back (libdispatch
    /// installs it only once per process, and ``cancel()`` restored the default action since).
    private static let dispatchHandlers = Mutex<[Int32: sigaction]>([:])

    /// Waits (up to a second) until libdispatch's handler for `number` is in place, or puts back the
    /// one seen before.
    private static func settleHandler(_ number: Int32) {
        func isHandler(_ action: sigaction) -> Bool {
            let raw = unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
            return raw != 0 && raw != 1 && raw != -1    // not SIG_DFL, SIG_IGN or SIG_ERR
        }
        let deadline = ContinuousClock.now + .seconds(1)
        var current = sigaction()
        while true {
            sigaction(number, nil, &current)
            if isHandler(current) {
                let seen = current
                dispatchHandlers.withLock { $0[number] = seen }
                return
            }
            if var saved = dispatchHandlers.withLock({ $0[number] }) {
                sigaction(number, &saved, nil)
                return
            }
            if ContinuousClock.now >= deadline { return }
            usleep(200)
        }
    }

    deinit {
        cancel()
    }

    /// Stops watching and restores the signals' default actions.
    func cancel() {
        guard !sources.isEmpty else { return }
        sources.forEach { $0.cancel() }
        sources.removeAll()
        signals.forEach { signal($0, SIG_DFL) }
    }
}

/// For the commands that write files and have no loop to stop (thumb, strip, render, sprites, card;
/// loop while it opens its input): while `body` runs, SIGINT or SIGTERM removes every temporary file and
/// staging directory the process is writing (``TemporaryFiles``), prints the command's record with
/// `--json` (``ClipReport``: failed, reason `interrupted`, transient), prints one `Error:` line and exits
/// at once with 130 or 143. Earlier outputs are untouched: a file or directory is only ever replaced by a
/// rename of a finished one.
enum SignalCleanup {
    /// Runs `body` with the signals handled so.
    static func run<Result>(input: String, report: ClipReport?, _ body: () throws -> Result) throws -> Result {
        let watcher = SignalWatcher { signal in
            exit(interruptedBy: signal, input: input, report: report)
        }
        defer { watcher.cancel() }
        return try body()
    }

    /// Ends the process for `signal`: `cleanUp` and every registered temporary removed, the record
    /// printed with a report (once: never after the command's own), the `Error:` line (`errorLine`, or
    /// the interruption's message), exit 130 or 143.
    static func exit(interruptedBy signal: Int32, input: String, report: ClipReport?, errorLine: String? = nil,
                     cleanUp: () -> Void = {}) -> Never {
        func removeUnfinished() {
            cleanUp()
            TemporaryFiles.removeAll()
        }
        func end() -> Never {
            Console.writeError((errorLine ?? "Error: \(ClipReport.interruptionMessage(input: input, signal: signal))") + "\n")
            _exit(ExitStatus.interrupted(by: signal))
        }
        guard let report else {
            removeUnfinished()
            end()
        }
        report.exit(interruptedBy: signal, cleanUp: removeUnfinished, end)
    }
}
