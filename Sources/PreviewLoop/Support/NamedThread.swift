import Glibc
internal import PreviewLoopFFmpeg

/// Owns a POSIX thread that runs one closure, under a name that debuggers, `top -H` and
/// `/proc/<pid>/task/*/comm` show (Linux keeps the name's first 15 bytes).
///
/// ``detach(name:_:)`` starts a thread nobody waits for, which cleans up after itself; ``init(name:_:)``
/// starts a joinable one, which ``join()`` waits for — and `deinit` too when the owner did not, so a
/// joinable thread is never leaked. An instance is used only by the thread that made it.
package final class NamedThread {
    private let thread: pthread_t
    private var isJoined = false

    /// Starts `body` on a new joinable thread.
    ///
    /// - Throws: ``PreviewLoopError/Code/decodingFailed`` when the system refuses another thread.
    init(name: String, _ body: @escaping @Sendable () -> Void) throws(PreviewLoopError) {
        thread = try Self.create(name: name, isDetached: false, body)
    }

    deinit {
        join()
    }

    /// Waits until the closure has returned; returns at once when it already has, or after an earlier
    /// call.
    func join() {
        guard !isJoined else { return }
        isJoined = true
        pthread_join(thread, nil)
    }

    /// Starts `body` on a new detached thread, which nobody joins.
    ///
    /// - Throws: ``PreviewLoopError/Code/decodingFailed`` when the system refuses another thread.
    package static func detach(name: String, _ body: @escaping @Sendable () -> Void) throws(PreviewLoopError) {
        _ = try create(name: name, isDetached: true, body)
    }

    /// `pthread_create` with the detach state asked for; the new thread names itself, then runs `body`.
    private static func create(name: String, isDetached: Bool,
                               _ body: @escaping @Sendable () -> Void) throws(PreviewLoopError) -> pthread_t {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(isDetached ? PTHREAD_CREATE_DETACHED : PTHREAD_CREATE_JOINABLE))
        // The new thread takes over this reference.
        let context = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { context in
            Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            let start = Unmanaged<ThreadStart>.fromOpaque(context).takeRetainedValue()
            start.tally?.addThread(-1)
            throw PreviewLoopError(.decodingFailed, "cannot start the '\(name)' thread: \(String(cString: strerror(result)))")
        }
        return thread
    }
}

/// What a new thread runs: it names itself, then calls the closure. Immutable, so `Sendable`.
private final class ThreadStart: Sendable {
    let name: String
    let body: @Sendable () -> Void
    /// The creating thread's call (its cancellation and its tally of threads and FFmpeg objects),
    /// carried over to the new thread.
    let scope: CancellationScope?
    let tally: LiveObjects.Tally?

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
        scope = CancellationScope.current
        tally = LiveObjects.current
        tally?.addThread(1)
    }

    /// Runs on the new thread.
    func run() {
        // Linux refuses names over 15 bytes (ERANGE); keep the longest prefix of whole characters.
        var shortName = ""
        for character in name {
            guard shortName.utf8.count + character.utf8.count <= 15 else { break }
            shortName.append(character)
        }
        _ = Self.setName?(pthread_self(), shortName)
        defer { tally?.addThread(-1) }
        if let scope {
            scope.enter { LiveObjects.with(tally) { body() } }
        } else {
            LiveObjects.with(tally) { body() }
        }
    }

    /// glibc's `pthread_setname_np`, looked up at run time: Swift's Glibc module leaves out the GNU
    /// extensions that declare it. `nil` when the C library has none (the thread keeps its default name).
    private static let setName: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = {
        // A null handle is RTLD_DEFAULT: the symbol wherever the process has it.
        guard let symbol = dlsym(nil, "pthread_setname_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)
    }()
}
