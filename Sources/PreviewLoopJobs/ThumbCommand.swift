import PreviewLoop

/// `preview-loop thumb` as a job: its options (declared once, for every front end), checks and work.
struct ThumbCommand: Equatable, Sendable {
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
    /// When to take the frame (`-t`, `--at`): the poster frame of the window (`auto`) or a time.
    @Option(ThumbCommand.at) var time = ThumbCommand.at.defaultValue
    /// Whether the frame is the newest: a live playlist's newest segment's last frame (`--latest`).
    @Flag(ThumbCommand.latest) var latest = false
    /// The wall-clock time of the frame on the playlist's `EXT-X-PROGRAM-DATE-TIME` timeline, in seconds
    /// since 1970 (`--program-time`).
    @Option(ThumbCommand.programTime) var programTime: Double? = nil
    /// Where the window `--at auto` searches starts (`--start`).
    @Option(ThumbCommand.start) var start = ThumbCommand.start.defaultValue
    /// How long that window lasts (`--length`), cut at the end of the clip.
    @Option(ThumbCommand.length) var length = ThumbCommand.length.defaultValue
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 320, height: 180)
    /// The image size (`-s`, `--size`); by default a box that turns with a portrait source.
    @Option(ThumbCommand.size) var size = ThumbCommand.size.defaultValue
    /// Lossy quality 0–100 (`-q`, `--quality`); `nil` for the format's default (or a lossless format).
    @Option(OutputOptions.imageQuality) var quality: Int? = nil
    /// How the picture fills the size (`--fit`).
    @Option(PictureOptions.fit) var contentMode = PictureOptions.fit.defaultValue
    /// Which frame answers an explicit time (`--accuracy`): exact or keyframe.
    @Option(ThumbCommand.accuracy) var accuracy = ThumbCommand.accuracy.defaultValue
    /// Whether a play button is drawn in the middle (`--play-button`).
    @Flag(ThumbCommand.playButton) var showsPlayButton = false
    /// The rounded corners' radius in pixels (`--corner-radius`); 0 for none.
    @Option(ThumbCommand.cornerRadius) var cornerRadius = ThumbCommand.cornerRadius.defaultValue
    /// The colour outside rounded corners (`--background`); `nil`: transparent in PNG and WebP, white
    /// elsewhere.
    @Option(PictureOptions.background) var background: RGBAColor? = nil
    /// With `--at best`: how many ranked candidates to list (`--candidates`); `nil` lists none.
    @Option(ThumbCommand.candidates) var candidates: Int? = nil
    /// Whether one JSON record (the batch record's schema) replaces the summary line (`--json`).
    @Flag(ReportOptions.json) var json = false
    /// Whether an exact `size` is a box the picture fits inside keeping its shape (the image API's
    /// `fit_mode=preserve`), rather than the picture's size.
    var preservesShape = false

    /// Whether the picture gets a play button or rounded corners.
    var hasOverlays: Bool { showsPlayButton || cornerRadius > 0 }
    /// Progress and quiet (`--quiet`).
    var reporting = ReportingOptions()
}

extension ThumbCommand: ClipOutputCommand, ReportsProgress {
    /// `preview-loop thumb`: its name, summary, arguments and the group options it leaves out.
    static let configuration = CommandConfiguration(
        name: "thumb",
        abstract: "Write one frame of a video as an image: by default the poster frame, the first good one of the window.",
        arguments: [.input],
        hiding: [WorkBudget.maxFrames, ReportingOptions.progress])

    func make(report: ClipReport?) throws -> Int32 { try ThumbRun(options: self, report: report).run() }
}

extension ThumbCommand {
    /// `-t, --at <time>`.
    static let at = ValueOption<PosterTime>(
        "at", short: "t", value: "time",
        help: "When to take the frame: auto (the poster frame: the first frame of the window "
            + "that is not black, white, flat, a title card, fading, dark or blurred, judged against "
            + "the next second), best (the most representative good frame of the whole clip, from "
            + "9 keyframes across it: colourful, sharp, well exposed, typical), or seconds (12.5), mm:ss, hh:mm:ss.ms, or a percentage of the duration "
            + "(10%), kept within the clip.",
        default: .auto, showing: "auto",
        expecting: "auto, best, seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage from 0 to 100 (10%)") { text in
        PosterTime(parsing: text)
    }.recipeKey()
    /// `--latest`: the newest frame of a live HLS playlist.
    static let latest = FlagOption(
        "latest", help: "Take the newest frame instead of --at: for an HLS media playlist, the last frame of the newest "
            + "segment it lists (read from that segment alone, so a live playlist is never read from its start); "
            + "for any other file, its last frame.").parameter()
    /// `--program-time <date>`: a frame by its wall-clock time.
    static let programTime = ValueOption<Double?>(
        "program-time", value: "date",
        help: "Take the frame shown at this wall-clock time instead of --at, on an HLS playlist's EXT-X-PROGRAM-DATE-TIME "
            + "timeline: an ISO 8601 date, time and zone (2026-12-07T03:00:00Z, 2026-12-07T04:00:00.5+01:00); the "
            + "segment that covers it is read from the time's offset in it.",
        default: nil, showing: "none",
        expecting: "an ISO 8601 date, time and zone (2026-12-07T03:00:00Z, 2026-12-07T04:00:00.5+01:00)") { text in
        ProgramDate.seconds(text).map { .some($0) }
    }.parameter()
    /// `--start <time>`: where the `--at auto` window starts.
    static let start = ValueOption<TimePosition>.time(
        "start", help: "Where the window --at auto searches starts: seconds, mm:ss, hh:mm:ss.ms, or a "
            + "percentage of the duration. Only with --at auto.",
        default: WindowOptions.start.defaultValue, showing: "0").parameter()
    /// `--length <time>`: how long the `--at auto` window lasts.
    static let length = ValueOption<TimePosition>.time(
        "length", help: "How long that window lasts, in the same forms; cut at the end of the clip. "
            + "Must be above 0. Only with --at auto.",
        default: WindowOptions.length.defaultValue, showing: WindowOptions.length.spec.defaultValue!, positive: true).parameter()
    /// `-s, --size <WxH>`.
    static let size = PictureOptions.size(default: defaultBox).recipeKey()
    /// `--accuracy <accuracy>`.
    static let accuracy = ValueOption<SeekAccuracy>.choice(
        "accuracy", value: "accuracy",
        help: "exact (the frame shown at that time) or keyframe (the nearest keyframe at or "
            + "before it; faster). Only with an explicit --at time.",
        default: .exact, among: [.exact, .keyframe]).parameter()
    /// `--play-button`.
    static let playButton = FlagOption("play-button",
                                 help: "Draw a play button in the middle: a white triangle in a translucent dark disc, "
                                     + "72 pixels across at 320 wide, scaling with the picture.")
    /// `--corner-radius <px>`.
    static let cornerRadius = PictureOptions.cornerRadius(default: 0)
    /// `--candidates <n>`: how many of `--at best`'s ranked candidates are listed.
    static let candidates = ValueOption<Int?>.optionalInteger(
        "candidates", help: "With --at best: list the top n of the candidates it ranked, 1 to "
            + "\(FrameSampler.bestPosterCandidates) (the keyframes it samples), with their times, the scores it "
            + "compared (brightness, contrast, sharpness, uniformity, colourfulness, exposure, typicality, the "
            + "score) or why one was rejected, and which was chosen: a table after the summary line, or "
            + "\"candidates\" in the --json record's poster entry.",
        in: 1...FrameSampler.bestPosterCandidates)

    /// Takes the input, and the output with its format.
    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        source.input = try arguments.input()
        (output, format) = try arguments.imageOutput()
    }

    /// Whether the values, each valid on its own, go together.
    func validate() throws(UsageError) {
        try ScannedArguments.checkQuality(quality, option: OutputOptions.imageQuality, lossy: format.isLossy, output: output,
                                          for: Self.subcommand)
        if candidates != nil, time != .best {
            throw UsageError(.conflictingOptions("candidates", "at"), subcommand: Self.subcommand,
                             "'--candidates' lists the candidates of '--at best'; give '--at best' too.")
        }
        try validateLiveChoice()
        switch time {
        case .auto:
            if $accuracy.isGiven, programTime == nil {
                throw UsageError(.conflictingOptions("accuracy", "at"), subcommand: Self.subcommand,
                                 "'--accuracy' applies only to an explicit '--at' time, not to '--at auto' (the default).")
            }
        case .best:
            for (given, option) in [($start.isGiven, Self.start), ($length.isGiven, Self.length), ($accuracy.isGiven, Self.accuracy)]
                as [(Bool, any OptionDeclaration)] where given {
                throw UsageError(.conflictingOptions(option.spec.name, "at"), subcommand: Self.subcommand,
                                 "'\(option.spec.longSpelling)' has no effect with '--at best', which looks at the whole clip.")
            }
        case .at:
            for (given, option) in [($start.isGiven, Self.start), ($length.isGiven, Self.length)] where given {
                throw UsageError(.conflictingOptions(option.spec.name, "at"), subcommand: Self.subcommand,
                                 "'\(option.spec.longSpelling)' sets the window of '--at auto'; it has no effect with an explicit '--at' time.")
            }
        }
        try ScannedArguments.checkReportJSON(json, output: output, for: Self.subcommand)
        try ScannedArguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first, for: Self.subcommand)
    }

    /// `--latest` and `--program-time` replace `--at` and its window; `--latest` takes no accuracy.
    private func validateLiveChoice() throws(UsageError) {
        if latest, programTime != nil {
            throw UsageError(.conflictingOptions("latest", "program-time"), subcommand: Self.subcommand,
                             "'--latest' and '--program-time' each choose the frame; give one.")
        }
        for (given, option) in [(latest, Self.latest), (programTime != nil, Self.programTime)] as [(Bool, any OptionDeclaration)] where given {
            var others: [any OptionDeclaration] = [Self.at, Self.start, Self.length]
            if latest { others.append(Self.accuracy) }
            let isGiven = [Self.at.spec.name: $time.isGiven, Self.start.spec.name: $start.isGiven,
                           Self.length.spec.name: $length.isGiven, Self.accuracy.spec.name: $accuracy.isGiven]
            for other in others where isGiven[other.spec.name] == true {
                throw UsageError(.conflictingOptions(option.spec.name, other.spec.name), subcommand: Self.subcommand,
                                 "'\(option.spec.longSpelling)' chooses the frame; '\(other.spec.longSpelling)' cannot be given with it.")
            }
        }
    }

    /// Why a thumbnail of `size` is refused before decoding (the option to name, the reason); `nil` when it fits.
    func sizeRefusal(_ size: Size) -> WorkBudget.Refusal? {
        if let reason = WorkBudget.encoderRefusal(size, format: format) {
            return .init(option: "size", message: "A \(size) picture cannot be written: \(reason)")
        }
        // The scaled frame, the picture with its overlays, the encoder's copy (and libaom's own for AVIF).
        let encoder = OutputLimits.stillEncoderBytesPerPixel(format) * Double(size.area)
        return budget.memoryRefusal(4 * WorkBudget.rgba(size) + encoder, what: "A \(size) thumbnail").map { .init(option: "max-memory", message: $0) }
    }
}

/// One run of `preview-loop thumb` on the command line: one frame at a time, written as an image, whole or not at all.
struct ThumbRun {
    /// The parsed options.
    var options: ThumbCommand
    /// With `--json`: what was done, printed as one batch record instead of the summary line.
    var report: ClipReport? = nil

    /// Samples the frame, writes the image and prints one summary line on standard output; with
    /// `--at auto` the line says why the frame was chosen and what was skipped.
    func run() throws -> Int32 {
        try ImageDestination.check(options.output)
        let picture = try render()
        let frame = picture.frame
        try ImageDestination.write(picture.bytes, to: options.output)
        if let report {
            // A poster when the frame was chosen (--at auto or best), else the frame asked for.
            var output = ClipReport.output(picture.chosen == nil ? "frame" : "poster", options.output,
                                           width: frame.image.width, height: frame.image.height)
            output.time = frame.sourceTime
            output.timeAsked = picture.still?.asked
            output.choice = picture.chosen.map(Self.explanation) ?? picture.still?.choice(accuracy: options.accuracy)
                ?? "the time asked (\(options.accuracy.rawValue))"
            output.skippedFrames = picture.chosen?.rejected.count
            output.placeholder = ImagePlaceholder(frame.image)
            output.phash = PerceptualHash(frame.image).description
            output.smartCrop = frame.smartCrop
            if let count = options.candidates { output.candidates = Array(picture.chosen?.ranking.prefix(count) ?? []) }
            report.add(output, timing: picture.chosen == nil ? "frame" : "poster")
            report.fetched(picture.remoteReads)
            try report.print()
            return ExitStatus.success
        }
        var explanation = picture.chosen.map { ": " + Self.explanation(of: $0) } ?? picture.liveNote.map { ": " + $0 } ?? ""
        if let still = picture.still, still.isPastDataEnd { explanation = ": " + still.choice(accuracy: options.accuracy) }
        let info = picture.info
        if info.isTruncated, !(picture.still?.isPastDataEnd ?? false) {
            explanation += "; the file is truncated: its data ends at \(Format.fixed(info.decodableDuration ?? 0, 3)) s of the "
                + "\(Format.fixed(info.declaredDuration ?? 0, 3)) s declared"
        }
        var summary = "wrote \(ImageDestination.name(options.output)) (\(frame.image.width)x\(frame.image.height), "
            + "frame at \(Format.fixed(frame.sourceTime, 3)) s\(explanation))\n"
        if let count = options.candidates, let chosen = picture.chosen { summary += Self.table(of: chosen.ranking, top: count) }
        Console.writeSummary(summary, toError: options.output == ImageDestination.standardOutput)
        return ExitStatus.success
    }

    /// The encoded image, the frame it shows and, for a chosen poster, why it was chosen.
    struct Picture {
        var bytes: [UInt8]
        var frame: VideoFrame
        var chosen: PosterChoice?
        /// For `--at` a time or percentage: the time asked and where the frame was taken.
        var still: StillTime?
        /// The clip as probed.
        var info: VideoInfo
        /// For an `s3://` input, what its reads cost.
        var remoteReads: RemoteReads? = nil
        /// With `--latest` or `--program-time`: which segment the frame came from.
        var liveNote: String? = nil
    }

    /// Opens the input, samples the frame and encodes it; writes nothing. `serve` answers a thumbnail
    /// request with these bytes, so a served thumbnail is byte for byte what `thumb` writes.
    func render() throws -> Picture {
        let live = try options.liveFrameSource()
        let sampler = try FrameSampler(source: live?.source ?? options.source.source, threads: options.source.threads,
                                       options: live?.options ?? options.source.sourceOptions)
        if let warning = sampler.info.colorWarning { Console.writeWarning(warning) }
        report?.opened(sampler.info)
        let duration = sampler.info.duration
        let display = sampler.info.displaySize
        let size: Size
        if options.preservesShape, case .exact(let box) = options.size {
            // Inside the box, keeping the shape: the side that binds is exact, the other follows.
            let wide = Double(display.width) * Double(box.height) >= Double(display.height) * Double(box.width)
            size = (wide ? SizeRequest.width(box.width) : SizeRequest.height(box.height)).resolved(display: display)
        } else {
            size = options.size.resolved(display: display)
        }
        try WorkLimitError.check(options.sizeRefusal(size))
        let frame: VideoFrame
        var chosen: PosterChoice?
        var still: StillTime?
        if let live {
            // The segment's (or file's) last frame for --latest; the offset into the segment for --program-time.
            let time = StillTime(asked: live.offset ?? duration ?? 0, info: sampler.info)
            frame = try sampler.frame(at: time.taken, size: size, mode: options.contentMode,
                                      accuracy: live.offset == nil ? .exact : options.accuracy)
            still = time
        } else {
            switch options.time {
            case .auto:
                let span = try SampleSpan.window(start: options.start, length: options.length, duration: duration)
                let poster = try sampler.posterFrame(in: span.start..<(span.start + span.length), size: size,
                                                     mode: options.contentMode)
                frame = poster.frame
                chosen = poster
            case .best:
                let poster = try sampler.bestPosterFrame(size: size, mode: options.contentMode)
                frame = poster.frame
                chosen = poster
            case .at(let position):
                // A percentage is of the video's duration: for a truncated file, of the part its data holds.
                let time = StillTime(asked: try position.resolved(duration: duration, "--at"), info: sampler.info)
                frame = try sampler.frame(at: time.taken, size: size, mode: options.contentMode, accuracy: options.accuracy)
                still = time
            }
        }
        let bytes: [UInt8]
        if options.hasOverlays || options.background != nil {
            // The card's poster picture: the same compositor, play button and corners.
            let style = CardStyle(size: frame.image.size, cornerRadius: options.cornerRadius, background: options.background,
                                  showsPlayButton: options.showsPlayButton)
            let compositor = try CardCompositor(style: style)
            let picture = compositor.withBackground(try compositor.picture(at: .poster, poster: frame.image, video: nil))
            bytes = try ImageEncoder.encode(picture, as: options.format, quality: options.quality,
                                            background: options.background ?? .white)
        } else {
            bytes = try options.format.encode(frame.image, quality: options.quality)
        }
        return Picture(bytes: bytes, frame: frame, chosen: chosen, still: still, info: sampler.info, remoteReads: sampler.remoteReads,
                       liveNote: live?.note)
    }

    /// `--candidates`' table: the top `count` of `ranking`, one line each, the chosen one marked `*`;
    /// a rejected candidate's score column says why. Says so when the search found no candidate.
    static func table(of ranking: [PosterRanking], top count: Int) -> String {
        guard !ranking.isEmpty else { return "no candidates: the clip's duration is unknown or it cannot seek\n" }
        func cell(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        var lines = ["rank    time s  bright  contrast  sharp   uniform  colour  exposure  typical  score"]
        for (index, candidate) in ranking.prefix(count).enumerated() {
            let scores = candidate.scores
            var line = (candidate.isChosen ? "*" : " ") + cell("\(index + 1)", 3)
            line += cell(Format.fixed(candidate.time, 3), 10) + cell(Format.fixed(scores.brightness, 3), 8)
                + cell(Format.fixed(scores.contrast, 3), 10) + cell(Format.fixed(scores.sharpness, 4), 7)
                + cell(Format.fixed(scores.uniformity, 3), 9) + cell(Format.fixed(candidate.colourfulness, 3), 8)
                + cell(Format.fixed(candidate.exposure, 3), 10)
            if let score = candidate.score {
                line += cell(Format.fixed(candidate.typicality, 3), 9) + "  " + Format.fixed(score, 5)
            } else {
                line += cell("-", 9) + "  rejected: \(candidate.rejection?.description ?? "")"
            }
            lines.append(line)
        }
        if ranking.count > count { lines.append("(\(ranking.count - count) more)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `first good frame; skipped 5: black ×3, fading ×2`, or `best available (itself flat); …`: why
    /// the poster was chosen, and the candidates passed over by reason, in order of first appearance.
    static func explanation(of poster: PosterChoice) -> String {
        var text = poster.reason.description
        if let flaw = poster.flaw { text += " (itself \(flaw))" }
        guard !poster.rejected.isEmpty else { return text }
        var counts: [(reason: PosterRejection, count: Int)] = []
        for candidate in poster.rejected {
            if let index = counts.firstIndex(where: { $0.reason == candidate.reason }) {
                counts[index].count += 1
            } else {
                counts.append((candidate.reason, 1))
            }
        }
        return text + "; skipped \(poster.rejected.count): " + counts.map { "\($0.reason) ×\($0.count)" }.joined(separator: ", ")
    }
}

extension ThumbCommand: ServedJob {
    mutating func scaleDefaultSize(by factor: Double) { size = size.scaled(by: factor) }

    /// `thumbnail.*` writes the route's file; `placeholder.json` measures the picture and writes none
    /// (PPM is the cheapest to make).
    static func prepare(_ given: inout ScannedArguments, for request: ServingRequest) throws(PreviewRequestError) {
        given.give("output", request.route.stem == PreviewRequests.placeholder.stem ? "placeholder.ppm" : request.fileName)
    }

    /// The scaled frame, the picture with its overlays and the encoder's copy, at the size asked (a
    /// 1920 square when it follows the source).
    mutating func prepareToServe(_ request: ServingRequest) throws(PreviewRequestError) -> Int {
        preservesShape = request.preservesShape && request.width != nil && request.height != nil
        let box = size.knownSizes.first ?? Size(width: 1920, height: 1920)
        return 4 * Int(WorkBudget.rgba(box))
    }

    /// The picture with its placeholder headers, or `placeholder.json`; a thumbnail's render answers its
    /// `placeholder.json` too.
    func body(for job: PreviewJob, scratch: String, siblings: [PreviewJob]) throws -> RenderedBody {
        let picture = try ThumbRun(options: self).render()
        guard Self.isPlaceholder(job.route) else {
            var body = RenderedBody(body: picture.bytes, headers: PreviewRequests.headers(of: ImagePlaceholder(picture.frame.image)))
            body.siblings = siblings.map { _ in Self.placeholderBody(of: picture.frame) }
            return body
        }
        return Self.placeholderBody(of: picture.frame)
    }

    func siblingRequests(of job: PreviewJob) -> [(route: String, query: [(name: String, value: String)])] {
        Self.isPlaceholder(job.route) ? [] : [(PreviewRequests.placeholder.stem + ".json", job.query.filter { $0.name != "format" })]
    }

    /// Whether `route` is `placeholder.json`.
    private static func isPlaceholder(_ route: String) -> Bool { route.hasPrefix(PreviewRequests.placeholder.stem + ".") }

    /// `placeholder.json` of a picture: its ThumbHash, BlurHash, dominant colour, pHash, time and size.
    private static func placeholderBody(of frame: VideoFrame) -> RenderedBody {
        let image = frame.image
        let placeholder = ImagePlaceholder(image)
        let json = JSONValue.object([
            "thumbhash": .string(placeholder.thumbHash), "blurhash": .string(placeholder.blurHash),
            "dominant_color": .string("\(placeholder.dominantColor)"),
            "phash": .string("\(PerceptualHash(image))"), "time": .number((frame.sourceTime * 1e6).rounded() / 1e6),
            "width": .integer(image.width), "height": .integer(image.height),
        ])
        return RenderedBody(body: Array((json.text(.memberPerLine) + "\n").utf8))
    }
}
