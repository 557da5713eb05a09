import Glibc
import PreviewLoop

/// `preview-loop sprites`: scrub-bar thumbnails, one frame per `--every` seconds of the whole clip,
/// tiled into `sheet-N.jpg` (or `.webp`) sheets, plus `thumbnails.vtt` mapping each interval to its
/// tile. The directory is built beside its destination and swapped in whole: a failure leaves the
/// previous contents as they were, and a re-run leaves no stale sheet behind.
struct SpritesCommand {
    /// The parsed options.
    var options: SpritesOptions
    /// With `--json`: what was done, printed as one batch record instead of the summary line.
    var report: ClipReport? = nil

    /// The WebVTT file's name in the output directory.
    static let trackName = "thumbnails.vtt"

    /// Samples, tiles and writes; shows progress on standard error (see ``ReportingOptions``); prints one
    /// summary line on standard output.
    func run() throws -> Int32 {
        let sampler = try FrameSampler(source: options.source.source, threads: options.source.threads,
                                       options: options.source.sourceOptions)
        if let warning = sampler.info.colorWarning { Console.writeWarning(warning) }
        report?.opened(sampler.info)
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
        let staged = try StagedDirectory(replacing: options.outputDirectory) { name in
            name == Self.trackName || StagedDirectory.isNumbered(name, prefix: "sheet-", suffix: ".jpg")
                || StagedDirectory.isNumbered(name, prefix: "sheet-", suffix: ".webp")
        }
        let directory = staged.path
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
                                     named: "sheet-\(index + 1).\(fileExtension)")
                })
            let vtt = track.webVTT { "sheet-\($0 + 1).\(fileExtension)" }
            try staged.write(Array(vtt.utf8), named: Self.trackName)
            try staged.commit()
            display.finish(completed: track.cues.count, total: track.cues.count)
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
                var output = ClipReport.output("sprite_sheet", directory + "/sheet-\(index + 1).\(fileExtension)",
                                               width: sheetSize.width, height: sheetSize.height)
                output.tilePhashes = sheetHashes[index].prefix(track.cues.filter { $0.sheet == index }.count).map(\.description)
                report.add(output, timing: index == sheetSizes.count - 1 ? "sprites" : nil)
            }
            try report.print()
            return ExitStatus.success
        }
        Console.writeSummary("wrote \(directory)/\(Self.trackName) and \(sheets) sheet\(sheets == 1 ? "" : "s") "
            + "(sheet-1.\(fileExtension)\(sheets > 1 ? "…sheet-\(sheets).\(fileExtension)" : "")): \(track.cues.count) "
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
        guard wanted <= Double(most) else {
            throw WorkLimitError(message: "A storyboard of \(Format.fixed(wanted, 0)) thumbnails in \(options.columns) column\(options.columns == 1 ? "" : "s") "
                + "would need more than \(Self.storyboardRows) rows; at most \(most): ask for fewer (count, every) or more columns")
        }
        var layout = options
        layout.rows = (Int(wanted) + options.columns - 1) / options.columns
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
