internal import PreviewLoopFFmpeg

extension FrameSampler {
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
