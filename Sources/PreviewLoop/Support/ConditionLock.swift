import Glibc

/// A POSIX mutex with its condition variable, for threads that wait for each other: ``lock()`` and
/// ``unlock()`` around shared state, ``wait()`` to sleep until another thread calls ``signal()`` or
/// ``broadcast()``, ``wait(timeout:)`` to sleep at most a while. As with any condition variable a
/// waiter can wake without a signal, so it re-checks its condition in a loop.
///
/// `@unchecked Sendable`: the mutex and the condition are made to be shared between threads; they
/// live at fixed heap addresses from `init` to `deinit`, and are destroyed only when no thread holds
/// a reference.
package final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    /// Creates an unlocked mutex and a condition whose timed waits run on the monotonic clock (so
    /// setting the wall clock neither shortens nor stretches them).
    package init() {
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Takes the mutex, waiting while another thread holds it.
    package func lock() {
        pthread_mutex_lock(mutex)
    }

    /// Releases the mutex.
    package func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// With the mutex held: releases it, sleeps until signalled, and takes it again.
    package func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// With the mutex held: like ``wait()``, but wakes after `timeout` at the latest (a day at most:
    /// callers re-check and wait again anyway).
    package func wait(timeout: Duration) {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = min(max(.zero, timeout), .seconds(86_400)).components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_cond_timedwait(condition, mutex, &deadline)
    }

    /// Wakes one waiting thread.
    package func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every waiting thread.
    package func broadcast() {
        pthread_cond_broadcast(condition)
    }
}

extension ConditionLock {
    /// Runs `body` holding the lock.
    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
