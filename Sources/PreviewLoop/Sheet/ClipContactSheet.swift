import Glibc

/// A contact sheet of a whole clip, as `preview-loop sheet` and a batch recipe's `"sheet"` make it: a
/// header (file name and details), then a grid of frames across the clip, each with its time.
///
/// ```swift
/// let sampler = try FrameSampler(source: .file("clip.mp4"))
/// let configuration = ClipContactSheet.Configuration()          // 4x4 tiles, 1280 wide, header, times
/// let drawer = try ContactSheet(style: configuration.style, hasHeader: configuration.showsHeader)
/// let sheet = try sampler.contactSheet(configuration, drawer: drawer, name: "clip.mp4", fileSize: nil)
/// sheet.image   // RGBImage
/// ```
public struct ClipContactSheet: Sendable {
    /// What a sheet takes and how it lays it out.
    public struct Configuration: Hashable, Sendable {
        /// The most tiles a sheet takes.
        public static let maximumTiles = 400

        /// Tiles per row, 1 to 100 (default 4).
        public var columns = 4
        /// Rows of tiles, 1 to 100, at most ``maximumTiles`` tiles in all (default 4).
        public var rows = 4
        /// The sheet's width (default 1280): the tiles share what margins and gaps leave. Ignored when
        /// ``tileWidth`` is set.
        public var sheetWidth = 1280
        /// Each tile's width, 16 to 4096; `nil` (the default) to derive it from ``sheetWidth``.
        public var tileWidth: Int?
        /// Pixels between tiles and below the header, 0 to 256 (default 6).
        public var gap = 6
        /// Pixels around everything, 0 to 1024 (default 12).
        public var margin = 12
        /// Whether the header is drawn (default yes).
        public var showsHeader = true
        /// Colours, fonts and whether tiles show their times (default: black, white, times shown).
        public var style = ContactSheetStyle()
        /// Which frame answers each time (default exact: neighbouring slices never share a keyframe).
        public var accuracy = SeekAccuracy.exact
        /// How the tiles' times are chosen (default even slices).
        public var pick = TilePick.even
        /// The format the sheet will be written in, when known: its encoder's limits (AVIF's 8704 rows,
        /// JPEG's 65535) are then checked before any decoding too.
        public var outputFormat: ImageFileFormat?

        /// Creates the default configuration.
        public init() {}

        /// Each tile's width: ``tileWidth``, or what ``sheetWidth`` leaves each column (`nil` when it
        /// leaves less than a pixel).
        public var effectiveTileWidth: Int? {
            tileWidth ?? ContactSheetLayout.tileWidth(sheetWidth: sheetWidth, columns: columns, gap: gap, margin: margin)
        }

        /// The sheet's width in pixels.
        public var effectiveSheetWidth: Int {
            tileWidth.map { 2 * margin + columns * $0 + (columns - 1) * gap } ?? sheetWidth
        }

        /// Checks what can be checked before the clip is opened.
        ///
        /// - Throws: ``PreviewLoopError/Code/invalidArgument`` naming the value out of range.
        public func validate() throws(PreviewLoopError) {
            guard ValueRanges.sheetGrid.contains(columns), ValueRanges.sheetGrid.contains(rows), columns * rows <= Self.maximumTiles else {
                throw PreviewLoopError(.invalidArgument, "a sheet's grid is \(ValueRanges.sheetGrid.inWords) columns by \(ValueRanges.sheetGrid.inWords) rows, at most "
                    + "\(Self.maximumTiles) tiles, not \(columns)x\(rows)")
            }
            guard ValueRanges.tileGap.contains(gap), ValueRanges.sheetMargin.contains(margin) else {
                throw PreviewLoopError(.invalidArgument, "a sheet's gap is \(ValueRanges.tileGap.inWords) and its margin \(ValueRanges.sheetMargin.inWords) pixels, "
                    + "not \(gap) and \(margin)")
            }
            if let tileWidth, !ValueRanges.sheetTileWidth.contains(tileWidth) {
                throw PreviewLoopError(.invalidArgument, "a sheet's tile width is \(ValueRanges.sheetTileWidth.inWords) pixels, not \(tileWidth)")
            }
            guard let width = effectiveTileWidth, width >= 16 else {
                throw PreviewLoopError(.invalidArgument, "a \(sheetWidth)-pixel sheet leaves tiles under 16 pixels wide with "
                    + "\(columns) columns, a gap of \(gap) and a margin of \(margin)")
            }
            guard ValueRanges.sheetWidth.contains(effectiveSheetWidth) else {
                throw PreviewLoopError(.invalidArgument, "\(columns) tiles of \(width) pixels with their gaps and margins make a "
                    + "sheet \(effectiveSheetWidth) pixels wide; 16 to \(ImageFileFormat.maxWebPSide)")
            }
        }
    }

    /// The composed sheet.
    public var image: RGBImage
    /// Each tile's size.
    public var tileSize: Size
    /// Where everything went.
    public var layout: ContactSheetLayout
    /// What was chosen: the tiles' choices and frames, near-duplicates dropped, the cut search for
    /// ``TilePick/scenes``.
    public var plan: TilePlan
    /// The clip's duration, which the sheet covers.
    public var clipDuration: Double
}

extension FrameSampler {
    /// The clip's contact sheet with the parts made for you: the drawer from `configuration`'s style and
    /// header setting (DejaVu fonts unless the style names others), the header naming the source (its
    /// last path component) and, for a local file, its size. See
    /// ``contactSheet(_:drawer:name:fileSize:)-yzr5`` for the errors.
    ///
    /// ```swift
    /// let sampler = try FrameSampler(source: .file("clip.mp4"))
    /// let sheet = try sampler.contactSheet(.init())
    /// try ImageEncoder.write(sheet.image, as: .jpeg, to: "sheet.jpg")
    /// ```
    public func contactSheet(_ configuration: ClipContactSheet.Configuration) throws(PreviewLoopError) -> ClipContactSheet {
        let drawer = try ContactSheet(style: configuration.style, hasHeader: configuration.showsHeader)
        let input = decoder.input.source.description
        return try contactSheet(configuration, drawer: drawer, name: ContactSheetHeader.displayName(of: input),
                                fileSize: ContactSheetHeader.fileSize(of: input))
    }

    /// A contact sheet of this whole clip: the tiles' size from the configuration and the clip's display
    /// aspect, the frames chosen (``tilePlan(pick:count:start:length:evenTimes:size:mode:accuracy:interval:settings:)``
    /// over the whole duration), then drawn with `drawer` under a header naming `name` (and `fileSize`).
    ///
    /// - Parameters:
    ///   - configuration: the grid, tile width, gaps, margin, timestamps, pick and quality.
    ///   - drawer: the sheet's drawer, made from the configuration's style and header setting (so a
    ///     missing font is found before the clip is opened).
    ///   - name: the header's title (``ContactSheetHeader/displayName(of:)`` of the input).
    ///   - fileSize: the input's size in bytes for the header, when known.
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for a configuration out of range, a clip whose
    ///   duration is unknown or 0, or a sheet more than 16383 pixels tall (WebP's limit);
    ///   ``PreviewLoopError/Code/tooLarge`` for a sheet FFmpeg's encoders cannot take or one holding more than
    ///   ``OutputLimits/defaultMemoryBytes`` (16 bytes a pixel while drawn and encoded); any sampling error.
    public func contactSheet(_ configuration: ClipContactSheet.Configuration, drawer: ContactSheet, name: String,
                             fileSize: Int?) throws(PreviewLoopError) -> ClipContactSheet {
        try configuration.validate()
        guard let duration = info.duration, duration > 0 else {
            throw PreviewLoopError(.invalidArgument, "a contact sheet covers the whole clip and needs its duration, "
                + "which is unknown or 0")
        }
        let tileWidth = configuration.effectiveTileWidth!
        let tileSize = Size(width: tileWidth,
                            height: ContactSheetLayout.tileHeight(tileWidth: tileWidth, displaySize: info.displaySize))
        var layout = try ContactSheetLayout(columns: configuration.columns, rows: configuration.rows, tileSize: tileSize,
                                            gap: configuration.gap, margin: configuration.margin,
                                            headerHeight: configuration.showsHeader ? drawer.headerHeight : 0)
        guard layout.size.height <= ImageFileFormat.maxWebPSide else {
            throw PreviewLoopError(.invalidArgument, "the sheet would be \(layout.size) pixels (tiles of \(tileSize) for a "
                + "\(info.displaySize) picture); at most \(ImageFileFormat.maxWebPSide) a side: use fewer rows or narrower tiles")
        }
        // Refused before any decoding: a sheet no encoder takes, or one that would hold more than a command may.
        if let refusal = configuration.outputFormat.flatMap({ OutputLimits.encoderRefusal(layout.size, format: $0) })
            ?? OutputLimits.encoderRefusal(layout.size, webp: false) {
            throw PreviewLoopError(.tooLarge, "the sheet would be \(layout.size) pixels: \(refusal); use fewer rows or narrower tiles")
        }
        let bytes = OutputLimits.stillBytes(layout.size)
        guard bytes <= Double(OutputLimits.defaultMemoryBytes) else {
            throw PreviewLoopError(.tooLarge, "the sheet would be \(layout.size) pixels, about \(Int(bytes / 1_048_576)) MB of pictures "
                + "while it is drawn and encoded, more than the limit of \(OutputLimits.defaultMemoryBytes >> 20) MB; use a smaller width or fewer rows")
        }
        let span = SampleSpan(start: 0, length: duration)
        let count = configuration.columns * configuration.rows
        var plan = try tilePlan(pick: configuration.pick, count: count, start: span.start, length: span.length,
                                evenTimes: span.sampleTimes(count: count), size: tileSize, mode: .aspectFill,
                                accuracy: configuration.accuracy, interval: span.interval(count: count))
        // Fewer distinct shots than places: the rows they fill, the last completed with spare frames.
        let grid = plan.fillRows(columns: configuration.columns, rows: configuration.rows)
        if grid != (configuration.columns, configuration.rows) {
            layout = try ContactSheetLayout(columns: grid.columns, rows: grid.rows, tileSize: tileSize, gap: configuration.gap,
                                            margin: configuration.margin,
                                            headerHeight: configuration.showsHeader ? drawer.headerHeight : 0)
        }
        let tiles = plan.frames.map { ContactSheetTile(image: $0.image, time: $0.sourceTime) }
        let header = ContactSheetHeader(name: name, info: info, fileSize: fileSize)
        let image = try drawer.render(tiles, layout: layout, header: configuration.showsHeader ? header : nil,
                                      clipDuration: duration)
        return ClipContactSheet(image: image, tileSize: tileSize, layout: layout, plan: plan, clipDuration: duration)
    }
}

extension ContactSheetHeader {
    /// The name a header shows for an input: a path's or URL's last component, without a URL's query.
    public static func displayName(of input: String) -> String {
        var text = Substring(input)
        if let query = text.firstIndex(where: { $0 == "?" || $0 == "#" }), input.contains("://") { text = text[..<query] }
        let name = text.split(separator: "/").last.map(String.init) ?? input
        return name.isEmpty ? input : name
    }

    /// A local file's size in bytes, for the header; `nil` for URLs, standard input or when it cannot be read.
    public static func fileSize(of input: String) -> Int? {
        guard case .file(let path) = Source(argument: input) else { return nil }
        var status = stat()
        guard FileSystem.stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(status.st_size)
    }
}
