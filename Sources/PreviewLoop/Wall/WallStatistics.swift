/// Lateness percentiles and the counters of one loop of a ``PreviewWall``, or of all of them.
public struct WallLoopStatistics: Sendable, Hashable {
    /// Frames handed to `onFrame`.
    public var framesPresented = 0
    /// Frames skipped because they would have been shown more than one frame interval late (realtime).
    public var framesDropped = 0
    /// Frames left out on purpose by a reduced frame rate (every n-th frame shown); not drops.
    public var framesSkippedByRate = 0
    /// Frames decoded (first pass, and every pass decoded again after an eviction).
    public var framesDecoded = 0
    /// Frames decoded again for a pass after the first, because the loop's cache was evicted or its
    /// window did not fit; 0 when every later pass replays the cache.
    public var framesDecodedAgain = 0
    /// Coded pictures decoded only to reach a window's first frame: from the keyframe before the
    /// window start, the frames before it (a clip cut without re-encoding carries its GOP's earlier
    /// frames, marked discard, as such a pre-roll). Paid by every pass that decodes, not by replays.
    public var preRollPictures = 0
    /// Frames replayed from the frame cache.
    public var framesReplayed = 0
    /// Passes completed.
    public var passesCompleted = 0
    /// Time spent reading and decoding.
    public var decodeTime = Duration.zero
    /// Time spent converting (crop, scale, colour) decoded frames.
    public var conversionTime = Duration.zero
    /// Lateness of presented frames against their due times, in milliseconds (realtime clock only):
    /// 50th, 95th and 99th percentiles (nearest rank, to 0.1 ms; 250 ms and more are counted as 250)
    /// and the exact maximum. `nil` before the first realtime frame.
    public var lateness: LatenessPercentiles?
    /// Bytes of this loop's frames in the shared cache now (the wall's total for the total).
    public var cacheBytes = 0
    /// How often the shared budget evicted this loop's cache.
    public var cacheEvictions = 0

    /// Creates empty statistics.
    public init() {}
}

/// Lateness percentiles in milliseconds.
public struct LatenessPercentiles: Sendable, Hashable {
    /// Median.
    public var p50: Double
    /// 95th percentile.
    public var p95: Double
    /// 99th percentile.
    public var p99: Double
    /// The largest lateness seen.
    public var maximum: Double
}

/// The wall as a whole: its loops' counters added up, the budget and the pool.
public struct WallStatistics: Sendable, Hashable {
    /// Loops running now.
    public var activeLoops: Int
    /// Every loop's counters added up (lateness over all their frames); `cacheBytes` is the budget's use.
    public var total: WallLoopStatistics
    /// The shared frame-cache budget, bytes.
    public var cacheLimit: Int
    /// The most bytes the cache ever held at once (never above `cacheLimit`).
    public var cachePeakBytes: Int
    /// Whole loop caches evicted to make room.
    public var cacheEvictions: Int
    /// Decode workers in the pool (the wall's threads are these plus one presenter).
    public var workers: Int
}

/// Counts lateness in 0.1 ms buckets up to 250 ms, for percentiles without keeping every value.
struct LatenessHistogram: Sendable, Hashable {
    static let bucketCount = 2500
    private(set) var buckets = [UInt32](repeating: 0, count: bucketCount + 1)
    private(set) var count = 0
    private(set) var maximum = 0.0

    mutating func add(milliseconds: Double) {
        let bucket = min(Self.bucketCount, max(0, Int((milliseconds * 10).rounded(.down))))
        buckets[bucket] &+= 1
        count += 1
        maximum = max(maximum, milliseconds)
    }

    mutating func merge(_ other: LatenessHistogram) {
        guard other.count > 0 else { return }
        for index in buckets.indices { buckets[index] &+= other.buckets[index] }
        count += other.count
        maximum = max(maximum, other.maximum)
    }

    /// Nearest-rank percentiles, each the upper edge of its bucket (capped by the exact maximum).
    var percentiles: LatenessPercentiles? {
        guard count > 0 else { return nil }
        func rank(_ q: Double) -> Double {
            let target = max(1, Int((q * Double(count)).rounded(.up)))
            var seen = 0
            for (index, value) in buckets.enumerated() {
                seen += Int(value)
                if seen >= target { return min(maximum, Double(index + 1) / 10) }
            }
            return maximum
        }
        return LatenessPercentiles(p50: rank(0.50), p95: rank(0.95), p99: rank(0.99), maximum: maximum)
    }
}
