import PreviewLoop

/// `preview-loop strip`: a thin layer over ``FrameSampler/contactStrip(_:)`` — frames at the middles
/// of equal slices of a span, tiled row by row into one image, written whole or not at all.
struct StripCommand {
    /// The parsed options.
    var options: StripOptions
    /// With `--json`: what was done, printed as one batch record instead of the summary line.
    var report: ClipReport? = nil

    /// Samples the frames, writes the tiled image and prints one summary line on standard output.
    func run() throws -> Int32 {
        try ImageDestination.check(options.output)
        let (bytes, strip) = try render()
        let sheet = strip.image
        try ImageDestination.write(bytes, to: options.output)
        if let report {
            var output = ClipReport.output("strip", options.output, width: sheet.width, height: sheet.height)
            output.tiles = strip.plan.frames.count
            output.time = strip.plan.frames.first?.sourceTime
            output.plan = TilePlanReport(strip.plan)
            output.tilePhashes = strip.plan.frames.map { PerceptualHash($0.image).description }
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
        let sampler = try FrameSampler(source: options.source.source, threads: options.source.threads,
                                       options: options.source.sourceOptions)
        if let warning = sampler.info.colorWarning { Console.writeWarning(warning) }
        report?.opened(sampler.info)
        let size = configuration.tileSize(display: sampler.info.displaySize)
        try WorkLimitError.check(options.sizeRefusal(size))
        // Progress counts the tiles taken; a scene pick's scan and refills are not counted (it shows
        // only the final line).
        let display = ProgressDisplay(label: "strip", unit: "frames", rateUnit: "frames/s", style: options.reporting.progressStyle)
        defer { display.abandon() }
        if options.pick == .even { sampler.progress = { display.update(completed: $0, total: $1) } }
        let strip = try sampler.contactStrip(configuration)
        display.finish(completed: strip.plan.frames.count, total: strip.plan.frames.count)
        return (try options.format.encode(strip.image, quality: options.quality), strip)
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
