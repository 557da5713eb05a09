/// Scrub-bar thumbnails: one frame per interval of the clip, tiled into sprite sheets, and the
/// WebVTT cues that map each interval to its tile (`sprites-1.jpg#xywh=x,y,w,h`), as video players'
/// preview-thumbnail tracks expect.
public struct ThumbnailTrack: Sendable, Hashable {
    /// The file name of sprite sheet `index` (from 0) as `sprites` and batch write it: `sprites-1.jpg`
    /// (not `sheet-N`, which would read as the contact sheet, `sheet`'s output).
    package static func sheetFileName(_ index: Int, fileExtension: String) -> String {
        "sprites-\(index + 1).\(fileExtension)"
    }

    /// How tiles are laid out on each sheet.
    public struct Layout: Sendable, Hashable {
        /// The size of one tile.
        public var tileSize: Size
        /// Tiles per row.
        public var columns: Int
        /// Rows per sheet.
        public var rows: Int

        /// Creates a layout; `columns` and `rows` must be at least 1 (``FrameSampler/thumbnailTrack(every:layout:mode:accuracy:pick:maxThumbnails:progress:onSheet:)``
        /// throws ``PreviewLoopError/Code/invalidArgument`` for a layout with none, or with an empty tile).
        public init(tileSize: Size = Size(width: 160, height: 90), columns: Int = 10, rows: Int = 10) {
            self.tileSize = tileSize
            self.columns = columns
            self.rows = rows
        }

        /// Tiles on a full sheet.
        public var tilesPerSheet: Int { columns * rows }

        /// Which sheet (from 0) holds tile `index`, and where.
        public func place(_ index: Int) -> (sheet: Int, rect: Rect) {
            // Never a division by zero: an empty layout places every tile on sheet `index`.
            let perSheet = max(1, tilesPerSheet), columns = max(1, self.columns)
            let position = index % perSheet
            return (index / perSheet, Rect(x: (position % columns) * tileSize.width, y: (position / columns) * tileSize.height,
                                               width: tileSize.width, height: tileSize.height))
        }
    }

    /// One interval of the clip and the tile that shows it.
    public struct Cue: Sendable, Hashable {
        /// Where the interval starts, in seconds from the video stream's start.
        public var start: Double
        /// Where it ends (the next cue's start; the clip's duration for the last).
        public var end: Double
        /// The sheet holding the tile, from 0.
        public var sheet: Int
        /// The tile's rectangle on its sheet, in pixels.
        public var rect: Rect
        /// The presentation time of the frame shown in the tile.
        public var frameTime: Double

        /// Creates a cue.
        public init(start: Double, end: Double, sheet: Int, rect: Rect, frameTime: Double) {
            self.start = start
            self.end = end
            self.sheet = sheet
            self.rect = rect
            self.frameTime = frameTime
        }
    }

    /// The tile layout.
    public var layout: Layout
    /// The cues, in time order, covering the clip without gaps.
    public var cues: [Cue]

    /// Creates a track.
    public init(layout: Layout, cues: [Cue]) {
        self.layout = layout
        self.cues = cues
    }

    /// How many sheets the cues use.
    public var sheetCount: Int { (cues.map(\.sheet).max() ?? -1) + 1 }

    /// The intervals `[k·every, (k+1)·every)` that cover `[0, duration)`, the last one ending at
    /// `duration`; none unless both are finite and above 0. A trailing sliver shorter than half an
    /// interval (a 30-minute clip's last 12 ms) is not a cue of its own: it joins the last interval,
    /// which then runs up to 1.5 intervals.
    public static func intervals(duration: Double, every: Double) -> [(start: Double, end: Double)] {
        guard duration > 0, every > 0, duration.isFinite, every.isFinite else { return [] }
        // In Double first: a tiny `every` must not trap the conversion (callers bound the count before).
        let raw = thumbnailCount(duration: duration, every: every)
        let count = raw.isFinite ? max(1, Int(min(raw, 1e15))) : 1
        return (0..<count).map { index in
            (Double(index) * every, index == count - 1 ? duration : min(duration, Double(index + 1) * every))
        }
    }

    /// With `--pick scenes`: the middle of the longest of the pieces the `cuts` inside `start..<end` split
    /// it into (the first on a tie); `nil` when no cut lies inside, and the middle of the interval stays.
    public static func longestShotMiddle(start: Double, end: Double, cuts: [Double]) -> Double? {
        let inside = cuts.filter { $0 > start + 1e-6 && $0 < end - 1e-6 }.sorted()
        guard !inside.isEmpty else { return nil }
        let bounds = [start] + inside + [end]
        var best = 0
        for index in 1..<(bounds.count - 1) where bounds[index + 1] - bounds[index] > bounds[best + 1] - bounds[best] + 1e-9 {
            best = index
        }
        return (bounds[best] + bounds[best + 1]) / 2
    }

    /// How many intervals ``intervals(duration:every:)`` makes, in `Double` (it may be astronomically
    /// large): `duration / every` rounded to the nearest whole number (a half rounds up), at least 1.
    public static func thumbnailCount(duration: Double, every: Double) -> Double {
        max(1, (duration / every).rounded(.toNearestOrAwayFromZero))
    }

    /// The WebVTT file: `WEBVTT`, a blank line, then for each cue its `start --> end` line and the
    /// URL of its tile (`sheetURL(sheet) + "#xywh=x,y,w,h"`), cues separated by blank lines.
    ///
    /// - Parameter sheetURL: the URL of sheet `index` (from 0) as players should fetch it, for example
    ///   `{ "sprites-\($0 + 1).jpg" }` for sheets beside the `.vtt` file.
    public func webVTT(sheetURL: (Int) -> String) -> String {
        var text = "WEBVTT\n"
        for cue in cues {
            text += "\n\(Self.timestamp(cue.start)) --> \(Self.timestamp(cue.end))\n"
            text += "\(sheetURL(cue.sheet))#xywh=\(cue.rect.x),\(cue.rect.y),\(cue.rect.width),\(cue.rect.height)\n"
        }
        return text
    }

    /// `HH:MM:SS.mmm`, WebVTT's timestamp (hours take more digits past 99), rounded to the millisecond.
    public static func timestamp(_ seconds: Double) -> String {
        let milliseconds = seconds.isFinite ? Int((min(max(0, seconds), 1e12) * 1000).rounded()) : 0
        let hours = milliseconds / 3_600_000, minutes = milliseconds / 60_000 % 60
        let wholeSeconds = milliseconds / 1000 % 60, fraction = milliseconds % 1000
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(wholeSeconds, 2)).\(pad(fraction, 3))"
    }
}

extension FrameSampler {
    /// Samples one frame per interval of `every` seconds across the whole clip and tiles them into
    /// sheets, handing each sheet to `onSheet` as soon as it is full (so at most one sheet of tiles is
    /// held); returns the cues.
    ///
    /// Each interval's frame is taken near its middle. With `.auto` (the default) it is the keyframe
    /// nearest the middle when one lies inside the interval, which decodes one frame per tile, and the
    /// exact frame at the middle otherwise; with `.exact` always the frame displayed at the middle;
    /// either way the frame's time lies inside its cue. `.keyframe` takes the keyframe at or before the
    /// middle, the fastest, which in a clip whose keyframes are further apart than `every` may come
    /// from an earlier interval.
    ///
    /// - Parameters:
    ///   - every: the cue length in seconds, above 0: one thumbnail per interval, the last one cut at
    ///     the clip's end.
    ///   - layout: the tile size, and how many columns and rows a sheet holds.
    ///   - mode: how each frame fills its tile (aspect-fill by default).
    ///   - accuracy: which frame stands for an interval, as above (default `.auto`).
    ///   - pick: `.even` (the default) takes each interval's frame as above; `.scenes` first finds the
    ///     shot changes, and an interval a cut splits shows the exact frame at the middle of its longest
    ///     shot (the first on a tie), while intervals without a cut are taken as with `.even`. Needs an
    ///     input that can seek.
    ///   - maxThumbnails: the most thumbnails the track may have; more throws ``PreviewLoopError/Code/tooLarge``
    ///     before anything is decoded.
    ///   - progress: called after each batch of frames with (frames done, frames in all).
    ///   - onSheet: receives each sheet's index (from 0) and picture; the last sheet holds only the rows it needs.
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` when the duration is unknown or `every` is not above 0.
    public func thumbnailTrack(every: Double, layout: ThumbnailTrack.Layout = .init(), mode: ContentMode = .aspectFill,
                               accuracy: SeekAccuracy = .auto, pick: TilePick = .even, maxThumbnails: Int = 1_000_000,
                               progress: (Int, Int) -> Void = { _, _ in },
                               onSheet: (Int, RGBImage) throws(PreviewLoopError) -> Void) throws(PreviewLoopError) -> ThumbnailTrack {
        guard every > 0, every.isFinite else { throw PreviewLoopError(.invalidArgument, "the thumbnail interval must be above 0 s") }
        guard layout.columns > 0, layout.rows > 0, layout.tileSize.width > 0, layout.tileSize.height > 0 else {
            throw PreviewLoopError(.invalidArgument, "a sprite sheet needs at least one row and one column of tiles of a positive size, "
                + "not \(layout.columns)x\(layout.rows) tiles of \(layout.tileSize)")
        }
        guard let duration = info.duration, duration > 0 else {
            throw PreviewLoopError(.invalidArgument, "the clip's duration is unknown or 0: thumbnails need it to cover the clip")
        }
        let wanted = ThumbnailTrack.thumbnailCount(duration: duration, every: every)
        guard wanted <= Double(maxThumbnails) else {
            throw PreviewLoopError(.tooLarge, "one thumbnail every \(DecimalText.fixed(every, 3)) s of \(DecimalText.fixed(duration, 3)) s "
                + "would be \(DecimalText.fixed(wanted, 0)) thumbnails, more than the limit of \(maxThumbnails)")
        }
        let intervals = ThumbnailTrack.intervals(duration: duration, every: every)
        // Scenes: the whole clip's cuts first; an interval a cut splits shows the middle of its longest shot.
        var cutTimes: [Double] = []
        if pick == .scenes {
            guard decoder.isSeekable else {
                throw PreviewLoopError(.invalidArgument, "\(decoder.source): scene picks need a seekable input "
                    + "(a file, or a URL whose server takes range requests), not a pipe; use --pick even")
            }
            cutTimes = try sceneCuts(start: 0, length: duration).cuts.map(\.time)
        }
        var cues: [ThumbnailTrack.Cue] = [], tiles: [RGBImage] = []
        var index = 0
        while index < intervals.count {
            // Batches of up to 10 intervals of one length (the last interval may be shorter).
            let length = intervals[index].end - intervals[index].start
            var batch = [intervals[index]]
            while batch.count < 10, index + batch.count < intervals.count,
                  abs(intervals[index + batch.count].end - intervals[index + batch.count].start - length) < 1e-9 {
                batch.append(intervals[index + batch.count])
            }
            // Aim 1 ms before the middle with an interval 2 ms short: the keyframe search window then runs
            // from the cue's start (included) to just before its end (excluded, it is the next cue's).
            let nudge = min(0.001, length / 4)
            var frames = try frames(at: batch.map { ($0.start + $0.end) / 2 - nudge }, size: layout.tileSize, mode: mode,
                                    accuracy: accuracy, interval: length - 2 * nudge)
            for (position, interval) in batch.enumerated() {
                guard let time = ThumbnailTrack.longestShotMiddle(start: interval.start, end: interval.end, cuts: cutTimes) else { continue }
                frames[position] = try frame(at: time, size: layout.tileSize, mode: mode, accuracy: .exact)
            }
            for (interval, frame) in zip(batch, frames) {
                let place = layout.place(cues.count)
                cues.append(.init(start: interval.start, end: interval.end, sheet: place.sheet, rect: place.rect,
                                  frameTime: frame.sourceTime))
                tiles.append(frame.image)
                if tiles.count == layout.tilesPerSheet || cues.count == intervals.count {
                    try onSheet(place.sheet, RGBImage.tiled(tiles, columns: layout.columns))
                    tiles = []
                }
            }
            index += batch.count
            progress(index, intervals.count)
        }
        return ThumbnailTrack(layout: layout, cues: cues)
    }
}
