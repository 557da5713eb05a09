import PreviewLoop

/// `preview-loop strip`: frames at the middles of equal slices of a span, tiled row by row into
/// one image, written whole or not at all.
struct StripCommand {
    /// The parsed options.
    var options: StripOptions
    /// With `--json`: what was done, printed as one batch record instead of the summary line.
    var report: ClipReport? = nil

    /// Samples the frames, writes the tiled image and prints one summary line on standard output.
    func run() throws -> Int32 {
        try ImageDestination.check(options.output)
        // With gaps or times the strip is a contact sheet without header or margins (same code as
        // `sheet`); the font is checked before any decoding.
        let drawer = options.gap > 0 || options.showsTimestamps
            ? try ContactSheet(style: stripStyle, hasHeader: false) : nil
        let sampler = try FrameSampler(source: options.source.source, threads: options.source.threads,
                                       options: options.source.sourceOptions)
        if let warning = sampler.info.colorWarning { Console.writeWarning(warning) }
        report?.opened(sampler.info)
        let size = options.size.resolved(display: sampler.info.displaySize)
        try WorkLimitError.check(options.sizeRefusal(size))
        let span = try SampleSpan.resolve(options.span, start: options.start, length: options.length,
                                          duration: sampler.info.duration)
        // Progress counts the tiles taken; a scene pick's scan and refills are not counted (it shows
        // only the final line).
        let display = ProgressDisplay(label: "strip", unit: "frames", rateUnit: "frames/s", style: options.reporting.progressStyle)
        defer { display.abandon() }
        if options.pick == .even { sampler.progress = { display.update(completed: $0, total: $1) } }
        let plan = try sampler.tilePlan(pick: options.pick, count: options.count, start: span.start, length: span.length,
                                        evenTimes: span.sampleTimes(count: options.count), size: size,
                                        mode: options.contentMode, accuracy: options.accuracy,
                                        interval: span.interval(count: options.count))
        display.finish(completed: plan.frames.count, total: plan.frames.count)
        let frames = plan.frames
        let rows = (frames.count + options.columns - 1) / options.columns
        let sheet: RGBImage
        if let drawer {
            let layout = ContactSheetLayout(columns: options.columns, rows: rows, tileSize: size, gap: options.gap)
            sheet = try drawer.render(frames.map { ContactSheetTile(image: $0.image, time: $0.sourceTime) }, layout: layout,
                                      header: nil, clipDuration: sampler.info.duration)
        } else {
            sheet = RGBImage.tiled(frames.map(\.image), columns: options.columns)
        }
        try ImageDestination.write(try options.format.encode(sheet, quality: options.quality), to: options.output)
        if let report {
            var output = ClipReport.output("strip", options.output, width: sheet.width, height: sheet.height)
            output.tiles = frames.count
            output.time = frames.first?.sourceTime
            output.plan = TilePlanReport(plan)
            report.add(output, timing: "strip")
            try report.print()
            return ExitStatus.success
        }
        Console.writeSummary("wrote \(ImageDestination.name(options.output)) (\(sheet.width)x\(sheet.height), \(frames.count) frames "
            + "in \(options.columns)x\(rows) tiles of \(size), "
            + "\(Format.fixed(span.start, 3))–\(Format.fixed(span.start + span.length, 3)) s)\n", toError: options.output == ImageDestination.standardOutput)
        return ExitStatus.success
    }

    /// A sheet style for the strip: black gaps, white times or none.
    private var stripStyle: ContactSheetStyle {
        var style = ContactSheetStyle()
        style.showsTimestamps = options.showsTimestamps
        return style
    }
}
