import Glibc
import Synchronization

/// Counts the FFmpeg owners alive (formats, packets, frames, codecs, encoders, muxers, scalers), so
/// tests can prove that a cancelled or failed call released everything it opened.
///
/// Each owner holds a ``Token`` as a stored property: the token is made when the owner's storage is
/// initialised and released with it, also when the owner's `init` throws halfway. A token also counts
/// in the ``Tally`` current on the thread that made it (one library call's, see `BlockingCall`), so a
/// test can check one call's objects while other tests run in the same process.
package enum LiveObjects {
    private static let live = Atomic<Int>(0)

    /// How many FFmpeg owners are alive in the process.
    package static var count: Int { live.load(ordering: .relaxed) }

    /// What one call holds: FFmpeg owners and the library's threads still running its work.
    /// Thread-safe: atomics.
    package final class Tally: Sendable {
        private let objectCount = Atomic<Int>(0)
        private let threadCount = Atomic<Int>(0)

        package init() {}

        /// FFmpeg owners made under this tally and still alive.
        package var objects: Int { objectCount.load(ordering: .relaxed) }
        /// Threads started under this tally whose work has not returned.
        package var threads: Int { threadCount.load(ordering: .relaxed) }

        func addObject(_ delta: Int) { objectCount.add(delta, ordering: .relaxed) }
        package func addThread(_ delta: Int) { threadCount.add(delta, ordering: .relaxed) }
    }

    /// The tally of the work running on this thread, if any.
    package static var current: Tally? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<Tally>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Runs `body` with `tally` current on this thread (`self` must outlive the call: the caller holds it).
    package static func with<T, E: Error>(_ tally: Tally?, _ body: () throws(E) -> T) throws(E) -> T {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, tally.map { Unmanaged.passUnretained($0).toOpaque() })
        defer { pthread_setspecific(key, previous) }
        return try body()
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Counted while it lives.
    package final class Token: Sendable {
        private let tally: Tally?
        package init() {
            tally = LiveObjects.current
            LiveObjects.live.add(1, ordering: .relaxed)
            tally?.addObject(1)
        }
        deinit {
            LiveObjects.live.subtract(1, ordering: .relaxed)
            tally?.addObject(-1)
        }
    }
}
