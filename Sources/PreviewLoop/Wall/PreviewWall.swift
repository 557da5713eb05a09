import Dispatch
import Glibc
import Synchronization
internal import PreviewLoopFFmpeg

/// Many live preview loops in one process: one frame-cache budget and one bounded pool of decode
/// workers shared by all of them.
///
/// ```swift
/// let wall = try PreviewWall()                                   // 256 MiB cache, one worker per core
/// let handle = try wall.add(source: .file("a.mp4"),
///                           configuration: .init(size: Size(width: 320, height: 180), clock: .realtime),
///                           loops: nil, onFrame: { frame in show(frame) })
/// wall.statistics.total.framesDropped
/// handle.stop()
/// ```
///
/// - Threads: `workers` decode workers plus one presenter, whatever the number of loops; each loop's
///   decoder runs single-threaded and is used by one worker at a time. Workers serve the loop whose
///   next frame is due soonest; offline loops get a worker only when every realtime loop has its
///   read-ahead (8 frames) queued. `onFrame` runs on the presenter thread: keep it short.
/// - Memory: each loop caches its first pass (within its own `frameCacheLimit`) in the shared
///   ``FrameCacheBudget``; see there for the eviction policy. A loop never fails for lack of cache.
/// - Admission: ``capacity(for:)`` says how many more realtime loops fit from the decode cost
///   measured so far; ``add(source:configuration:loops:admission:onFrame:onCompletion:)`` can refuse a
///   loop that would make others late, or play it at a lower frame rate — the caller's choice.
public final class PreviewWall: Sendable {
    /// How a wall is set up.
    public struct Configuration: Sendable, Hashable {
        /// The frame-cache budget shared by every loop, in bytes (default 256 MiB, what one
        /// ``PreviewLoop`` may use alone; 0 disables caching).
        public var cacheBudget: Int
        /// Decode worker threads (default: the number of online cores), 1 to 64.
        public var workers: Int
        /// The most loops at once (default 256); one more is refused with ``PreviewLoopError/Code/tooLarge``.
        public var maximumLoops: Int
        /// The share of the workers' time admission plans to fill with decoding (default 0.75), leaving
        /// room for conversion peaks, replays and the rest of the process.
        public var targetUtilization: Double

        /// Creates a configuration; every parameter has the documented default.
        public init(cacheBudget: Int = 256 << 20, workers: Int = PreviewWall.coreCount, maximumLoops: Int = 256,
                    targetUtilization: Double = 0.75) {
            self.cacheBudget = cacheBudget
            self.workers = workers
            self.maximumLoops = maximumLoops
            self.targetUtilization = targetUtilization
        }
    }

    /// FFmpeg owner objects (inputs, decoders, frames, packets) alive in the process: a debug counter
    /// for proving that stopped loops leave nothing behind (the `wall` summary and the tests read it;
    /// it is not part of the library's API).
    package static var liveFFmpegObjects: Int { LiveObjects.count }

    /// The number of online cores.
    public static var coreCount: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// How it was set up.
    public let configuration: Configuration
    /// The shared frame-cache budget.
    public let budget: FrameCacheBudget
    private let pool: DecodePool
    private let ledger: WallLedger
    /// The scopes of the loops opening now, by loop id, and whether openings were interrupted.
    private let openings = Mutex<(scopes: [Int: CancellationScope], isInterrupted: Bool)>(([:], false))

    /// Starts the wall's threads.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for a bad configuration, or
    ///   ``PreviewLoopError/Code/decodingFailed`` when the system refuses a thread.
    public init(configuration: Configuration = .init()) throws {
        guard (1...64).contains(configuration.workers) else {
            throw PreviewLoopError(.invalidArgument, "a wall needs 1 to 64 decode workers, not \(configuration.workers)")
        }
        guard configuration.cacheBudget >= 0, configuration.maximumLoops >= 1,
              configuration.targetUtilization > 0, configuration.targetUtilization <= 1 else {
            throw PreviewLoopError(.invalidArgument, "a wall needs a cache budget ≥ 0, at least one loop and a target "
                                   + "utilization in (0, 1]")
        }
        self.configuration = configuration
        budget = FrameCacheBudget(limit: configuration.cacheBudget)
        pool = DecodePool(workers: configuration.workers)
        ledger = WallLedger()
        try pool.start()
    }

    deinit {
        pool.shutDown()
    }

    /// Stops every loop (their completion handlers run with no error) and ends the wall's threads.
    /// Do not call it from `onFrame`.
    public func close() {
        interruptOpenings()
        pool.shutDown()
    }

    /// Interrupts every ``add(source:configuration:loops:admission:onFrame:onCompletion:)`` still
    /// opening its input, from any thread — it throws ``PreviewLoopError/Code/cancelled`` at once, even
    /// while a server stalls — and every later one. Loops already playing go on.
    public func interruptOpenings() {
        let scopes = openings.withLock { state -> [CancellationScope] in
            state.isInterrupted = true
            return Array(state.scopes.values)
        }
        for scope in scopes { scope.cancel() }
    }

    /// Opens `source` and starts looping it on the wall.
    ///
    /// - Parameters:
    ///   - source: the clip to loop: a file, URL, bytes in memory or standard input.
    ///   - loopConfiguration: size, content mode, window, clock, source options and the loop's own cache
    ///     limit (`frameCacheLimit`, within the shared budget). `threads` is not used: wall decoders
    ///     run single-threaded.
    ///   - loops: passes, or `nil` until stopped.
    ///   - admission: what to do when the loop would make others late (default: always admit).
    ///   - onFrame: called on the wall's presenter thread with each frame, at its due time in realtime.
    ///   - onCompletion: called once, with `nil` after the last pass or a stop.
    /// - Throws: ``PreviewLoopError`` when the input cannot be used (nothing else is affected),
    ///   `refusedByPolicy` when admission refuses the loop, `tooLarge` past ``Configuration/maximumLoops``.
    public func add(source: Source, configuration loopConfiguration: LoopPlayer.Configuration = .init(), loops: Int? = 1,
                    admission: WallAdmission = .always,
                    onFrame: @escaping @Sendable (VideoFrame) -> Void,
                    onCompletion: @escaping @Sendable ((any Error)?) -> Void = { _ in }) throws -> WallLoopHandle {
        let active = pool.loops
        guard active.count < configuration.maximumLoops else {
            throw PreviewLoopError(.tooLarge, "\(source): the wall already runs \(active.count) loops, its limit "
                                   + "(maximumLoops \(configuration.maximumLoops))")
        }
        let id = ledger.nextID()
        // Opened in a scope of its own while it opens: interruptOpenings() cancels it (a stalled URL).
        let scope = CancellationScope()
        let isInterrupted = openings.withLock { state -> Bool in
            state.scopes[id] = scope
            return state.isInterrupted
        }
        defer { _ = openings.withLock { $0.scopes.removeValue(forKey: id) } }
        if isInterrupted { scope.cancel() }
        let loop = try scope.enter { () throws -> WallLoop in
            try WallLoop(id: id, source: source, configuration: loopConfiguration, loops: loops, frameRateDivisor: 1, budget: budget)
        }
        let admitted = admission != .always && loop.isRealtime ? try admit(loop, admission: admission, loops: loops) : loop
        let handle = WallLoopHandle(loop: admitted, pool: pool)
        let ledger = self.ledger
        let added = pool.add(admitted, handle: handle, onFrame: onFrame) { error in
            ledger.retire(admitted)
            onCompletion(error)
        }
        guard added else {
            admitted.close()
            throw PreviewLoopError(.cancelled, "\(source): the wall is closed")
        }
        return handle
    }

    /// Checks a realtime loop against the capacity; returns it, or a copy at a lower frame rate.
    private func admit(_ loop: WallLoop, admission: WallAdmission, loops: Int?) throws -> WallLoop {
        var cost = ledger.costPerPixel(live: pool.loops).map { $0 * Double(loop.sourcePixels) }
        if cost == nil, let measured = try loop.calibrate(frames: 8) {
            cost = measured.seconds
            ledger.record(calibration: measured.seconds / Double(loop.sourcePixels))
        }
        guard let cost else { return loop }            // nothing to measure by (a pipe): admitted
        let fps = 1 / max(1e-6, loop.frameInterval.seconds)
        let load = ledger.load(live: pool.loops)
        let capacity = Double(configuration.workers) * configuration.targetUtilization
        if load + fps * cost <= capacity { return loop }
        let busy = "the wall is busy: loops decoding now use \(DecimalText.fixed(load, 2)) of \(DecimalText.fixed(capacity, 2)) "
            + "workers' time, and this loop needs \(DecimalText.fixed(fps * cost, 2)) (measured \(DecimalText.fixed(cost * 1000, 2)) ms "
            + "per frame at \(DecimalText.fixed(fps, 2)) fps)"
        if admission == .reduceFrameRateWhenBusy {
            for divisor in 2...4 where load + fps / Double(divisor) * cost <= capacity {
                loop.close()
                return try WallLoop(id: loop.id, source: loop.source, configuration: loop.configuration, loops: loops,
                                    frameRateDivisor: divisor, budget: budget)
            }
        }
        loop.close()
        throw PreviewLoopError(.refusedByPolicy, "\(loop.source): \(busy)"
                               + (admission == .reduceFrameRateWhenBusy ? "; even a quarter of the frame rate does not fit" : ""))
    }

    /// How many more realtime loops like `request` the wall can decode at once now without making
    /// others late, from the decode cost measured so far (`nil` until a loop has decoded a frame or a
    /// loop was admitted with calibration). Loops replaying their cache cost almost nothing, so more fit
    /// once earlier loops finish their first pass.
    public func capacity(for request: WallLoopRequest) -> WallCapacity {
        let live = pool.loops
        let costPerPixel = ledger.costPerPixel(live: live)
        let load = ledger.load(live: live)
        let capacity = Double(configuration.workers) * configuration.targetUtilization
        let frameCost = costPerPixel.map { $0 * Double(max(1, request.sourceSize.area)) }
        var more: Int?
        if let frameCost, frameCost > 0, request.frameRate > 0 {
            more = max(0, Int(((capacity - load) / (request.frameRate * frameCost)).rounded(.down)))
        }
        return WallCapacity(additionalLoops: more, costPerFrame: frameCost.map(Duration.fromSeconds),
                            load: load, capacity: capacity)
    }

    /// Per-wall totals: every loop's counters (finished loops included), the budget and the pool.
    public var statistics: WallStatistics {
        let live = pool.loops
        var total = ledger.retiredTotals()
        var histogram = total.histogram
        for loop in live {
            let counters = loop.counters.withLock { $0 }
            total.statistics.add(counters.statistics)
            histogram.merge(counters.histogram)
        }
        var statistics = total.statistics
        statistics.lateness = histogram.percentiles
        statistics.cacheBytes = budget.bytesInUse
        statistics.cacheEvictions = budget.evictions
        return WallStatistics(activeLoops: live.count, total: statistics, cacheLimit: budget.limit,
                              cachePeakBytes: budget.peakBytes, cacheEvictions: budget.evictions,
                              workers: configuration.workers)
    }
}

/// What to do with a realtime loop that would make the wall's loops late.
public enum WallAdmission: Sendable, Hashable {
    /// Admit it anyway (the default): frames may be dropped, and are counted.
    case always
    /// Refuse it with ``PreviewLoopError/Code/refusedByPolicy``.
    case refuseWhenBusy
    /// Play it at a half, a third or a quarter of its frame rate when that fits; otherwise refuse.
    case reduceFrameRateWhenBusy
}

/// A loop a caller thinks of adding, for ``PreviewWall/capacity(for:)``.
public struct WallLoopRequest: Sendable, Hashable {
    /// The decoded picture size (decode cost grows with it).
    public var sourceSize: Size
    /// Frames per second.
    public var frameRate: Double

    /// Creates a request.
    public init(sourceSize: Size, frameRate: Double) {
        self.sourceSize = sourceSize
        self.frameRate = frameRate
    }
}

/// What the wall can take.
public struct WallCapacity: Sendable, Hashable {
    /// More loops like the request that fit now; `nil` when no decode cost has been measured yet.
    public var additionalLoops: Int?
    /// The measured cost of decoding and converting one frame of the request's size.
    public var costPerFrame: Duration?
    /// Workers' time used now by loops that decode (in workers: 1.0 is one worker busy all the time).
    public var load: Double
    /// Workers' time admission plans to use: workers × target utilization.
    public var capacity: Double
}

/// A loop running on a ``PreviewWall``.
public final class WallLoopHandle: Sendable {
    let loop: WallLoop
    private let pool: DecodePool
    private let done = DispatchSemaphore(value: 0)
    private let outcome = Mutex<(finished: Bool, error: (any Error)?)>((false, nil))
    private let stopRequested = Atomic<Bool>(false)

    init(loop: WallLoop, pool: DecodePool) {
        self.loop = loop
        self.pool = pool
    }

    /// The loop's number in its wall, from 0.
    public var id: Int { loop.id }
    /// The probed video stream.
    public var info: VideoInfo { loop.info }
    /// Every n-th frame is shown (1 unless admission reduced the frame rate).
    public var frameRateDivisor: Int { loop.frameRateDivisor }
    /// The loop's counters.
    public var statistics: WallLoopStatistics {
        let counters = loop.counters.withLock { $0 }
        var statistics = counters.statistics
        statistics.lateness = counters.histogram.percentiles
        statistics.cacheBytes = loop.store.bytes
        statistics.cacheEvictions = loop.store.evictionCount
        return statistics
    }

    /// Stops the loop: no further frame is delivered, its decoder and cache are freed, and its
    /// completion handler runs with no error.
    public func stop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        loop.control.stop()
        pool.wake()
    }

    var isStopRequested: Bool { stopRequested.load(ordering: .sequentiallyConsistent) }

    /// The next frame the loop presents.
    public func capture() async throws -> VideoFrame { try await loop.control.frameTap.capture() }

    /// Blocks until the loop has finished (its completion handler has run); rethrows its error.
    public func wait() throws {
        done.wait()
        done.signal()
        if let error = outcome.withLock({ $0.error }) { throw error }
    }

    func finish(_ error: (any Error)?) {
        outcome.withLock { $0 = (true, error) }
        done.signal()
    }
}

/// The wall's bookkeeping beyond the live loops: ids, finished loops' counters and the cost model.
final class WallLedger: Sendable {
    struct Totals {
        var statistics = WallLoopStatistics()
        var histogram = LatenessHistogram()
        var cost = Duration.zero
        var pixelFrames = 0.0
    }

    private let state = Mutex((nextID: 0, retired: Totals(), calibration: Double?.none))

    func nextID() -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    func record(calibration costPerPixel: Double) {
        state.withLock { $0.calibration = costPerPixel }
    }

    /// Adds a finished loop's counters to the totals.
    func retire(_ loop: WallLoop) {
        let counters = loop.counters.withLock { $0 }
        state.withLock { state in
            state.retired.statistics.add(counters.statistics)
            state.retired.histogram.merge(counters.histogram)
            state.retired.cost += counters.cost
            state.retired.pixelFrames += Double(counters.costedFrames) * Double(loop.sourcePixels)
        }
    }

    func retiredTotals() -> Totals { state.withLock { $0.retired } }

    /// Seconds of decode and conversion per source pixel, over every frame decoded in this wall (or
    /// the last calibration when none was).
    func costPerPixel(live: [WallLoop]) -> Double? {
        var (cost, pixelFrames, calibration) = state.withLock { ($0.retired.cost.seconds, $0.retired.pixelFrames, $0.calibration) }
        for loop in live {
            let counters = loop.counters.withLock { ($0.cost, $0.costedFrames) }
            cost += counters.0.seconds
            pixelFrames += Double(counters.1) * Double(loop.sourcePixels)
        }
        return pixelFrames > 0 ? cost / pixelFrames : calibration
    }

    /// Workers' time the decoding realtime loops need: Σ frames per second × cost per frame.
    func load(live: [WallLoop]) -> Double {
        let costPerPixel = self.costPerPixel(live: live) ?? 0
        var load = 0.0
        for loop in live where loop.isRealtime && !loop.control.isStopped {
            let (isDecoding, cost, frames) = loop.counters.withLock { ($0.isDecoding, $0.cost, $0.costedFrames) }
            guard isDecoding else { continue }
            let perFrame = frames > 0 ? cost.seconds / Double(frames) : costPerPixel * Double(loop.sourcePixels)
            load += perFrame / max(1e-6, loop.frameInterval.seconds) / Double(loop.frameRateDivisor)
        }
        return load
    }
}

extension WallLoopStatistics {
    /// Adds another loop's counters (lateness and cache bytes are set by the caller).
    mutating func add(_ other: WallLoopStatistics) {
        framesPresented += other.framesPresented
        framesDropped += other.framesDropped
        framesSkippedByRate += other.framesSkippedByRate
        framesDecoded += other.framesDecoded
        framesDecodedAgain += other.framesDecodedAgain
        preRollPictures += other.preRollPictures
        framesReplayed += other.framesReplayed
        passesCompleted += other.passesCompleted
        decodeTime += other.decodeTime
        conversionTime += other.conversionTime
        cacheEvictions += other.cacheEvictions
    }
}
