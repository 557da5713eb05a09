/// For an input read in byte ranges: the key packets that planned keyframe samples will read (from the
/// container's index), in time order, and which of them the last prefetch fetched, so that the reads
/// go out several at once, in batches ahead of the seeks, instead of one round trip per seek.
struct KeyframeReadPlan {
    /// The read-ahead past a key packet that its read fetches (the demuxer's I/O buffer).
    static let keyPacketSlack = 64 << 10

    private var packets: [(time: Double, offset: Int64, size: Int)] = []
    private var prefetched = 0..<0

    /// No plan: nothing is prefetched.
    init() {}

    /// The key packet at or before each of `times`, among the index's `indexedPackets` (in time order).
    init(times: [Double], indexedPackets: [(time: Double, offset: Int64, size: Int)]) {
        var chosen = Set<Int>()
        for time in times {
            if let last = indexedPackets.lastIndex(where: { $0.time <= time + 1e-6 }) { chosen.insert(last) }
        }
        packets = chosen.sorted().map { indexedPackets[$0] }
    }

    /// Before a seek to the keyframe at or before `seconds`: when its planned key packet is not among
    /// those last prefetched, prefetches the next batch of the plan from it through `bytes`.
    mutating func prefetch(atOrBefore seconds: Double, from bytes: any RangedBytes) {
        guard let needed = packets.lastIndex(where: { $0.time <= seconds + 1e-6 }), !prefetched.contains(needed) else { return }
        let ranges = packets[needed...].map { (offset: $0.offset, count: $0.size + Self.keyPacketSlack) }
        prefetched = needed..<(needed + max(1, bytes.prefetch(ranges)))
    }
}
