import Glibc
import PreviewLoop

/// The options of `preview-loop sheet`.
struct SheetOptions: Equatable, Sendable {
    /// The video: a path or an http(s) URL.
    var input: String
    /// The image to write (`-o`, `--output`).
    var output: String
    /// The image format, chosen by the output's extension.
    var format: ImageFormat
    /// Tiles per row (`--grid` C).
    var columns = 4
    /// Rows of tiles (`--grid` R).
    var rows = 4
    /// The whole sheet's width (`--width`); the tiles share what margins and gaps leave. Ignored when
    /// ``tileWidth`` is set.
    var sheetWidth = 1280
    /// Each tile's width (`--tile-width`); `nil` to derive it from ``sheetWidth``.
    var tileWidth: Int?
    /// Pixels between tiles and below the header (`--gap`).
    var gap = 6
    /// Pixels around everything (`--margin`).
    var margin = 12
    /// Whether the header is drawn (`--no-header` turns it off).
    var showsHeader = true
    /// Colours, fonts and tile times (`--background`, `--text-color`, `--font`, `--no-timestamps`).
    var style = ContactSheetStyle()
    /// Lossy quality 0–100 (`-q`, `--quality`); `nil` for the format's default (or a lossless format).
    var quality: Int?
    /// Which frame answers each time (`--accuracy`): exact by default, since `auto` may give two
    /// neighbouring slices the same keyframe and a sheet's tiles should all differ.
    var accuracy: SeekAccuracy = .exact
    /// How the tiles' times are chosen (`--pick`): even slices, or shot changes.
    var pick: TilePick = .even
    /// Whether one JSON object describing the chosen tiles replaces the summary line (`--json`).
    var json = false
    /// Decoding threads (`--threads`).
    var threads = 2
    /// Seconds allowed for opening the input and without any read or decoded frame (`--timeout`).
    var timeout = 30.0
    /// Seconds the whole job may take (`--deadline`); `nil` for no limit.
    var deadline: Double?
    /// Whether a URL input may redirect to another http(s) origin (`--allow-redirects`).
    var allowsRedirects = false
    /// `--tonemap`: how HDR frames become SDR.
    var toneMapping = ToneMapping.auto
}

extension SheetOptions {
    /// The most tiles a sheet takes.
    static let maximumTiles = 400

    /// Types and validates `sheet`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        let input = try arguments.input()
        let (output, format) = try arguments.output()
        self.init(input: input, output: output, format: format)
        (columns, rows) = try arguments.typed("grid", default: (columns, rows),
                                              expectation: "COLUMNSxROWS, each 1 to 100, at most \(Self.maximumTiles) tiles, "
                                                  + "for example 4x4") { text in
            Size(parsing: text).flatMap {
                (1...100).contains($0.width) && (1...100).contains($0.height) && $0.area <= Self.maximumTiles
                    ? ($0.width, $0.height) : nil
            }
        }
        gap = try arguments.integer("gap", default: gap, in: 0...256)
        margin = try arguments.integer("margin", default: margin, in: 0...1024)
        if arguments.values["width"] != nil && arguments.values["tile-width"] != nil {
            throw UsageError(.conflictingOptions("width", "tile-width"), subcommand: .sheet,
                             "'--width' and '--tile-width' both set the tiles' width; give one of them.")
        }
        sheetWidth = try arguments.integer("width", default: sheetWidth, in: 16...16383)
        if arguments.values["tile-width"] != nil {
            let width = try arguments.integer("tile-width", default: 0, in: 16...4096)
            tileWidth = width
            sheetWidth = 2 * margin + columns * width + (columns - 1) * gap
        } else if ContactSheetLayout.tileWidth(sheetWidth: sheetWidth, columns: columns, gap: gap, margin: margin)
                    .map({ $0 < 16 }) ?? true {
            throw UsageError(.conflictingOptions("width", "grid"), subcommand: .sheet,
                             "A \(sheetWidth)-pixel sheet leaves tiles under 16 pixels wide with \(columns) columns, "
                                 + "--gap \(gap) and --margin \(margin); use a larger --width or fewer columns.")
        }
        if sheetWidth > 16383 {
            throw UsageError(.conflictingOptions("tile-width", "grid"), subcommand: .sheet,
                             "\(columns) tiles of \(tileWidth ?? 0) pixels with their gaps and margins make a sheet "
                                 + "\(sheetWidth) pixels wide; at most 16383: use a smaller --tile-width or fewer columns.")
        }
        showsHeader = !arguments.flags.contains("no-header")
        style.showsTimestamps = !arguments.flags.contains("no-timestamps")
        style.background = try arguments.opaqueColor("background", default: style.background)
        style.textColor = try arguments.opaqueColor("text-color", default: style.textColor)
        style.fontPath = try arguments.nonEmpty("font")
        quality = try arguments.quality(lossy: format.isLossy, output: output)
        accuracy = try arguments.choice("accuracy", default: accuracy)
        pick = try arguments.choice("pick", default: pick)
        json = arguments.flags.contains("json")
        threads = try arguments.threads()
        timeout = try arguments.timeout()
        deadline = try arguments.deadline()
        allowsRedirects = arguments.flags.contains("allow-redirects")
        toneMapping = try arguments.choice("tonemap", default: toneMapping)
    }
}

extension ScannedArguments {
    /// An opaque colour: `#rrggbb`, `#rgb`, `black` or `white` (a sheet has no transparency).
    func opaqueColor(_ name: String, default defaultValue: RGBAColor) throws(UsageError) -> RGBAColor {
        try typed(name, default: defaultValue, expectation: "an opaque colour: #rrggbb, #rgb, black or white") { text in
            RGBAColor(parsing: text).flatMap { $0.isOpaque ? $0 : nil }
        }
    }
}

/// `preview-loop sheet`: a contact sheet of the whole clip — a header, then a grid of frames taken at
/// the middles of equal slices of the clip, each with its time — written whole or not at all.
struct SheetCommand {
    /// The parsed options.
    var options: SheetOptions

    /// Samples the frames, draws the sheet, writes it and prints one summary line on standard output.
    func run() throws -> Int32 {
        // The fonts first: a missing font is refused before any decoding.
        let drawer = try ContactSheet(style: options.style, hasHeader: options.showsHeader)
        let sampler = try FrameSampler(source: Source(argument: options.input), threads: options.threads,
                                       options: SourceOptions(timeout: options.timeout, deadline: options.deadline,
                                                              allowsRedirects: options.allowsRedirects, toneMapping: options.toneMapping))
        if let warning = sampler.info.colorWarning { Console.writeError("Warning: \(warning)\n") }
        let info = sampler.info
        guard let duration = info.duration, duration > 0 else {
            throw PreviewLoopError(.invalidArgument, "a contact sheet covers the whole clip and needs its duration, "
                + "which is unknown or 0")
        }
        let tileWidth = options.tileWidth ?? ContactSheetLayout.tileWidth(
            sheetWidth: options.sheetWidth, columns: options.columns, gap: options.gap, margin: options.margin)!
        let tileSize = Size(width: tileWidth,
                            height: ContactSheetLayout.tileHeight(tileWidth: tileWidth, displaySize: info.displaySize))
        let layout = ContactSheetLayout(columns: options.columns, rows: options.rows, tileSize: tileSize, gap: options.gap,
                                        margin: options.margin, headerHeight: options.showsHeader ? drawer.headerHeight : 0)
        guard layout.size.height <= 16383 else {
            throw PreviewLoopError(.invalidArgument, "the sheet would be \(layout.size) pixels (tiles of \(tileSize) for a "
                + "\(info.displaySize) picture); at most 16383 a side: use fewer rows or narrower tiles")
        }
        let span = SampleSpan(start: 0, length: duration)
        let count = options.columns * options.rows
        let plan = try sampler.tilePlan(pick: options.pick, count: count, start: span.start, length: span.length,
                                        evenTimes: span.sampleTimes(count: count), size: tileSize, mode: .aspectFill,
                                        accuracy: options.accuracy, interval: span.interval(count: count))
        let frames = plan.frames
        let tiles = frames.map { ContactSheetTile(image: $0.image, time: $0.sourceTime) }
        let header = ContactSheetHeader(name: Self.displayName(of: options.input), info: info,
                                        fileSize: Self.fileSize(of: options.input))
        let sheet = try drawer.render(tiles, layout: layout, header: options.showsHeader ? header : nil,
                                      clipDuration: duration)
        try AtomicFile.write(try options.format.encode(sheet, quality: options.quality), to: options.output)
        if options.json {
            Console.writeOutput(TilePlanJSON.text(plan, output: options.output, width: sheet.width, height: sheet.height) + "\n")
            return ExitStatus.success
        }
        Console.writeOutput("wrote \(options.output) (\(sheet.width)x\(sheet.height), \(frames.count) frames in "
            + "\(options.columns)x\(options.rows) tiles of \(tileSize), "
            + "\(ContactSheet.timestampText(tiles.first!.time, clipDuration: duration))–"
            + "\(ContactSheet.timestampText(tiles.last!.time, clipDuration: duration)))\n")
        return ExitStatus.success
    }

    /// The name a header shows: a path's or URL's last component, without a URL's query.
    static func displayName(of input: String) -> String {
        var text = Substring(input)
        if let query = text.firstIndex(where: { $0 == "?" || $0 == "#" }), input.contains("://") { text = text[..<query] }
        let name = text.split(separator: "/").last.map(String.init) ?? input
        return name.isEmpty ? input : name
    }

    /// A local file's size in bytes; `nil` for URLs, standard input or when it cannot be read.
    static func fileSize(of input: String) -> Int? {
        guard case .file(let path) = Source(argument: input) else { return nil }
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(status.st_size)
    }
}
