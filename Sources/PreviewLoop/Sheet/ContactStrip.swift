/// A contact strip: frames taken across a span of a clip, tiled left to right, top to bottom, in one
/// picture — and what was chosen (the span, each tile's time and why).
///
/// ```swift
/// let sampler = try await FrameSampler(source: .file("clip.mp4"))
/// let strip = try await sampler.contactStrip(.init(count: 8, columns: 4, span: .window(start: .percent(10), length: 30)))
/// strip.image       // RGBImage, 4x2 tiles of 160x90
/// strip.tileTimes   // the time of the frame each tile shows, seconds from the stream's start
/// ```
///
/// With ``TilePick/even`` (the default) tile `i` of `n` is the frame at the middle of slice `i`:
/// `start + (i + 0.5) * length / n`, taken with the configuration's ``SeekAccuracy``; with
/// ``TilePick/scenes``, the first frame of each shot (see ``FrameSampler/tilePlan(pick:count:start:length:evenTimes:size:mode:accuracy:interval:settings:)``).
public struct ContactStrip: Sendable {
    /// Which part of the clip a strip samples.
    public enum Span: Hashable, Sendable {
        /// From `start` for `length`, cut at the end of the clip; either may be a percentage of the
        /// video's duration, resolved against the open input.
        case window(start: TimePosition, length: TimePosition)
        /// The whole clip (its duration must be known).
        case wholeClip
    }

    /// What a strip takes and how it lays the tiles out.
    public struct Configuration: Hashable, Sendable {
        /// The most tiles a strip takes.
        public static let maximumCount = ValueRanges.stripCount.upperBound

        /// How many frames, 1 to ``maximumCount`` (default 8).
        public var count: Int
        /// Tiles per row; `nil` (the default) for one row. More than ``count`` is reduced to it.
        public var columns: Int?
        /// Each tile's size (default 160x90, turned for a portrait source).
        public var tileSize: SizeRequest
        /// The part of the clip sampled (default the first 15 s).
        public var span: Span
        /// Which frame answers each time (default ``SeekAccuracy/auto``: a keyframe within half a slice,
        /// else the exact frame).
        public var accuracy: SeekAccuracy
        /// How each picture fills its tile (default aspect-fill).
        public var contentMode: ContentMode
        /// How the tiles' times are chosen (default even slices).
        public var pick: TilePick
        /// Pixels between neighbouring tiles, 0 to 256, drawn in ``style``'s background (default 0).
        public var gap: Int
        /// The background and, when ``ContactSheetStyle/showsTimestamps`` is set, each tile's time in its
        /// bottom-right corner (default: black, no times).
        public var style: ContactSheetStyle
        /// The thresholds of ``TilePick/scenes``.
        public var sceneSettings: ScenePickSettings

        /// Creates a configuration; every parameter has the documented default.
        public init(count: Int = 8, columns: Int? = nil, tileSize: SizeRequest = .orientedBox(Size(width: 160, height: 90)),
                    span: Span = .window(start: .zero, length: 15), accuracy: SeekAccuracy = .auto,
                    contentMode: ContentMode = .aspectFill, pick: TilePick = .even, gap: Int = 0,
                    style: ContactSheetStyle = ContactStrip.Configuration.defaultStyle,
                    sceneSettings: ScenePickSettings = .init()) {
            self.count = count
            self.columns = columns
            self.tileSize = tileSize
            self.span = span
            self.accuracy = accuracy
            self.contentMode = contentMode
            self.pick = pick
            self.gap = gap
            self.style = style
            self.sceneSettings = sceneSettings
        }

        /// A strip's default style: a black background, no times.
        public static var defaultStyle: ContactSheetStyle {
            var style = ContactSheetStyle()
            style.showsTimestamps = false
            return style
        }

        /// Tiles per row: ``columns`` or one row, never more than ``count``.
        public var effectiveColumns: Int { min(columns ?? count, count) }

        /// Rows of tiles.
        public var rows: Int {
            let columns = effectiveColumns
            return columns > 0 ? (count + columns - 1) / columns : 0
        }

        /// Each tile's size in pixels for a source whose upright picture is `display`.
        public func tileSize(display: Size) -> Size {
            tileSize.resolved(display: display)
        }

        /// The whole strip's size for tiles of `tileSize`: the tiles with their gaps.
        public func stripSize(tileSize: Size) -> Size {
            let columns = effectiveColumns, rows = self.rows
            return Size(width: columns * tileSize.width + (columns - 1) * gap, height: rows * tileSize.height + (rows - 1) * gap)
        }

        /// Checks what can be checked before the clip is opened.
        ///
        /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for a count, column count or gap out of
        ///   range, or an unusable window.
        public func validate() throws(PreviewLoopError) {
            guard ValueRanges.stripCount.contains(count) else {
                throw PreviewLoopError(.invalidArgument, "a strip takes \(ValueRanges.stripCount.lowerBound) to \(ValueRanges.stripCount.upperBound) frames, not \(count)")
            }
            if let columns, !ValueRanges.stripColumns.contains(columns) {
                throw PreviewLoopError(.invalidArgument, "a strip takes \(ValueRanges.stripColumns.lowerBound) to \(ValueRanges.stripColumns.upperBound) columns, not \(columns)")
            }
            guard ValueRanges.tileGap.contains(gap) else {
                throw PreviewLoopError(.invalidArgument, "a strip's gap must be \(ValueRanges.tileGap.lowerBound) to \(ValueRanges.tileGap.upperBound) pixels, not \(gap)")
            }
            if case .window(let start, let length) = span {
                try start.validate("the window's start")
                try length.validate("the window's length")
            }
        }
    }

    /// The composed picture.
    public var image: RGBImage
    /// The span sampled, seconds from the stream's start, resolved against the clip's duration (a
    /// window is cut at the clip's end).
    public var span: Range<Double>
    /// Each tile's size.
    public var tileSize: Size
    /// Tiles per row.
    public var columns: Int
    /// Rows of tiles.
    public var rows: Int
    /// What was chosen: the tiles' choices and frames (in the order they are tiled), near-duplicates
    /// dropped, and the cut search for ``TilePick/scenes``.
    public var plan: TilePlan

    /// The time of the frame each tile shows, seconds from the stream's start, in tile order.
    public var tileTimes: [Double] { plan.frames.map(\.sourceTime) }
}

extension FrameSampler {
    /// A contact strip of this clip: the span resolved against the clip's duration, the frames taken,
    /// then tiled.
    ///
    /// The configuration is checked, and the font opened when the style shows times, before anything
    /// is decoded. The strip is at most ``SizeRequest/maximumSide`` pixels a side.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for an unusable configuration or span (a
    ///   percentage or the whole clip when the duration is unknown, a window at or past the end);
    ///   ``PreviewLoopError/Code/tooLarge`` for a strip over the size limit;
    ///   ``PreviewLoopError/Code/inputNotFound`` for a missing font; any sampling error.
    public func contactStrip(_ configuration: ContactStrip.Configuration = .init()) throws(PreviewLoopError) -> ContactStrip {
        try configuration.validate()
        // With gaps or times the strip is a contact sheet without header or margins; the font is
        // checked before any decoding.
        let drawer = configuration.gap > 0 || configuration.style.showsTimestamps
            ? try ContactSheet(style: configuration.style, hasHeader: false) : nil
        let tileSize = configuration.tileSize(display: info.displaySize)
        let stripSize = configuration.stripSize(tileSize: tileSize)
        guard stripSize.width <= SizeRequest.maximumSide, stripSize.height <= SizeRequest.maximumSide else {
            throw PreviewLoopError(.tooLarge, "\(decoder.input.source): a strip of \(configuration.effectiveColumns)x"
                + "\(configuration.rows) tiles of \(tileSize) would be \(stripSize) pixels; at most "
                + "\(SizeRequest.maximumSide) a side")
        }
        let span: SampleSpan
        do throws(PreviewLoopError) {
            span = try SampleSpan.resolve(configuration.span, duration: info.duration)
        } catch {
            throw PreviewLoopError(error.code, "\(decoder.input.source): \(error.message)")
        }
        let count = configuration.count, columns = configuration.effectiveColumns
        let plan = try tilePlan(pick: configuration.pick, count: count, start: span.start, length: span.length,
                                evenTimes: span.sampleTimes(count: count), size: tileSize, mode: configuration.contentMode,
                                accuracy: configuration.accuracy, interval: span.interval(count: count),
                                settings: configuration.sceneSettings)
        let frames = plan.frames
        let rows = (frames.count + columns - 1) / columns
        let image: RGBImage
        if let drawer {
            let layout = try ContactSheetLayout(columns: columns, rows: rows, tileSize: tileSize, gap: configuration.gap)
            image = try drawer.render(frames.map { ContactSheetTile(image: $0.image, time: $0.sourceTime) }, layout: layout,
                                      header: nil, clipDuration: info.duration)
        } else {
            image = try RGBImage.tiled(frames.map(\.image), columns: columns)
        }
        return ContactStrip(image: image, span: span.start..<(span.start + span.length), tileSize: tileSize,
                            columns: columns, rows: rows, plan: plan)
    }
}

extension FrameSampler {
    /// A contact strip, off the calling thread: cancelling the task interrupts the sampling and throws
    /// ``PreviewLoopError/Code/cancelled``. See ``contactStrip(_:)``.
    public func contactStrip(_ configuration: ContactStrip.Configuration = .init()) async throws(PreviewLoopError) -> ContactStrip {
        try await detached { sampler throws(PreviewLoopError) in try sampler.contactStrip(configuration) }
    }
}

extension SampleSpan {
    /// A strip's span, resolved against the clip's `duration`.
    package static func resolve(_ span: ContactStrip.Span, duration: Double?) throws(PreviewLoopError) -> SampleSpan {
        switch span {
        case .window(let start, let length): try window(start: start, length: length, duration: duration)
        case .wholeClip: try wholeClip(duration: duration)
        }
    }
}
