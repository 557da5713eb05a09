import Foundation
import Synchronization
import Testing
@testable import PreviewLoop

/// The POSIX threads and the condition lock that replaced Foundation's `Thread` and `NSCondition`.
@Suite("NamedThread and ConditionLock")
struct ThreadingTests {
    /// The kernel's name of the calling thread.
    static func currentThreadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines)
    }

    @Test("A joinable thread runs its closure under its name, cut to Linux's 15 bytes; join waits for it")
    func joinableThread() throws {
        let seen = Mutex<[String]>([])
        let thread = try NamedThread(name: "PreviewLoop decode") {
            Thread.sleep(forTimeInterval: 0.05)
            seen.withLock { $0.append(ThreadingTests.currentThreadName()) }
        }
        thread.join()
        #expect(seen.withLock { $0 } == ["PreviewLoop dec"])
        thread.join()                       // a second join returns at once
    }

    @Test("A detached thread runs its closure on another thread")
    func detachedThread() throws {
        let done = DispatchSemaphore(value: 0)
        let names = Mutex<[String]>([])
        try NamedThread.detach(name: "PreviewLoop") {
            names.withLock { $0.append(ThreadingTests.currentThreadName()) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(names.withLock { $0 } == ["PreviewLoop"])
    }

    @Test("wait(timeout:) returns after about the timeout; signal() wakes a waiter early")
    func conditionWaits() throws {
        let condition = ConditionLock()
        let clock = ContinuousClock()
        var began = clock.now
        condition.lock()
        condition.wait(timeout: .milliseconds(50))
        condition.unlock()
        let waited = clock.now - began
        #expect(waited >= .milliseconds(45) && waited < .seconds(30), "\(waited)")   // upper bound: liveness only

        let isReady = Mutex(false)
        began = clock.now
        let waker = try NamedThread(name: "waker") {
            Thread.sleep(forTimeInterval: 0.05)
            condition.lock()
            isReady.withLock { $0 = true }
            condition.signal()
            condition.unlock()
        }
        condition.lock()
        while !isReady.withLock({ $0 }) { condition.wait(timeout: .seconds(30)) }
        condition.unlock()
        waker.join()
        #expect(clock.now - began < .seconds(10))
    }
}
