import Glibc
import PreviewLoop

/// `preview-loop render` as a job: its options (declared once, for every front end), checks and work.
struct RenderCommand: Equatable, Sendable {
    /// The work limits (`--max-memory`, `--max-frames`); declared first, so its options are listed before
    /// the input group's.
    var budget = WorkBudget()
    /// The input and how it is read: `<input>`, `--timeout`, `--deadline`, `--threads`, `--allow-redirects`,
    /// `--tonemap` (the input group).
    var source = InputOptions()
    /// `-o` as typed, which becomes ``output`` and ``format``.
    @Option(RenderCommand.output, folded: true) var outputOption: String? = nil
    /// The file to write (`-o`, `--output`).
    var output = ""
    /// The file format, chosen by the output's extension.
    var format = AnimationFormat.mp4
    /// `--start` as typed, which becomes ``start`` or ``startsAtPoster``.
    @Option(RenderCommand.start, folded: true) var startOption = RenderCommand.start.defaultValue
    /// Where the window starts (`--start`); with `--start poster`, 0 until the poster is found.
    var start = WindowOptions.start.defaultValue
    /// Whether the window starts at the poster's frame (`--start poster`).
    var startsAtPoster = false
    /// How long the window lasts (`--length`).
    @Option(RenderCommand.length) var length = RenderCommand.length.defaultValue
    /// Whether the window is the input's newest `--length` seconds (`--latest`).
    @Flag(RenderCommand.latest) var latest = false
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 480, height: 270)
    /// The picture size (`-s`, `--size`); even for MP4.
    @Option(RenderCommand.size) var size = RenderCommand.size.defaultValue
    /// The constant frame rate (`--fps`).
    @Option(RenderCommand.fps) var framesPerSecond = RenderCommand.fps.defaultValue
    /// Quality 0–100 (`-q`, `--quality`); `nil` for the format's default. Not for GIF.
    @Option(RenderCommand.quality) var quality: Int? = nil
    /// How the picture fills the size (`--fit`).
    @Option(PictureOptions.fit) var contentMode = PictureOptions.fit.defaultValue
    /// Where the loop ends (`--loop-point`); `nil` at the end of `--length`.
    @Option(RenderCommand.loopPoint) var loopPoint = RenderCommand.loopPoint.defaultValue
    /// How the last frame joins the first (`--seam`).
    @Option(RenderCommand.seam) var seam = RenderCommand.seam.defaultValue
    /// Whether the frames written are checked for photosensitive flashes (`--flash-safety`).
    @Option(RenderCommand.flashSafety) var flashSafety = RenderCommand.flashSafety.defaultValue
    /// Whether one JSON record (the batch record's schema) replaces the summary line (`--json`).
    @Flag(ReportOptions.json) var json = false
    /// Progress and quiet (`--progress`, `--quiet`).
    var reporting = ReportingOptions()
    /// What a server lets one request render (`serve --animated-max-*`); `nil` on the command line.
    var caps: AnimationCaps?
}

extension RenderCommand: ClipOutputCommand, ReportsProgress {
    /// `preview-loop render`: its name, summary and arguments.
    static let configuration = CommandConfiguration(
        name: "render",
        abstract: "Write a window of a video as a muted hover preview that loops: MP4, animated WebP or GIF.",
        arguments: [.input])

    func make(report: ClipReport?) throws -> Int32 { try RenderRun(options: self, report: report).run() }
}

extension RenderCommand {
    /// `-o, --output <file>`.
    static let output = ValueOption<String?>.path(
        "output", short: "o", value: "file",
        help: "The file to write; its extension chooses the format: .mp4 (H.264, +faststart, "
            + "no audio), .webp (animated) or .gif (one palette per clip, dithered), each "
            + "looping forever. Written whole or not at all; s3://BUCKET/KEY uploads it to an S3 bucket.",
        required: true)
    /// `--start <poster|time>`.
    static let start = ValueOption<HoverStart>(
        "start", value: "poster|time",
        help: "Where the window starts: poster (the poster frame 'thumb' picks by default, the first good frame of "
            + "the first 15 s, so the preview opens on the picture past a title card or fade; needs an input "
            + "that can be read twice, not -) or seconds (12.5), mm:ss, hh:mm:ss.ms, or a percentage of the duration (10%).",
        default: .at(.seconds(0)), showing: "0",
        expecting: "poster, seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage from 0 to 100 (10%)",
        completing: .choices(["poster"])) { HoverStart(parsing: $0) }.parameter()
    /// `--length <time>` (3 s).
    static let length = WindowOptions.length(default: 3).parameter()
    /// `--latest`: the window is the newest `--length` seconds.
    static let latest = FlagOption(
        "latest", help: "Take the window from the newest of the input instead of --start: its last --length seconds; for an "
            + "HLS media playlist, of the segments it lists now (a live playlist is read as it stands, never waited on).").parameter()
    /// `-s, --size <WxH>`.
    static let size = PictureOptions.size(
        default: defaultBox,
        help: "The picture size in pixels, 1 to 16384 a side: WxH, one side keeping the "
            + "source's shape (480, x270) or source; even for .mp4 (H.264 4:2:0), an odd side given "
            + "is a usage error, a computed one is rounded to even. \(PictureOptions.encoderLimits)").recipeKey()
    /// `--fps <n>`.
    static let fps = ValueOption<Int>.integer("fps", help: "Frames per second, \(ValueRanges.framesPerSecond.inWords): each frame is the one shown at its instant.",
                                         default: 15, in: ValueRanges.framesPerSecond).parameter()
    /// `-q, --quality <0-100>`.
    static let quality = ValueOption<Int?>.optionalInteger(
        "quality", short: "q", value: "0-100",
        help: "0 (smallest) to 100 (best): x264's CRF 51 to 14 for .mp4, libwebp's quality "
            + "for .webp (100: lossless); a usage error for .gif, whose palette has no quality.",
        in: ValueRanges.quality, showing: "75").parameter()

    /// Takes the input, the output with its format, and the start.
    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        source.input = try arguments.input()
        output = try arguments.requiredOutput(Self.output, example: "preview.mp4")
        guard let format = AnimationFormat(path: output) else {
            throw UsageError(.unsupportedOutputFormat(output), subcommand: Self.subcommand,
                             "Cannot tell a video format from '\(output)'; use an extension among: \(AnimationFormat.extensionList).")
        }
        self.format = format
        switch try arguments.value(Self.start) {
        case .poster: startsAtPoster = true
        case .at(let position): start = position
        }
    }

    /// Whether the values, each valid on its own, go together.
    func validate() throws(UsageError) {
        if latest {
            var conflicting: (any OptionDeclaration)?
            if $startOption.isGiven { conflicting = Self.start } else if case .at? = loopPoint { conflicting = Self.loopPoint }
            if let conflicting {
                throw UsageError(.conflictingOptions(Self.latest.spec.name, conflicting.spec.name), subcommand: Self.subcommand,
                                 "'--latest' places the window at the input's end; '\(conflicting.spec.longSpelling)' cannot be given with it.")
            }
            if source.input == "-" {
                throw UsageError(.conflictingOptions(Self.latest.spec.name, "input"), subcommand: Self.subcommand,
                                 "'--latest' needs the input's duration before reading it; standard input can be read once: save it to a file first.")
            }
        }
        if startsAtPoster, source.input == "-" {
            throw UsageError(.conflictingOptions("start", "input"), subcommand: Self.subcommand,
                             "'--start poster' reads the input twice (the poster's search, then the window); "
                                 + "standard input can be read once: save it to a file first.")
        }
        let given: Size? = switch size {
        case .exact(let exact): exact
        case .width(let width): Size(width: width, height: 2)
        case .height(let height): Size(width: 2, height: height)
        case .source, .orientedBox: nil
        }
        if format.needsEvenSize, let given, given.width % 2 != 0 || given.height % 2 != 0 {
            let even = Size(width: max(2, given.width & ~1), height: max(2, given.height & ~1))
            throw UsageError(.invalidValue(option: "size", value: $size.text ?? size.description), subcommand: Self.subcommand,
                             "Invalid value '\(size)' for '--size <WxH>': H.264 MP4 needs an even width and height "
                                 + "(for example \(even)); .webp and .gif take any size.")
        }
        try ScannedArguments.checkQuality(quality, option: Self.quality, lossy: format.hasQuality, output: output,
                                          alternatives: ".mp4, .webp", for: Self.subcommand)
        try validateSeam()
        try ScannedArguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first, for: Self.subcommand)
    }

    /// Why a render at `size` is refused before decoding; `nil` when it fits.
    func sizeRefusal(_ size: Size) -> WorkBudget.Refusal? {
        if let reason = WorkBudget.encoderRefusal(size, webp: format == .webp) {
            return .init(option: "size", message: "A \(size) \(format.rawValue) cannot be written: \(reason)")
        }
        return budget.memoryRefusal(RenderCommand.bytes(frames: 1, size: size, format: format), what: "A \(size) \(format.rawValue)")
            .map { .init(option: "max-memory", message: $0) }
    }

    /// The bytes of pictures a render of `frames` frames holds: a few working pictures, and for GIF every
    /// frame (its palette is computed from all of them).
    static func bytes(frames: Double, size: Size, format: AnimationFormat) -> Double {
        OutputLimits.renderBytes(frames: frames, size: size, format: format)
    }
}

/// What a server lets one animated request render: checked before decoding, once the source's size
/// and the window are known.
package struct AnimationCaps: Equatable, Sendable {
    /// The most seconds of the clip one animation takes (its window, with a loop-point search and a
    /// crossfade's tail).
    package var seconds: Double
    /// The most pixels on either side.
    package var side: Int
    /// The most frames per second.
    package var framesPerSecond: Int

    /// Mux's caps: 10 s, 640 pixels, 30 fps.
    package init(seconds: Double = 10, side: Int = 640, framesPerSecond: Int = 30) {
        self.seconds = seconds
        self.side = side
        self.framesPerSecond = framesPerSecond
    }
}

/// One run of `preview-loop render` on the command line: one pass of the loop window written as a hover preview that loops cleanly
/// (MP4, animated WebP or GIF), whole or not at all.
struct RenderRun {
    /// The parsed options.
    var options: RenderCommand
    /// With `--json`: what was done, printed as one batch record instead of the summary line.
    var report: ClipReport? = nil

    /// What a render made: the summary and the window's start in seconds.
    struct Rendered {
        var summary: RenderSummary
        var start: Double
    }

    /// Renders the window and prints one summary line on standard output.
    func run() throws -> Int32 {
        // An s3:// output is rendered into a staging folder, then uploaded.
        let rendered = try FileOutput.writing(options.output) { path in
            var local = self
            local.options.output = path
            return try local.render()
        }
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
        let bytes = FileOutput.size(options.output)
        Console.writeSummary("wrote \(options.output) (\(options.format.rawValue), \(summary.size), "
            + "\(summary.frameCount) frames at \(summary.framesPerSecond) fps = \(Format.fixed(summary.duration.seconds, 3)) s "
            + "from \(Format.fixed(start, 3)) s\(options.startsAtPoster ? " (the poster)" : ""), \(Format.byteCount(bytes)); "
            + "\(summary.seamDescription))\n")
        return ExitStatus.success
    }

    /// Opens the input, renders the window to `options.output` (whole or not at all), or to memory
    /// with `inMemory` (the summary's `bytes`: what the file gets), and returns what it made; prints
    /// nothing. `serve` answers an animated request with the bytes rendered in memory.
    func render(inMemory: Bool = false) throws -> Rendered {
        var source = options.source.source
        let limits = options.source.sourceOptions
        var options = options
        let latestFolder = options.latest ? try Self.latestWindow(&options, source: &source, limits: limits) : nil
        defer { Self.removeLatestFolder(latestFolder) }
        if options.startsAtPoster {
            // As `thumb` with its defaults: the first good frame of the first 15 s, judged at thumb's size.
            let sampler = try FrameSampler(source: source, threads: options.source.threads, options: limits)
            let window = RenderRun.posterWindow(duration: sampler.info.duration)
            let size = SizeRequest.orientedBox(ThumbCommand.defaultBox).resolved(display: sampler.info.displaySize)
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
            ?? options.budget.memoryRefusal(RenderCommand.bytes(frames: frames, size: size, format: options.format)
                                                + options.heldBytes(frames: frames, size: size),
                                            what: what + " of \(size) \(options.format.rawValue)") {
            throw WorkLimitError(message: refusal)
        }
        let display = ProgressDisplay(label: "render", unit: "frames", rateUnit: "fps", style: options.reporting.progressStyle)
        defer { display.abandon() }
        let summary = try loop.render(to: inMemory ? .memory : .file(options.output), format: options.format,
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
        let length: Double = if case .seconds(let seconds) = ThumbCommand.length.defaultValue { seconds } else { 15 }
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

extension AnimationFormat {
    /// `.mp4, .m4v, .webp, .gif`: for help and error messages.
    static var extensionList: String {
        allCases.flatMap(\.fileExtensions).map { ".\($0)" }.joined(separator: ", ")
    }
}

extension RenderCommand: ServedJob {
    mutating func scaleDefaultSize(by factor: Double) { size = size.scaled(by: factor) }

    static func isAnimation(_ fileName: String) -> Bool { true }

    /// Writes the route's file; `end` stands for `length` and `loop_point` together.
    static func prepare(_ given: inout ScannedArguments, for request: ServingRequest) throws(PreviewRequestError) {
        if request.has("end") && (request.has("length") || request.has("loop_point")) {
            throw PreviewRequestError(status: 400, parameter: "end",
                                      detail: "end sets where the animation ends: give it without length and loop_point.")
        }
        given.give("output", request.fileName)
    }

    /// Within the server's caps: the frames of the longest window at the size asked (the caps' square when
    /// it follows the source), as encoded, what the render holds besides, and the file it makes in memory.
    mutating func prepareToServe(_ request: ServingRequest) throws(PreviewRequestError) -> Int {
        let caps = request.caps
        try Self.checkFramesPerSecond(framesPerSecond, caps: caps)
        if case .seconds(let seconds) = length, seconds > caps.seconds + 1e-9 {
            throw PreviewRequestError(status: 413, parameter: "length",
                                      detail: "At most \(Format.limit(caps.seconds)) s for an animation on this server.")
        }
        self.caps = caps
        reporting.isQuiet = true
        let box = size.knownSizes.first ?? Size(width: caps.side, height: caps.side)
        let frames = (caps.seconds * (1 + LoopEnd.searchFraction) + 1) * Double(framesPerSecond)
        return Int(Self.bytes(frames: frames, size: box, format: format) + heldBytes(frames: frames, size: box)
                   + OutputLimits.encodedAnimationBytes(frames: frames, size: box, format: format))
    }

    /// The animation, rendered in memory (the bytes `render -o` writes), with its flash verdict (and
    /// where an avoided window starts).
    /// With `latest` on a remote playlist, or a local one of fragmented MP4 segments, the render reads the
    /// segments of its newest seconds, copied into `scratch` by ``InputOptions/remoteLatestCopy(in:serial:length:)``
    /// or ``InputOptions/localFragmentedLatestCopy(in:serial:length:)``, from the window's start there.
    func body(for job: PreviewJob, scratch: String, siblings: [PreviewJob]) throws -> RenderedBody {
        var options = self
        let serial = PreviewJob.nextRenderSerial()
        let copy = latest ? try source.remoteLatestCopy(in: scratch, serial: serial, length: length)
            ?? source.localFragmentedLatestCopy(in: scratch, serial: serial, length: length) : nil
        defer { if let copy { FileSystem.unlink(copy.path) } }
        if let copy {
            options.source.opened = copy.path
            options.latest = false
            options.start = .seconds(copy.start)
            options.length = .seconds(copy.length)
        }
        let rendered = try RenderRun(options: options).render(inMemory: true)
        return RenderedBody(body: rendered.summary.bytes ?? [], flashes: rendered.summary.flashes,
                            avoidance: rendered.summary.flashAvoidance)
    }
}
