import Glibc

/// Starting a POSIX thread that runs one closure, for the code below the domain library (the domain
/// library's own threads are `NamedThread`s, which name themselves and carry the call's scope).
package enum JoinableThread {
    /// Starts `body` on a new joinable thread, which the caller joins with `pthread_join`; `nil` when the
    /// system refuses one.
    package static func start(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
        final class Start: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        // The new thread takes over this reference; a refused thread's is released here.
        let context = Unmanaged.passRetained(Start(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            Unmanaged<Start>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            return nil
        }
        return thread
    }
}
