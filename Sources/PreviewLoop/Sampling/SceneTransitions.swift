/// Gradual transitions (dissolves, cross-fades) for `--pick scenes`: one transition between two shots,
/// found as one cut, however many of its frames differ from the frame before.
///
/// A dissolve's frames are mixtures of the shot before and the shot after: each differs a little from
/// the one before (no single jump a hard cut shows), and together they move the picture from one shot
/// to the other. The test that tells a dissolve from motion is the blend: the middle frame's thumbnail
/// is close to `a + α(b − a)` for the best α between 0 and 1 (``LumaThumbnail/blendResidual(from:to:)``),
/// where a pan or a zoom is not.
enum SceneTransitions {
    /// Gradual cuts in a run of consecutive frames (``SceneCut/Evidence/dissolve``): a stretch of at least
    /// three frames, each changing from the one before by more than three times the run's median change
    /// (its noise), lasting at most ``ScenePickSettings/maximumTransition``, between a frame before and
    /// a frame after that differ by a cut's worth (``ScenePickSettings/cutThreshold``) spread over the
    /// stretch (no frame carries ``ScenePickSettings/peakRatio``'s share of it), whose middle frame is a
    /// blend of the two. The cut is the stretch's last frame: the first wholly of the new shot.
    ///
    /// - Parameter differences: `differences[i]` is frame `i`'s difference from frame `i - 1` (0 for the first).
    static func gradualCuts(_ run: [(time: Double, thumbnail: LumaThumbnail)], differences: [Double],
                            settings: ScenePickSettings, frameInterval: Double, start: Double, end: Double) -> [SceneCut] {
        guard run.count >= 5, differences.count == run.count else { return [] }
        let sorted = differences.dropFirst().sorted()
        let noise = sorted[sorted.count / 2]
        let low = max(1.0, 3 * noise)
        let longest = Int((settings.maximumTransition / max(frameInterval, 1e-3)).rounded())
        var cuts: [SceneCut] = []
        var index = 1
        while index < run.count {
            guard differences[index] >= low else { index += 1; continue }
            var last = index
            while last + 1 < run.count, differences[last + 1] >= low { last += 1 }
            defer { index = last + 1 }
            // The frames index...last each changed; run[index - 1] is the last of the shot before and
            // run[last] the first of the shot after, unless the run ends inside the change.
            let length = last - index + 1
            guard length >= 3, length <= longest, last + 1 < run.count else { continue }
            let before = run[index - 1].thumbnail, after = run[last].thumbnail
            let total = after.difference(from: before)
            let peak = differences[index...last].max() ?? 0
            let middle = run[(index + last) / 2].thumbnail
            guard total >= settings.cutThreshold, total >= settings.peakRatio * peak,
                  middle.blendResidual(from: before, to: after) < min(settings.duplicateThreshold, total / 4),
                  run[last].time > start + 1e-6, run[last].time < end else { continue }
            cuts.append(SceneCut(time: run[last].time, score: total, evidence: .dissolve, before: before, after: after))
        }
        return cuts
    }

    /// `cuts` (in time order) with each chain of cuts that make one transition merged into its last: two
    /// cuts at most ``ScenePickSettings/maximumTransition`` apart whose first cut's picture is a blend of
    /// the picture before it and the second cut's picture (an encoder that started a group of pictures,
    /// or a search that found a jump, in the middle of a dissolve). Hard cuts close together stay apart:
    /// the shot between them is a picture of its own, not a mixture.
    static func merged(_ cuts: [SceneCut], settings: ScenePickSettings) -> [SceneCut] {
        var result: [SceneCut] = []
        for cut in cuts {
            if let previous = result.last, cut.time - previous.time <= settings.maximumTransition + 1e-6,
               let before = previous.before, let middle = previous.after, let after = cut.after {
                let total = after.difference(from: before)
                if total >= settings.cutThreshold,
                   middle.blendResidual(from: before, to: after) < min(settings.duplicateThreshold, total / 4),
                   middle.difference(from: after) >= settings.duplicateThreshold / 2 {
                    result[result.count - 1] = SceneCut(time: cut.time, score: total, evidence: .dissolve, before: before, after: after)
                    continue
                }
            }
            result.append(cut)
        }
        return result
    }
}

extension LumaThumbnail {
    /// How far this thumbnail is from the nearest mixture `a + α(b − a)`, α in 0…1: the mean absolute
    /// difference of the cells (0–255). A dissolve's frames are mixtures of the shots on either side.
    func blendResidual(from a: LumaThumbnail, to b: LumaThumbnail) -> Double {
        var dot = 0.0, norm = 0.0
        for index in cells.indices {
            let direction = b.cells[index] - a.cells[index]
            dot += (cells[index] - a.cells[index]) * direction
            norm += direction * direction
        }
        let alpha = norm > 0 ? min(1, max(0, dot / norm)) : 0
        var residual = 0.0
        for index in cells.indices {
            residual += abs(cells[index] - a.cells[index] - alpha * (b.cells[index] - a.cells[index]))
        }
        return residual / Double(cells.count)
    }
}

extension TilePlan {
    /// Drops kept tiles (other than the first and last) whose picture is a blend of the kept tiles on
    /// either side of it, when those differ by a cut's worth: a frame inside a dissolve shows no shot of
    /// its own. Each is reported as dropped, a duplicate of its nearer neighbour.
    static func droppingBlends(_ kept: inout [(choice: TileChoice, frame: VideoFrame, thumbnail: LumaThumbnail)],
                               dropped: inout [DroppedTile], settings: ScenePickSettings) {
        var index = 1
        while index + 1 < kept.count {
            let before = kept[index - 1], tile = kept[index], after = kept[index + 1]
            let total = after.thumbnail.difference(from: before.thumbnail)
            let residual = tile.thumbnail.blendResidual(from: before.thumbnail, to: after.thumbnail)
            guard total >= settings.cutThreshold, residual < min(settings.duplicateThreshold, total / 4) else {
                index += 1
                continue
            }
            let nearer = tile.frame.sourceTime - before.frame.sourceTime <= after.frame.sourceTime - tile.frame.sourceTime ? before : after
            dropped.append(DroppedTile(choice: tile.choice, frameTime: tile.frame.sourceTime, duplicateOf: nearer.frame.sourceTime,
                                       distance: residual))
            kept.remove(at: index)
        }
    }

    /// With fewer tiles than `columns × rows`, the rows the tiles fill (the last one completed): the
    /// rows shrink to `⌈tiles / columns⌉` and the last row's empty places take the spare frames (the
    /// near-duplicates dropped, which repeat a shot shown) spread farthest in time from the tiles, each
    /// ``TileChoice/Reason/spread``; with too few spares for a single row, the columns shrink instead.
    ///
    /// - Returns: the grid the tiles fill, `(columns, rows)`.
    mutating func fillRows(columns: Int, rows: Int) -> (columns: Int, rows: Int) {
        guard pick == .scenes, !frames.isEmpty, frames.count < columns * rows else { return (columns, rows) }
        let usedRows = (frames.count + columns - 1) / columns
        var missing = usedRows * columns - frames.count
        var times = frames.map(\.sourceTime)
        // A spare inside a dissolve (a mixture of the tiles on either side) is no repeat of a shot.
        let shown = frames.map { (time: $0.sourceTime, thumbnail: LumaThumbnail($0.image)) }
        let settings = ScenePickSettings()
        var candidates = spares.filter { spare in
            let time = spare.frame.sourceTime
            guard let before = shown.last(where: { $0.time < time }), let after = shown.first(where: { $0.time > time }) else { return true }
            let total = after.thumbnail.difference(from: before.thumbnail)
            return total < settings.cutThreshold || LumaThumbnail(spare.frame.image).blendResidual(from: before.thumbnail, to: after.thumbnail)
                >= min(settings.duplicateThreshold, total / 4)
        }
        var added: [(choice: TileChoice, frame: VideoFrame)] = []
        while missing > 0, !candidates.isEmpty {
            // The spare farthest from every tile shown (ties: the earlier).
            var best = 0, bestDistance = -1.0
            for (position, spare) in candidates.enumerated() {
                let distance = times.map { abs($0 - spare.frame.sourceTime) }.min() ?? .infinity
                if distance > bestDistance + 1e-9 { best = position; bestDistance = distance }
            }
            guard bestDistance > 1e-6 else { break }
            let spare = candidates.remove(at: best)
            added.append((TileChoice(time: spare.choice.time, reason: .spread), spare.frame))
            times.append(spare.frame.sourceTime)
            missing -= 1
        }
        var all = zip(tiles, frames).map { (choice: $0.0, frame: $0.1) } + added
        all.sort { $0.frame.sourceTime < $1.frame.sourceTime }
        tiles = all.map(\.choice)
        frames = all.map(\.frame)
        let drawn = usedRows == 1 ? (columns: min(columns, frames.count), rows: 1)
            : (columns: columns, rows: (frames.count + columns - 1) / columns)
        gridAsked = Size(width: columns, height: rows)
        grid = Size(width: drawn.columns, height: drawn.rows)
        return drawn
    }
}
