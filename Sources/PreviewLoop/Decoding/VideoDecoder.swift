internal import PreviewLoopFFmpeg

/// One video packet as the demuxer gives it, nothing decoded (``VideoDecoder/packetSummaries(from:to:limit:)``):
/// what the scene search reads first.
struct PacketSummary: Hashable, Sendable {
    /// Presentation time (else decoding time), seconds from the stream's start.
    var time: Double
    /// Bytes of coded picture.
    var size: Int
    var isKeyframe: Bool
}

/// Packets in, frames out, for one input's best video stream: decodes forward, seeks, positions on
/// the frame displayed at a time, and samples keyframes without decoding anything else.
///
/// Owns its input and codec; use from one thread at a time.
final class VideoDecoder {
    private(set) var input: MediaInput
    private let codec: CodecContext
    private let packet: Packet
    let interrupter: Interrupter
    private var isDraining = false
    private var pushedBack: [TimedFrame] = []
    private var lastTime: Double?
    /// Whether any packet was read since opening (a pipe can only be rewound before that).
    private(set) var hasRead = false
    /// Packets of other streams the demuxer still returned (none: they are discarded at the demuxer).
    private(set) var packetsOfOtherStreams = 0
    /// Frames the decoder has produced since opening (a frame handed back and taken again counts once).
    private(set) var decodedFrameCount = 0
    /// Coded pictures shown before the time being positioned on, sent to the decoder while
    /// positioning since opening: the pre-roll from the keyframe before it (in a clip cut without
    /// re-encoding, the GOP's earlier frames FFmpeg marks discard and never shows).
    private(set) var preRollPacketCount = 0
    /// The nominal time between frames, in seconds.
    let frameInterval: Double
    private let clock = ContinuousClock()
    /// While positioning on a later time: that time (frames shown long before it may be skipped).
    private var decodingToward: Double?
    /// When set: which presentation times are wanted while decoding forward (and, while positioning,
    /// after the frames well before the target). A frame at another time is skipped when no other
    /// frame refers to it (`AVDISCARD_NONREF`), so every frame still decoded is exact; `nil` decodes
    /// everything.
    var wantedTimes: ((Double) -> Bool)? {
        didSet { if wantedTimes == nil { codec.skipsNonReferenceFrames = false } }
    }
    /// The time of the first frame decoded from the start of the input, once seen.
    private var firstFrameTime: Double?
    private var reopenedForStart = false
    /// The presentation times of the index's keyframes decoded by ``indexedKeyframe(in:)``, by entry.
    private var shownKeyframeTimes: [Int: Double] = [:]
    private lazy var keyframeIndex: [Double] = {
        let times = input.indexedKeyframeTimes()
        // Matroska and WebM write their cues (the index) after the clusters by default, and FFmpeg's
        // demuxer reads them at its first seek; before anything is read, a seek to the start loads them
        // at the cost of one read at the end of the file, and the first packet read is the same. (Until
        // then the index holds only the keyframes read so far.)
        guard !hasRead, input.isSeekable, input.format.defersIndexToFirstSeek else { return times }
        let start = input.timestamp(fromSeconds: 0)
        guard (try? ffmpeg({ () throws(FFmpegFailure) in try input.format.seek(streamIndex: input.streamIndex, to: start) })) != nil else {
            return times
        }
        return input.indexedKeyframeTimes()
    }()
    /// For an input read in byte ranges: the key packets planned keyframe samples read.
    private var keyframeReadPlan = KeyframeReadPlan()
    /// A reference to the last frame ``nextFrame()`` produced since the last seek, while the frames are
    /// ones the deinterlacer will take: the next frame's ``DecodedFrame/predecessor``.
    private var lastDecoded: DecodedFrame?

    /// Opens `source` and its video decoder with `threads` threads.
    init(source: Source, options: SourceOptions = .init(), threads: Int, interrupter: Interrupter = .forCurrentCall()) throws(PreviewLoopError) {
        self.interrupter = interrupter
        let input = try MediaInput(source: source, options: options, interrupter: interrupter)
        self.input = input
        codec = try input.openDecoder(threads: threads)
        packet = try ffmpeg { () throws(FFmpegFailure) in try Packet() }
        frameInterval = input.info.frameInterval
    }

    var info: VideoInfo { input.info }

    /// Whether deblocking is skipped (for the scene search's small pictures); off by default.
    var skipsLoopFilter: Bool {
        get { codec.skipsLoopFilter }
        set { codec.skipsLoopFilter = newValue }
    }

    /// The next frame in presentation order, or `nil` at the end of the stream.
    func nextFrame() throws(PreviewLoopError) -> TimedFrame? {
        if !pushedBack.isEmpty { return pushedBack.removeLast() }
        let started = clock.now
        let frame = try ffmpeg { () throws(FFmpegFailure) in try DecodedFrame() }
        while true {
            if interrupter.isCancelled { throw PreviewLoopError(.cancelled, "\(input.source): cancelled") }
            let outcome: DecodeOutcome
            do {
                outcome = try ffmpeg { () throws(FFmpegFailure) in try codec.receive(into: frame) }
            } catch where error.ffmpegCode == FFmpegError.invalidData {
                continue                      // concealed damage: the decoder goes on with the next frame
            }
            switch outcome {
            case .frame:
                try keepAsPredecessor(frame)
                let previous = lastTime
                let result = timed(frame, decodeTime: clock.now - started)
                try checkTiming(result, previous: previous)
                return result
            case .endOfStream:
                return nil
            case .needsInput:
                try feedPacket()
            }
        }
    }

    /// The stream's nominal frame duration in its time base (0 when unknown).
    var nominalFrameTicks: Int64 {
        input.timeBase > 0 && frameInterval > 0 ? Int64((frameInterval / input.timeBase).rounded()) : 0
    }

    /// Gives `frame` the previous decoded frame as its predecessor and keeps a reference to it for the
    /// next, when the deinterlacer will take it (the motion evidence of consecutive decoding, also for
    /// a still decoded forward from a keyframe); otherwise keeps nothing.
    private func keepAsPredecessor(_ frame: DecodedFrame) throws(PreviewLoopError) {
        let deinterlacing = input.options.deinterlacing
        guard deinterlacing != .off,
              FieldDeinterlacer.isInterlaced(frame, selection: deinterlacing == .on ? .every : .flagged,
                                             declaredTopFieldFirst: info.declaredTopFieldFirst) else {
            lastDecoded = nil
            return
        }
        frame.predecessor = lastDecoded
        lastDecoded = try ffmpeg { () throws(FFmpegFailure) in try DecodedFrame(referencing: frame) }
    }

    /// Hands a frame back so the next ``nextFrame()`` returns it again.
    func pushBack(_ frame: TimedFrame) { pushedBack.append(frame) }

    /// Reads packets until one of the video stream is sent to the decoder (or the input ends).
    private func feedPacket() throws(PreviewLoopError) {
        guard !isDraining else { return }
        while true {
            let hasPacket = try input.nextVideoPacket(into: packet, interrupter: interrupter, skipped: &packetsOfOtherStreams)
            hasRead = true
            guard hasPacket else {
                isDraining = true
                _ = try ffmpeg { () throws(FFmpegFailure) in try codec.send(nil) }
                return
            }
            if codec.keyframesOnly && !packet.isKeyframe { continue }
            // Frames shown well before a target positioned on are not wanted, nor (when set) frames at
            // times ``wantedTimes`` does not want; unreferenced ones need no decoding.
            if let time = packet.presentationTimestamp.map({ input.seconds(fromTimestamp: $0) }) {
                if let target = decodingToward, time < target - 2 * frameInterval {
                    codec.skipsNonReferenceFrames = true
                } else if let wantedTimes {
                    codec.skipsNonReferenceFrames = !wantedTimes(time)
                } else if decodingToward != nil {
                    codec.skipsNonReferenceFrames = false
                }
            } else if decodingToward != nil || wantedTimes != nil {
                codec.skipsNonReferenceFrames = false
            }
            do {
                if try ffmpeg({ () throws(FFmpegFailure) in try codec.send(packet) }) {
                    if let target = decodingToward, let stamp = packet.presentationTimestamp,
                       input.seconds(fromTimestamp: stamp) < target - frameInterval / 2 {
                        preRollPacketCount += 1
                    }
                    return
                }
            } catch where error.ffmpegCode != nil && !interrupter.isCancelled {
                continue                      // a damaged packet: skip it, keep the stream
            }
            return
        }
    }

    private func timed(_ frame: DecodedFrame, decodeTime: Duration) -> TimedFrame {
        decodedFrameCount += 1
        let stamp = frame.bestEffortTimestamp
        var time: Double
        if let stamp {
            time = input.seconds(fromTimestamp: stamp)
        } else if let lastTime {
            time = lastTime + frameInterval
        } else {
            time = 0
        }
        if let lastTime, time <= lastTime - 1e-9, stamp == nil { time = lastTime + frameInterval }
        lastTime = time
        let ticks = frame.duration
        let duration = ticks > 0 ? Double(ticks) * input.timeBase : frameInterval
        return TimedFrame(frame: frame, time: time, duration: duration, isKeyframe: frame.isKeyframe, decodeTime: decodeTime)
    }

    /// ``TimingRule``: a frame far outside the declared extent, or after a gap above the bound, is corrupt
    /// timing, not a reason to stretch a window or an output across it.
    private func checkTiming(_ frame: TimedFrame, previous: Double?) throws(PreviewLoopError) {
        let bound = TimingRule.maxGap
        let end = info.duration ?? .infinity
        if !frame.time.isFinite || frame.time < -bound || frame.time > end + bound {
            throw PreviewLoopError(.corruptData, "\(input.source): corrupt timing: a frame at \(DecimalText.fixed(frame.time, 3)) s lies "
                + "more than \(Int(bound)) s outside the stream's declared extent (0 to \(info.duration.map { DecimalText.fixed($0, 3) } ?? "unknown") s)")
        }
        if let previous, frame.time - previous > bound {
            throw PreviewLoopError(.corruptData, "\(input.source): corrupt timing: a gap of \(DecimalText.fixed(frame.time - previous, 3)) s "
                + "between frames at \(DecimalText.fixed(previous, 3)) s and \(DecimalText.fixed(frame.time, 3)) s (at most \(Int(bound)) s is allowed)")
        }
    }

    /// Seeks so that decoding resumes at the keyframe at or before `seconds`; flushes the decoder.
    ///
    /// When the input cannot seek (a pipe, some raw streams) it is reopened and read from the start.
    func seek(to seconds: Double) throws(PreviewLoopError) {
        pushedBack.removeAll()
        lastTime = nil
        lastDecoded = nil
        isDraining = false
        codec.flush()
        if seconds <= 0 && !hasRead { return }
        guard input.isSeekable else {
            // A server without byte ranges is read again from the start; a pipe cannot be.
            if case .standardInput = input.source {
                throw PreviewLoopError(.invalidArgument, "\(input.source): cannot be rewound (a pipe is read forward only); "
                                       + "loop a window whose frames fit the frame cache, or sample times in increasing order")
            }
            try reopen()
            return
        }
        do {
            if seconds <= 0 && input.format.canSeekToFirstByte {
                // Back to the very start: byte 0 is exact where timestamp seeks on formats without an
                // index (MPEG-TS) may land a keyframe or more late.
                try ffmpeg { () throws(FFmpegFailure) in try input.format.seekToFirstByte() }
            } else {
                try ffmpeg { () throws(FFmpegFailure) in try input.format.seek(streamIndex: input.streamIndex, to: input.timestamp(fromSeconds: seconds)) }
            }
        } catch where error.code != .cancelled {
            try reopen()
        }
    }

    /// Reopens the input from the start (for inputs that cannot seek).
    private func reopen() throws(PreviewLoopError) {
        input = try MediaInput(source: input.source, options: input.options, interrupter: interrupter)
        hasRead = false
    }

    /// Positions the decoder on the frame displayed at `seconds`: returns the last frame whose time is
    /// at or before it (or the first frame, when the stream starts later); decoding continues after it.
    ///
    /// - Parameter allowForward: continue decoding from the current position instead of seeking when
    ///   no keyframe lies between it and `seconds` (sampling several times in one pass).
    func frameDisplayed(at seconds: Double, current: TimedFrame? = nil) throws(PreviewLoopError) -> TimedFrame? {
        codec.keyframesOnly = false
        decodingToward = seconds
        defer {
            decodingToward = nil
            codec.skipsNonReferenceFrames = false
        }
        var held: TimedFrame?
        if let current, current.time <= seconds, !keyframeExists(after: current.time, upTo: seconds) || !input.isSeekable {
            held = current
        } else if !input.isSeekable && !hasRead {
            // A pipe is read forward from where it is.
            guard let first = try nextFrame() else { return nil }
            held = first
        } else {
            var backoff = 0.0
            while true {
                let target = max(0, seconds - backoff)
                try seek(to: target)
                guard let first = try nextFrame() else {
                    if target <= 0 { return nil }
                    backoff = backoff == 0 ? 1 : backoff * 2       // seeked past the end: back off
                    continue
                }
                if first.time > seconds + 1e-6 && target > 0 {
                    // The demuxer landed after the wanted time (inexact seek): go back further.
                    backoff = backoff == 0 ? 1 : backoff * 2
                    continue
                }
                if target <= 0, let firstFrameTime, first.time > firstFrameTime + 1e-6, !reopenedForStart {
                    // Even a seek to the start landed late: read from a freshly opened input.
                    reopenedForStart = true
                    try reopen()
                    continue
                }
                if target <= 0 && firstFrameTime == nil { firstFrameTime = first.time }
                held = first
                break
            }
        }
        while let next = try nextFrame() {
            if next.time > seconds + 1e-6 {
                pushBack(next)
                break
            }
            held = next
        }
        return held
    }

    /// Whether the container's index lists a keyframe in (`start`, `end`]; without an index, whether
    /// the gap is more than a second (then a seek is likely cheaper than decoding through). Index
    /// times are decode times, a few frames early: this only chooses between seeking and decoding on.
    private func keyframeExists(after start: Double, upTo end: Double) -> Bool {
        guard !keyframeIndex.isEmpty else { return end - start > 1.0 }
        return keyframeIndex.contains { $0 > start + 1e-6 && $0 <= end + 1e-6 }
    }

    /// The time of the keyframe at or before `seconds`, found by demuxing without decoding.
    func keyframeTime(atOrBefore seconds: Double) throws(PreviewLoopError) -> Double? {
        try keyPacket(atOrBefore: seconds)?.time
    }

    /// The decode time of the first keyframe the container's index lists that may be displayed in
    /// `range`; `nil` without an index or such a keyframe. Index times are decode times, up to a few
    /// frames (the reordering delay) before presentation times, so entries that much early count.
    func indexedKeyframeTime(in range: ClosedRange<Double>) -> Double? {
        indexedKeyframeEntry(in: range).map { keyframeIndex[$0] }
    }

    private func indexedKeyframeEntry(in range: ClosedRange<Double>) -> Int? {
        let early = range.lowerBound - 4 * frameInterval - 1e-6
        guard var entry = keyframeIndex.firstIndex(where: { $0 >= early }) else { return nil }
        // Keyframes already decoded once are known to be displayed too early: not decoded again.
        while entry < keyframeIndex.count, let shown = shownKeyframeTimes[entry], shown < range.lowerBound - 1e-6 {
            entry += 1
        }
        guard entry < keyframeIndex.count, keyframeIndex[entry] <= range.upperBound + 1e-6 else { return nil }
        return entry
    }

    /// Decodes only the first keyframe the container's index lists that is displayed in `range` (no
    /// other frame is decoded, except a keyframe before it that turned out to be displayed too early);
    /// `nil` without an index or such a keyframe. Decoding then resumes wherever the next read seeks to.
    func indexedKeyframe(in range: ClosedRange<Double>) throws(PreviewLoopError) -> TimedFrame? {
        guard var entry = indexedKeyframeEntry(in: range) else { return nil }
        while entry < keyframeIndex.count, keyframeIndex[entry] <= range.upperBound + 1e-6 {
            let time = keyframeIndex[entry]
            // Past its presentation time, short of the next keyframe: `keyframe(atOrBefore:)` lands on this one.
            let following = entry + 1 < keyframeIndex.count ? keyframeIndex[entry + 1] : time + 1
            guard let frame = try keyframe(atOrBefore: time + min(0.5, (following - time) / 2)) else { return nil }
            shownKeyframeTimes[entry] = frame.time
            if frame.time >= range.lowerBound - 1e-6 { return frame.time <= range.upperBound + 1e-6 ? frame : nil }
            entry += 1
        }
        return nil
    }

    /// Decodes only the nearest keyframe at or before `seconds` (no other frame is decoded).
    func keyframe(atOrBefore seconds: Double) throws(PreviewLoopError) -> TimedFrame? {
        var result: TimedFrame?
        try keyframes(atOrBefore: [seconds]) { _, frame in result = frame }
        return result
    }

    /// The nearest keyframe at or before each time, decoding nothing else; `deliver` gets each
    /// time's index and frame as soon as it is decoded (so only a few frames are alive at once).
    ///
    /// The times are visited in increasing order; each one's key packet is found by demuxing alone and
    /// decoded on its own (drained and flushed), in groups of ``keyframeGroupSize``. A time before the
    /// first keyframe gets the frame displayed first.
    func keyframes(atOrBefore times: [Double],
                   deliver: (Int, TimedFrame) throws(PreviewLoopError) -> Void) throws(PreviewLoopError) {
        let groupSize = Self.keyframeGroupSize
        // Pending key packets, each with the indices of the times it answers.
        var group: [(packet: Packet, time: Double, indices: [Int])] = []
        var answered = Set<Int>()
        func decodeGroup() throws(PreviewLoopError) {
            guard !group.isEmpty else { return }
            let pending = group
            group = []
            try decodeAlone(pending.map(\.packet)) { (position: Int, frame: TimedFrame) throws(PreviewLoopError) in
                // Independent keyframes come out in the order they went in; times confirm it.
                let wanted = pending.firstIndex { abs($0.time - frame.time) < 1e-6 } ?? position
                guard wanted < pending.count else { return }
                for index in pending[wanted].indices { try deliver(index, frame) }
                answered.formUnion(pending[wanted].indices)
            }
        }
        for index in times.indices.sorted(by: { times[$0] < times[$1] }) {
            guard let found = try keyPacket(atOrBefore: times[index]) else { continue }
            // Times in increasing order find keyframes in increasing order: a repeat is the last one.
            if let last = group.last, abs(last.time - found.time) < 1e-9 {
                group[group.count - 1].indices.append(index)
                continue
            }
            if group.count == groupSize { try decodeGroup() }
            group.append((found.packet, found.time, [index]))
        }
        try decodeGroup()
        for index in times.indices where !answered.contains(index) {
            // Nothing at or before the time (or it failed to decode): the frame displayed then.
            if let frame = try frameDisplayed(at: max(0, times[index])) { try deliver(index, frame) }
        }
    }

    /// How many key packets go to the decoder back to back before it is drained: 1.
    ///
    /// Keyframes are independent pictures, so a frame-threaded decoder can decode two at once, at the
    /// cost of a second busy decoder context. Measured on 10 keyframes of a 60 s 1080p H.264 clip with
    /// 2 threads: two at a time 0.28 s and 67 MB peak, one at a time 0.37 s and 62 MB (one thread: 59
    /// MB) — still far faster than ten ffmpegthumbnailer runs (2.0 s), and under their 64 MB peak,
    /// which matters more to a server making thousands of strips at once. (Gathering all ten packets
    /// first peaked at 82 MB.)
    static let keyframeGroupSize = 1

    /// The video packets from the keyframe at or before `start` up to the first keyframe after `end` (or
    /// the input's end), in decoding order, read by the demuxer alone (nothing is decoded); `nil` when
    /// there are more than `limit`. The decoder must seek before it decodes again.
    func packetSummaries(from start: Double, to end: Double, limit: Int) throws(PreviewLoopError) -> [PacketSummary]? {
        try seek(to: start)
        var result: [PacketSummary] = []
        while true {
            if interrupter.isCancelled { throw PreviewLoopError(.cancelled, "\(input.source): cancelled") }
            let hasPacket = try input.nextVideoPacket(into: packet, interrupter: interrupter, skipped: &packetsOfOtherStreams)
            hasRead = true
            guard hasPacket else { break }
            let time = packet.timestamp.map { input.seconds(fromTimestamp: $0) } ?? (result.last?.time ?? start)
            if packet.isKeyframe, time > end + 1e-6 { break }
            guard result.count < limit else { return nil }
            result.append(PacketSummary(time: time, size: packet.size, isKeyframe: packet.isKeyframe))
        }
        return result
    }

    /// Notes the times whose keyframes are about to be read (keyframe samples), so that an input read
    /// in byte ranges fetches their key packets several at once (``KeyframeReadPlan``). Nothing for any
    /// other input, or one whose index gives no packet positions.
    func planKeyframeReads(atOrBefore times: [Double]) {
        keyframeReadPlan = input.isSeekable ? KeyframeReadPlan(times: times, indexedPackets: input.indexedKeyframePackets()) : KeyframeReadPlan()
    }

    /// Demuxes (without decoding) to the last key packet of the stream at or before `seconds`.
    private func keyPacket(atOrBefore seconds: Double) throws(PreviewLoopError) -> (packet: Packet, time: Double)? {
        if let bytes = input.rangedBytes { keyframeReadPlan.prefetch(atOrBefore: seconds, from: bytes) }
        var backoff = 0.0
        while true {
            let target = max(0, seconds - backoff)
            try seek(to: target)
            var chosen: (packet: Packet, time: Double)?
            while true {
                let hasPacket = try input.nextVideoPacket(into: packet, interrupter: interrupter, skipped: &packetsOfOtherStreams)
                hasRead = true
                guard hasPacket else { break }
                guard packet.isKeyframe else { continue }
                let time = packet.timestamp.map { input.seconds(fromTimestamp: $0) } ?? 0
                if time > seconds + 1e-6 { break }
                let copy = try ffmpeg { () throws(FFmpegFailure) in try packet.reference() }
                chosen = (copy, time)
                // With an index the seek already landed on the right keyframe.
                if !keyframeIndex.isEmpty { break }
            }
            if let chosen { return chosen }
            if target <= 0 { return nil }
            // The seek landed past the time (or nothing was found): look further back.
            backoff = backoff == 0 ? 1 : backoff * 2
        }
    }

    /// Decodes key packets on their own: sends them back to back, drains, flushes.
    private func decodeAlone(_ packets: [Packet],
                             deliver: (Int, TimedFrame) throws(PreviewLoopError) -> Void) throws(PreviewLoopError) {
        guard !packets.isEmpty else { return }
        codec.keyframesOnly = true
        defer { codec.keyframesOnly = false }
        codec.flush()
        isDraining = false
        lastTime = nil
        lastDecoded = nil
        var produced = 0
        var started = clock.now
        func receiveAll() throws(PreviewLoopError) {
            while true {
                let frame = try ffmpeg { () throws(FFmpegFailure) in try DecodedFrame() }
                let outcome: DecodeOutcome
                do { outcome = try ffmpeg { () throws(FFmpegFailure) in try codec.receive(into: frame) } } catch where error.ffmpegCode == FFmpegError.invalidData {
                    continue
                }
                guard outcome == .frame else { return }
                let result = timed(frame, decodeTime: clock.now - started)
                try checkTiming(result, previous: nil)
                try deliver(produced, result)
                produced += 1
                started = clock.now
            }
        }
        for packet in packets {
            while try !ffmpeg({ () throws(FFmpegFailure) in try codec.send(packet) }) { try receiveAll() }
            try receiveAll()
        }
        _ = try ffmpeg { () throws(FFmpegFailure) in try codec.send(nil) }
        try receiveAll()
        codec.flush()
    }
}
