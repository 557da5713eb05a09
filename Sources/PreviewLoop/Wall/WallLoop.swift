import Synchronization

/// A frame ready to present, made by a decode worker.
struct WallItem: @unchecked Sendable {
    var image: RGBImage
    /// Due time from the loop's clock start (earlier passes' lengths + presentation time).
    var due: Duration
    var presentation: Duration
    var sourceTime: Double
    var pass: Int
    var index: Int
    var decode: Duration
    var conversion: Duration
    var isKeyframe: Bool
    /// Frames the producer dropped (too late to be worth converting) just before this one.
    var droppedBefore: Int
    /// When it was queued (offline frames are presented in this order).
    var readyAt = ContinuousClock.now
}

/// What a production step gave.
enum WallStep {
    case frame(WallItem)
    /// Every pass was delivered.
    case finished
}

/// One loop of a wall: its decoder, scaler, pass position and cache. Produces one frame per call to
/// ``step(clockStart:)``.
///
/// `@unchecked Sendable`: the producer state (everything but `counters`, `store`, `control` and the
/// constants) is touched only by the decode worker that has claimed the loop — the scheduler lets one
/// worker claim a loop at a time and hands it over under its lock — so the FFmpeg objects are used by
/// one thread at a time. `counters` is under its own mutex; `store` and `control` are thread-safe.
final class WallLoop: @unchecked Sendable {
    /// A first-pass frame's place, kept (without pixels) for replays and for resuming after eviction.
    private struct Entry {
        var index: Int
        var presentation: Duration
        var sourceTime: Double
        var isKeyframe: Bool
    }

    let id: Int
    let source: Source
    let configuration: LoopPlayer.Configuration
    let info: VideoInfo
    let loops: Int?
    /// Every n-th frame is presented (1: all).
    let frameRateDivisor: Int
    let frameInterval: Duration
    let isRealtime: Bool
    let control = LoopControl()
    let store = LoopFrameStore()
    let counters = Mutex(Counters())
    /// Source pixels per frame (for the cost model).
    let sourcePixels: Int
    /// The decoder opened by `init`, observed weakly (tests prove a finished loop frees it).
    private(set) weak var openedDecoder: VideoDecoder?

    struct Counters {
        var statistics = WallLoopStatistics()
        var histogram = LatenessHistogram()
        /// Frames decoded and converted, and their cost, for the wall's cost model.
        var costedFrames = 0
        var cost = Duration.zero
        /// Whether the loop is decoding now (first pass, or passes after an eviction) rather than
        /// replaying from the cache.
        var isDecoding = true
        /// Frames dropped since the last presented frame (reported on the next one).
        var pendingDrops = 0
    }

    // Producer state (the claiming worker only).
    private var decoder: VideoDecoder?
    /// Released with the decoder in ``close()`` (it owns a scaling context).
    private var scaler: FrameScaler?
    private let budget: FrameCacheBudget
    private let windowStart: Double
    private let windowEnd: Double
    private let windowLengthDuration: Duration
    /// The pass being presented, and where it starts on the loop's clock.
    private var pass = 0
    private var passOffset = Duration.zero
    /// The decoder's frame index in its window, and where its last frame ends (from the window start).
    private var index = 0
    private var passLength = Duration.zero
    /// The next decoded frame is a pass's first (or the first after an eviction): position first.
    private var positionAt: Double?
    /// The window's frames in order (complete once `firstPassLength` is set).
    private var entries: [Entry] = []
    /// The window's length, set when a decode first reached its end.
    private var firstPassLength: Duration?
    private var isCaching = false
    private var replayPosition: Int?
    /// The first pass's presentation has moved on to replaying the cache while the decoder still
    /// decodes the rest of the window into it (the first pass fell behind).
    private var isFillingWindow = false
    private var pendingDrops = 0
    private var isFinished = false

    init(id: Int, source: Source, configuration: LoopPlayer.Configuration, loops: Int?, frameRateDivisor: Int,
         budget: FrameCacheBudget) throws(PreviewLoopError) {
        try configuration.validate()
        guard loops.map({ $0 > 0 }) ?? true else {
            throw PreviewLoopError(.invalidArgument, "a loop needs at least one pass")
        }
        // Decoders in a wall run single-threaded: the pool is the parallelism, and FFmpeg's own
        // threads would be per loop.
        let decoder = try VideoDecoder(source: source, options: configuration.sourceOptions, threads: 1)
        let info = decoder.info
        let window = try configuration.resolvedWindow(source: source, info: info)
        self.id = id
        self.source = source
        self.configuration = configuration
        self.info = info
        self.loops = loops
        self.frameRateDivisor = max(1, frameRateDivisor)
        self.frameInterval = Duration.fromSeconds(info.frameInterval)
        self.isRealtime = configuration.clock == .realtime
        self.sourcePixels = max(1, info.width * info.height)
        self.decoder = decoder
        self.openedDecoder = decoder
        self.budget = budget
        // A smart crop keeps the window of the first frame converted (the window's start) for the whole loop.
        scaler = FrameScaler(outputSize: configuration.size, mode: configuration.contentMode, for: decoder, holdsSmartCrop: true)
        // Through Duration, as a LoopPlayer does, so both play the same frames.
        let start = Duration.seconds(window.start).seconds
        windowStart = start
        windowEnd = start + Duration.seconds(window.length).seconds
        windowLengthDuration = .seconds(window.length)
        positionAt = start
        // Only worth keeping frames when a later pass will replay them.
        isCaching = loops != 1 && configuration.frameCacheLimit > 0 && budget.limit > 0
        control.adopt(decoder.interrupter)
    }

    /// Whether the next step replays the cache (cheap). Read by the scheduler only while no worker
    /// holds the loop (the last holder let go under the scheduler's lock).
    var isReplaying: Bool { replayPosition != nil && !isFillingWindow }

    /// The bytes one cached frame takes.
    private var frameBytes: Int { configuration.size.area * 3 }

    /// Frees the decoder and the cache (the loop ended). Called by whoever finalizes the loop, when no
    /// worker holds it.
    func close() {
        decoder = nil
        scaler = nil
        budget.release(store)
    }

    /// Measures the cost of decoding and converting up to `count` frames of the window, then leaves the
    /// decoder to be positioned again by the first step. Called before the loop is scheduled.
    func calibrate(frames count: Int) throws(PreviewLoopError) -> Duration? {
        guard let decoder, let scaler, decoder.isSeekable else { return nil }
        let clock = ContinuousClock()
        let began = clock.now
        var decoded = 0
        var frame = try decoder.frameDisplayed(at: windowStart)
        while let timed = frame, decoded < count {
            _ = try scaler.image(from: timed.frame, sampleAspectRatio: info.sampleAspectRatio)
            decoded += 1
            frame = try decoder.nextFrame()
        }
        guard decoded > 0 else { return nil }
        // frameDisplayed seeks on the first step.
        positionAt = windowStart
        return (clock.now - began) / decoded
    }

    /// Produces the next frame to present, or `.finished` after the last pass.
    ///
    /// A realtime frame already more than a frame interval late is not presented: dropped unconverted,
    /// or — while the loop caches its window — converted and kept all the same, so that later passes
    /// replay the whole window from memory instead of decoding it (and any pre-roll before its first
    /// frame) again. When the first pass is still decoding late as its time runs out, its presentation
    /// moves on to replaying the cache on time while the decoder fills in the rest of the window behind
    /// it (``isFillingWindow``).
    ///
    /// - Parameter clockStart: when the loop's clock started (its first frame was ready), if it has.
    func step(clockStart: ContinuousClock.Instant?) throws(PreviewLoopError) -> WallStep {
        var hasFilled = false
        while true {
            if isFinished { return .finished }
            if control.isStopped { throw PreviewLoopError(.cancelled, "\(source): stopped") }
            if let position = replayPosition {
                // Filling the window behind a replay: one frame a step, and as many as the replay needs.
                if isFillingWindow && (!hasFilled || position >= store.count) {
                    hasFilled = true
                    try fillWindow()
                    continue
                }
                guard position < entries.count else {
                    if firstPassLength == nil {
                        // The fill gave its cache up at this frame: decode on from where it stopped.
                        replayPosition = nil
                        counters.withLock { $0.isDecoding = true }
                        continue
                    }
                    endPass(length: firstPassLength ?? passLength)
                    continue
                }
                let entry = entries[position]
                if let image = store.image(at: position) {
                    replayPosition = position + 1
                    counters.withLock { $0.statistics.framesReplayed += 1 }
                    return .frame(item(image, entry.presentation, entry.sourceTime, entry.index, entry.isKeyframe,
                                       decode: .zero, conversion: .zero))
                }
                // Evicted: decode the rest of this pass from this frame on.
                isFillingWindow = false
                replayPosition = nil
                positionAt = entry.sourceTime
                index = entry.index
                counters.withLock { $0.isDecoding = true }
                continue
            }
            guard decoder != nil, scaler != nil else { throw PreviewLoopError(.cancelled, "\(source): closed") }
            if let clockStart, shouldReplayWhileFilling(clockStart: clockStart) {
                beginReplayWhileFilling()
                continue
            }
            guard let decoded = try decodeNext() else { continue }
            let (timed, presentation, frameIndex, decodeTime) = decoded
            if firstPassLength == nil && frameIndex > (entries.last?.index ?? -1) {
                entries.append(Entry(index: frameIndex, presentation: presentation, sourceTime: timed.time, isKeyframe: timed.isKeyframe))
            }
            if isRealtime, let clockStart {
                let late = (clockStart + passOffset + presentation).duration(to: ContinuousClock.now)
                // A frame already too late is not presented. Not converted either, unless the loop
                // caches: then it is kept for the later passes, which replay it instead of decoding the
                // window again (a window starting mid-GOP would pay its whole pre-roll every pass).
                if late > frameInterval {
                    pendingDrops += 1
                    if isCaching { keep(try convert(timed, decodeTime: decodeTime).image) }
                    continue
                }
            }
            let (image, conversion) = try convert(timed, decodeTime: decodeTime)
            if isCaching { keep(image) }
            return .frame(item(image, presentation, timed.time, frameIndex, timed.isKeyframe,
                               decode: decodeTime, conversion: conversion))
        }
    }

    /// Decodes the window's next frame (positioning on the window first when a pass starts), or ends
    /// the pass at the window's end (`nil`); frames left out by a reduced frame rate are counted and
    /// also give `nil`.
    private func decodeNext() throws(PreviewLoopError) -> (TimedFrame, Duration, Int, Duration)? {
        guard let decoder else { throw PreviewLoopError(.cancelled, "\(source): closed") }
        let clock = ContinuousClock()
        let began = clock.now
        let timed: TimedFrame
        if let target = positionAt {
            let preRollBefore = decoder.preRollPacketCount
            let first = try decoder.firstFrame(at: target, windowStart: windowStart, windowEnd: windowEnd, isFirstPass: pass == 0)
            let preRoll = decoder.preRollPacketCount - preRollBefore
            counters.withLock { $0.statistics.preRollPictures += preRoll }
            positionAt = nil
            timed = first
        } else {
            guard let next = try decoder.nextFrame(), next.time < windowEnd - 1e-9 else {
                let length = min(passLength, windowLengthDuration)
                if firstPassLength == nil { firstPassLength = length }
                endPass(length: length)
                return nil
            }
            timed = next
        }
        let presentation = Duration.fromSeconds(max(0, timed.time - windowStart))
        passLength = presentation + Duration.fromSeconds(timed.duration)
        let frameIndex = index
        index += 1
        let decodeTime = clock.now - began
        let isAgain = pass > 0 && !isFillingWindow
        counters.withLock {
            $0.statistics.framesDecoded += 1
            if isAgain { $0.statistics.framesDecodedAgain += 1 }
            $0.statistics.decodeTime += decodeTime
        }
        if frameIndex % frameRateDivisor != 0 {
            counters.withLock { $0.statistics.framesSkippedByRate += 1 }
            return nil
        }
        return (timed, presentation, frameIndex, decodeTime)
    }

    /// Converts a decoded frame and counts its cost.
    private func convert(_ timed: TimedFrame, decodeTime: Duration) throws(PreviewLoopError) -> (image: RGBImage, conversion: Duration) {
        guard let scaler else { throw PreviewLoopError(.cancelled, "\(source): closed") }
        let clock = ContinuousClock()
        let began = clock.now
        let image = try scaler.image(from: timed.frame, sampleAspectRatio: info.sampleAspectRatio)
        let conversion = clock.now - began
        counters.withLock {
            $0.statistics.conversionTime += conversion
            $0.costedFrames += 1
            $0.cost += decodeTime + conversion
        }
        return (image, conversion)
    }

    /// Whether the first pass, still decoding and late, should hand its presentation over to a replay
    /// of the cache now: its next frame would be dropped, and the second pass is due within half the
    /// read-ahead. Every frame kept so far must still be cached.
    private func shouldReplayWhileFilling(clockStart: ContinuousClock.Instant) -> Bool {
        guard isRealtime, pass == 0, isCaching, firstPassLength == nil, positionAt == nil, !entries.isEmpty else { return false }
        let now = ContinuousClock.now
        let nextDue = clockStart + passOffset + passLength
        guard nextDue.duration(to: now) > frameInterval,
              now >= clockStart + passOffset + windowLengthDuration - frameInterval * (DecodePool.readAhead / 2) else { return false }
        return store.isComplete(count: entries.count)
    }

    /// Moves the presentation on to the second pass, replayed from the cache, while the decoder goes
    /// on filling the rest of the window. The first pass is taken to last the whole window (its true
    /// length is known only when the decoder reaches the window's end).
    private func beginReplayWhileFilling() {
        isFillingWindow = true
        passOffset += windowLengthDuration
        pass += 1
        replayPosition = 0
        counters.withLock { $0.statistics.passesCompleted += 1 }
    }

    /// Decodes and caches one more frame of the window behind a replay; each such frame was never
    /// shown in the first pass, so it counts as dropped. Ends the fill at the window's end, or when the
    /// cache gives up (evicted): then the replay decodes on from this frame.
    private func fillWindow() throws(PreviewLoopError) {
        guard let decoder else { throw PreviewLoopError(.cancelled, "\(source): closed") }
        let clock = ContinuousClock()
        let began = clock.now
        guard let timed = try decoder.nextFrame(), timed.time < windowEnd - 1e-9 else {
            firstPassLength = min(passLength, windowLengthDuration)
            isFillingWindow = false
            counters.withLock { $0.isDecoding = false }
            return
        }
        let presentation = Duration.fromSeconds(max(0, timed.time - windowStart))
        let frameIndex = index
        let decodeTime = clock.now - began
        counters.withLock {
            $0.statistics.framesDecoded += 1
            $0.statistics.decodeTime += decodeTime
        }
        if frameIndex % frameRateDivisor != 0 {
            passLength = presentation + Duration.fromSeconds(timed.duration)
            index += 1
            counters.withLock { $0.statistics.framesSkippedByRate += 1 }
            return
        }
        let image = try convert(timed, decodeTime: decodeTime).image
        if isCaching { keep(image) }
        guard isCaching else {
            // The cache was evicted: hand the frame back; the replay decodes on from it.
            decoder.pushBack(timed)
            isFillingWindow = false
            return
        }
        passLength = presentation + Duration.fromSeconds(timed.duration)
        index += 1
        pendingDrops += 1
        entries.append(Entry(index: frameIndex, presentation: presentation, sourceTime: timed.time, isKeyframe: timed.isKeyframe))
    }

    /// Adds a converted frame to the cache, or gives caching up for this pass when it does not fit.
    private func keep(_ image: RGBImage) {
        let perLoopLimit = configuration.frameCacheLimit
        let fitsOwnLimit = (store.count + 1) * frameBytes <= perLoopLimit
        // A first pass may evict others' caches; a pass cached again after an eviction may not.
        if !fitsOwnLimit || !budget.append(image, to: store, mayEvict: pass == 0) {
            isCaching = false
            budget.release(store)
        }
    }

    private func item(_ image: RGBImage, _ presentation: Duration, _ sourceTime: Double, _ index: Int, _ isKeyframe: Bool,
                      decode: Duration, conversion: Duration) -> WallItem {
        defer { pendingDrops = 0 }
        return WallItem(image: image, due: passOffset + presentation, presentation: presentation, sourceTime: sourceTime,
                        pass: pass, index: index, decode: decode, conversion: conversion, isKeyframe: isKeyframe,
                        droppedBefore: pendingDrops)
    }

    /// Moves on to the next pass: replayed from the cache when it holds the whole first pass, else
    /// decoded again (cached again when the window fits in free budget without evicting anyone).
    private func endPass(length: Duration) {
        passOffset += length
        pass += 1
        index = 0
        replayPosition = nil
        counters.withLock { $0.statistics.passesCompleted += 1 }
        if let loops, pass >= loops {
            isFinished = true
            isCaching = false
            return
        }
        if isCaching && firstPassLength != nil && store.isComplete(count: entries.count) {
            replayPosition = 0
            counters.withLock { $0.isDecoding = false }
            return
        }
        isCaching = false
        positionAt = windowStart
        counters.withLock { $0.isDecoding = true }
        let windowBytes = entries.count * frameBytes
        if budget.limit > 0, windowBytes <= configuration.frameCacheLimit, budget.fitsWithoutEviction(windowBytes) {
            budget.beginCaching(store)
            isCaching = true
        } else {
            budget.release(store)
        }
    }
}
