import PreviewLoop

/// `preview-loop strip`: a thin layer over ``FrameSampler/contactStrip(_:)`` — frames at the middles
/// of equal slices of a span, tiled row by row into one image, written whole or not at all.
struct StripCommand {
    /// The parsed options.
    var options: StripOptions

    /// Samples the frames, writes the tiled image and prints one summary line on standard output.
    func run() throws -> Int32 {
        let configuration = options.stripConfiguration
        // The font (with --timestamps) and the configuration are checked before the input is opened.
        try configuration.validate()
        if configuration.style.showsTimestamps { _ = try ContactSheet(style: configuration.style, hasHeader: false) }
        let sampler = try FrameSampler(source: options.source.source, threads: options.source.threads,
                                       options: options.source.sourceOptions)
        if let warning = sampler.info.colorWarning { Console.writeError("Warning: \(warning)\n") }
        let size = configuration.tileSize(display: sampler.info.displaySize)
        try WorkLimitError.check(options.sizeRefusal(size))
        let strip = try sampler.contactStrip(configuration)
        let sheet = strip.image
        try AtomicFile.write(try options.format.encode(sheet, quality: options.quality), to: options.output)
        if options.json {
            Console.writeOutput(TilePlanJSON.text(strip.plan, output: options.output, width: sheet.width, height: sheet.height) + "\n")
            return ExitStatus.success
        }
        Console.writeOutput("wrote \(options.output) (\(sheet.width)x\(sheet.height), \(strip.plan.frames.count) frames "
            + "in \(strip.columns)x\(strip.rows) tiles of \(strip.tileSize), "
            + "\(Format.fixed(strip.span.lowerBound, 3))–\(Format.fixed(strip.span.upperBound, 3)) s)\n")
        return ExitStatus.success
    }
}

extension StripOptions {
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
