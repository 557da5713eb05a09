import Foundation
import Glibc
import PreviewLoop
import Testing
import PreviewLoopCLI
import PreviewLoopJobs
import Synchronization
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// A render whose every waiting client has gone is cancelled: in the render queue with a render that
/// runs until it is cancelled, and end to end with a real FFmpeg render and curl hanging up.
@Suite("serve: cancelling abandoned renders", .serialized, .timeLimit(.minutes(10)))
struct ServeCancellationTests {
    @Test("The queue cancels a running render once every waiter's client is gone, and a new request starts afresh")
    func queueCancelsAbandonedRenders() throws {
        let metrics = ServerMetrics()
        let cache = ResponseCache(capacity: 1 << 20, metrics: metrics)
        let queue = try RenderQueue(workers: 1, queueLimit: 4, memoryBudget: 100, cache: cache, metrics: metrics)
        defer { queue.stop() }
        let started = DispatchSemaphore(value: 0)
        let spins = Atomic<Int>(0)
        // Runs until the library's cancellation of the calling thread says stop.
        let endless = RenderWork(memoryEstimate: 1, contentType: "text/plain") { () throws(PreviewRequestError) in
            started.signal()
            while !WorkCancellation.isCurrentCancelled {
                spins.add(1, ordering: .relaxed)
                usleep(1000)
            }
            throw PreviewRequestError(status: 503, detail: "cancelled")
        }
        let results = Mutex<[String: [Int]]>([:])
        func deliver(_ name: String) -> @Sendable (RenderResult) -> Void {
            { result in
                let status = (try? result.get()).map { _ in 200 } ?? { if case .failure(let p) = result { p.status } else { 0 } }()
                results.withLock { $0[name, default: []].append(status) }
            }
        }
        let far = ContinuousClock.now + .seconds(60)
        let firstGone = Atomic<Bool>(false), secondGone = Atomic<Bool>(false)
        #expect(queue.submit(key: "k", work: endless, deadline: far, isGone: { firstGone.load(ordering: .relaxed) },
                             deliver: deliver("first")) == .queued)
        #expect(started.wait(timeout: .now() + 30) == .success)
        #expect(queue.submit(key: "k", work: endless, deadline: far, isGone: { secondGone.load(ordering: .relaxed) },
                             deliver: deliver("second")) == .coalesced)
        // One of two clients leaves: the render goes on for the other.
        firstGone.store(true, ordering: .relaxed)
        let soon = ContinuousClock.now + .seconds(20)
        while results.withLock({ $0["first"] == nil }) && ContinuousClock.now < soon { usleep(5000) }
        #expect(results.withLock { $0["first"] } == [RenderQueue.clientClosed])
        let before = spins.load(ordering: .relaxed)
        let later = ContinuousClock.now + .seconds(20)
        while spins.load(ordering: .relaxed) <= before && ContinuousClock.now < later { usleep(5000) }
        #expect(spins.load(ordering: .relaxed) > before, "the render stopped while a client still waited")
        // The other leaves too: the render is cancelled, and the same key queues a new render.
        secondGone.store(true, ordering: .relaxed)
        while results.withLock({ $0["second"] == nil }) && ContinuousClock.now < soon { usleep(5000) }
        #expect(results.withLock { $0["second"] } == [RenderQueue.clientClosed])
        let quick = RenderWork(memoryEstimate: 1, contentType: "text/plain") { RenderedBody(body: [7]) }
        #expect(queue.submit(key: "k", work: quick, deadline: far, deliver: deliver("third")) == .queued)
        while results.withLock({ $0["third"] == nil }) && ContinuousClock.now < soon { usleep(5000) }
        #expect(results.withLock { $0["third"] } == [200])
        #expect(cache.value(for: "k")?.body == [7])
        let text = metrics.exposition()
        #expect(text.contains("\npreviewloop_renders_cancelled_total 1\n") && text.contains("\npreviewloop_render_failures_total 0\n"),
                "\(text)")
    }

    @Test("A real render is cancelled when curl hangs up, caches nothing, and the next request renders again")
    func hangingUpCancelsTheRender() throws {
        let root = TestPaths.temporaryDirectory(), cache = TestPaths.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: cache)
        }
        // A 10-second animation of 20 s of 720p takes seconds, well past the client's 0.5 s.
        try ServeTests.makeLongClip(root + "/long.mp4")
        var options = ServeCommand(root: root)
        options.workers = 1
        options.cacheDirectory = cache
        let server = try PreviewServer(options: options, accessLog: nil)
        defer { server.stop(grace: 5) }
        let base = "http://127.0.0.1:\(server.port)"
        let url = base + "/long.mp4/animated.mp4?length=10&width=640"
        let hungUp = try Child.tool("curl", ["-s", "-o", "/dev/null", "--max-time", "0.5", url], killAfter: 60)
        #expect(hungUp.status == 28, "curl should have timed out: \(hungUp.status)")
        let metric = { (name: String) throws -> Int? in try ServeCacheTests.metric(name, base) }
        #expect(ServeCacheTests.eventually { (try? metric("previewloop_renders_cancelled_total")) == 1 })
        #expect(ServeCacheTests.eventually { (try? metric("previewloop_renders_in_flight")) == 0 })
        #expect(try metric("previewloop_render_failures_total") == 0)
        #expect(ServeCacheTests.entries(cache).isEmpty)
        #expect(ServeCacheTests.eventually { server.openExchanges == 0 }, "the abandoned connection was never let go")
        // Asked again and waited for, it renders from the start and is served whole.
        let whole = try ServeTests.fetch(url)
        #expect(whole.status == 200 && whole.headers["content-type"] == "video/mp4" && whole.body.count > 1000)
        #expect(try metric("previewloop_renders_total") == 2 && metric("previewloop_renders_cancelled_total") == 1)
    }
}
