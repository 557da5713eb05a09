import Glibc
import PreviewLoop

/// `preview-loop sprites` as a job: its options (declared once, for every front end), checks and work.
struct SpritesCommand: Equatable, Sendable {
    /// The work limits (`--max-memory`, `--max-frames`); declared first, so its options are listed before
    /// the input group's.
    var budget = WorkBudget()
    /// The input and how it is read: `<input>`, `--timeout`, `--deadline`, `--threads`, `--allow-redirects`,
    /// `--tonemap` (the input group).
    var source = InputOptions()
    /// `-o` as typed, which becomes ``outputDirectory``.
    @Option(SpritesCommand.output, folded: true) var outputOption: String? = nil
    /// The directory the sheets and `thumbnails.vtt` go to (`-o`, `--output`); created if missing.
    var outputDirectory = ""
    /// How far apart the thumbnails are (`--every`, `--count`).
    @Option(SpritesCommand.every) var every = SpritesCommand.every.defaultValue
    /// `--count` as typed, which becomes ``every``.
    @Option(SpritesCommand.count, folded: true) var countOption: Int? = nil
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 160, height: 90)
    /// The size of each tile (`-s`, `--size`).
    @Option(SpritesCommand.size) var size = SpritesCommand.size.defaultValue
    /// `--grid` as typed, which becomes ``columns`` and ``rows``.
    @Option(SpritesCommand.grid, folded: true) var gridOption = SpritesCommand.grid.defaultValue
    /// Tiles per row (`--grid` C).
    var columns = SpritesCommand.grid.defaultValue.width
    /// Rows per sheet (`--grid` R).
    var rows = SpritesCommand.grid.defaultValue.height
    /// The sheets' image format (`--format`).
    @Option(SpritesCommand.format) var format = SpritesCommand.format.defaultValue
    /// Which frame each tile shows (`--accuracy`).
    @Option(SpritesCommand.accuracy) var accuracy = SpritesCommand.accuracy.defaultValue
    /// Where in its interval each tile is taken (`--pick`): the middle, or the longest shot's middle.
    @Option(TilePlanOptions.pick) var pick = TilePlanOptions.pick.defaultValue
    /// Lossy quality 0–100 (`-q`, `--quality`); `nil` for the default.
    @Option(SpritesCommand.quality) var quality: Int? = nil
    /// How each picture fills its tile (`--fit`).
    @Option(PictureOptions.fit) var contentMode = PictureOptions.fit.defaultValue
    /// Whether one JSON record (the batch record's schema) replaces the summary line (`--json`).
    @Flag(ReportOptions.json) var json = false
    /// Progress and quiet (`--progress`, `--quiet`).
    var reporting = ReportingOptions()
}

extension SpritesCommand: ClipOutputCommand, ReportsProgress {
    /// `preview-loop sprites`: its name, summary and arguments.
    static let configuration = CommandConfiguration(
        name: "sprites",
        abstract: "Write scrub-bar thumbnails: frames every few seconds tiled into sprite sheets, and a WebVTT track.",
        arguments: [.input])

    func make(report: ClipReport?) throws -> Int32 { try SpritesRun(options: self, report: report).run() }
}

extension SpritesCommand {
    /// `-o, --output <dir>`.
    static let output = ValueOption<String?>.path(
        "output", short: "o", value: "dir",
        help: "The directory for sprites-1.jpg, sprites-2.jpg… and thumbnails.vtt, built beside it and "
            + "swapped in whole (a failure keeps the old contents; no stale sheet stays). An existing "
            + "directory holding anything but sprites' own files (sprites-N or sheet-N images, thumbnails.vtt) is refused. "
            + "s3://BUCKET/PREFIX/ uploads them under that prefix (the same rule for objects already there).",
        required: true, completing: .directory)
    /// `--every <auto|time>`: seconds between thumbnails.
    static let every = ValueOption<SpriteInterval>(
        "every", value: "auto|time",
        help: "One thumbnail per this many seconds (or mm:ss) of the clip, above 0; auto chooses from the duration: "
            + "\(SpriteInterval.autoThumbnails) thumbnails for a clip under \(Int(SpriteInterval.longClip / 60)) minutes, "
            + "\(SpriteInterval.autoThumbnailsLong) for a longer one, never closer than one frame "
            + "(\(Format.limit(SpriteInterval.fallback)) s when the duration is unknown). Not with --count.",
        default: .auto, showing: "auto", expecting: "auto or a time above 0: seconds (2.5), mm:ss or hh:mm:ss.ms",
        completing: .choices(["auto"])) { SpriteInterval(parsing: $0) }.parameter()
    /// `-n, --count <n>`: thumbnails over the clip.
    static let count = ValueOption<Int?>.optionalInteger(
        "count", short: "n", help: "This many thumbnails spread evenly over the clip, \(ValueRanges.spriteCount.inWords) (never closer than "
            + "one frame). Not with --every.", in: ValueRanges.spriteCount).parameter()
    /// `-s, --size <WxH>` of each tile.
    static let size = PictureOptions.size(default: defaultBox, tile: true).recipeKey()
    /// `--grid <CxR>`.
    static let grid = ValueOption<Size>(
        "grid", value: "CxR", help: "Tiles per sheet: C columns by R rows, each \(ValueRanges.spriteGrid.inWords).",
        default: Size(width: 10, height: 10), showing: "10x10",
        expecting: "COLUMNSxROWS, each \(ValueRanges.spriteGrid.inWords), for example 10x10") { text in
        Size(parsing: text).flatMap { ValueRanges.spriteGrid.contains($0.width) && ValueRanges.spriteGrid.contains($0.height) ? $0 : nil }
    }.recipeKey()
    /// `--format <format>`.
    static let format = ValueOption<SheetFormat>.choice("format", value: "format", help: "The sheets' image format: jpg or webp.",
                                                   default: .jpg).parameter()
    /// `--accuracy <accuracy>`.
    static let accuracy = ValueOption<SeekAccuracy>.choice(
        "accuracy", value: "accuracy",
        help: "auto (the keyframe nearest each interval's middle when one lies inside the "
            + "interval, else the exact frame), exact (the frame at the middle) or keyframe "
            + "(the keyframe at or before the middle; fastest, may be from an earlier interval).",
        default: .auto).parameter()
    /// `-q, --quality <0-100>`.
    static let quality = ValueOption<Int?>.optionalInteger(
        "quality", short: "q", value: "0-100", help: "Lossy quality of the sheets, 0 (smallest) to 100 (best).",
        in: ValueRanges.quality, showing: "85").parameter()

    /// Takes the input and the output directory, and turns `--count` and `--grid` into the interval and
    /// the sheets' shape.
    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        source.input = try arguments.input()
        outputDirectory = try arguments.requiredOutput(Self.output, example: "thumbnails/")
        if let fileExtension = ImageFileFormat.fileExtension(of: outputDirectory), Self.fileExtensions.contains(fileExtension) {
            throw UsageError(.invalidValue(option: "output", value: outputDirectory), subcommand: Self.subcommand,
                             "'\(outputDirectory)' looks like a file, but sprites writes a directory (sprites-1.jpg…, "
                                 + "\(SpritesRun.trackName)); name a directory, for example -o thumbnails/.")
        }
        if let count = try arguments.value(Self.count) {
            if $every.isGiven {
                throw UsageError(.conflictingOptions("count", "every"), subcommand: Self.subcommand,
                                 "'--count' and '--every' both set the interval; give one.")
            }
            every = .count(count)
        }
        let grid = try arguments.value(Self.grid)
        (columns, rows) = (grid.width, grid.height)
    }

    /// Whether the values, each valid on its own, go together.
    func validate() throws(UsageError) {
        if let size = size.exactSize, columns * size.width > ImageFileFormat.maxWebPSide || rows * size.height > ImageFileFormat.maxWebPSide {
            throw UsageError(.conflictingOptions("grid", "size"), subcommand: Self.subcommand,
                             "A sheet of \(gridShown) tiles of \(size) would be \(columns * size.width)x\(rows * size.height) "
                                 + "pixels; JPEG and WebP sheets are at most \(ImageFileFormat.maxWebPSide) a side: use a smaller --grid or --size.")
        }
        try ScannedArguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first, for: Self.subcommand)
    }

    /// `10x10`, and when `--grid` was not given, `10x10 (the default --grid)`: a message names only
    /// what was sent as sent.
    private var gridShown: String { "\(columns)x\(rows)" + ($gridOption.isGiven ? "" : " (the default --grid)") }

    /// The extensions of files the output must not look like: images, videos, WebVTT.
    static let fileExtensions: Set<String> = Set(ImageFileFormat.allCases.flatMap(\.fileExtensions)
        + AnimationFormat.allCases.flatMap(\.fileExtensions) + ["vtt"])

    /// Why sheets of tiles of `size` are refused before decoding; `nil` when they fit.
    func sizeRefusal(_ size: Size) -> WorkBudget.Refusal? {
        let sheet = Size(width: columns * size.width, height: rows * size.height)
        if sheet.width > ImageFileFormat.maxWebPSide || sheet.height > ImageFileFormat.maxWebPSide {
            return .init(option: "size", message: "A sheet of \(gridShown) tiles of \(size) would be \(sheet) pixels; "
                             + "JPEG and WebP sheets are at most \(ImageFileFormat.maxWebPSide) a side: use a smaller --grid or --size")
        }
        if let reason = WorkBudget.encoderRefusal(sheet, webp: format == .webp) {
            return .init(option: "size", message: "A sheet of \(columns)x\(rows) tiles of \(size) is \(sheet) pixels and cannot be written: \(reason)")
        }
        // The sheet's tiles, the sheet, the encoder's copy.
        return budget.memoryRefusal(3 * WorkBudget.rgb(sheet), what: "A sheet of \(sheet)").map { .init(option: "max-memory", message: $0) }
    }
}

/// The image format of sprite sheets, as `--format` names it.
enum SheetFormat: String, CaseIterable, Sendable {
    /// JPEG (`.jpg` sheets).
    case jpg
    /// WebP (`.webp` sheets).
    case webp

    /// The library's format.
    var imageFormat: ImageFileFormat { self == .jpg ? .jpeg : .webp }
}

/// `preview-loop sprites`: scrub-bar thumbnails, one frame per `--every` seconds of the whole clip,
/// tiled into `sprites-N.jpg` (or `.webp`) sheets, plus `thumbnails.vtt` mapping each interval to its
/// tile. The directory is built beside its destination and swapped in whole: a failure leaves the
/// previous contents as they were, and a re-run leaves no stale sheet behind.
struct SpritesRun {
    /// The parsed options.
    var options: SpritesCommand
    /// With `--json`: what was done, printed as one batch record instead of the summary line.
    var report: ClipReport? = nil

    /// The WebVTT file's name in the output directory.
    static let trackName = "thumbnails.vtt"

    /// Samples, tiles and writes; shows progress on standard error (see ``ReportingOptions``); prints one
    /// summary line on standard output.
    func run() throws -> Int32 {
        let ownsName = { (name: String) -> Bool in
            name == Self.trackName || ["sprites-", "sheet-"].contains { prefix in
                StagedDirectory.isNumbered(name, prefix: prefix, suffix: ".jpg") || StagedDirectory.isNumbered(name, prefix: prefix, suffix: ".webp")
            }
        }
        // An s3:// prefix: refused before any work if it holds objects sprites did not write; the sheets
        // are made in a local staging folder, then uploaded, the WebVTT index last.
        var upload: (staging: ObjectStaging, prefix: String, existing: Set<String>)?
        if ObjectOutput.isObject(options.outputDirectory) {
            let existing = try ObjectOutput.ownNames(under: options.outputDirectory, ownsName: ownsName)
            upload = (try ObjectStaging(), try ObjectOutput.prefixURL(options.outputDirectory), existing)
        }
        let sampler = try options.source.openSampler(report: report)
        let size = options.size.resolved(display: sampler.info.displaySize)
        try WorkLimitError.check(options.sizeRefusal(size))
        let every = options.every.seconds(duration: sampler.info.duration, frameInterval: sampler.info.frameInterval)
        // Before decoding (and before the directory is made): how many thumbnails the clip makes.
        if let duration = sampler.info.duration, duration > 0,
           let refusal = options.budget.frameRefusal(ThumbnailTrack.thumbnailCount(duration: duration, every: every),
                                                     what: "One thumbnail every \(every < 0.001 ? "\(every)" : Format.fixed(every, 3)) s of "
                                                         + "\(Format.fixed(duration, 3)) s") {
            throw WorkLimitError(message: refusal)
        }
        let fileExtension = options.format.rawValue
        // Built beside the destination and swapped in whole: old sheets stay until the new set is complete.
        // Sheets named `sheet-N` (their former name) are sprites' own too: a rerun over such a directory replaces them.
        let staged = try StagedDirectory(replacing: upload.map { $0.staging.folder + "/sprites" } ?? options.outputDirectory,
                                         ownsName: ownsName)
        let directory = upload.map { String($0.prefix.dropLast()) } ?? staged.path
        let display = ProgressDisplay(label: "sprites", unit: "thumbnails", rateUnit: "thumbnails/s",
                                      style: options.reporting.progressStyle)
        let track: ThumbnailTrack
        var sheetSizes: [Size] = []
        // With --json: the pHash of each place of each sheet, taken while the sheet is in memory (the
        // sheet's last places may be empty; the cues say how many it holds).
        let layout = ThumbnailTrack.Layout(tileSize: size, columns: options.columns, rows: options.rows)
        var sheetHashes: [[PerceptualHash]] = []
        do {
            track = try sampler.thumbnailTrack(
                every: every,
                layout: layout,
                mode: options.contentMode, accuracy: options.accuracy, pick: options.pick, maxThumbnails: options.budget.maxFrames,
                progress: { done, total in display.update(completed: done, total: total) },
                onSheet: { index, sheet throws(PreviewLoopError) in
                    sheetSizes.append(Size(width: sheet.width, height: sheet.height))
                    if report != nil {
                        let rows = min(layout.rows, sheet.height / max(1, size.height))
                        sheetHashes.append(layout.perceptualHashes(of: sheet, index: index, count: layout.columns * rows))
                    }
                    try staged.write(try ImageEncoder.encode(sheet, as: options.format.imageFormat, quality: options.quality),
                                     named: ThumbnailTrack.sheetFileName(index, fileExtension: fileExtension))
                })
            let vtt = track.webVTT { ThumbnailTrack.sheetFileName($0, fileExtension: fileExtension) }
            try staged.write(Array(vtt.utf8), named: Self.trackName)
            try staged.commit()
            if let upload {
                let names = (0..<track.sheetCount).map { ThumbnailTrack.sheetFileName($0, fileExtension: fileExtension) } + [Self.trackName]
                try ObjectOutput.upload(files: names, from: staged.path, to: upload.prefix, existing: upload.existing)
            }
            display.finish(completed: track.cues.count, total: track.cues.count)
            report?.fetched(sampler.remoteReads)
        } catch {
            display.abandon()
            staged.discard()
            throw error
        }
        let sheets = track.sheetCount
        if let report {
            var vtt = ClipReport.output("webvtt", directory + "/" + Self.trackName)
            vtt.tiles = track.cues.count
            vtt.duration = track.cues.last?.end
            report.add(vtt)
            for (index, sheetSize) in sheetSizes.enumerated() {
                var output = ClipReport.output("sprite_sheet", directory + "/" + ThumbnailTrack.sheetFileName(index, fileExtension: fileExtension),
                                               width: sheetSize.width, height: sheetSize.height)
                output.tilePhashes = sheetHashes[index].prefix(track.cues.filter { $0.sheet == index }.count).map(\.description)
                report.add(output, timing: index == sheetSizes.count - 1 ? "sprites" : nil)
            }
            try report.print()
            return ExitStatus.success
        }
        Console.writeSummary("wrote \(directory)/\(Self.trackName) and \(sheets) sheet\(sheets == 1 ? "" : "s") "
            + "(\(ThumbnailTrack.sheetFileName(0, fileExtension: fileExtension))"
            + "\(sheets > 1 ? "…" + ThumbnailTrack.sheetFileName(sheets - 1, fileExtension: fileExtension) : "")): \(track.cues.count) "
            + "thumbnail\(track.cues.count == 1 ? "" : "s") "
            + "of \(size), one per \(Format.fixed(every, 3)) s\(options.every == .auto ? " (auto)" : ""), "
            + "\(options.columns)x\(options.rows) a sheet\n")
        return ExitStatus.success
    }

    /// The most rows a storyboard has: its thumbnails are at most `columns` × this.
    static let storyboardRows = 100

    /// A storyboard: every thumbnail on one picture (as many rows as they need) and the track saying
    /// where each is, rendered in memory for `serve`'s `storyboard.*` (the tiles `sprites` writes for the
    /// same options, on one sheet). Refused before decoding when it would need more than
    /// ``storyboardRows`` rows or a picture past the encoders' limits.
    func storyboard() throws -> Storyboard {
        let sampler = try FrameSampler(source: options.source.source, threads: options.source.threads,
                                       options: options.source.sourceOptions)
        let size = options.size.resolved(display: sampler.info.displaySize)
        let every = options.every.seconds(duration: sampler.info.duration, frameInterval: sampler.info.frameInterval)
        guard let duration = sampler.info.duration, duration > 0 else {
            throw PreviewLoopError(.invalidArgument, "the clip's duration is unknown or 0: a storyboard needs it to cover the clip")
        }
        let wanted = ThumbnailTrack.thumbnailCount(duration: duration, every: every)
        let most = options.columns * Self.storyboardRows
        let columns = "\(options.columns) column\(options.columns == 1 ? "" : "s")"
        guard wanted <= Double(most) else {
            throw WorkLimitError(message: "A storyboard of \(Format.fixed(wanted, 0)) thumbnails in \(columns) would need "
                + "\(Format.fixed((wanted / Double(options.columns)).rounded(.up), 0)) rows; it has at most \(Self.storyboardRows) rows, "
                + "so at most \(most) thumbnails in \(columns): ask for fewer (count, every) or more columns")
        }
        var layout = options
        layout.rows = (Int(wanted) + options.columns - 1) / options.columns
        let pictureSize = Size(width: layout.columns * size.width, height: layout.rows * size.height)
        guard pictureSize.width <= ImageFileFormat.maxWebPSide, pictureSize.height <= ImageFileFormat.maxWebPSide else {
            throw WorkLimitError(message: "A storyboard of \(layout.columns)x\(layout.rows) tiles of \(size) would be \(pictureSize) pixels; "
                + "it is at most \(ImageFileFormat.maxWebPSide) a side: ask for smaller tiles (width, height), fewer thumbnails "
                + "(count, every) or other columns")
        }
        try WorkLimitError.check(layout.sizeRefusal(size))
        var picture: [UInt8] = []
        let track = try sampler.thumbnailTrack(
            every: every, layout: .init(tileSize: size, columns: layout.columns, rows: layout.rows),
            mode: options.contentMode, accuracy: options.accuracy, pick: options.pick, maxThumbnails: most,
            onSheet: { _, sheet throws(PreviewLoopError) in
                picture = try ImageEncoder.encode(sheet, as: options.format.imageFormat, quality: options.quality)
            })
        return Storyboard(track: track, picture: picture, duration: duration)
    }
}

/// A storyboard: its picture's bytes and the track of its tiles.
struct Storyboard {
    var track: ThumbnailTrack
    var picture: [UInt8]
    /// The clip's duration in seconds.
    var duration: Double

    /// The index as JSON, in the shape Mux's storyboard JSON has (`url`, `tile_width`, `tile_height`,
    /// `duration`, `tiles` with `start`, `x`, `y`) plus each tile's `end` and the `time` of its frame,
    /// and the grid's `columns` and `rows`.
    func json(url: String) -> JSONValue {
        let tiles: [JSONValue] = track.cues.map { cue in
            .object(["start": .number(Self.milliseconds(cue.start)), "end": .number(Self.milliseconds(cue.end)),
                     "time": .number(Self.milliseconds(cue.frameTime)), "x": .integer(cue.rect.x), "y": .integer(cue.rect.y)])
        }
        return .object(["url": .string(url), "tile_width": .integer(track.layout.tileSize.width),
                        "tile_height": .integer(track.layout.tileSize.height), "columns": .integer(track.layout.columns),
                        "rows": .integer(track.layout.rows), "duration": .number(Self.milliseconds(duration)),
                        "tiles": .array(tiles)])
    }

    /// Seconds rounded to the millisecond, as the WebVTT track gives them.
    private static func milliseconds(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }
}

extension SpritesCommand: ServedJob {
    mutating func scaleDefaultSize(by factor: Double) { size = size.scaled(by: factor) }

    /// The storyboard is rendered in memory (sprites' output directory is never made); the picture's
    /// format is its extension's, an index's its `format` parameter. It has as many rows as its
    /// thumbnails need (counted once the clip is open): its grid is the columns by one row here, and its
    /// sides are checked against what was sent.
    static func prepare(_ given: inout ScannedArguments, for request: ServingRequest) throws(PreviewRequestError) {
        given.give("output", "storyboard")
        if request.format.mediaType.hasPrefix("image/") { given.give("format", request.format.fileExtension) }
        let sentColumns = request.query.first { $0.name == "columns" }.flatMap { Int($0.value) }
        let columns = sentColumns ?? grid.defaultValue.width
        if sentColumns == nil { given.give("grid", "\(columns)x1") }
        let most = ImageFileFormat.maxWebPSide
        if let width = request.width, columns * width > most {
            let shown = "\(columns) column\(columns == 1 ? "" : "s")" + (sentColumns != nil ? "" : " (the default)")
            throw PreviewRequestError(status: 413, parameter: "width",
                                      detail: "Tiles \(width) pixels wide in \(shown) make the storyboard \(columns * width) pixels wide; "
                                          + "it is at most \(most): ask for a smaller width or fewer columns.")
        }
        if let height = request.height, height > most {
            throw PreviewRequestError(status: 413, parameter: "height",
                                      detail: "Tiles \(height) pixels high make the storyboard at least that high; it is at most \(most).")
        }
    }

    /// The most a storyboard may be: a full sheet of the tiles, the sheet and the encoder's copy.
    mutating func prepareToServe(_ request: ServingRequest) throws(PreviewRequestError) -> Int {
        reporting.isQuiet = true
        let tile = size.knownSizes.first ?? Self.defaultBox
        let sheet = Size(width: min(ImageFileFormat.maxWebPSide, columns * tile.width),
                         height: min(ImageFileFormat.maxWebPSide, SpritesRun.storyboardRows * tile.height))
        return 3 * Int(WorkBudget.rgb(sheet))
    }

    /// The picture or an index pointing at it; one render answers the other two.
    func body(for job: PreviewJob, scratch: String, siblings: [PreviewJob]) throws -> RenderedBody {
        let storyboard = try SpritesRun(options: self).storyboard()
        var body = job.storyboardBody(storyboard, format: format)
        body.siblings = siblings.map { $0.storyboardBody(storyboard, format: format) }
        return body
    }

    /// A storyboard's picture and its two indexes make each other.
    func siblingRequests(of job: PreviewJob) -> [(route: String, query: [(name: String, value: String)])] {
        let baseQuery = job.query.filter { $0.name != "format" }
        let picture = "storyboard.\(format.rawValue)"
        let indexQuery = format == .jpg ? baseQuery : baseQuery + [("format", format.rawValue)]
        return ["storyboard.vtt", "storyboard.json", picture].filter { $0 != job.route }.map { sibling in
            (sibling, sibling == picture ? baseQuery : indexQuery)
        }
    }
}
