internal import PreviewLoopFFmpeg

/// How a sheet or strip chooses the times of its tiles.
public enum TilePick: String, Sendable, CaseIterable {
    /// The middles of equal slices of the span (what sheets and strips always did).
    case even
    /// The first frame of each shot, strongest cuts first, filled in evenly when shots are fewer than
    /// tiles, without near-identical tiles.
    case scenes
}

/// A 16x16 picture of the luma (BT.601 weights) of a frame, each cell the mean of the pixels it covers.
/// The distances between them are what `--pick scenes` decides with.
public struct LumaThumbnail: Hashable, Sendable {
    /// Cells a side.
    public static let side = 16
    /// `side`² cell means, 0–255, row by row.
    public var cells: [Double]

    /// The thumbnail of `image` (stretched: the cells cover the whole picture).
    public init(_ image: RGBImage) {
        let side = Self.side
        var cells = [Double](repeating: 0, count: side * side)
        guard image.width > 0, image.height > 0 else { self.cells = cells; return }
        for cellY in 0..<side {
            let y0 = min(image.height - 1, cellY * image.height / side)
            let y1 = max(y0 + 1, min(image.height, (cellY + 1) * image.height / side))
            for cellX in 0..<side {
                let x0 = min(image.width - 1, cellX * image.width / side)
                let x1 = max(x0 + 1, min(image.width, (cellX + 1) * image.width / side))
                var sum = 0
                for y in y0..<y1 {
                    var offset = y * image.bytesPerRow + x0 * 3
                    for _ in x0..<x1 {
                        sum += 77 * Int(image.pixels[offset]) + 150 * Int(image.pixels[offset + 1])
                            + 29 * Int(image.pixels[offset + 2])
                        offset += 3
                    }
                }
                cells[cellY * side + cellX] = Double(sum) / Double(256 * (y1 - y0) * (x1 - x0))
            }
        }
        self.cells = cells
    }

    /// The thumbnail of an 8-bit luma plane, read straight from a decoded frame: each cell the mean of
    /// every `step`-th pixel of every `step`-th row it covers (no scaling, no colour conversion);
    /// limited-range values are stretched to 0–255 so the scores match ``init(_:)``'s.
    init(luma plane: UnsafePointer<UInt8>, bytesPerRow: Int, width: Int, height: Int, step: Int, limitedRange: Bool) {
        let side = Self.side
        var cells = [Double](repeating: 0, count: side * side)
        for cellY in 0..<side {
            let y0 = min(height - 1, cellY * height / side)
            let y1 = max(y0 + 1, min(height, (cellY + 1) * height / side))
            for cellX in 0..<side {
                let x0 = min(width - 1, cellX * width / side)
                let x1 = max(x0 + 1, min(width, (cellX + 1) * width / side))
                var sum = 0, count = 0
                var y = y0
                while y < y1 {
                    let row = plane + y * bytesPerRow
                    var x = x0
                    while x < x1 { sum += Int(row[x]); count += 1; x += step }
                    y += step
                }
                let mean = Double(sum) / Double(count)
                cells[cellY * side + cellX] = limitedRange ? min(255, max(0, (mean - 16) * 255 / 219)) : mean
            }
        }
        self.cells = cells
    }

    /// The mean of the cells.
    public var mean: Double { cells.reduce(0, +) / Double(cells.count) }

    /// The cut score: the mean absolute difference of the cells, 0–255 (brightness changes count).
    public func difference(from other: LumaThumbnail) -> Double {
        zip(cells, other.cells).reduce(0) { $0 + abs($1.0 - $1.1) } / Double(cells.count)
    }

    /// The duplicate distance: the mean absolute difference of the cells after each thumbnail's own
    /// mean is taken away (so the same shot a little brighter or darker is still the same shot), 0–255.
    public func normalisedDifference(from other: LumaThumbnail) -> Double {
        let shift = mean - other.mean
        return zip(cells, other.cells).reduce(0) { $0 + abs($1.0 - $1.1 - shift) } / Double(cells.count)
    }
}

/// Thresholds of `--pick scenes`.
public struct ScenePickSettings: Hashable, Sendable {
    /// A frame starts a new shot when its ``LumaThumbnail/difference(from:)`` from the frame before is
    /// at least this and at least ``peakRatio`` times the differences on either side of it.
    public var cutThreshold = 15.0
    /// See ``cutThreshold``: rejects steady fast motion, whose differences are all alike.
    public var peakRatio = 2.0
    /// Keyframes this far apart (``LumaThumbnail/difference(from:)``) hold a change between them: their
    /// group of pictures is searched even when its packets show no cut (see
    /// ``FrameSampler/sceneCuts(start:length:settings:)``); past a group's last packet candidate, a frame
    /// this close to the next keyframe ends its decoding.
    public var groupThreshold = 8.0
    /// How many times the level of its neighbours (the lower of the median sizes of the 8 packets of its
    /// kind before and after it in its group of pictures) a packet must be to make its frames a cut
    /// candidate; one of 3× or more that is also 1.25× its group's 90th percentile counts too. A group
    /// of pictures is decoded only as far as its last candidate.
    public var packetRatio = 6.0
    /// A tile whose ``LumaThumbnail/normalisedDifference(from:)`` from a kept tile is below this is a
    /// near-duplicate and dropped.
    public var duplicateThreshold = 6.0
    /// The longest gradual transition (dissolve, cross-fade) found as one cut, in seconds; cuts this
    /// close whose pictures between are mixtures of the shots on either side make one transition.
    public var maximumTransition = 2.0

    public init() {}
}

/// A shot change found by ``FrameSampler/sceneCuts(start:length:settings:)``.
public struct SceneCut: Hashable, Sendable {
    /// How a cut was found.
    public enum Evidence: String, Hashable, Sendable {
        /// On decoded frames: the frame's difference from the frame before stood out from its neighbours'.
        case frames
        /// At a keyframe the encoder placed early (before its regular interval), after a group of
        /// pictures whose packets show no cut: the score is the keyframe's difference from the last
        /// frame decoded before it (the group's keyframe, or the last frame searched).
        case keyframe
        /// A gradual transition (a dissolve, a cross-fade): frames that each change a little and are
        /// mixtures of the shot before and the shot after (``ScenePickSettings/maximumTransition``), or
        /// several cuts found inside one; the time is its first frame wholly of the new shot and the
        /// score the difference between the shots on either side.
        case dissolve
    }
    /// The time of the first frame of the new shot.
    public var time: Double
    /// Its cut score (``LumaThumbnail/difference(from:)`` from the frame before, or see ``Evidence/keyframe``).
    public var score: Double
    public var evidence: Evidence = .frames
    /// The thumbnails of the frame before the cut and of the cut's frame, when known (to tell one
    /// transition's cuts from separate shots).
    var before: LumaThumbnail? = nil
    var after: LumaThumbnail? = nil
}

/// What the cut search decoded and found.
public struct SceneScan: Hashable, Sendable {
    /// The cuts, in time order.
    public var cuts: [SceneCut]
    /// Keyframes decoded alone (the first pass).
    public var keyframesDecoded: Int
    /// Groups of pictures then decoded frame by frame.
    public var groupsDecoded: Int
    /// Groups of pictures in the span.
    public var groups: Int
    /// Frames decoded in the second pass.
    public var framesDecoded: Int
    /// Packets that stood out as cut candidates (``ScenePickSettings/packetRatio``), `nil` when the
    /// packets were not read (no keyframe index).
    public var packetCandidates: Int?
}

/// One chosen tile time and why.
public struct TileChoice: Hashable, Sendable {
    /// Why a tile is where it is.
    public enum Reason: String, Sendable {
        /// `--pick even`: the middle of an equal slice.
        case even
        /// The start of the span: the first shot.
        case start
        /// The first frame of a shot after a detected cut.
        case cut
        /// Filled in: the middle of the longest stretch without a tile.
        case fill
        /// A sheet with fewer distinct tiles than places: a frame repeating a shot shown, the spare
        /// spread farthest in time from the other tiles, completing the last row.
        case spread
    }
    /// The time asked for.
    public var time: Double
    public var reason: Reason
    /// The cut score, for `.cut`.
    public var score: Double?

    public init(time: Double, reason: Reason, score: Double? = nil) {
        self.time = time
        self.reason = reason
        self.score = score
    }
}

/// A tile left out as a near-duplicate of a kept one.
public struct DroppedTile: Hashable, Sendable {
    public var choice: TileChoice
    /// The time of the frame it showed.
    public var frameTime: Double
    /// The frame time of the kept tile it repeats.
    public var duplicateOf: Double
    /// Their ``LumaThumbnail/normalisedDifference(from:)``.
    public var distance: Double
}

/// The tiles chosen for a sheet or strip: their frames in time order and what was chosen and why.
public struct TilePlan: Sendable {
    public var pick: TilePick
    /// The kept tiles' choices, in the order of ``frames``.
    public var tiles: [TileChoice]
    /// The kept frames.
    public var frames: [VideoFrame]
    /// Tiles dropped as near-duplicates.
    public var dropped: [DroppedTile]
    /// The cut search, for `.scenes`.
    public var scan: SceneScan?
    /// The frames of the tiles dropped as near-duplicates (not those inside a transition): what a sheet
    /// completes its last row with (`fillRows(columns:rows:)`).
    var spares: [(choice: TileChoice, frame: VideoFrame)] = []
    /// For a sheet whose distinct tiles fill fewer places than asked (`fillRows(columns:rows:)`): the
    /// grid asked for and the grid drawn, columns by rows; `nil` otherwise.
    public var gridAsked: Size?
    public var grid: Size?
}

extension TileChoice {
    /// The scene tile times before sampling: the span's start, then the strongest `count - 1` cuts,
    /// then fills in the middles of the longest stretches without a tile, in time order.
    public static func sceneChoices(cuts: [SceneCut], count: Int, start: Double, length: Double) -> [TileChoice] {
        guard count > 0 else { return [] }
        let end = start + length
        let strongest = cuts.filter { $0.time > start && $0.time < end }
            .sorted { $0.score != $1.score ? $0.score > $1.score : $0.time < $1.time }
            .prefix(count - 1)
        var choices = [TileChoice(time: start, reason: .start)]
            + strongest.map { TileChoice(time: $0.time, reason: .cut, score: $0.score) }
        let fills = fillTimes(count - choices.count, among: choices.map(\.time), start: start, end: end)
        choices += fills.map { TileChoice(time: $0, reason: .fill) }
        return choices.sorted { $0.time < $1.time }
    }

    /// `count` times, each the middle of the longest stretch of `start...end` between `taken` times
    /// and the ones already added.
    static func fillTimes(_ count: Int, among taken: [Double], start: Double, end: Double) -> [Double] {
        guard count > 0 else { return [] }
        var times = (taken + [start, end]).sorted()
        var added: [Double] = []
        for _ in 0..<count {
            var best = 0
            for index in 1..<times.count where times[index] - times[index - 1] > times[best + 1] - times[best] {
                best = index - 1
            }
            let middle = (times[best] + times[best + 1]) / 2
            times.insert(middle, at: best + 1)
            added.append(middle)
        }
        return added
    }
}

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

    /// The tiles of a sheet or strip over `start..<start+length`: with `.even`, the frames at
    /// `evenTimes` (taken with `accuracy`); with `.scenes`, ``TileChoice/sceneChoices(cuts:count:start:length:)``
    /// taken exactly, then near-duplicates (``ScenePickSettings/duplicateThreshold``) and tiles inside a
    /// dissolve (a mixture of the kept tiles on either side) dropped and replaced by fills while fewer
    /// than `count` remain, trying at most `count` more times.
    ///
    /// The start and the cuts are their exact frames. A fill (the middle of the longest stretch without
    /// a tile) may move up to half the way to its nearest neighbouring tile time: to the nearest frame
    /// the cut search decoded on its way (a keyframe, or one of `4·count` grid frames in the groups it
    /// searched); else it is its exact frame. A fill replacing a dropped near-duplicate takes only a
    /// frame the search decoded, and is left out when there is none within its reach.
    public func tilePlan(pick: TilePick, count: Int, start: Double, length: Double, evenTimes: [Double], size: Size,
                         mode: ContentMode = .aspectFill, accuracy: SeekAccuracy = .exact, interval: Double,
                         settings: ScenePickSettings = .init()) throws(PreviewLoopError) -> TilePlan {
        guard pick == .scenes else {
            let sampled = try frames(at: evenTimes, size: size, mode: mode, accuracy: accuracy, interval: interval)
            return TilePlan(pick: .even, tiles: evenTimes.map { TileChoice(time: $0, reason: .even) }, frames: sampled,
                            dropped: [], scan: nil)
        }
        // The search reads the span through before the tiles are taken: that needs going back.
        guard decoder.isSeekable else {
            throw PreviewLoopError(.invalidArgument, "\(decoder.source): scene picks need a seekable input "
                + "(a file, or a URL whose server takes range requests), not a pipe; use --pick even")
        }
        // The search decodes every frame of the groups it searches: the frames a tile may want (the
        // span's start, each cut candidate, one near each of 4·count points across the span for fills)
        // are converted to the tile size as they pass instead of being decoded again afterwards.
        let store = SceneTileStore(start: start, length: length, count: count, cutThreshold: settings.cutThreshold,
                                  frameInterval: info.frameInterval,
                                  scaler: FrameScaler(outputSize: size, mode: mode, for: decoder),
                                  sampleAspectRatio: info.sampleAspectRatio)
        let scan = try sceneCuts(start: start, length: length, settings: settings) {
            (frame: TimedFrame, consecutive: Bool, difference: Double?) throws(PreviewLoopError) in
            try store.observe(frame, consecutive: consecutive, difference: difference)
        }
        var pending = TileChoice.sceneChoices(cuts: scan.cuts, count: count, start: start, length: length)
        var kept: [(choice: TileChoice, frame: VideoFrame, thumbnail: LumaThumbnail)] = []
        var dropped: [DroppedTile] = []
        var spares: [(choice: TileChoice, frame: VideoFrame)] = []
        var tried = pending.map(\.time)
        var retries = 0
        var refilling = false
        while !pending.isEmpty {
            // A fill may move to a frame the search kept, up to half the way to the nearest other tile
            // time (a quarter of its stretch), rather than be decoded again.
            let marks = (tried + [start, start + length]).sorted()
            func reach(_ choice: TileChoice) -> Double {
                let below = marks.last { $0 < choice.time - 1e-9 } ?? start
                let above = marks.first { $0 > choice.time + 1e-9 } ?? start + length
                return min(choice.time - below, above - choice.time) / 2
            }
            for choice in pending {
                func keep(_ frame: VideoFrame) {
                    let thumbnail = LumaThumbnail(frame.image)
                    let nearest = kept.map { ($0, thumbnail.normalisedDifference(from: $0.thumbnail)) }.min { $0.1 < $1.1 }
                    if let nearest, nearest.1 < settings.duplicateThreshold {
                        dropped.append(DroppedTile(choice: choice, frameTime: frame.sourceTime,
                                                   duplicateOf: nearest.0.frame.sourceTime, distance: nearest.1))
                        spares.append((choice, frame))
                    } else {
                        kept.append((choice, frame, thumbnail))
                    }
                }
                if let frame = store.frame(for: choice, reach: reach(choice)) {
                    keep(frame)
                    continue
                }
                // A fill replacing a dropped near-duplicate takes only a frame the search kept: refills
                // never decode (each could cost a group's worth of frames, for a tile that may repeat).
                if choice.reason == .fill, refilling { continue }
                // Decoded exactly, a hair past its time (so a cut's own frame answers even when its time
                // is rounded).
                let decoded = try frames(at: [min(choice.time + 1e-4, start + length)], size: size, mode: mode,
                                         accuracy: .exact, interval: 0)
                if let frame = decoded.first { keep(frame) }
            }
            // A tile inside a dissolve (a mixture of the tiles on either side) shows no shot of its own.
            kept.sort { $0.frame.sourceTime < $1.frame.sourceTime }
            TilePlan.droppingBlends(&kept, dropped: &dropped, settings: settings)
            let missing = min(count - kept.count, count - retries)
            guard missing > 0 else { break }
            retries += missing
            let fills = TileChoice.fillTimes(missing, among: tried, start: start, end: start + length)
            tried += fills
            pending = fills.map { TileChoice(time: $0, reason: .fill) }
            refilling = true
        }
        kept.sort { $0.frame.sourceTime < $1.frame.sourceTime }
        return TilePlan(pick: .scenes, tiles: kept.map(\.choice), frames: kept.map(\.frame), dropped: dropped, scan: scan,
                        spares: spares)
    }
}
