import FoundationEssentials
import Glibc
import Synchronization

/// Every temporary file and staging directory the process is writing, so that a signal can remove
/// them before the process exits (`preview-loop` exits 130/143 on SIGINT/SIGTERM with nothing left).
///
/// ``AtomicFile``, the muxer's output, ``StagedDirectory`` and the CLI's pending log register what
/// they create and unregister it once renamed into place or removed. Swaps that must not be cut in
/// half (a staged directory exchanged with the old one) run under ``whileHolding(_:)``, which
/// ``removeAll()`` waits for. Thread-safe: the set is guarded by a mutex.
package enum TemporaryFiles {
    /// Paths being written: files, and directories (removed with their contents).
    private static let paths = Mutex<Set<String>>([])

    /// Creates a temporary with `create` and remembers it when `created` says it exists, as one step
    /// that ``removeAll()`` cannot come between (a signal then finds it registered, or not yet made).
    package static func register<Result>(_ path: String, creatingWith create: () -> Result,
                                         created: (Result) -> Bool) -> Result {
        paths.withLock { paths in
            let result = create()
            if created(result) { paths.insert(path) }
            return result
        }
    }

    /// Forgets a temporary (renamed into place, or removed).
    package static func unregister(_ path: String) {
        paths.withLock { _ = $0.remove(path) }
    }

    /// Runs `body` while ``removeAll()`` cannot run (for a swap that must complete or not start).
    package static func whileHolding<Result>(_ body: () throws -> Result) rethrows -> Result {
        try paths.withLock { _ in try body() }
    }

    /// Removes every registered temporary; for a signal handler about to end the process.
    ///
    /// - Returns: how many were removed.
    @discardableResult
    package static func removeAll() -> Int {
        paths.withLock { paths in
            for path in paths {
                var status = stat()
                guard FileSystem.lstat(path, &status) == 0 else { continue }
                if status.st_mode & S_IFMT == S_IFDIR {
                    FileSystem.removeTree(path)
                } else {
                    FileSystem.unlink(path)
                }
            }
            defer { paths.removeAll() }
            return paths.count
        }
    }

    /// The registered temporaries (for tests).
    package static var registered: Set<String> { paths.withLock { $0 } }
}
