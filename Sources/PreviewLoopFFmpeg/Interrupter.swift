import CFFmpeg
import Dispatch
import Synchronization

/// Decides when FFmpeg's blocking calls must give up: on cancellation, or past a deadline.
///
/// Two limits: the current operation's (an open, or one read: a stall, set afresh before each, so a
/// long job that keeps reading never reaches it) and the whole job's (optional). Which one fired is
/// remembered, so the error can name it.
///
/// Handed to FFmpeg as `AVFormatContext.interrupt_callback`; FFmpeg polls it from inside blocking reads,
/// so a stop interrupts I/O and not only the next frame. Thread-safe: the flags are atomics, written by
/// any thread and read by the thread running FFmpeg.
package final class Interrupter: Sendable {
    private let cancelled = Atomic<Bool>(false)
    /// Monotonic nanoseconds after which the current operation fails; 0 means none.
    private let deadline = Atomic<UInt64>(0)
    /// Monotonic nanoseconds after which all I/O of the job fails; 0 means none.
    private let jobDeadline = Atomic<UInt64>(0)
    /// The operation limit's length in nanoseconds, for the message.
    private let operationLength = Atomic<UInt64>(0)
    /// The job limit's length in nanoseconds, for the message.
    private let jobLength = Atomic<UInt64>(0)
    /// Which limit passed first: 0 none, 1 the operation's, 2 the job's.
    private let expired = Atomic<UInt8>(0)

    package init() {}

    /// Asks every blocking FFmpeg call using this interrupter to return now.
    package func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Sets (or with `nil` clears) the deadline of the operation about to run.
    package func setDeadline(after seconds: Double?) {
        guard let seconds else { deadline.store(0, ordering: .relaxed); return }
        let length = UInt64(min(max(0, seconds), 1e9) * 1e9)
        operationLength.store(length, ordering: .relaxed)
        deadline.store(Self.now() &+ length, ordering: .relaxed)
    }

    /// Sets the deadline for the whole job's I/O, from now, unless one is set already (an input
    /// reopened to seek keeps its job's deadline).
    package func setJobDeadline(after seconds: Double) {
        guard jobDeadline.load(ordering: .relaxed) == 0 else { return }
        let length = UInt64(min(max(0, seconds), 1e9) * 1e9)
        jobLength.store(length, ordering: .relaxed)
        jobDeadline.store(Self.now() &+ length, ordering: .relaxed)
    }

    /// Which limit passed, once one has.
    package enum Limit: Sendable, Equatable {
        /// The operation's: opening, or one read (a packet), took longer than `seconds`.
        case operation(seconds: Double)
        /// The whole job's.
        case job(seconds: Double)
    }

    /// The limit that passed first, if any did.
    package var expiredLimit: Limit? {
        switch expired.load(ordering: .relaxed) {
        case 1: .operation(seconds: Double(operationLength.load(ordering: .relaxed)) / 1e9)
        case 2: .job(seconds: Double(jobLength.load(ordering: .relaxed)) / 1e9)
        default: nil
        }
    }

    /// Why a timed-out call gave up, for the error message: `one read took more than the 2 s allowed…`
    /// or `the job's limit of 60 s passed`. A read is one packet: a source trickling bytes slower than
    /// a packet in that time times out too, so the text does not say nothing arrived.
    package var expiryDescription: String {
        switch expiredLimit {
        case .operation(let seconds)?: "one read took more than the \(Self.seconds(seconds)) s allowed (--timeout): the source stalled or sends too slowly"
        case .job(let seconds)?: "the job's limit of \(Self.seconds(seconds)) s passed"
        case nil: "a deadline passed"
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// Whether the current operation's or the job's deadline has passed.
    package var isPastDeadline: Bool {
        let limit = deadline.load(ordering: .relaxed), jobLimit = jobDeadline.load(ordering: .relaxed)
        guard limit != 0 || jobLimit != 0 else { return false }
        let now = Self.now()
        if jobLimit != 0 && now > jobLimit {
            if expired.load(ordering: .relaxed) == 0 { expired.store(2, ordering: .relaxed) }
            return true
        }
        if limit != 0 && now > limit {
            if expired.load(ordering: .relaxed) == 0 { expired.store(1, ordering: .relaxed) }
            return true
        }
        return false
    }

    /// Whether FFmpeg should abort what it is doing.
    package var shouldInterrupt: Bool { isCancelled || isPastDeadline }

    /// The callback structure to store in `AVFormatContext.interrupt_callback`; `self` must outlive it.
    package var callback: AVIOInterruptCB {
        AVIOInterruptCB(callback: { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<Interrupter>.fromOpaque(opaque).takeUnretainedValue().shouldInterrupt ? 1 : 0
        }, opaque: Unmanaged.passUnretained(self).toOpaque())
    }

    package static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
