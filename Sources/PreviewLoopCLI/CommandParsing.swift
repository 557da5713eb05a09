import PreviewLoop

// Each subcommand's own option declarations and its parser: typing (through the declarations) and
// validating the scanned arguments, as swift-argument-parser's `validate()` does. Everything here is pure.

extension ProbeOptions {
    /// `--json`.
    static let json = Flag("json", help: "Print one JSON object with sorted keys instead of aligned text.")

    /// `--flashes`.
    static let flashes = Flag(
        "flashes",
        help: "Also decode every frame (at 96 pixels wide, HDR tone mapped) and look for photosensitive flashes "
            + "as WCAG 2.3.1 defines them: per second the luminance and red flashes in its worst one-second window, "
            + "the largest area changing together, and a verdict (pass, warning, extended_failure, failure), then "
            + "the risky spans. See Docs/flashes.md.")

    /// Types `probe`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        self.init(source: try InputOptions(arguments))
        isJSON = arguments.isSet(Self.json)
        analysesFlashes = arguments.isSet(Self.flashes)
        for option in [InputOptions.tonemap, InputOptions.threads] as [any OptionDeclaration] where arguments.isGiven(option) && !analysesFlashes {
            throw UsageError(.conflictingOptions(option.spec.name, "flashes"), subcommand: .probe,
                             "'\(option.spec.longSpelling)' applies to the frames '--flashes' decodes; give '--flashes' too.")
        }
    }
}

extension ThumbOptions {
    /// `-t, --at <time>`.
    static let at = Option<PosterTime>(
        "at", short: "t", value: "time",
        help: "When to take the frame: auto (the poster frame: the first frame of the window "
            + "that is not black, white, flat, a title card, fading, dark or blurred, judged against "
            + "the next second), best (the most representative good frame of the whole clip, from "
            + "9 keyframes across it: colourful, sharp, well exposed, typical), or seconds (12.5), mm:ss, hh:mm:ss.ms, or a percentage of the duration "
            + "(10%), kept within the clip.",
        default: .auto, showing: "auto",
        expecting: "auto, best, seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage from 0 to 100 (10%)") { text in
        PosterTime(parsing: text)
    }
    /// `--start <time>`: where the `--at auto` window starts.
    static let start = Option<TimePosition>.time(
        "start", help: "Where the window --at auto searches starts: seconds, mm:ss, hh:mm:ss.ms, or a "
            + "percentage of the duration. Only with --at auto.",
        default: WindowOptions.start.defaultValue, showing: "0")
    /// `--length <time>`: how long the `--at auto` window lasts.
    static let length = Option<TimePosition>.time(
        "length", help: "How long that window lasts, in the same forms; cut at the end of the clip. "
            + "Must be above 0. Only with --at auto.",
        default: WindowOptions.length.defaultValue, showing: WindowOptions.length.spec.defaultValue!, positive: true)
    /// `-s, --size <WxH>`.
    static let size = PictureOptions.size(default: defaultBox)
    /// `--accuracy <accuracy>`.
    static let accuracy = Option<SeekAccuracy>.choice(
        "accuracy", value: "accuracy",
        help: "exact (the frame shown at that time) or keyframe (the nearest keyframe at or "
            + "before it; faster). Only with an explicit --at time.",
        default: .exact, among: [.exact, .keyframe])
    /// `--play-button`.
    static let playButton = Flag("play-button",
                                 help: "Draw a play button in the middle: a white triangle in a translucent dark disc, "
                                     + "72 pixels across at 320 wide, scaling with the picture.")
    /// `--corner-radius <px>`.
    static let cornerRadius = PictureOptions.cornerRadius(default: 0)
    /// `--candidates <n>`: how many of `--at best`'s ranked candidates are listed.
    static let candidates = Option<Int?>.optionalInteger(
        "candidates", help: "With --at best: list the top n of the candidates it ranked, 1 to "
            + "\(FrameSampler.bestPosterCandidates) (the keyframes it samples), with their times, the scores it "
            + "compared (brightness, contrast, sharpness, uniformity, colourfulness, exposure, typicality, the "
            + "score) or why one was rejected, and which was chosen: a table after the summary line, or "
            + "\"candidates\" in the --json record's poster entry.",
        in: 1...FrameSampler.bestPosterCandidates)

    /// Types and validates `thumb`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        let source = try InputOptions(arguments)
        let (output, format) = try arguments.imageOutput()
        self.init(source: source, output: output, format: format)
        time = try arguments.value(Self.at)
        start = try arguments.value(Self.start)
        length = try arguments.value(Self.length)
        size = try arguments.value(Self.size)
        quality = try arguments.quality(OutputOptions.imageQuality, lossy: format.isLossy, output: output)
        contentMode = try arguments.value(PictureOptions.fit)
        accuracy = try arguments.value(Self.accuracy)
        showsPlayButton = arguments.isSet(Self.playButton)
        cornerRadius = try arguments.value(Self.cornerRadius)
        background = try arguments.value(PictureOptions.background)
        candidates = try arguments.value(Self.candidates)
        // Each value is valid on its own; now whether they go together.
        if candidates != nil, time != .best {
            throw UsageError(.conflictingOptions("candidates", "at"), subcommand: .thumb,
                             "'--candidates' lists the candidates of '--at best'; give '--at best' too.")
        }
        switch time {
        case .auto:
            if arguments.isGiven(Self.accuracy) {
                throw UsageError(.conflictingOptions("accuracy", "at"), subcommand: .thumb,
                                 "'--accuracy' applies only to an explicit '--at' time, not to '--at auto' (the default).")
            }
        case .best:
            for option in [Self.start, Self.length, Self.accuracy] as [any OptionDeclaration] where arguments.isGiven(option) {
                throw UsageError(.conflictingOptions(option.spec.name, "at"), subcommand: .thumb,
                                 "'\(option.spec.longSpelling)' has no effect with '--at best', which looks at the whole clip.")
            }
        case .at:
            for option in [Self.start, Self.length] where arguments.isGiven(option) {
                throw UsageError(.conflictingOptions(option.spec.name, "at"), subcommand: .thumb,
                                 "'\(option.spec.longSpelling)' sets the window of '--at auto'; it has no effect with an explicit '--at' time.")
            }
        }
        budget = try WorkBudget(arguments)
        json = try arguments.reportJSON(output: output)
        reporting = try ReportingOptions(arguments)
        try arguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first)
    }
    /// Why a thumbnail of `size` is refused before decoding (the option to name, the reason); `nil` when it fits.
    func sizeRefusal(_ size: Size) -> WorkBudget.Refusal? {
        if let reason = WorkBudget.encoderRefusal(size, webp: format == .webp, ownEncoder: format == .ppm) {
            return .init(option: "size", message: "A \(size) picture cannot be written: \(reason)")
        }
        // The scaled frame, the picture with its overlays, the encoder's copy.
        return budget.memoryRefusal(4 * WorkBudget.rgba(size), what: "A \(size) thumbnail").map { .init(option: "max-memory", message: $0) }
    }
}

extension StripOptions {
    /// `-n, --count <n>`.
    static let count = Option<Int>.integer(
        "count", short: "n", help: "How many frames, 1 to 1000, taken at the middles of equal slices of the span.",
        default: 8, in: 1...1000)
    /// `-c, --columns <n>`; absent, `--count` (one row).
    static let columns = Option<Int?>.optionalInteger(
        "columns", short: "c", help: "Frames per row, at least 1; more than --count is reduced to --count.",
        in: 1...Int.max, showing: "--count, one row")
    /// `-s, --size <WxH>` of each tile.
    static let size = PictureOptions.size(default: defaultBox, tile: true)
    /// `--span <span>`.
    static let span = Option<StripSpan>.choice(
        "span", value: "span",
        help: "window (from --start for --length) or all (the whole clip; then --start and --length do not apply).",
        default: .window)
    /// `--accuracy <accuracy>`.
    static let accuracy = Option<SeekAccuracy>.choice(
        "accuracy", value: "accuracy",
        help: "exact (the frame shown at each time), keyframe (the nearest keyframe at or "
            + "before it; fastest) or auto (a keyframe when one lies within half a slice, otherwise exact).",
        default: .auto)
    /// `--gap <px>`.
    static let gap = Option<Int>.integer("gap", value: "px", help: "Black pixels between neighbouring tiles, 0 to 256.",
                                         default: 0, in: 0...256)
    /// `--timestamps`.
    static let timestamps = Flag("timestamps",
                                 help: "Print each frame's time (DejaVu Sans Mono, white on a dark box) in its tile's "
                                     + "bottom-right corner, as 'sheet' does.")

    /// Types and validates `strip`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        let source = try InputOptions(arguments)
        let (output, format) = try arguments.imageOutput()
        self.init(source: source, output: output, format: format)
        count = try arguments.value(Self.count)
        columns = min(try arguments.value(Self.columns) ?? count, count)
        size = try arguments.value(Self.size)
        quality = try arguments.quality(OutputOptions.imageQuality, lossy: format.isLossy, output: output)
        span = try arguments.value(Self.span)
        if span == .all {
            for option in [WindowOptions.start, WindowOptions.length] where arguments.isGiven(option) {
                throw UsageError(.conflictingOptions(option.spec.name, "span"), subcommand: .strip,
                                 "'\(option.spec.longSpelling)' applies only to '--span window', not '--span all'.")
            }
        }
        start = try arguments.value(WindowOptions.start)
        length = try arguments.value(WindowOptions.length)
        accuracy = try arguments.value(Self.accuracy)
        contentMode = try arguments.value(PictureOptions.fit)
        gap = try arguments.value(Self.gap)
        showsTimestamps = arguments.isSet(Self.timestamps)
        budget = try WorkBudget(arguments)
        pick = try arguments.value(TilePlanOptions.pick)
        json = try arguments.reportJSON(output: output)
        reporting = try ReportingOptions(arguments)
        try arguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first)
    }
    /// Why a strip of tiles of `size` is refused before decoding; `nil` when it fits.
    func sizeRefusal(_ size: Size) -> WorkBudget.Refusal? {
        let rows = (count + columns - 1) / columns
        let sheet = Size(width: columns * size.width + (columns - 1) * gap, height: rows * size.height + (rows - 1) * gap)
        if let reason = WorkBudget.encoderRefusal(sheet, webp: format == .webp, ownEncoder: format == .ppm, jpeg: format == .jpeg) {
            return .init(option: "size", message: "A strip of \(columns)x\(rows) tiles of \(size)\(gap > 0 ? " with --gap \(gap)" : "") "
                             + "is \(sheet) pixels and cannot be written: \(reason)")
        }
        // The tiles, the sheet they are copied into, and the encoder's copy of it.
        return budget.memoryRefusal(3 * Double(count) * WorkBudget.rgb(size), what: "A strip of \(count) tiles of \(size)")
            .map { .init(option: "max-memory", message: $0) }
    }
}

extension TimingOptions {
    /// `--json`.
    static let json = Flag("json", help: "Print one JSON object with sorted keys instead of aligned text.")

    /// Types `timing`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        self.init(input: try arguments.input())
        isJSON = arguments.isSet(Self.json)
    }
}

extension LoopOptions {
    /// `--loops <n>`.
    static let loops = Option<Int>.integer(
        "loops", help: "Passes over the window; 0 loops until interrupted (Ctrl-C or SIGTERM), "
            + "then finishes the log and exits 0.",
        default: 1, in: 0...Int.max)
    /// `-s, --size <WxH>`.
    static let size = PictureOptions.size(default: defaultBox)
    /// `--realtime`.
    static let realtime = Flag("realtime",
                               help: "Deliver frames at playback speed; without it frames are decoded as fast as "
                                   + "possible and lateness is not measured.")
    /// `--log <file>`, `-` for standard output.
    static let log = Option<LogDestination?>(
        "log", value: "file",
        help: "Write a CSV timing log (pass, index, presentation_time, wall_time, decode_ms, "
            + "scale_ms, lateness_ms, dropped) to the file when the loop ends, or to standard output as "
            + "it runs with '-'.",
        default: nil, showing: nil, expecting: "a non-empty path", completing: .path) { text in
        text.isEmpty ? nil : text == "-" ? .standardOutput : .file(text)
    }
    /// `--frames <dir>`.
    static let frames = Option<String?>.path(
        "frames", value: "dir",
        help: "Write every frame to the directory as PPP-FFFFF.ppm (pass and frame number, from 1; .png or .jpg "
            + "with --format); created if missing.",
        completing: .directory)
    /// `--capture-at <times>`: wall times in seconds from the loop's start (no percentages), sorted.
    static let captureAt = Option<[Double]>(
        "capture-at", value: "times",
        help: "Write a still of the frame presented at each of these times from the loop's "
            + "start (comma-separated; seconds, mm:ss or hh:mm:ss.ms) as capture-NN.ppm.",
        default: [], showing: nil, expecting: "times from the loop's start, comma-separated (2.5,00:10)") { text in
        let times = text.split(separator: ",", omittingEmptySubsequences: false).map { wallTime(String($0)) }
        return times.contains(nil) ? nil : times.compactMap { $0 }.sorted()
    }
    /// `--record <from-to>`: a wall-time span from the loop's start, FROM before TO.
    static let record = Option<Range<Double>?>(
        "record", value: "from-to",
        help: "Record every frame presented in this span of time from the loop's start as "
            + "record-PPP-FFFFF.ppm, across seams.",
        default: nil, showing: nil, expecting: "FROM-TO, two times from the loop's start (2-5, 00:02-00:05.5)") { text in
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, let from = wallTime(parts[0]), let to = wallTime(parts[1]), from < to else { return nil }
        return .some(from..<to)
    }
    /// `--capture-dir <dir>`.
    static let captureDir = Option<String?>.path(
        "capture-dir", value: "dir",
        help: "Where --capture-at and --record write (default: the --frames directory); created if missing.",
        completing: .directory)

    /// `--format <format>`: of frames, captures and recordings.
    static let format = OutputOptions.format(
        among: [.ppm, .png, .jpeg], help: "The image format of --frames, --capture-at and --record files (jpg at quality 85).",
        showing: "ppm")

    /// A wall time: seconds, mm:ss or hh:mm:ss.ms — a percentage means nothing for wall time.
    private static func wallTime(_ text: String) -> Double? {
        if case .seconds(let value)? = TimePosition(parsing: text) { return value }
        return nil
    }

    /// Types and validates `loop`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        self.init(source: try InputOptions(arguments))
        start = try arguments.value(WindowOptions.start)
        length = try arguments.value(WindowOptions.length)
        loops = try arguments.value(Self.loops)
        size = try arguments.value(Self.size)
        contentMode = try arguments.value(PictureOptions.fit)
        isRealtime = arguments.isSet(Self.realtime)
        log = try arguments.value(Self.log)
        framesDirectory = try arguments.value(Self.frames)
        captureTimes = try arguments.value(Self.captureAt)
        recordSpan = try arguments.value(Self.record)
        captureDirectory = try arguments.value(Self.captureDir)
        if let format = try arguments.value(Self.format) {
            guard framesDirectory != nil || !captureTimes.isEmpty || recordSpan != nil else {
                throw UsageError(.conflictingOptions("format", "frames"), subcommand: .loop,
                                 "'--format' sets the format of '--frames', '--capture-at' and '--record' files; give one of them.")
            }
            imageFormat = format
        }
        if (!captureTimes.isEmpty || recordSpan != nil) && captureDirectory == nil && framesDirectory == nil {
            throw UsageError(.missingOption("capture-dir"), subcommand: .loop,
                             "'--capture-at' and '--record' need '--capture-dir <dir>' (or '--frames <dir>').")
        }
        budget = try WorkBudget(arguments)
        json = arguments.isSet(ReportOptions.json)
        if json && log == .standardOutput {
            throw UsageError(.conflictingOptions("json", "log"), subcommand: .loop,
                             "'--json' prints its record on standard output, where '--log -' writes the log; write the log to a file.")
        }
        reporting = try ReportingOptions(arguments)
        try arguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first)
    }
    /// Why a loop at `size` is refused before decoding; `nil` when it fits.
    func sizeRefusal(_ size: Size) -> WorkBudget.Refusal? {
        // Frames in flight between the decoder and the consumer, the scaler's and the writer's copies.
        budget.memoryRefusal(12 * WorkBudget.rgb(size), what: "A loop at \(size)").map { .init(option: "max-memory", message: $0) }
    }
}
