import Glibc
import PreviewLoop

/// `preview-loop sheet` as a job: its options (declared once, for every front end), checks and work.
struct SheetCommand: Equatable, Sendable {
    /// The input and how it is read: `<input>`, `--timeout`, `--deadline`, `--threads`, `--allow-redirects`,
    /// `--tonemap` (the input group).
    var source = InputOptions()
    /// `-o` as typed, which becomes ``output`` and ``format``.
    @Option(OutputOptions.image, folded: true) var outputOption: String? = nil
    /// The image to write (`-o`, `--output`).
    var output = ""
    /// `--format` as typed, which with the output's extension becomes ``format``.
    @Option(OutputOptions.imageFormat, folded: true) var formatOption: ImageFileFormat? = nil
    /// The image format, chosen by the output's extension.
    var format = ImageFileFormat.png
    /// `--grid` as typed, which becomes ``columns`` and ``rows``.
    @Option(SheetCommand.grid, folded: true) var gridOption = SheetCommand.grid.defaultValue
    /// Tiles per row (`--grid` C).
    var columns = SheetCommand.grid.defaultValue.width
    /// Rows of tiles (`--grid` R).
    var rows = SheetCommand.grid.defaultValue.height
    /// The whole sheet's width (`--width`); the tiles share what margins and gaps leave. Ignored when
    /// ``tileWidth`` is set.
    @Option(SheetCommand.width) var sheetWidth = SheetCommand.width.defaultValue
    /// Each tile's width (`--tile-width`); `nil` to derive it from ``sheetWidth``.
    @Option(SheetCommand.tileWidth) var tileWidth: Int? = nil
    /// Pixels between tiles and below the header (`--gap`).
    @Option(SheetCommand.gap) var gap = SheetCommand.gap.defaultValue
    /// Pixels around everything (`--margin`).
    @Option(SheetCommand.margin) var margin = SheetCommand.margin.defaultValue
    /// `--background`, `--text-color`, `--font`, `--no-header` and `--no-timestamps` as given, which
    /// become ``style`` and ``showsHeader``.
    @Option(SheetCommand.background, folded: true) var backgroundOption = SheetCommand.background.defaultValue
    @Option(SheetCommand.textColor, folded: true) var textColorOption = SheetCommand.textColor.defaultValue
    @Option(SheetCommand.font, folded: true) var fontOption: String? = nil
    @Flag(SheetCommand.noHeader, folded: true) var noHeaderOption = false
    @Flag(SheetCommand.noTimestamps, folded: true) var noTimestampsOption = false
    /// Whether the header is drawn (`--no-header` turns it off).
    var showsHeader = true
    /// Colours, fonts and tile times (`--background`, `--text-color`, `--font`, `--no-timestamps`).
    var style = ContactSheetStyle()
    /// Lossy quality 0–100 (`-q`, `--quality`); `nil` for the format's default (or a lossless format).
    @Option(OutputOptions.imageQuality) var quality: Int? = nil
    /// Which frame answers each time (`--accuracy`): exact by default, since `auto` may give two
    /// neighbouring slices the same keyframe and a sheet's tiles should all differ.
    @Option(SheetCommand.accuracy) var accuracy = SheetCommand.accuracy.defaultValue
    /// How the tiles' times are chosen (`--pick`): even slices, or shot changes.
    @Option(TilePlanOptions.pick) var pick = TilePlanOptions.pick.defaultValue
    /// Whether one JSON record (the batch record's schema, with the chosen tiles) replaces the summary line (`--json`).
    @Flag(ReportOptions.json) var json = false
    /// Progress and quiet (`--progress`, `--quiet`).
    var reporting = ReportingOptions()
}

extension SheetCommand: ClipOutputCommand, ReportsProgress {
    /// `preview-loop sheet`: its name, summary and arguments.
    static let configuration = CommandConfiguration(
        name: "sheet",
        abstract: "Write a contact sheet of the whole clip: a header (name, duration, size, codec, frame rate, bit "
            + "rate, file size), then a grid of frames with their times.",
        arguments: [.input])

    func make(report: ClipReport?) throws -> Int32 { try SheetRun(options: self, report: report).run() }
}

extension SheetCommand {
    /// The most tiles a sheet takes.
    static let maximumTiles = 400

    /// `--grid <CxR>`.
    static let grid = ValueOption<Size>(
        "grid", value: "CxR",
        help: "C columns by R rows of tiles, each \(ValueRanges.sheetGrid.inWords), at most \(maximumTiles) "
            + "tiles; the frames are taken at the middles of C×R equal slices of the clip.",
        default: Size(width: 4, height: 4), showing: "4x4",
        expecting: "COLUMNSxROWS, each \(ValueRanges.sheetGrid.inWords), at most \(maximumTiles) tiles, for example 4x4") { text in
        Size(parsing: text).flatMap {
            ValueRanges.sheetGrid.contains($0.width) && ValueRanges.sheetGrid.contains($0.height) && $0.area <= maximumTiles ? $0 : nil
        }
    }.parameter()
    /// `--width <px>`: the sheet's.
    static let width = ValueOption<Int>.integer(
        "width", value: "px",
        help: "The sheet's width, \(ValueRanges.sheetWidth.inWords): the tiles share what the margins and gaps leave "
            + "(so the sheet may come out up to C-1 pixels narrower); their height keeps the picture's "
            + "display aspect ratio. Not with --tile-width.",
        default: 1280, in: ValueRanges.sheetWidth).parameter()
    /// `--tile-width <px>`.
    static let tileWidth = ValueOption<Int?>.optionalInteger(
        "tile-width", value: "px", help: "Each tile's width instead, \(ValueRanges.sheetTileWidth.inWords); the sheet's width follows from it.",
        in: ValueRanges.sheetTileWidth).parameter()
    /// `--gap <px>`.
    static let gap = ValueOption<Int>.integer("gap", value: "px", help: "Pixels between tiles and below the header, \(ValueRanges.tileGap.inWords).",
                                         default: 6, in: ValueRanges.tileGap).parameter()
    /// `--margin <px>`.
    static let margin = ValueOption<Int>.integer("margin", value: "px", help: "Pixels around everything, \(ValueRanges.sheetMargin.inWords).",
                                            default: 12, in: ValueRanges.sheetMargin).parameter()
    /// `--background <color>`.
    static let background = opaqueColor(
        "background", help: "The colour of the margins, gaps and header: #rrggbb, #rgb, black or white.",
        default: ContactSheetStyle().background, showing: "black").parameter()
    /// `--text-color <color>`.
    static let textColor = opaqueColor(
        "text-color", help: "The colour of the header and of the tile times, in the same forms.",
        default: ContactSheetStyle().textColor, showing: "white").parameter()
    /// `--font <file>`.
    static let font = ValueOption<String?>.path(
        "font", value: "file",
        help: "A TrueType/OpenType font for all text, instead of DejaVu Sans (header) and DejaVu "
            + "Sans Mono (times) from Debian's fonts-dejavu-core.")
    /// `--no-header`.
    static let noHeader = FlagOption("no-header", help: "Leave out the header (file name; duration, display size, codec, frame rate, bit "
                                   + "rate, file size).").recipeKey("header", inverted: true)
    /// `--no-timestamps`.
    static let noTimestamps = FlagOption("no-timestamps", help: "Leave out the times on the tiles.").recipeKey("timestamps", inverted: true)
    /// `--accuracy <accuracy>`.
    static let accuracy = ValueOption<SeekAccuracy>.choice(
        "accuracy", value: "accuracy",
        help: "exact (the frame shown at each slice's middle), keyframe (the nearest keyframe at or "
            + "before it; fastest) or auto (a keyframe when one lies within half a slice, otherwise "
            + "exact; two slices may then share a keyframe). Each tile prints the time of the frame it shows.",
        default: .exact).parameter()

    /// An opaque colour: `#rrggbb`, `#rgb`, `black` or `white` (a sheet has no transparency).
    static func opaqueColor(_ name: String, help: String, default defaultValue: RGBAColor, showing: String) -> ValueOption<RGBAColor> {
        ValueOption(name, value: "color", help: help, default: defaultValue, showing: showing,
               expecting: "an opaque colour: #rrggbb, #rgb, black or white") { text in
            RGBAColor(parsing: text).flatMap { $0.isOpaque ? $0 : nil }
        }
    }

    /// Takes the input and the output with its format, and turns the folded options into the grid,
    /// the style and the header.
    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        source.input = try arguments.input()
        (output, format) = try arguments.imageOutput()
        style.background = try arguments.value(Self.background)
        style.textColor = try arguments.value(Self.textColor)
        style.fontPath = try arguments.value(Self.font)
        let grid = try arguments.value(Self.grid)
        (columns, rows) = (grid.width, grid.height)
        if let tileWidth { sheetWidth = 2 * margin + columns * tileWidth + (columns - 1) * gap }
        showsHeader = !arguments.isSet(Self.noHeader)
        style.showsTimestamps = !arguments.isSet(Self.noTimestamps)
    }

    /// Whether the values, each valid on its own, go together.
    func validate() throws(UsageError) {
        if $sheetWidth.isGiven && $tileWidth.isGiven {
            throw UsageError(.conflictingOptions("width", "tile-width"), subcommand: Self.subcommand,
                             "'--width' and '--tile-width' both set the tiles' width; give one of them.")
        }
        if tileWidth == nil, ContactSheetLayout.tileWidth(sheetWidth: sheetWidth, columns: columns, gap: gap, margin: margin)
                    .map({ $0 < 16 }) ?? true {
            throw UsageError(.conflictingOptions("width", "grid"), subcommand: Self.subcommand,
                             "A \(sheetWidth)-pixel sheet leaves tiles under 16 pixels wide with \(columns) columns, "
                                 + "--gap \(gap) and --margin \(margin); use a larger --width or fewer columns.")
        }
        if sheetWidth > ImageFileFormat.maxWebPSide {
            throw UsageError(.conflictingOptions("tile-width", "grid"), subcommand: Self.subcommand,
                             "\(columns) tiles of \(tileWidth ?? 0) pixels with their gaps and margins make a sheet "
                                 + "\(sheetWidth) pixels wide; at most \(ImageFileFormat.maxWebPSide): use a smaller --tile-width or fewer columns.")
        }
        try ScannedArguments.checkQuality(quality, option: OutputOptions.imageQuality, lossy: format.isLossy, output: output,
                                          for: Self.subcommand)
        try ScannedArguments.checkReportJSON(json, output: output, for: Self.subcommand)
    }
}

extension SheetCommand {
    /// The library's sheet configuration for these options (what a batch recipe's `"sheet"` builds too).
    var sheetConfiguration: ClipContactSheet.Configuration {
        var configuration = ClipContactSheet.Configuration()
        configuration.columns = columns
        configuration.rows = rows
        configuration.sheetWidth = sheetWidth
        configuration.tileWidth = tileWidth
        configuration.gap = gap
        configuration.margin = margin
        configuration.showsHeader = showsHeader
        configuration.style = style
        configuration.accuracy = accuracy
        configuration.pick = pick
        configuration.outputFormat = format
        return configuration
    }
}

/// One run of `preview-loop sheet` on the command line: a contact sheet of the whole clip — a header, then a grid of frames taken at
/// the middles of equal slices of the clip, each with its time — written whole or not at all.
struct SheetRun {
    /// The parsed options.
    var options: SheetCommand
    /// With `--json`: what was done, printed as one batch record instead of the summary line.
    var report: ClipReport? = nil

    /// Samples the frames, draws the sheet, writes it and prints one summary line on standard output.
    func run() throws -> Int32 {
        try ImageDestination.check(options.output)
        let (bytes, made) = try render()
        let plan = made.plan, sheet = made.image, tileSize = made.tileSize, duration = made.clipDuration
        let frames = plan.frames
        let tiles = frames.map { ContactSheetTile(image: $0.image, time: $0.sourceTime) }
        try ImageDestination.write(bytes, to: options.output)
        if let report {
            var output = ClipReport.output("sheet", options.output)
            output.describeTiles(of: sheet, plan: plan)
            report.add(output, timing: "sheet")
            try report.print()
            return ExitStatus.success
        }
        // A scene sheet with fewer distinct shots than places says which grid it drew instead.
        let grid = plan.grid.map { grid in
            "\(grid) tiles (\(plan.tiles.filter { $0.reason != .spread }.count) distinct shots for the \(plan.gridAsked ?? grid) asked"
                + (plan.tiles.contains { $0.reason == .spread } ? "; the last row completed with repeats" : "") + ")"
        } ?? "\(options.columns)x\(options.rows) tiles"
        Console.writeSummary("wrote \(ImageDestination.name(options.output)) (\(sheet.width)x\(sheet.height), \(frames.count) frames in "
            + "\(grid) of \(tileSize), "
            + "\(ContactSheet.timestampText(tiles.first!.time, clipDuration: duration))–"
            + "\(ContactSheet.timestampText(tiles.last!.time, clipDuration: duration)))\n", toError: options.output == ImageDestination.standardOutput)
        return ExitStatus.success
    }

    /// Opens the input, samples the frames, draws and encodes the sheet; writes nothing. `serve`
    /// answers a sheet request with these bytes.
    func render() throws -> (bytes: [UInt8], sheet: ClipContactSheet) {
        // The fonts first: a missing font is refused before any decoding.
        let drawer = try ContactSheet(style: options.style, hasHeader: options.showsHeader)
        let sampler = try options.source.openSampler(report: report)
        // Progress counts the tiles taken; a scene pick's scan and refills are not counted (it shows
        // only the final line).
        let display = ProgressDisplay(label: "sheet", unit: "frames", rateUnit: "frames/s", style: options.reporting.progressStyle)
        defer { display.abandon() }
        if options.pick == .even { sampler.progress = { display.update(completed: $0, total: $1) } }
        let made = try sampler.contactSheet(options.sheetConfiguration, drawer: drawer, name: Self.displayName(of: options.source.input),
                                            fileSize: Self.fileSize(of: options.source.opened ?? options.source.input))
        display.finish(completed: made.plan.frames.count, total: made.plan.frames.count)
        report?.fetched(sampler.remoteReads)
        return (try options.format.encode(made.image, quality: options.quality), made)
    }

    /// The name a header shows: a path's or URL's last component, without a URL's query.
    static func displayName(of input: String) -> String { ContactSheetHeader.displayName(of: input) }

    /// A local file's size in bytes; `nil` for URLs, standard input or when it cannot be read.
    static func fileSize(of input: String) -> Int? { ContactSheetHeader.fileSize(of: input) }
}

extension SheetCommand: ServedJob {
    /// The tiles, the sheet and the encoder's copy: the sheet is at most its width squared.
    mutating func prepareToServe(_ request: ServingRequest) throws(PreviewRequestError) -> Int {
        reporting.isQuiet = true
        let side = min(ImageFileFormat.maxWebPSide, max(sheetWidth, (tileWidth ?? 0) * columns))
        return 3 * Int(WorkBudget.rgb(Size(width: side, height: side)))
    }

    func body(for job: PreviewJob, scratch: String, siblings: [PreviewJob]) throws -> RenderedBody {
        RenderedBody(body: try SheetRun(options: self).render().bytes)
    }
}
