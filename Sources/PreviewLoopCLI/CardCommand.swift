import PreviewLoop

/// `preview-loop card`: the preview card's sequence as an animation or PNG frames, or one still of it.
struct CardCommand {
    /// The parsed options.
    var options: CardOptions
    /// With `--json`: what was done, printed as one batch record instead of the summary line.
    var report: ClipReport? = nil

    /// What ``render()`` made: a still's encoded bytes, or the animation it wrote to `options.output`.
    enum Rendered {
        case still(bytes: [UInt8], time: Double, phase: CardPhase)
        case sequence(CardSummary)
    }

    /// Renders the card: a still is encoded in memory; an animation or frame directory is written to
    /// `options.output`. Returns the poster too. Prints nothing.
    func render() throws -> (poster: CardPoster, rendered: Rendered) {
        let source = options.source.source
        let limits = options.source.sourceOptions
        // The window and poster time as given: the library resolves percentages from the input it opens.
        let card = try PreviewCard(source: source, style: options.style, windowStart: options.start, windowLength: options.length,
                                   posterTime: options.posterTime, threads: options.source.threads, sourceOptions: limits)
        if let warning = card.info.colorWarning, !options.isQuiet { Console.writeError("Warning: \(warning)\n") }
        report?.opened(card.info)
        let poster = try card.poster()
        switch options.destination {
        case .still(let format):
            let still = try card.still(at: options.stillTime)
            let image = card.compositor.withBackground(still.image)
            let bytes = try ImageEncoder.encode(image, as: format, quality: options.quality,
                                                background: options.style.background ?? .white)
            return (poster, .still(bytes: bytes, time: still.time, phase: still.phase))
        case .animation, .directory:
            let summary = try card.render(to: options.output, framesPerSecond: options.framesPerSecond, quality: options.quality,
                                          maxFrames: options.budget.maxFrames,
                                          flashSafety: options.destination == .directory ? .off : options.flashSafety)
            return (poster, .sequence(summary))
        }
    }

    /// Renders the card, writes it and prints one summary line on standard output.
    func run() throws -> Int32 {
        if let note = options.note { Console.writeError(note + "\n") }
        let (poster, rendered) = try render()
        let posterNote = "poster at \(Format.fixed(poster.frame.sourceTime, 3)) s (\(poster.choice.map(ThumbCommand.explanation) ?? "as asked")), "
            + "video from \(Format.fixed(poster.videoStart, 3)) s"
        switch rendered {
        case .still(let bytes, let time, let phase):
            try AtomicFile.write(bytes, to: options.output)
            if let report {
                var output = ClipReport.output("card", options.output, width: options.style.size.width,
                                               height: options.style.size.height)
                output.time = poster.frame.sourceTime
                output.choice = Self.choice(of: poster) + "; still at \(Format.fixed(time, 3)) s: \(Self.describe(phase))"
                output.skippedFrames = poster.choice?.rejected.count
                report.add(output, timing: "card")
                try report.print()
                return ExitStatus.success
            }
            Console.writeOutput("wrote \(options.output) (\(options.style.size), card at \(Format.fixed(time, 3)) s: "
                + "\(Self.describe(phase)); \(posterNote))\n")
        case .sequence(let summary):
            if let flashes = summary.flashes, let warning = RenderCommand.flashWarning(flashes, output: options.output),
               !options.isQuiet {
                Console.writeWarning(warning)
            }
            if let report {
                // An animation is one file; PNG frames a directory (its size the sum of its files).
                var output = ClipReport.output(summary.format == nil ? "card_frames" : "card", options.output,
                                               width: summary.size.width, height: summary.size.height)
                output.time = poster.frame.sourceTime
                output.choice = Self.choice(of: poster)
                output.skippedFrames = poster.choice?.rejected.count
                output.frames = summary.frameCount
                output.duration = summary.duration
                output.flashes = summary.flashes
                report.add(output, timing: "card")
                try report.print()
                return ExitStatus.success
            }
            let kind = summary.format.map(\.rawValue) ?? "PNG frames"
            Console.writeOutput("wrote \(options.output) (\(kind), \(summary.size), \(summary.frameCount) frames at "
                + "\(summary.framesPerSecond) fps = \(Format.fixed(summary.duration, 3)) s; \(posterNote))\n")
        }
        return ExitStatus.success
    }

    /// Why the poster is the frame it is: the poster choice's explanation, or `--poster-at`; and where the video starts.
    static func choice(of poster: CardPoster) -> String {
        "poster: " + (poster.choice.map(ThumbCommand.explanation) ?? "--poster-at") + "; video from \(Format.fixed(poster.videoStart, 3)) s"
    }

    /// `poster`, `revealing 50%`, `playing 1.234 s into the video`, `closing 20%`.
    static func describe(_ phase: CardPhase) -> String {
        switch phase {
        case .poster: "poster"
        case .revealing(let progress, _): "revealing \(Int((progress * 100).rounded()))%"
        case .playing(let time): "playing, \(Format.fixed(time, 3)) s into the video"
        case .closing(let progress, _): "closing \(Int((progress * 100).rounded()))%"
        }
    }
}
