import Glibc
import PreviewLoop

/// `preview-loop sprites`: scrub-bar thumbnails, one frame per `--every` seconds of the whole clip,
/// tiled into `sheet-N.jpg` (or `.webp`) sheets, plus `thumbnails.vtt` mapping each interval to its
/// tile. Each file is written atomically; a failure removes the files this run wrote.
struct SpritesCommand {
    /// The parsed options.
    var options: SpritesOptions

    /// The WebVTT file's name in the output directory.
    static let trackName = "thumbnails.vtt"

    /// Samples, tiles and writes; shows progress on standard error when it is a terminal; prints one
    /// summary line on standard output.
    func run() throws -> Int32 {
        let sampler = try FrameSampler(source: Source(argument: options.input), threads: options.threads,
                                       options: SourceOptions(timeout: options.timeout, deadline: options.deadline))
        let size = options.size.resolved(display: sampler.info.displaySize)
        if options.columns * size.width > 16383 || options.rows * size.height > 16383 {
            throw PreviewLoopError(.invalidArgument, "a sheet of \(options.columns)x\(options.rows) tiles of \(size) would be "
                                   + "more than 16383 pixels a side; use a smaller --grid or --size")
        }
        let directory = options.outputDirectory.hasSuffix("/") && options.outputDirectory.count > 1
            ? String(options.outputDirectory.dropLast()) : options.outputDirectory
        let created = try LoopCommand.createDirectory(directory)
        let fileExtension = options.format.rawValue
        let showsProgress = isatty(STDERR_FILENO) == 1
        var written: [String] = []
        let track: ThumbnailTrack
        do {
            track = try sampler.thumbnailTrack(
                every: options.every,
                layout: .init(tileSize: size, columns: options.columns, rows: options.rows),
                mode: options.contentMode, accuracy: options.accuracy,
                progress: { done, total in
                    if showsProgress { Console.writeError("\rsprites: \(done)/\(total) thumbnails") }
                },
                onSheet: { index, sheet in
                    let path = "\(directory)/sheet-\(index + 1).\(fileExtension)"
                    try AtomicFile.write(try ImageEncoder.encode(sheet, as: options.format.imageFormat, quality: options.quality),
                                         to: path)
                    written.append(path)
                })
            if showsProgress { Console.writeError("\n") }
            let vtt = track.webVTT { "sheet-\($0 + 1).\(fileExtension)" }
            try AtomicFile.write(Array(vtt.utf8), to: "\(directory)/\(Self.trackName)")
        } catch {
            if showsProgress { Console.writeError("\n") }
            for path in written { unlink(path) }
            if let created { rmdir(created) }
            throw error
        }
        let sheets = track.sheetCount
        Console.writeOutput("wrote \(directory)/\(Self.trackName) and \(sheets) sheet\(sheets == 1 ? "" : "s") "
            + "(sheet-1.\(fileExtension)\(sheets > 1 ? "…sheet-\(sheets).\(fileExtension)" : "")): \(track.cues.count) "
            + "thumbnail\(track.cues.count == 1 ? "" : "s") "
            + "of \(size), one per \(Format.fixed(options.every, 3)) s, \(options.columns)x\(options.rows) a sheet\n")
        return ExitStatus.success
    }
}
