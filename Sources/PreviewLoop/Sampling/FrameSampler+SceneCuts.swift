internal import PreviewLoopFFmpeg

extension FrameSampler {
    /// The shot changes in `start..<start+length`, found packets- and keyframe-first on luma
    /// thumbnails (``LumaThumbnail``), decoding as little as it can:
    /// 1. The span's video packets are read (demuxing only): a packet several times the size of its
    ///    neighbours' (``ScenePickSettings/packetRatio``) makes its frames a cut candidate.
    /// 2. Every keyframe of the span (and the one before it) is decoded alone.
    /// 3. Each group of pictures (keyframe to keyframe):
    ///    - with no candidate: nothing when its keyframe and the next look alike
    ///      (``ScenePickSettings/groupThreshold``), or it is the last group; a cut at the next keyframe
    ///      (``SceneCut/Evidence/keyframe``) when they differ and the encoder started the next group
    ///      early (its group is shorter than 90 % of the longest keyframe interval in the index: x264 and
    ///      x265 start a group at a scene cut); else (a change between
    ///      keyframes at the regular interval) frame by frame through the group.
    ///    - with candidates: frame by frame from its keyframe to one frame past its last candidate, then
    ///      on only while the frames are unlike the next keyframe and the next group did not start early
    ///      (the rest of the group is then the next keyframe's shot, or its cut is that keyframe).
    ///
    ///    A frame decoded frame by frame is a cut (``SceneCut/Evidence/frames``) when its difference from
    ///    the frame before reaches ``ScenePickSettings/cutThreshold`` and ``ScenePickSettings/peakRatio``
    ///    times its neighbours'.
    ///
    /// Deblocking is skipped throughout. Without a keyframe index (a pipe, or a format without one)
    /// every frame of the span is decoded.
    public func sceneCuts(start: Double, length: Double, settings: ScenePickSettings = .init()) throws(PreviewLoopError) -> SceneScan {
        try sceneCuts(start: start, length: length, settings: settings, observe: nil)
    }

    /// ``sceneCuts(start:length:settings:)``, handing every frame it decodes to `observe` as it comes
    /// out of the decoder: the frame, whether it was decoded frame by frame (`true`) or as a keyframe
    /// alone (`false`), and its difference from the frame before in the same run (`nil` for a run's
    /// first frame and for keyframes). With an observer the deblocking filter stays on, so the frames
    /// are the ones an exact decode gives (the tile plan keeps some of them as tiles).
    func sceneCuts(start: Double, length: Double, settings: ScenePickSettings,
                   observe: ((TimedFrame, _ consecutive: Bool, _ difference: Double?) throws(PreviewLoopError) -> Void)?)
        throws(PreviewLoopError) -> SceneScan {
        let end = start + length
        let scaler = FrameScaler(outputSize: Size(width: 64, height: 64), mode: .stretch, orientation: info.orientation,
                                 deinterlacing: decoder.options.deinterlacing,
                                 declaredTopFieldFirst: decoder.info.declaredTopFieldFirst)
        func thumbnail(_ timed: TimedFrame) throws(PreviewLoopError) -> LumaThumbnail {
            // 8-bit planar or semi-planar YUV (nearly every decoder's output): the luma plane directly,
            // every 4th pixel of every 4th row at 720p and up. Anything else through the scaler.
            let frame = timed.frame
            let (width, height) = (frame.width, frame.height)
            if width >= LumaThumbnail.side, height >= LumaThumbnail.side,
               let luma = frame.withEightBitLuma({ plane, bytesPerRow, limitedRange in
                   LumaThumbnail(luma: plane, bytesPerRow: bytesPerRow, width: width, height: height,
                                 step: height >= 720 ? 4 : (height >= 240 ? 2 : 1), limitedRange: limitedRange)
               }) {
                return luma
            }
            return LumaThumbnail(try scaler.image(from: timed.frame, sampleAspectRatio: info.sampleAspectRatio))
        }
        position = nil
        // Deblocking smooths what a 16x16 thumbnail averages away anyway: skipped while searching.
        decoder.skipsLoopFilter = observe == nil
        defer { decoder.skipsLoopFilter = false; position = nil }
        let indexed = decoder.isSeekable ? decoder.indexedKeyframeTimes() : []
        var keyTimes = indexed.filter { $0 > start + 1e-6 && $0 < end }
        if let before = indexed.last(where: { $0 <= start + 1e-6 }) { keyTimes.insert(before, at: 0) }
        // The packets first, demuxed without decoding: where a cut may be.
        var candidates: [ScenePackets.Candidate]?
        if let first = keyTimes.first,
           let packets = try decoder.packetSummaries(from: first, to: end, limit: ScenePackets.maxPackets) {
            candidates = ScenePackets.candidates(packets, minimumRatio: settings.packetRatio)
        }
        var keyframes: [(time: Double, thumbnail: LumaThumbnail)] = []
        if !keyTimes.isEmpty {
            var found = [(time: Double, thumbnail: LumaThumbnail)?](repeating: nil, count: keyTimes.count)
            // Index times are decode times, a few frames before the keyframes' presentation times: ask
            // for the keyframe at or before the middle of the way to the next one.
            let targets = keyTimes.indices.map { index in
                index + 1 < keyTimes.count ? (keyTimes[index] + keyTimes[index + 1]) / 2 : keyTimes[index] + 1
            }
            try decoder.keyframes(atOrBefore: targets) { (index: Int, frame: TimedFrame) throws(PreviewLoopError) in
                found[index] = (frame.time, try thumbnail(frame))
                try observe?(frame, false, nil)
            }
            var seen = Set<Int>()
            for entry in found.compactMap({ $0 }) where seen.insert(Int((entry.time * 1e6).rounded())).inserted {
                keyframes.append(entry)
            }
            keyframes.sort { $0.time < $1.time }
        }
        if keyframes.isEmpty { keyframes = [(start, LumaThumbnail(RGBImage(uncheckedWidth: 1, height: 1)))] }
        var cuts: [SceneCut] = []
        var groupsDecoded = 0, framesDecoded = 0
        func keyframeCut(at keyframe: (time: Double, thumbnail: LumaThumbnail), score: Double, after previous: LumaThumbnail) {
            guard score >= settings.cutThreshold, keyframe.time > start + 1e-6, keyframe.time < end else { return }
            cuts.append(SceneCut(time: keyframe.time, score: score, evidence: .keyframe, before: previous, after: keyframe.thumbnail))
        }
        for (index, keyframe) in keyframes.enumerated() {
            let next = index + 1 < keyframes.count ? keyframes[index + 1] : nil
            let groupEnd = min(next?.time ?? end, end)
            // The encoder started the next group early: at a cut, unless its packets show one inside.
            let nextEarly = next.map { ScenePackets.groupEndsEarly(from: keyframe.time, to: $0.time, keyframeTimes: indexed) } ?? false
            // A candidate that covers only the frame just before a keyframe placed early needs no
            // search: a cut there is within a frame of the keyframe's.
            let searchEnd = nextEarly ? groupEnd - 1.5 * info.frameInterval : groupEnd
            // The time of the group's last packet candidate (-infinity without one); `nil` when the
            // packets are unknown (then the group is decoded through).
            let lastCandidate: Double? = candidates.map { list in
                list.filter { $0.times.upperBound > max(keyframe.time, start) + 1e-6 && $0.times.lowerBound < searchEnd - 1e-6 }
                    .map(\.times.upperBound).max() ?? -.infinity
            }
            let keyDifference = next.map { keyframe.thumbnail.difference(from: $0.thumbnail) }
            if lastCandidate == -.infinity {
                // No packet stands out: alike keyframes (or the last group) hold no cut; different ones
                // changed at the next keyframe when it came early, else somewhere the frames must show.
                guard let next, let keyDifference, keyDifference >= settings.groupThreshold else { continue }
                if nextEarly {
                    keyframeCut(at: next, score: keyDifference, after: keyframe.thumbnail)
                    continue
                }
            } else if lastCandidate == nil, let keyDifference, keyDifference < settings.groupThreshold {
                continue
            }
            groupsDecoded += 1
            // The group frame by frame, from its keyframe (or the span's start without an index) up to
            // the next keyframe, whose thumbnail is known, or the span's end; or only a frame past its
            // last packet candidate, when the next keyframe's shot has begun, or came early, or there
            // is none (the last group).
            var run: [(time: Double, thumbnail: LumaThumbnail)] = []
            position = nil
            guard let first = try decoder.frameDisplayed(at: max(0, indexed.isEmpty ? start : keyframe.time)) else { break }
            run.append((first.time, try thumbnail(first)))
            try observe?(first, true, nil)
            framesDecoded += 1
            let stop = next?.time ?? end
            var stopped = false
            while let frame = try decoder.nextFrame() {
                if frame.time >= stop - 1e-6 {
                    // The next keyframe, decoded in turn: its picture is the one the keyframe pass saw.
                    if let next, abs(frame.time - next.time) < 1e-6, let last = run.last {
                        try observe?(frame, true, next.thumbnail.difference(from: last.thumbnail))
                    }
                    break
                }
                let current = try thumbnail(frame)
                let difference = run.last.map { current.difference(from: $0.thumbnail) }
                run.append((frame.time, current))
                try observe?(frame, true, difference)
                framesDecoded += 1
                if let lastCandidate, frame.time > lastCandidate + 1e-6 {
                    guard let next else { stopped = true; break }
                    let toNext = current.difference(from: next.thumbnail)
                    if toNext < settings.groupThreshold { stopped = true; break }
                    if nextEarly {
                        keyframeCut(at: next, score: toNext, after: current)
                        stopped = true
                        break
                    }
                }
            }
            if !stopped, let next { run.append(next) }
            let differences = [0.0] + (1..<max(1, run.count)).map { run[$0].thumbnail.difference(from: run[$0 - 1].thumbnail) }
            for frame in 1..<max(1, run.count) {
                let score = differences[frame]
                let neighbours = max(differences[frame - 1], frame + 1 < run.count ? differences[frame + 1] : 0)
                if score >= settings.cutThreshold, score >= settings.peakRatio * neighbours,
                   run[frame].time > start + 1e-6, run[frame].time < end {
                    cuts.append(SceneCut(time: run[frame].time, score: score, before: run[frame - 1].thumbnail,
                                         after: run[frame].thumbnail))
                }
            }
            cuts += SceneTransitions.gradualCuts(run, differences: differences, settings: settings,
                                                 frameInterval: info.frameInterval, start: start, end: end)
        }
        cuts = SceneTransitions.merged(cuts.sorted { $0.time < $1.time }, settings: settings)
        return SceneScan(cuts: cuts, keyframesDecoded: indexed.isEmpty ? 0 : keyframes.count,
                         groupsDecoded: groupsDecoded, groups: keyframes.count, framesDecoded: framesDecoded,
                         packetCandidates: candidates?.count)
    }
}
