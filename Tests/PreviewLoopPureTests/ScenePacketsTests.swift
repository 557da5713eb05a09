import Testing
@testable import PreviewLoop

/// `ScenePackets`: cut candidates from packet sizes alone, on packet lists written out here in decoding
/// order, and the early-keyframe rule.
@Suite("Scene picks: packet candidates")
struct ScenePacketsTests {
    /// 25 fps packets in decoding order: `sizes[i]` is frame i in display order, a keyframe every `gop`
    /// frames (frame 0 of each group); with `bFrames`, that many B-frames sit between anchors (each
    /// anchor is sent before the B-frames shown before it).
    static func packets(_ sizes: [Int], gop: Int, bFrames: Int = 0) -> [PacketSummary] {
        func packet(_ index: Int, key: Bool = false) -> PacketSummary {
            PacketSummary(time: Double(index) * 0.04, size: sizes[index], isKeyframe: key)
        }
        var result: [PacketSummary] = []
        var start = 0
        while start < sizes.count {
            let end = min(sizes.count, start + gop)
            result.append(packet(start, key: true))
            var previous = start
            while previous + 1 < end {
                let anchor = min(previous + bFrames + 1, end - 1)
                result.append(packet(anchor))
                for between in (previous + 1)..<anchor { result.append(packet(between)) }
                previous = anchor
            }
            start = end
        }
        return result
    }

    /// Steady predicted frames of about `level` bytes, wobbling by up to ±30 % in a fixed pattern.
    static func steady(_ count: Int, level: Int) -> [Int] {
        (0..<count).map { level + level * [0, 3, -2, 1, -3, 2, -1, 3, 0, -2][$0 % 10] / 10 }
    }

    /// The display frames covered by the candidates of `sizes` (see ``packets(_:gop:bFrames:)``) at the
    /// default minimum ratio, 6.
    static func candidateFrames(_ sizes: [Int], gop: Int = 250, bFrames: Int = 0) -> [ClosedRange<Int>] {
        frames(ScenePackets.candidates(packets(sizes, gop: gop, bFrames: bFrames), minimumRatio: 6))
    }

    /// The display frames (at 25 fps) the candidates cover.
    static func frames(_ candidates: [ScenePackets.Candidate]) -> [ClosedRange<Int>] {
        candidates.map { Int(($0.times.lowerBound / 0.04).rounded(.up))...Int(($0.times.upperBound / 0.04).rounded()) }
    }

    @Test("A cut into a busier shot and one into a calmer shot stand out; steady frames do not")
    func spikesAndDrops() {
        // Frames 0–59 calm (2 kB), a cut at 60 (an intra-coded 30 kB frame), busy (20 kB) to 119, a cut at
        // 120 (25 kB) into a calm shot again; one group of pictures.
        var sizes = [60_000] + Self.steady(59, level: 2_000)
        sizes += [30_000] + Self.steady(59, level: 20_000)
        sizes += [25_000] + Self.steady(59, level: 2_000)
        let found = Self.candidateFrames(sizes)
        // The cut at 120 is no larger than the busy frames before it, but 12× the calm ones after. Next to
        // a cut, frames of the busier shot stand out against the calm side of their windows too: the
        // first ones after 60, the last ones before 120. Nothing further away does.
        #expect(found.contains(60...60))
        #expect(found.contains(120...120))
        #expect(found.allSatisfy { (60...64).contains($0.upperBound) || (112...120).contains($0.upperBound) }, "\(found)")
    }

    @Test("Under the minimum ratio, a packet is a candidate only when it stands out in its group")
    func standingOut() {
        // A steady group with one packet 4× its neighbours (a cut into a simple picture): it stands out.
        var steady = [60_000] + Self.steady(99, level: 2_000)
        steady[50] = 8_000
        #expect(Self.candidateFrames(steady) == [50...50])
        // A noisy group where every 5th packet is 3.5–4.5× its neighbours: the same 4× packet is noise there.
        var noisy = [60_000] + Array(repeating: 2_000, count: 99)
        for index in stride(from: 3, to: 100, by: 5) { noisy[index] = 7_000 + 500 * (index % 5 == 3 ? index % 3 : 0) }
        noisy[50] = 8_000
        #expect(Self.candidateFrames(noisy).isEmpty)
        // ... and one of 7× reaches the minimum there.
        noisy[50] = 14_000
        #expect(Self.candidateFrames(noisy) == [50...50])
    }

    @Test("With B-frames: an anchor covers the B-frames shown before it; B-frames are compared with B-frames")
    func anchorsAndBFrames() {
        // Anchors (P) of 4 kB and B-frames of 1 kB, 2 B-frames between anchors; a cut on a B-frame at 61
        // makes the next anchor (63) intra-heavy and the B-frames after the cut reach for it.
        var sizes = [60_000]
        for index in 1..<120 { sizes.append(index % 3 == 0 ? 4_000 : 1_000) }
        sizes[63] = 40_000
        sizes[61] = 9_000
        let found = Self.candidateFrames(sizes, bFrames: 2)
        // The anchor covers 61...63 (the B-frames shown before it); the B-frame at 61 on its own. The
        // anchors' 4 kB never count as spikes against the B-frames' 1 kB.
        #expect(found == [61...61, 61...63], "\(found)")
    }

    @Test("Groups of pictures are judged apart; a static shot's tiny packets are held to a floor")
    func groupsAndFloor() {
        // Group 1 (frames 0–49): busy 20 kB; group 2 (50–99): calm 1 kB. No cut inside either: the change
        // of level at the keyframe is not a candidate.
        let sizes = [80_000] + Self.steady(49, level: 20_000) + [80_000] + Self.steady(49, level: 1_000)
        #expect(Self.candidateFrames(sizes, gop: 50).isEmpty)
        // A still shot of 20-byte frames with a 600-byte one: 30× the level, but under the floor (1/64 of
        // the 64 kB keyframe = 1 kB) it is not a candidate; a 7 kB frame is.
        var still = [64_000] + Array(repeating: 20, count: 99)
        still[40] = 600
        #expect(Self.candidateFrames(still).isEmpty)
        still[40] = 7_000
        #expect(Self.candidateFrames(still) == [40...40])
    }

    @Test("A keyframe is early when its group is shorter than 90 % of the longest interval of the index")
    func earlyKeyframes() {
        let index = [0.0, 10.0, 13.7, 18.0, 28.0, 30.0]
        #expect(ScenePackets.groupEndsEarly(from: 10.0, to: 13.7, keyframeTimes: index))
        #expect(ScenePackets.groupEndsEarly(from: 28.0, to: 30.0, keyframeTimes: index))
        #expect(!ScenePackets.groupEndsEarly(from: 0.0, to: 10.0, keyframeTimes: index))
        #expect(!ScenePackets.groupEndsEarly(from: 18.0, to: 28.0, keyframeTimes: index))
        #expect(!ScenePackets.groupEndsEarly(from: 18.0, to: 27.5, keyframeTimes: index))
        // Two keyframes say nothing about a regular interval.
        #expect(!ScenePackets.groupEndsEarly(from: 0.0, to: 2.0, keyframeTimes: [0.0, 2.0]))
    }
}
