import Glibc
import PreviewLoop
import PreviewLoopJobs
import PreviewLoopRemote

/// A render's result for the requests waiting on it.
typealias RenderResult = Result<CachedBody, PreviewRequestError>

/// A render to run on a worker: what it may use of the memory budget, and the work.
struct RenderWork: Sendable {
    /// Bytes it may use at its peak, as known when the request arrives.
    var memoryEstimate: Int
    /// The estimate once the source is looked at (its real size), asked on the worker before the render
    /// takes its share of the budget; `nil` keeps ``memoryEstimate``.
    var refinedEstimate: (@Sendable () -> Int?)? = nil
    /// The body's media type.
    var contentType: String
    /// Renders the body and its headers, or says why not as the problem to answer with.
    var run: @Sendable () throws(PreviewRequestError) -> RenderedBody
    /// Keeps a rendered body further (the disk cache), after its waiters have been answered.
    var keep: (@Sendable (CachedBody) -> Void)? = nil
    /// Whether the body may go into the memory cache under its key.
    var isCacheable = true
    /// Responses the same render also makes (``RenderedBody/siblings``, in order): each kept under its
    /// own key in the memory cache (when cacheable) and by its own `keep`.
    var siblings: [Sibling] = []

    struct Sibling: Sendable {
        var key: String
        var contentType: String
        var keep: (@Sendable (CachedBody) -> Void)? = nil
    }
}

/// The render workers, the queue in front of them and the coalescing of identical requests.
///
/// A request's job is keyed by its validator: while a render for a key is queued or running, a request
/// with the same key waits for that render instead of starting another. At most `workers` renders run,
/// each admitted by the shared memory budget; at most `queueLimit` more wait; past that a request is
/// refused (503). A waiting request past its deadline is answered 504 by the sweeper, and one whose
/// client closed its connection is let go. A queued render nobody waits for any more is dropped before
/// it starts; a running one is cancelled (the library's cancellation interrupts its inputs) and taken
/// out of `flights` at once, so a new request for the key starts a new render.
///
/// Invariant: `flights`, `pending`, `running` and `isStopping` are touched only under `lock`; a key is
/// in `pending` exactly when its flight has not started; a flight in `flights` is not cancelled.
final class RenderQueue: @unchecked Sendable {
    struct Waiter {
        var id: Int
        var deadline: ContinuousClock.Instant
        var deliver: @Sendable (RenderResult) -> Void
        /// Whether the request's client has gone away.
        var isGone: @Sendable () -> Bool
    }

    private final class Flight {
        let work: RenderWork
        var waiters: [Waiter] = []
        var isStarted = false
        let cancellation = WorkCancellation()
        init(work: RenderWork) { self.work = work }
    }

    enum Admission: Equatable {
        /// A new render was queued.
        case queued
        /// The request waits for a render of the same key already queued or running.
        case coalesced
        /// The queue is full.
        case full
        /// The job alone needs more memory than the whole budget.
        case tooLarge
    }

    let workers: Int
    let queueLimit: Int
    let memoryBudget: Int
    private let gate: MemoryGate
    private let cache: ResponseCache
    private let metrics: ServerMetrics
    private let lock = ConditionLock()
    private var flights: [String: Flight] = [:]
    private var pending: [String] = []
    private var running = 0
    private var isStopping = false
    private var nextWaiter = 0
    private var threads: [pthread_t] = []
    /// Threads (workers and the sweeper) that have returned.
    private var exited = 0

    init(workers: Int, queueLimit: Int, memoryBudget: Int, cache: ResponseCache,
         metrics: ServerMetrics) throws(ServerStartError) {
        self.workers = workers
        self.queueLimit = queueLimit
        self.memoryBudget = memoryBudget
        gate = MemoryGate(budget: memoryBudget)
        self.cache = cache
        self.metrics = metrics
        var started = true
        // The threads hold the queue until they return (after `stop()`).
        for _ in 0..<workers where started { started = spawn { self.work() } }
        if started { started = spawn { self.sweep() } }
        guard started else {
            stop(within: .seconds(60))
            throw ServerStartError(message: "cannot start the render workers (pthread_create failed)")
        }
    }

    /// Whether a new render would be accepted now.
    var hasRoom: Bool { lock.withLock { !isStopping && pending.count < queueLimit + max(0, workers - running) } }

    /// Queues `job` under `key`, or joins the render already there; `deliver` is called once, on a worker
    /// or the sweeper, unless the admission is `.full` or `.tooLarge` (then never).
    /// `isGone` says whether the request's client has closed its connection; the sweeper asks it.
    func submit(key: String, work: RenderWork, deadline: ContinuousClock.Instant,
                isGone: @escaping @Sendable () -> Bool = { false },
                deliver: @escaping @Sendable (RenderResult) -> Void) -> Admission {
        guard work.memoryEstimate <= memoryBudget else { return .tooLarge }
        let admission: Admission = lock.withLock {
            guard !isStopping else { return .full }
            nextWaiter += 1
            let waiter = Waiter(id: nextWaiter, deadline: deadline, deliver: deliver, isGone: isGone)
            if let flight = flights[key] {
                flight.waiters.append(waiter)
                return .coalesced
            }
            // Waiting renders beyond the idle workers are the queue.
            guard pending.count < queueLimit + max(0, workers - running) else { return .full }
            let flight = Flight(work: work)
            flight.waiters.append(waiter)
            flights[key] = flight
            pending.append(key)
            lock.signal()
            return .queued
        }
        publish()
        return admission
    }

    /// Stops: every waiting request is answered 503, running renders are cancelled (the library's
    /// cancellation interrupts their inputs), and the workers are waited for up to `within`. A render
    /// that has not returned by then is left to finish on its own thread, which holds the queue.
    func stop(within limit: Duration = .seconds(30)) {
        let (waiting, started): ([Waiter], [Flight]) = lock.withLock {
            isStopping = true
            let waiting = flights.values.flatMap(\.waiters)
            let started = flights.values.filter(\.isStarted)
            for flight in flights.values { flight.waiters = [] }
            for key in pending { flights[key] = nil }
            pending = []
            lock.broadcast()
            return (waiting, started)
        }
        for flight in started { flight.cancellation.cancel() }
        let refusal = PreviewRequestError(status: 503, detail: "The server is shutting down.")
        for waiter in waiting { waiter.deliver(.failure(refusal)) }
        let deadline = ContinuousClock.now + limit
        let allReturned: Bool = lock.withLock {
            while exited < threads.count && ContinuousClock.now < deadline { lock.wait(timeout: deadline - ContinuousClock.now) }
            return exited == threads.count
        }
        for thread in threads {
            if allReturned { pthread_join(thread, nil) } else { pthread_detach(thread) }
        }
        threads = []
    }

    private func work() {
        while true {
            lock.lock()
            while pending.isEmpty && !isStopping { lock.wait() }
            if isStopping {
                exited += 1
                lock.broadcast()
                lock.unlock()
                return
            }
            let key = pending.removeFirst()
            guard let flight = flights[key] else {
                lock.unlock()
                continue
            }
            flight.isStarted = true
            running += 1
            lock.unlock()
            publish()
            let estimate = flight.work.refinedEstimate?() ?? flight.work.memoryEstimate
            let result: RenderResult
            var siblings: [(RenderWork.Sibling, CachedBody)] = []
            if estimate > memoryBudget {
                result = .failure(RenderQueue.tooLarge)
            } else {
                let reservation = gate.acquire(estimate)
                do throws(PreviewRequestError) {
                    let rendered = try flight.cancellation.run { () throws(PreviewRequestError) in try flight.work.run() }
                    result = .success(CachedBody(body: rendered.body, contentType: flight.work.contentType, headers: rendered.headers))
                    siblings = zip(flight.work.siblings, rendered.siblings).map { sibling, body in
                        (sibling, CachedBody(body: body.body, contentType: sibling.contentType, headers: body.headers))
                    }
                } catch {
                    result = .failure(error)
                }
                gate.release(reservation)
            }
            let cancelled = flight.cancellation.isCancelled
            metrics.rendered(failed: (try? result.get()) == nil, cancelled: cancelled)
            if case .success(let body) = result, !cancelled, flight.work.isCacheable {
                cache.insert(body, for: key)
                for (sibling, body) in siblings { cache.insert(body, for: sibling.key) }
            }
            let waiters: [Waiter] = lock.withLock {
                running -= 1
                // A cancelled flight left `flights` when it was cancelled; a new one may hold the key.
                if flights[key] === flight { flights[key] = nil }
                return flight.waiters
            }
            publish()
            for waiter in waiters { waiter.deliver(result) }
            if case .success(let body) = result, !cancelled {
                flight.work.keep?(body)
                for (sibling, body) in siblings { sibling.keep?(body) }
            }
        }
    }

    /// Answers waiters past their deadline (504), lets go of those whose client left, drops queued
    /// renders nobody waits for and cancels running ones.
    private func sweep() {
        while true {
            var expired: [Waiter] = [], gone: [Waiter] = [], abandoned: [Flight] = []
            let stopping: Bool = lock.withLock {
                if isStopping {
                    exited += 1
                    lock.broadcast()
                    return true
                }
                let now = ContinuousClock.now
                for (key, flight) in flights {
                    var staying: [Waiter] = []
                    for waiter in flight.waiters {
                        if waiter.deadline <= now {
                            expired.append(waiter)
                        } else if waiter.isGone() {
                            gone.append(waiter)
                        } else {
                            staying.append(waiter)
                        }
                    }
                    guard staying.count < flight.waiters.count else { continue }
                    flight.waiters = staying
                    guard staying.isEmpty else { continue }
                    flights[key] = nil
                    if flight.isStarted {
                        abandoned.append(flight)
                    } else {
                        pending.removeAll { $0 == key }
                    }
                }
                return false
            }
            if stopping { return }
            for flight in abandoned { flight.cancellation.cancel() }
            if !expired.isEmpty || !gone.isEmpty { publish() }
            let late = PreviewRequestError(status: 504, detail: "The request deadline passed before the render finished.")
            for waiter in expired {
                metrics.deadlinePassed()
                waiter.deliver(.failure(late))
            }
            // Nobody reads this answer: it resumes the connection, so libmicrohttpd closes it. The status
            // is nginx's 499 (the client closed the request), which the access log and metrics then show.
            let left = PreviewRequestError(status: RenderQueue.clientClosed, detail: "The client closed the connection.")
            for waiter in gone { waiter.deliver(.failure(left)) }
            usleep(20_000)
        }
    }

    /// The answer to a render that alone needs more than the whole budget.
    static let tooLarge = PreviewRequestError(
        status: 413, detail: "The render needs more memory than the server's whole budget (--max-memory).")

    /// The status of a request whose client left before its answer (nginx's convention); nothing is sent.
    static let clientClosed = 499

    private func publish() {
        let (depth, inFlight) = lock.withLock { (pending.count, running) }
        metrics.queue(depth: depth, inFlight: inFlight)
    }

    private func spawn(_ body: @escaping @Sendable () -> Void) -> Bool {
        guard let thread = JoinableThread.start(body) else { return false }
        threads.append(thread)
        return true
    }
}
