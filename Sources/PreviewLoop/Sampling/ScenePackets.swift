/// Where a shot may change, read from packet sizes alone: ``FrameSampler/sceneCuts(start:length:settings:)``
/// decodes a group of pictures only as far as its last candidate, and confirms each on pictures.
///
/// A frame at a hard cut cannot be predicted from the frame before it, so the encoder codes it mostly
/// intra, at several times the size of the predicted frames around it. The packets of each group of
/// pictures (keyframe to keyframe) are split, in decoding order, into anchors (a presentation time later
/// than every one before it since the keyframe: P-frames, the references B-frames lean on) and the
/// frames between them (B-frames); each kind is compared only with its own kind in its own group.
///
/// A packet's **ratio** is its size over the lower of two levels: the median size of the (up to)
/// ``window`` packets of its kind before it, and of the ones after it (a side with fewer than two
/// packets is left out; a packet with neither has no ratio). Taking the lower level lets both kinds of
/// cut stand out: into a busier shot (the cut frame dwarfs the calm frames before it) and into a calmer
/// one (it dwarfs the cheap frames after it, though not the old shot's). Temporal noise or fast motion
/// makes every predicted frame large, which lowers the ratio of both noise spikes and cuts; sizes
/// below ``floor(keyframeSizes:)`` count as that floor, so a static shot's 20-byte frames do not make
/// 200 bytes a spike.
///
/// A packet is a candidate when its ratio reaches the caller's minimum (``ScenePickSettings/packetRatio``,
/// 6), or when it **stands out in its group**: a ratio of at least ``standoutMinimum`` (3) and
/// ``standoutFactor`` (1.25) times the 90th percentile of the group's ratios. Noise makes the
/// percentile high (many frames 3–5× their neighbours), so a group of noisy frames needs the full
/// minimum; in a group of steady frames a cut of 4× (a simple picture cut into, at a small size) is
/// found.
///
/// A candidate anchor covers itself and the B-frames sent after it (shown before it: one of them may
/// hold the cut); a candidate B-frame covers itself.
enum ScenePackets {
    /// The most packets the search reads first (about 4.6 hours at 60 frames a second); beyond, the
    /// groups are searched without packets (decoded through).
    static let maxPackets = 1_000_000
    /// Packets of a kind on each side that set a packet's level.
    static let window = 8
    /// The lowest ratio that can stand out in its group.
    static let standoutMinimum = 3.0
    /// How far above its group's 90th percentile ratio a packet must be to stand out.
    static let standoutFactor = 1.25

    /// A stretch of frames that may hold a cut, and how much its packet stood out.
    struct Candidate: Hashable, Sendable {
        /// Presentation times (seconds) of the frames it covers.
        var times: ClosedRange<Double>
        /// The packet's size over its level.
        var ratio: Double
    }

    /// The lowest level a packet is compared with: 1/64 of the median keyframe packet.
    static func floor(keyframeSizes: [Double]) -> Double {
        keyframeSizes.isEmpty ? 0 : median(keyframeSizes) / 64
    }

    /// Every non-key packet of `packets` (in decoding order) whose ratio reaches `minimumRatio` or stands
    /// out in its group, in presentation order.
    static func candidates(_ packets: [PacketSummary], minimumRatio: Double) -> [Candidate] {
        guard minimumRatio > 0, !packets.isEmpty else { return [] }
        let floor = floor(keyframeSizes: packets.filter(\.isKeyframe).map { Double($0.size) })
        // Each kind in decoding order: (packet index, group, the earliest time of the frames it covers:
        // an anchor's own, or that of the B-frames sent after it, which are shown before it).
        var kinds: [[(index: Int, group: Int, first: Double)]] = [[], []]
        var group = 0, latest = -Double.infinity
        var lastAnchor: Int?
        for (index, packet) in packets.enumerated() {
            if packet.isKeyframe {
                group += 1
                latest = packet.time
                lastAnchor = nil
                continue
            }
            if packet.time > latest {
                kinds[0].append((index, group, packet.time))
                lastAnchor = kinds[0].count - 1
                latest = packet.time
            } else {
                kinds[1].append((index, group, packet.time))
                if let lastAnchor { kinds[0][lastAnchor].first = min(kinds[0][lastAnchor].first, packet.time) }
            }
        }
        // Every packet's ratio and the frames it covers, with its group.
        var rated: [(group: Int, candidate: Candidate)] = []
        for entries in kinds {
            for (position, entry) in entries.enumerated() {
                var before: [Double] = []
                var earlier = position - 1
                while before.count < window, earlier >= 0, entries[earlier].group == entry.group {
                    before.append(Double(packets[entries[earlier].index].size))
                    earlier -= 1
                }
                var after: [Double] = []
                var later = position + 1
                while after.count < window, later < entries.count, entries[later].group == entry.group {
                    after.append(Double(packets[entries[later].index].size))
                    later += 1
                }
                let levels = [before, after].filter { $0.count >= 2 }.map(median)
                guard let level = levels.min() else { continue }
                let ratio = Double(packets[entry.index].size) / max(level, floor, 1)
                let time = packets[entry.index].time
                rated.append((entry.group, Candidate(times: min(entry.first, time)...time, ratio: ratio)))
            }
        }
        // Each group's 90th percentile ratio.
        var ratiosByGroup: [Int: [Double]] = [:]
        for entry in rated { ratiosByGroup[entry.group, default: []].append(entry.candidate.ratio) }
        let percentile = ratiosByGroup.mapValues { ratios -> Double in
            let sorted = ratios.sorted()
            return sorted[min(sorted.count - 1, max(0, Int((0.9 * Double(sorted.count)).rounded(.up)) - 1))]
        }
        let found = rated.filter { entry in
            let ratio = entry.candidate.ratio
            return ratio >= minimumRatio
                || (ratio >= standoutMinimum && ratio >= standoutFactor * (percentile[entry.group] ?? .infinity))
        }.map(\.candidate)
        return found.sorted {
            ($0.times.lowerBound, $0.times.upperBound) < ($1.times.lowerBound, $1.times.upperBound)
        }
    }

    /// Whether the keyframe starting the group `from...to` (keyframe times) came before the stream's
    /// regular interval: shorter than 90 % of the longest interval between `keyframeTimes` (the whole
    /// input's index, at least 3 keyframes). Encoders start a group early at a scene cut (x264 and x265
    /// by default); one at the regular interval says nothing.
    static func groupEndsEarly(from: Double, to: Double, keyframeTimes: [Double]) -> Bool {
        guard keyframeTimes.count >= 3 else { return false }
        let longest = zip(keyframeTimes.dropFirst(), keyframeTimes).map { $0 - $1 }.max() ?? 0
        return to - from < 0.9 * longest
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
