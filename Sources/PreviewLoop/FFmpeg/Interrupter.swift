import CFFmpeg
import Dispatch
import Synchronization

/// Decides when FFmpeg's blocking calls must give up: on cancellation, or past a deadline.
///
/// Handed to FFmpeg as `AVFormatContext.interrupt_callback`; FFmpeg polls it from inside blocking reads,
/// so a stop interrupts I/O and not only the next frame. Thread-safe: the flags are atomics, written by
/// any thread and read by the thread running FFmpeg.
final class Interrupter: Sendable {
    private let cancelled = Atomic<Bool>(false)
    /// Monotonic nanoseconds after which the current operation fails; 0 means none.
    private let deadline = Atomic<UInt64>(0)
    /// Monotonic nanoseconds after which all I/O of the job fails; 0 means none.
    private let jobDeadline = Atomic<UInt64>(0)

    /// Asks every blocking FFmpeg call using this interrupter to return now.
    func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Sets (or with `nil` clears) the deadline of the operation about to run.
    func setDeadline(after seconds: Double?) {
        guard let seconds else { deadline.store(0, ordering: .relaxed); return }
        deadline.store(Self.now() &+ UInt64(max(0, seconds) * 1e9), ordering: .relaxed)
    }

    /// Sets the deadline for the whole job's I/O, from now.
    func setJobDeadline(after seconds: Double) {
        jobDeadline.store(Self.now() &+ UInt64(max(0, seconds) * 1e9), ordering: .relaxed)
    }

    /// Whether the current operation's or the job's deadline has passed.
    var isPastDeadline: Bool {
        let limit = deadline.load(ordering: .relaxed), jobLimit = jobDeadline.load(ordering: .relaxed)
        guard limit != 0 || jobLimit != 0 else { return false }
        let now = Self.now()
        return (limit != 0 && now > limit) || (jobLimit != 0 && now > jobLimit)
    }

    /// Whether FFmpeg should abort what it is doing.
    var shouldInterrupt: Bool { isCancelled || isPastDeadline }

    /// The callback structure to store in `AVFormatContext.interrupt_callback`; `self` must outlive it.
    var callback: AVIOInterruptCB {
        AVIOInterruptCB(callback: { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<Interrupter>.fromOpaque(opaque).takeUnretainedValue().shouldInterrupt ? 1 : 0
        }, opaque: Unmanaged.passUnretained(self).toOpaque())
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
