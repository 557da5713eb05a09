import PreviewLoop

/// `preview-loop strip` as a job: its options (declared once, for every front end), checks and work.
struct StripCommand: Equatable, Sendable {
    /// The work limits (`--max-memory`); declared first, so its option is listed before the input group's.
    var budget = WorkBudget()
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
    /// How many frames (`-n`, `--count`), 1 to 1000.
    @Option(StripCommand.count) var count = StripCommand.count.defaultValue
    /// `--columns` as typed, which becomes ``columns``.
    @Option(StripCommand.columns, folded: true) var columnsOption: Int? = nil
    /// Frames per row (`-c`, `--columns`); never more than `count`.
    var columns = StripCommand.count.defaultValue
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 160, height: 90)
    /// The size of each tile (`-s`, `--size`).
    @Option(StripCommand.size) var size = StripCommand.size.defaultValue
    /// Lossy quality 0–100 (`-q`, `--quality`); `nil` for the format's default (or a lossless format).
    @Option(OutputOptions.imageQuality) var quality: Int? = nil
    /// Which part of the clip is sampled (`--span`).
    @Option(StripCommand.span) var span = StripCommand.span.defaultValue
    /// Where the window starts (`--start`); only with `span == .window`.
    @Option(WindowOptions.start) var start = WindowOptions.start.defaultValue
    /// How long the window lasts (`--length`); only with `span == .window`.
    @Option(WindowOptions.length) var length = WindowOptions.length.defaultValue
    /// Which frame answers each time (`--accuracy`).
    @Option(StripCommand.accuracy) var accuracy = StripCommand.accuracy.defaultValue
    /// How the frames' times are chosen (`--pick`): even slices, or shot changes.
    @Option(TilePlanOptions.pick) var pick = TilePlanOptions.pick.defaultValue
    /// Whether one JSON record (the batch record's schema, with the chosen tiles) replaces the summary line (`--json`).
    @Flag(ReportOptions.json) var json = false
    /// How each picture fills its tile (`--fit`).
    @Option(PictureOptions.fit) var contentMode = PictureOptions.fit.defaultValue
    /// Black pixels between tiles (`--gap`); 0 packs them edge to edge.
    @Option(.integer("gap", value: "px", help: "Black pixels between neighbouring tiles, \(ValueRanges.tileGap.inWords).",
                     default: 0, in: ValueRanges.tileGap).parameter()) var gap: Int
    /// Whether each tile shows its frame's time (`--timestamps`).
    @Flag(StripCommand.timestamps) var showsTimestamps = false
    /// Progress and quiet (`--progress`, `--quiet`).
    var reporting = ReportingOptions()
}

extension StripCommand: ClipOutputCommand, ReportsProgress {
    /// `preview-loop strip`: its name, summary, arguments and the group options it leaves out.
    static let configuration = CommandConfiguration(
        name: "strip",
        abstract: "Write frames sampled evenly over a span, tiled in one image.",
        arguments: [.input],
        hiding: [WorkBudget.maxFrames])

    func make(report: ClipReport?) throws -> Int32 { try StripRun(options: self, report: report).run() }
}

extension StripCommand {
    /// `-n, --count <n>`.
    static let count = ValueOption<Int>.integer(
        "count", short: "n", help: "How many frames, \(ValueRanges.stripCount.inWords), taken at the middles of equal slices of the span.",
        default: 8, in: ValueRanges.stripCount).parameter()
    /// `-c, --columns <n>`; absent, `--count` (one row).
    static let columns = ValueOption<Int?>.optionalInteger(
        "columns", short: "c", help: "Frames per row, \(ValueRanges.stripColumns.inWords); more than --count is reduced to --count.",
        in: ValueRanges.stripColumns, showing: "--count, one row").parameter()
    /// `-s, --size <WxH>` of each tile.
    static let size = PictureOptions.size(default: defaultBox, tile: true).recipeKey()
    /// `--span <span>`.
    static let span = ValueOption<StripSpan>.choice(
        "span", value: "span",
        help: "window (from --start for --length) or all (the whole clip; then --start and --length do not apply).",
        default: .window).parameter()
    /// `--accuracy <accuracy>`.
    static let accuracy = ValueOption<SeekAccuracy>.choice(
        "accuracy", value: "accuracy",
        help: "exact (the frame shown at each time), keyframe (the nearest keyframe at or "
            + "before it; fastest) or auto (a keyframe when one lies within half a slice, otherwise exact).",
        default: .auto).parameter()
    /// `--timestamps`.
    static let timestamps = FlagOption("timestamps",
                                 help: "Print each frame's time (DejaVu Sans Mono, white on a dark box) in its tile's "
                                     + "bottom-right corner, as 'sheet' does.").parameter()

    /// Takes the input, the output with its format, and the columns (capped by the count).
    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        source.input = try arguments.input()
        (output, format) = try arguments.imageOutput()
        columns = min(try arguments.value(Self.columns) ?? count, count)
    }

    /// Whether the values, each valid on its own, go together.
    func validate() throws(UsageError) {
        try ScannedArguments.checkQuality(quality, option: OutputOptions.imageQuality, lossy: format.isLossy, output: output,
                                          for: Self.subcommand)
        if span == .all {
            for (given, option) in [($start.isGiven, WindowOptions.start), ($length.isGiven, WindowOptions.length)] where given {
                throw UsageError(.conflictingOptions(option.spec.name, "span"), subcommand: Self.subcommand,
                                 "'\(option.spec.longSpelling)' applies only to '--span window', not '--span all'.")
            }
        }
        try ScannedArguments.checkReportJSON(json, output: output, for: Self.subcommand)
        try ScannedArguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first, for: Self.subcommand)
    }
    /// Why a strip of tiles of `size` is refused before decoding; `nil` when it fits.
    func sizeRefusal(_ size: Size) -> WorkBudget.Refusal? {
        let rows = (count + columns - 1) / columns
        let sheet = Size(width: columns * size.width + (columns - 1) * gap, height: rows * size.height + (rows - 1) * gap)
        if let reason = WorkBudget.encoderRefusal(sheet, format: format) {
            return .init(option: "size", message: "A strip of \(columns)x\(rows) tiles of \(size)\(gap > 0 ? " with --gap \(gap)" : "") "
                             + "is \(sheet) pixels and cannot be written: \(reason)")
        }
        // The tiles, the sheet they are copied into, and the encoder's copy of it.
        return budget.memoryRefusal(3 * Double(count) * WorkBudget.rgb(size) + OutputLimits.stillEncoderBytesPerPixel(format) * Double(sheet.area),
                                    what: "A strip of \(count) tiles of \(size)")
            .map { .init(option: "max-memory", message: $0) }
    }
}

/// Which part of the clip a strip samples.
enum StripSpan: String, CaseIterable, Sendable {
    /// From `--start` for `--length`, cut at the end of the clip.
    case window
    /// The whole clip.
    case all
}

/// One run of `preview-loop strip` on the command line: a thin layer over ``FrameSampler/contactStrip(_:)`` — frames at the middles
/// of equal slices of a span, tiled row by row into one image, written whole or not at all.
struct StripRun {
    /// The parsed options.
    var options: StripCommand
    /// With `--json`: what was done, printed as one batch record instead of the summary line.
    var report: ClipReport? = nil

    /// Samples the frames, writes the tiled image and prints one summary line on standard output.
    func run() throws -> Int32 {
        try ImageDestination.check(options.output)
        let (bytes, strip) = try render()
        let sheet = strip.image
        try ImageDestination.write(bytes, to: options.output)
        if let report {
            var output = ClipReport.output("strip", options.output)
            output.describeTiles(of: sheet, plan: strip.plan)
            report.add(output, timing: "strip")
            try report.print()
            return ExitStatus.success
        }
        Console.writeSummary("wrote \(ImageDestination.name(options.output)) (\(sheet.width)x\(sheet.height), \(strip.plan.frames.count) frames "
            + "in \(strip.columns)x\(strip.rows) tiles of \(strip.tileSize), "
            + "\(Format.fixed(strip.span.lowerBound, 3))–\(Format.fixed(strip.span.upperBound, 3)) s)\n", toError: options.output == ImageDestination.standardOutput)
        return ExitStatus.success
    }

    /// Opens the input, samples the frames and encodes the strip; writes nothing. `serve` answers a
    /// strip request with these bytes.
    func render() throws -> (bytes: [UInt8], strip: ContactStrip) {
        let configuration = options.stripConfiguration
        // The font (with --timestamps) and the configuration are checked before the input is opened.
        try configuration.validate()
        if configuration.style.showsTimestamps { _ = try ContactSheet(style: configuration.style, hasHeader: false) }
        let sampler = try options.source.openSampler(report: report)
        let size = configuration.tileSize(display: sampler.info.displaySize)
        try WorkLimitError.check(options.sizeRefusal(size))
        // Progress counts the tiles taken; a scene pick's scan and refills are not counted (it shows
        // only the final line).
        let display = ProgressDisplay(label: "strip", unit: "frames", rateUnit: "frames/s", style: options.reporting.progressStyle)
        defer { display.abandon() }
        if options.pick == .even { sampler.progress = { display.update(completed: $0, total: $1) } }
        let strip = try sampler.contactStrip(configuration)
        display.finish(completed: strip.plan.frames.count, total: strip.plan.frames.count)
        report?.fetched(sampler.remoteReads)
        return (try options.format.encode(strip.image, quality: options.quality), strip)
    }
}

extension StripCommand {
    /// The library's strip configuration for these options.
    var stripConfiguration: ContactStrip.Configuration {
        var style = ContactStrip.Configuration.defaultStyle
        style.showsTimestamps = showsTimestamps
        return ContactStrip.Configuration(
            count: count, columns: columns, tileSize: size,
            span: span == .all ? .wholeClip : .window(start: start, length: length),
            accuracy: accuracy, contentMode: contentMode, pick: pick, gap: gap, style: style)
    }
}

extension StripCommand: ServedJob {
    mutating func scaleDefaultSize(by factor: Double) { size = size.scaled(by: factor) }

    /// The tiles, the strip and the encoder's copy, at the tile size asked (a 1920 square when it
    /// follows the source).
    mutating func prepareToServe(_ request: ServingRequest) throws(PreviewRequestError) -> Int {
        reporting.isQuiet = true
        let box = size.knownSizes.first ?? Size(width: 1920, height: 1920)
        return 3 * count * Int(WorkBudget.rgb(box))
    }

    func body(for job: PreviewJob, scratch: String, siblings: [PreviewJob]) throws -> RenderedBody {
        RenderedBody(body: try StripRun(options: self).render().bytes)
    }
}
