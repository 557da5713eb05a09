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
        var handle: LoopPlayer.Handle?
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
    func attach(_ handle: LoopPlayer.Handle) {
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

/// Delivers the signals that end a process by default to a handler on a thread of its own instead of
/// ending the process, until cancelled; then the signals' default actions come back.
///
/// The process's own `sigaction` handler only writes the signal's number to a pipe (all a signal
/// handler may safely do); a relay thread reads it and calls the watchers. The handler is in place when
/// `init` returns, so no signal is ever lost or ignored in between (libdispatch's signal sources install
/// theirs later, on their own thread, and a signal sent in that window was dropped).
package final class SignalWatcher: Sendable {
    /// The signals a shell, a terminal or a supervisor sends to end a process: SIGHUP (the terminal
    /// closed), SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 and SIGALRM. (SIGPIPE is ignored for the
    /// whole process: a closed pipe is a failed write.)
    package static let fatalSignals: [Int32] = [SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM]

    /// `SIGTERM` for 15, and so on; `signal N` for one not in the list.
    package static func name(of number: Int32) -> String {
        let names: [Int32: String] = [SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGTERM: "SIGTERM",
                                      SIGUSR1: "SIGUSR1", SIGUSR2: "SIGUSR2", SIGALRM: "SIGALRM", SIGPIPE: "SIGPIPE"]
        return names[number] ?? "signal \(number)"
    }

    /// The signals watched.
    private let signals: [Int32]
    private let handler: @Sendable (Int32) -> Void
    private let isWatching = Mutex(true)

    /// Starts watching.
    ///
    /// - Parameter handler: called with the signal's number, on the relay thread, once per delivery.
    package init(signals: [Int32] = SignalWatcher.fatalSignals, handler: @escaping @Sendable (Int32) -> Void) {
        self.signals = signals
        self.handler = handler
        SignalRelay.add(self)
        for number in signals { SignalRelay.install(number) }
        // A process may start with these blocked (a mask inherited from the thread that spawned it):
        // unblocked in this thread, so a signal sent to the process reaches the handler.
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    deinit {
        cancel()
    }

    /// Stops watching and restores the signals' default actions.
    package func cancel() {
        guard isWatching.withLock({ value -> Bool in defer { value = false }; return value }) else { return }
        SignalRelay.remove(self)
        signals.forEach { signal($0, SIG_DFL) }
    }

    fileprivate func deliver(_ number: Int32) {
        guard signals.contains(number), isWatching.withLock({ $0 }) else { return }
        handler(number)
    }
}

/// The write end of the relay's pipe, read by the signal handler (set once, before any handler is installed).
nonisolated(unsafe) private var signalRelayDescriptor: Int32 = -1
/// The read end, read by the relay thread only.
nonisolated(unsafe) private var signalRelayReadDescriptor: Int32 = -1

/// The process's one signal handler: the signal's number into the pipe; errno kept.
private let relaySignal: @convention(c) (Int32) -> Void = { number in
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(signalRelayDescriptor, &byte, 1)
    errno = saved
}

/// The pipe, the relay thread and the watchers it calls.
private enum SignalRelay {
    private static let watchers = Mutex<[SignalWatcher]>([])

    /// The pipe and the thread, made once.
    private static let started: Bool = {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { return false }
        let (readEnd, writeEnd) = (descriptors[0], descriptors[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFL, O_NONBLOCK)       // a full pipe drops a signal rather than blocking the handler
        signalRelayDescriptor = writeEnd
        signalRelayReadDescriptor = readEnd
        var thread = pthread_t()
        guard pthread_create(&thread, nil, { _ in
            SignalRelay.relay()
            return nil
        }, nil) == 0 else { return false }
        pthread_detach(thread)
        return true
    }()

    /// The relay thread's loop: each byte read is a signal, handed to every watcher.
    private static func relay() {
        var byte: UInt8 = 0
        while true {
            let count = read(signalRelayReadDescriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { return }
            let number = Int32(byte)
            for watcher in watchers.withLock({ $0 }) { watcher.deliver(number) }
        }
    }

    static func add(_ watcher: SignalWatcher) {
        _ = started
        watchers.withLock { $0.append(watcher) }
    }

    static func remove(_ watcher: SignalWatcher) {
        watchers.withLock { $0.removeAll { $0 === watcher } }
    }

    /// Installs the relay's handler for `number` (system calls interrupted by it are restarted).
    static func install(_ number: Int32) {
        guard started else { return }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = relaySignal
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(number, &action, nil)
    }
}

/// For the commands that write files and have no loop to stop (thumb, strip, render, sprites, card;
/// loop while it opens its input): while `body` runs, any of ``SignalWatcher/fatalSignals`` removes every temporary file and
/// staging directory the process is writing (``TemporaryFiles``), prints the command's record with
/// `--json` (``ClipReport``: failed, reason `interrupted`, transient), prints one `Error:` line and exits
/// at once with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP). Earlier outputs are untouched: a file or directory is only ever replaced by a
/// rename of a finished one.
package enum SignalCleanup {
    /// Set once a signal's exit has begun: the temporaries are being removed and the process ends on
    /// the relay thread.
    private static let isExiting = Atomic<Bool>(false)

    /// Waits for a signal's exit in progress to end the process, when one has begun; returns at once
    /// otherwise. The command's own thread calls it before it reports an error or returns a status: a
    /// write failing because the exit just removed its temporary must not win the race with a
    /// message and status of its own.
    package static func yieldToSignalExit() {
        guard isExiting.load(ordering: .sequentiallyConsistent) else { return }
        while true { pause() }
    }

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
        isExiting.store(true, ordering: .sequentiallyConsistent)
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
