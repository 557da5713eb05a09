import Glibc
import PreviewLoop

/// `preview-loop render`: one pass of the loop window written as a hover preview that loops cleanly
/// (MP4, animated WebP or GIF), whole or not at all.
struct RenderCommand {
    /// The parsed options.
    var options: RenderOptions
    /// With `--json`: what was done, printed as one batch record instead of the summary line.
    var report: ClipReport? = nil

    /// What a render made: the summary and the window's start in seconds.
    struct Rendered {
        var summary: RenderSummary
        var start: Double
    }

    /// Renders the window and prints one summary line on standard output.
    func run() throws -> Int32 {
        let rendered = try render()
        let summary = rendered.summary, start = rendered.start
        if let move = summary.flashAvoidance?.movedDescription { Console.writeSummary(move + "\n", toError: true) }
        if let flashes = summary.flashes, let warning = Self.flashWarning(flashes, output: options.output) {
            Console.writeWarning(warning)
        }
        if let report {
            var output = ClipReport.output("hover", options.output, width: summary.size.width, height: summary.size.height)
            output.time = start
            if let avoidance = summary.flashAvoidance { avoidance.record(in: &output) }
            output.frames = summary.frameCount
            output.duration = Format.seconds(summary.duration)
            if options.loopPoint != nil || options.seam != .cut {
                // As a batch hover with "loop_point"/"seam" records it.
                output.loopPoint = ((start + summary.duration.seconds) * 1e6).rounded() / 1e6
                output.seam = SeamReport(summary)
            }
            output.flashes = summary.flashes
            report.add(output, timing: "hover")
            try report.print()
            return ExitStatus.success
        }
        var status = stat()
        let bytes = FileSystem.stat(options.output, &status) == 0 ? Int(status.st_size) : 0
        Console.writeSummary("wrote \(options.output) (\(options.format.rawValue), \(summary.size), "
            + "\(summary.frameCount) frames at \(summary.framesPerSecond) fps = \(Format.fixed(summary.duration.seconds, 3)) s "
            + "from \(Format.fixed(start, 3)) s\(options.startsAtPoster ? " (the poster)" : ""), \(Format.byteCount(bytes)); "
            + "\(summary.seamDescription))\n")
        return ExitStatus.success
    }

    /// Opens the input, renders the window to `options.output` (whole or not at all) and returns
    /// what it made; prints nothing. `serve` answers an animated request with this file's bytes.
    func render() throws -> Rendered {
        let source = options.source.source
        let limits = options.source.sourceOptions
        var options = options
        if options.startsAtPoster {
            // As `thumb` with its defaults: the first good frame of the first 15 s, judged at thumb's size.
            let sampler = try FrameSampler(source: source, threads: options.source.threads, options: limits)
            let window = RenderCommand.posterWindow(duration: sampler.info.duration)
            let size = SizeRequest.orientedBox(ThumbOptions.defaultBox).resolved(display: sampler.info.displaySize)
            options.start = .seconds(try sampler.posterFrame(in: window, size: size).time)
        }
        // The window as given: the library resolves percentages, once, from the input it opens; a
        // fixed --loop-point is the window's end.
        let loop = try LoopPlayer(source: source, configuration: .init(
            contentMode: options.contentMode, windowStart: options.start,
            windowLength: options.length, windowEnd: options.loopPointTime, threads: options.source.threads, sourceOptions: limits),
            sizeRequest: options.size, evenSize: options.format.needsEvenSize)
        let size = loop.configuration.size
        try WorkLimitError.check(options.sizeRefusal(size))
        if let caps = options.caps, size.width > caps.side || size.height > caps.side {
            throw WorkLimitError(message: "A \(size) animation is over the server's limit of \(caps.side) pixels a side.")
        }
        // Before decoding: the frames the window makes once cut at the clip's end, and what they hold.
        if let warning = loop.info.colorWarning { Console.writeWarning(warning) }
        report?.opened(loop.info)
        let start = loop.windowStart.seconds, length = loop.windowLength.seconds
        let windowLength = loop.info.duration.map { min(length, max(0, $0 - start)) } ?? length
        if let caps = options.caps, options.decodedLength(windowLength) > caps.seconds + 1e-9 {
            throw WorkLimitError(message: "The animation would take \(Format.fixed(options.decodedLength(windowLength), 3)) s of the "
                                     + "clip, over the server's limit of \(Format.limit(caps.seconds)) s.")
        }
        let frames = (options.decodedLength(windowLength) * Double(options.framesPerSecond)).rounded(.up)
        let what = "A \(Format.fixed(windowLength, 3)) s window at \(options.framesPerSecond) fps"
        if let refusal = options.budget.frameRefusal(frames, what: what)
            ?? options.budget.memoryRefusal(RenderOptions.bytes(frames: frames, size: size, format: options.format)
                                                + options.heldBytes(frames: frames, size: size),
                                            what: what + " of \(size) \(options.format.rawValue)") {
            throw WorkLimitError(message: refusal)
        }
        let display = ProgressDisplay(label: "render", unit: "frames", rateUnit: "fps", style: options.reporting.progressStyle)
        defer { display.abandon() }
        let summary = try loop.render(to: options.output, format: options.format,
                                      framesPerSecond: options.framesPerSecond, quality: options.quality,
                                      maxFrames: options.budget.maxFrames, loopPoint: options.loopPoint?.loopPoint ?? .length,
                                      seam: options.seam, flashSafety: options.flashSafety) { completed, total in
            display.update(completed: completed, total: total)
        }
        display.finish(completed: summary.frameCount, total: summary.frameCount)
        return Rendered(summary: summary, start: summary.flashAvoidance?.start.seconds ?? start)
    }

    /// The one line `--flash-safety check` prints for an extended failure or a failure: the verdict and
    /// its spans in the time of the loop played on repeat; `nil` for a pass or a warning.
    static func flashWarning(_ report: FlashReport, output: String, written: String = "written anyway") -> String? {
        guard report.verdict >= .extendedFailure else { return nil }
        // Touching spans (an extended failure running into a failure) read as one stretch.
        var stretches: [(start: Double, end: Double)] = []
        for span in report.spans where span.verdict >= .extendedFailure {
            if let last = stretches.last, last.end >= span.start { stretches[stretches.count - 1].end = span.end }
            else { stretches.append((span.start, span.end)) }
        }
        let spans = stretches.prefix(3).map { "\(Format.fixed($0.start, 1))–\(Format.fixed($0.end, 1)) s" }
        return "\(Format.oneLine(output)) flashes: \(report.verdict.rawValue) (WCAG 2.3.1) at \(spans.joined(separator: ", ")) "
            + "of the loop played on repeat (its seam included); \(written)"
    }

    /// The window `thumb --at auto` searches with its defaults, `--start 0 --length 15`, cut at the clip's end.
    static func posterWindow(duration: Double?) -> Range<Double> {
        let length: Double = if case .seconds(let seconds) = ThumbOptions.length.defaultValue { seconds } else { 15 }
        return 0..<max(1e-6, min(length, duration ?? length))
    }
}

extension FlashAvoidance {
    /// `moved the loop window from 2.000 s to 5.250 s, clear of photosensitive flashes (…)`; `nil` when it
    /// stayed where it was asked for.
    var movedDescription: String? {
        guard isMoved else { return nil }
        return "moved the loop window from \(Format.fixed(requestedStart.seconds, 3)) s to \(Format.fixed(start.seconds, 3)) s, "
            + "the nearest start clear of photosensitive flashes (--flash-safety avoid; \(windowsChecked) windows checked)"
    }

    /// Sets a hover record's time asked for and its choice.
    func record(in output: inout BatchRecord.Output) {
        output.time = (start.seconds * 1e6).rounded() / 1e6
        output.timeAsked = (requestedStart.seconds * 1e6).rounded() / 1e6
        output.choice = isMoved ? "moved clear of flashes" : "window asked for"
    }
}

extension Format {
    /// `812 B`, `97.7 KB`, `1.4 MB` (powers of 1000, as file managers show sizes).
    static func byteCount(_ bytes: Int) -> String {
        switch bytes {
        case ..<1000: "\(bytes) B"
        case ..<1_000_000: "\(fixed(Double(bytes) / 1000, 1)) KB"
        default: "\(fixed(Double(bytes) / 1_000_000, 1)) MB"
        }
    }
}
