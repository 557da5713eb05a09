import Synchronization

/// One frame-cache budget, in bytes of converted pixels, shared by every loop of a ``PreviewWall``.
///
/// Loops cache their first pass's frames so later passes replay them without decoding. Every byte a
/// loop keeps is reserved here first; when a reservation does not fit, the budget evicts whole loop
/// caches by a fixed policy — **least recently used first** (the cache whose last frame was read or
/// written longest ago), never the requester's own — until it fits. An evicted loop is never failed: it
/// decodes its window again on every later pass (it caches again only when its whole window fits in
/// free budget without evicting anyone). A reservation that cannot fit even after evicting every other
/// cache is refused, and that loop drops its own partial cache and decodes instead.
///
/// Invariant: `ledger` is the single source of truth for the bytes in use; a store's bytes change only
/// while `ledger` is locked (lock order: budget, then store), so ``bytesInUse`` never exceeds
/// ``limit`` — ``peakBytes`` proves it.
public final class FrameCacheBudget: Sendable {
    /// The budget in bytes.
    public let limit: Int

    private struct Ledger {
        var used = 0
        var peak = 0
        var evictions = 0
        var stores: [ObjectIdentifier: LoopFrameStore] = [:]
    }

    private let ledger = Mutex(Ledger())

    /// A budget of `limit` bytes (0 disables caching for every loop).
    public init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Bytes of cached frames held now.
    public var bytesInUse: Int { ledger.withLock { $0.used } }
    /// The most bytes ever held at once.
    public var peakBytes: Int { ledger.withLock { $0.peak } }
    /// Whole loop caches evicted so far to make room for another loop's frames.
    public var evictions: Int { ledger.withLock { $0.evictions } }

    /// Whether `bytes` more fit without evicting anything.
    func fitsWithoutEviction(_ bytes: Int) -> Bool {
        ledger.withLock { $0.used + bytes <= limit }
    }

    /// Appends `image` to `store` if its bytes fit, evicting other loops' caches (least recently used
    /// first) when `mayEvict`.
    ///
    /// - Returns: `false` when it does not fit (the store is left as it was).
    func append(_ image: RGBImage, to store: LoopFrameStore, mayEvict: Bool) -> Bool {
        let bytes = image.pixels.count
        return ledger.withLock { ledger in
            if ledger.used + bytes > limit {
                guard mayEvict else { return false }
                let victims = ledger.stores.values
                    .filter { $0 !== store && $0.bytes > 0 }
                    .sorted { $0.lastUse < $1.lastUse }
                // Evict only when evicting could make room at all.
                let reachable = victims.reduce(limit - ledger.used) { $0 + $1.bytes }
                guard reachable >= bytes else { return false }
                for victim in victims where ledger.used + bytes > limit {
                    ledger.used -= victim.evict(isEviction: true)
                    ledger.evictions += 1
                }
            }
            guard store.append(image) else { return false }
            ledger.stores[ObjectIdentifier(store)] = store
            ledger.used += bytes
            ledger.peak = max(ledger.peak, ledger.used)
            return true
        }
    }

    /// Empties `store` and forgets it (its loop ended, or gave up caching); it refuses frames until
    /// ``beginCaching(_:)``.
    func release(_ store: LoopFrameStore) {
        ledger.withLock { ledger in
            ledger.used -= store.evict(isEviction: false)
            ledger.stores[ObjectIdentifier(store)] = nil
        }
    }

    /// Lets an empty store take frames again (its loop starts caching a pass from its first frame).
    func beginCaching(_ store: LoopFrameStore) {
        ledger.withLock { ledger in
            ledger.used -= store.evict(isEviction: false)
            store.accept()
        }
    }
}

/// One loop's cached frames, in first-pass order. Written only through ``FrameCacheBudget``; read by
/// the loop's producer; emptied by the budget (eviction) from any thread.
///
/// Invariant: `state` holds the frames and their byte count; an evicted store stays empty until its
/// loop starts caching again.
final class LoopFrameStore: Sendable {
    private struct State {
        var images: [RGBImage] = []
        var bytes = 0
        var lastUse: UInt64 = 0
        var evictionCount = 0
        /// Set by an eviction or a release: frames appended after it would be out of place.
        var isRefusing = false
    }

    private let state = Mutex(State())
    /// A process-wide use counter: larger is more recent.
    private static let useClock = Atomic<UInt64>(0)

    /// Bytes held.
    var bytes: Int { state.withLock { $0.bytes } }
    /// Frames held.
    var count: Int { state.withLock { $0.images.count } }
    /// When a frame was last read or written (larger is more recent).
    var lastUse: UInt64 { state.withLock { $0.lastUse } }
    /// How many times the budget emptied this store.
    var evictionCount: Int { state.withLock { $0.evictionCount } }

    /// The frame at `position`, or `nil` when the store does not hold it (evicted).
    func image(at position: Int) -> RGBImage? {
        let tick = Self.useClock.add(1, ordering: .relaxed).newValue
        return state.withLock { state in
            guard position < state.images.count else { return nil }
            state.lastUse = tick
            return state.images[position]
        }
    }

    /// Called by the budget with its ledger locked; `false` when the store refuses frames.
    fileprivate func append(_ image: RGBImage) -> Bool {
        let tick = Self.useClock.add(1, ordering: .relaxed).newValue
        return state.withLock { state in
            guard !state.isRefusing else { return false }
            state.images.append(image)
            state.bytes += image.pixels.count
            state.lastUse = tick
            return true
        }
    }

    /// Takes frames again after an eviction. Called by the budget with its ledger locked.
    fileprivate func accept() {
        state.withLock { $0.isRefusing = false }
    }

    /// Whether the store holds every one of `count` frames (and was not emptied since).
    func isComplete(count: Int) -> Bool {
        state.withLock { !$0.isRefusing && $0.images.count == count }
    }

    /// Empties the store; returns the bytes freed. Called by the budget with its ledger locked.
    fileprivate func evict(isEviction: Bool) -> Int {
        state.withLock { state in
            let freed = state.bytes
            if freed > 0 && isEviction { state.evictionCount += 1 }
            state.isRefusing = true
            state.images = []
            state.bytes = 0
            return freed
        }
    }
}
