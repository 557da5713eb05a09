import Glibc

/// The wall's threads: `workers` decode workers and one presenter, whatever the number of loops.
///
/// - Workers repeatedly claim the loop whose next frame is due soonest (realtime loops before offline
///   ones; offline loops round-robin, the one served longest ago first, so no loop starves), produce one frame for it (decode + convert, or a
///   replay from the cache) and queue it. A claimed loop is not offered to another worker, so each
///   loop's decoder is used by one thread at a time; a loop whose queue is full waits.
/// - The presenter hands each queued frame to its loop's `onFrame` at its due time (offline frames at
///   once), dropping and counting a realtime frame that would be more than a frame interval late, and
///   finishes loops (completion handler, decoder and cache freed).
///
/// `@unchecked Sendable`: every stored var is read and written only with `condition` locked; the slots'
/// loops are handed to one worker at a time (`isClaimed`).
final class DecodePool: @unchecked Sendable {
    /// A loop in the pool, with its queue of ready frames.
    final class Slot {
        let loop: WallLoop
        let onFrame: @Sendable (VideoFrame) -> Void
        let onCompletion: @Sendable ((any Error)?) -> Void
        let handle: WallLoopHandle
        let order: Int
        var queue: [WallItem] = []
        var isClaimed = false
        var isProducing = true
        var failure: (any Error)?
        var clockStart: ContinuousClock.Instant?
        /// The due time (from the clock start) of the last frame produced.
        var lastDue: Duration?
        /// When a worker last claimed it, in claims (offline loops are served least recently first).
        var lastClaim = 0
        /// When it was added (a realtime loop not started is due ``DecodePool/startWithin`` after it).
        let added = ContinuousClock.now

        init(loop: WallLoop, order: Int, handle: WallLoopHandle, onFrame: @escaping @Sendable (VideoFrame) -> Void,
             onCompletion: @escaping @Sendable ((any Error)?) -> Void) {
            self.loop = loop
            self.order = order
            self.handle = handle
            self.onFrame = onFrame
            self.onCompletion = onCompletion
        }
    }

    /// Frames a loop may have ready ahead of presentation.
    static let readAhead = 8
    /// How long a realtime loop not started yet waits for the started ones to be ahead before its
    /// first step competes with their frames by deadline (so an overloaded wall still starts it).
    static let startWithin = Duration.seconds(5)

    private let condition = ConditionLock()
    private var slots: [Slot] = []
    private var nextOrder = 0
    private var claims = 0
    private var isShuttingDown = false
    private var threads: [NamedThread] = []
    let workerCount: Int

    init(workers: Int) {
        workerCount = workers
    }

    /// Starts the threads.
    func start() throws(PreviewLoopError) {
        var started: [NamedThread] = []
        do {
            for number in 1...workerCount {
                started.append(try NamedThread(name: "Wall decode \(number)") { [self] in work() })
            }
            started.append(try NamedThread(name: "Wall present") { [self] in present() })
        } catch {
            threads = started
            shutDown()
            throw error
        }
        condition.lock()
        threads = started
        condition.unlock()
    }

    /// Stops every loop (their completions run with no error), then joins the threads.
    func shutDown() {
        condition.lock()
        isShuttingDown = true
        let running = slots
        condition.broadcast()
        let joining = threads
        threads = []
        condition.unlock()
        for slot in running { slot.handle.stop() }
        for thread in joining { thread.join() }
        // The presenter finished what it could; anything left is finished here.
        condition.lock()
        let left = slots
        slots = []
        condition.unlock()
        for slot in left { finish(slot) }
    }

    /// Adds a loop; its frames start flowing at once.
    func add(_ loop: WallLoop, handle: WallLoopHandle, onFrame: @escaping @Sendable (VideoFrame) -> Void,
             onCompletion: @escaping @Sendable ((any Error)?) -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !isShuttingDown else { return false }
        slots.append(Slot(loop: loop, order: nextOrder, handle: handle, onFrame: onFrame, onCompletion: onCompletion))
        nextOrder += 1
        condition.broadcast()
        return true
    }

    /// Wakes the threads (a loop was stopped).
    func wake() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Loops in the pool now.
    var loops: [WallLoop] {
        condition.lock()
        defer { condition.unlock() }
        return slots.map(\.loop)
    }

    // MARK: Workers

    /// The slot a worker should serve next, or `nil`: earliest deadline first, realtime before offline.
    ///
    /// Realtime loops replaying their cache come first: a replayed frame costs microseconds, so they
    /// cannot starve anyone, while plain EDF would hand an overloaded pool entirely to the decoding loops
    /// that fell behind (their deadlines are the earliest) and starve the replays that were on time.
    /// Decoding loops share what is left by deadline, so their lateness is spread rather than one loop
    /// being sacrificed.
    ///
    /// A realtime loop not started yet comes after every started one: its first step positions the
    /// decoder on its window, which decodes everything from the keyframe before the window start in
    /// one piece (half a second for a clip cut mid-GOP at 1080p) and holds its worker meanwhile. So it
    /// starts when every started realtime loop has its read-ahead queued — or, on a wall too busy for
    /// that, by deadline once it has waited ``startWithin`` — and never on the last free worker: one
    /// worker is always left to keep the started loops on time.
    private func nextSlot(now: ContinuousClock.Instant) -> Slot? {
        let starting = slots.count(where: { $0.isClaimed && $0.loop.isRealtime && $0.clockStart == nil })
        let mayStart = workerCount == 1 || starting < workerCount - 1
        var best: Slot?
        var bestKey: (Int, ContinuousClock.Instant, Int)?
        for slot in slots where !slot.isClaimed && slot.isProducing && slot.queue.count < Self.readAhead
            && !slot.loop.control.isStopped {
            let key: (Int, ContinuousClock.Instant, Int)
            if slot.loop.isRealtime, let clockStart = slot.clockStart {
                let deadline = clockStart + (slot.lastDue ?? .zero) + slot.loop.frameInterval
                key = (slot.loop.isReplaying ? 0 : 1, deadline, slot.order)
            } else if slot.loop.isRealtime {
                // Not started yet: in the order added, after the started loops until it is due.
                guard mayStart else { continue }
                let due = slot.added + Self.startWithin
                key = due <= now ? (1, due, slot.order) : (2, now, slot.order)
            } else {
                // Round-robin: a loop added first must not keep the workers from the others.
                key = (3, now, slot.lastClaim)
            }
            if let bestKey, !(key < bestKey) { continue }
            best = slot
            bestKey = key
        }
        return best
    }

    private func work() {
        condition.lock()
        while !isShuttingDown {
            guard let slot = nextSlot(now: ContinuousClock.now) else {
                condition.wait()
                continue
            }
            slot.isClaimed = true
            claims += 1
            slot.lastClaim = claims
            let clockStart = slot.clockStart
            condition.unlock()
            var produced: WallStep?
            var failure: (any Error)?
            do {
                produced = try slot.loop.step(clockStart: clockStart)
            } catch {
                failure = error
            }
            condition.lock()
            slot.isClaimed = false
            switch produced {
            case .frame(let item)?:
                if slot.clockStart == nil {
                    // Like a player, the loop's clock starts when its first frame is ready to show.
                    slot.clockStart = ContinuousClock.now - item.presentation
                }
                slot.lastDue = item.due
                var ready = item
                ready.readyAt = ContinuousClock.now
                slot.queue.append(ready)
            case .finished?:
                slot.isProducing = false
            case nil:
                slot.isProducing = false
                slot.failure = failure
            }
            condition.broadcast()
        }
        condition.unlock()
    }

    // MARK: Presenter

    private func present() {
        let clock = ContinuousClock()
        condition.lock()
        while true {
            // Loops that are done (all frames presented, failed or stopped) and not held by a worker.
            let done = slots.filter { !$0.isClaimed && ($0.loop.control.isStopped || (!$0.isProducing && $0.queue.isEmpty)) }
            if !done.isEmpty {
                slots.removeAll { slot in done.contains { $0 === slot } }
                condition.broadcast()
                condition.unlock()
                for slot in done { finish(slot) }
                condition.lock()
                continue
            }
            if isShuttingDown { break }
            let now = clock.now
            var next: (slot: Slot, due: ContinuousClock.Instant)?
            for slot in slots where !slot.queue.isEmpty {
                // Offline frames go out in the order they became ready, whichever loop made them.
                let due = slot.loop.isRealtime ? (slot.clockStart ?? now) + slot.queue[0].due : min(now, slot.queue[0].readyAt)
                if next == nil || due < next!.due { next = (slot, due) }
            }
            guard let next else {
                condition.wait()
                continue
            }
            if next.due > now {
                condition.wait(timeout: now.duration(to: next.due))
                continue
            }
            let item = next.slot.queue.removeFirst()
            let clockStart = next.slot.clockStart ?? now
            condition.broadcast()          // room in the queue for a worker
            condition.unlock()
            deliver(item, from: next.slot, clockStart: clockStart, due: next.due)
            condition.lock()
        }
        condition.unlock()
    }

    /// Hands a frame to its loop, or drops and counts it when it is more than a frame interval late.
    private func deliver(_ item: WallItem, from slot: Slot, clockStart: ContinuousClock.Instant, due: ContinuousClock.Instant) {
        let loop = slot.loop
        let now = ContinuousClock.now
        var lateness: Duration?
        if loop.isRealtime {
            let late = due.duration(to: now)
            if late > loop.frameInterval {
                loop.counters.withLock {
                    $0.statistics.framesDropped += 1 + item.droppedBefore
                    $0.pendingDrops += 1 + item.droppedBefore
                }
                return
            }
            lateness = max(.zero, late)
        }
        let dropped = loop.counters.withLock { counters -> Int in
            let dropped = counters.pendingDrops + item.droppedBefore
            counters.statistics.framesDropped += item.droppedBefore
            counters.pendingDrops = 0
            counters.statistics.framesPresented += 1
            if let lateness { counters.histogram.add(milliseconds: lateness.milliseconds) }
            return dropped
        }
        let frame = VideoFrame(image: item.image, presentationTime: item.presentation, sourceTime: item.sourceTime,
                               loopIndex: item.pass, index: item.index,
                               timings: FrameTimings(decode: item.decode, conversion: item.conversion,
                                                     wallTime: clockStart.duration(to: now), lateness: lateness,
                                                     droppedBefore: dropped),
                               isKeyframe: item.isKeyframe)
        loop.control.frameTap.presented(frame)
        slot.onFrame(frame)
    }

    /// Ends a loop: frees its decoder and cache, then reports its outcome.
    private func finish(_ slot: Slot) {
        slot.loop.control.stop()
        slot.loop.control.frameTap.close()
        slot.loop.close()
        var failure = slot.failure
        if let error = failure as? PreviewLoopError, error.code == .cancelled, slot.handle.isStopRequested {
            failure = nil
        }
        slot.onCompletion(failure)
        slot.handle.finish(failure)
    }
}
