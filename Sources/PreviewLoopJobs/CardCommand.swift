import PreviewLoop

/// `preview-loop card` as a job: its options (declared once, for every front end), checks and work.
struct CardCommand: Equatable, Sendable {
    /// The work limits (`--max-memory`, `--max-frames`); declared first, so its options are listed before
    /// the input group's.
    var budget = WorkBudget()
    /// The input and how it is read: `<input>`, `--timeout`, `--deadline`, `--threads`, `--allow-redirects`,
    /// `--tonemap` (the input group).
    var source = InputOptions()
    /// `-o` as typed, which becomes ``output`` and ``destination``.
    @Option(CardCommand.output, folded: true) var outputOption: String? = nil
    /// The file or directory to write (`-o`, `--output`).
    var output = ""
    /// What the output's extension asks for.
    var destination = CardDestination.directory
    /// `--size`, `--aspect`, `--corner-radius`, `--reveal`, `--poster-hold`, `--play-length`, `--close`,
    /// `--background` and `--no-play-button` as given, which become ``style``.
    @Option(CardCommand.size, folded: true) var sizeOption = CardCommand.size.defaultValue
    @Option(CardCommand.aspect, folded: true) var aspectOption: Double? = nil
    @Option(CardCommand.cornerRadius, folded: true) var cornerRadiusOption = CardCommand.cornerRadius.defaultValue
    @Option(CardCommand.reveal, folded: true) var revealOption = CardCommand.reveal.defaultValue
    @Option(CardCommand.posterHold, folded: true) var posterHoldOption = CardCommand.posterHold.defaultValue
    @Option(CardCommand.playLength, folded: true) var playLengthOption = CardCommand.playLength.defaultValue
    @Flag(CardCommand.close, folded: true) var closeOption = false
    @Option(PictureOptions.background, folded: true) var backgroundOption: RGBAColor? = nil
    @Flag(CardCommand.noPlayButton, folded: true) var noPlayButtonOption = false
    /// The card's look and timing (`--size`/`--aspect`, `--corner-radius`, `--reveal`, `--poster-hold`,
    /// `--play-length`, `--close`, `--background`, `--no-play-button`).
    var style = CardStyle()
    /// Frames per second of animations and frame directories (`--fps`).
    @Option(CardCommand.fps) var framesPerSecond = CardCommand.fps.defaultValue
    /// Where the loop window starts (`--start`): the poster is its first good frame.
    @Option(WindowOptions.start) var start = WindowOptions.start.defaultValue
    /// How long the loop window lasts (`--length`).
    @Option(CardCommand.length) var length = CardCommand.length.defaultValue
    /// The poster's time in the clip (`--poster-at`); `nil` for the window's first good frame.
    @Option(CardCommand.posterAt) var posterTime: TimePosition? = nil
    /// The instant a still shows, seconds from the sequence's start (`--at`); 0 is the poster.
    @Option(CardCommand.at) var stillTime = CardCommand.at.defaultValue
    /// Quality 0–100 (`-q`, `--quality`) for lossy outputs; `nil` for the default.
    @Option(CardCommand.quality) var quality: Int? = nil
    /// Whether an animation's pictures are checked for photosensitive flashes (`--flash-safety`).
    @Option(CardCommand.flashSafety) var flashSafety = CardCommand.flashSafety.defaultValue
    /// A note for standard error about a value replaced by its fallback (an unusable `--aspect`).
    var note: String?
    /// Whether one JSON record (the batch record's schema) replaces the summary line (`--json`).
    @Flag(ReportOptions.json) var json = false
    /// Whether warnings stay off standard error (a server's renders).
    var isQuiet = false
}

extension CardCommand: ClipOutputCommand {
    /// `preview-loop card`: its name, summary and arguments.
    static let configuration = CommandConfiguration(
        name: "card",
        abstract: "Write a preview card: the poster with a play button, the circular reveal (or a fade), the playing "
            + "video in rounded corners, as an animation, PNG frames or one still.",
        arguments: [.input])

    func make(report: ClipReport?) throws -> Int32 { try CardRun(options: self, report: report).run() }
}

extension CardCommand {
    /// `-o, --output <path>`.
    static let output = ValueOption<String?>.path(
        "output", short: "o", value: "path",
        help: "What to write, by extension: .webp or .gif (animated, transparent corners), .mp4 "
            + "(animated, corners in --background, black by default), .png (one still, transparent corners), "
            + ".jpg or .ppm (one still, corners white by default); any other path is a directory of PNG frames card-00001.png…, "
            + "built beside it and swapped in whole (an existing directory holding other files is "
            + "refused). Files are written whole or not at all; s3://BUCKET/KEY.webp (a file, not frames) uploads one to an S3 bucket.",
        required: true)
    /// `-s, --size <WxH>`: exactly that.
    static let size = ValueOption<Size>(
        "size", short: "s", value: "WxH",
        help: "The card's size in pixels; even for .mp4. Not with --aspect. \(PictureOptions.encoderLimits)",
        default: CardStyle().size, showing: CardStyle().size.description,
        expecting: "WIDTHxHEIGHT in pixels, each 1 to 16384, for example 320x180") { Size(parsing: $0) }
    /// `--aspect <W:H>`.
    static let aspect = ValueOption<Double?>(
        "aspect", value: "W:H",
        help: "The card's aspect ratio at 480 pixels wide (16:9, 4:3, 1.5), from 1:16 to 16:1. Not with --size.",
        default: nil, showing: nil,
        expecting: "W:H or a decimal number from 1:16 to 16:1 (0.0625 to 16), for example 16:9, 4:3 or 1.5") { text in
        aspectRatio(parsing: text).flatMap { aspectRange.contains($0) ? .some($0) : nil }
    }.parameter()
    /// `--corner-radius <px>`.
    static let cornerRadius = PictureOptions.cornerRadius(default: CardStyle().cornerRadius).parameter()
    /// `--reveal <reveal>`.
    static let reveal = ValueOption<CardReveal>.choice(
        "reveal", value: "reveal",
        help: "circle (a disc grows from the centre to the frame's diagonal in 0.6 s, eased) or "
            + "fade (a cross-fade of the same length, the Reduce Motion variant).",
        default: CardStyle().reveal).parameter()
    /// `--poster-hold <time>`.
    static let posterHold = ValueOption<Double>.seconds(
        "poster-hold", help: "How long the poster with its play button shows before the reveal.",
        default: CardStyle().posterHold, showing: Format.limit(CardStyle().posterHold), allowsZero: true).parameter()
    /// `--play-length <time>`.
    static let playLength = ValueOption<Double>.seconds(
        "play-length", help: "How long the video plays after the reveal, from the poster's time.",
        default: CardStyle().playLength, showing: Format.limit(CardStyle().playLength), allowsZero: true).parameter()
    /// `--close`.
    static let close = FlagOption("close", help: "End by fading back to the poster (0.35 s), as the close button does: a looping "
                                + "animation then joins its end to its start.").parameter()
    /// `--no-play-button`.
    static let noPlayButton = FlagOption("no-play-button", help: "Show the poster without the play button.")
    /// `--fps <n>`.
    static let fps = ValueOption<Int>.integer("fps", help: "Frames per second of animations and frame directories, \(ValueRanges.framesPerSecond.inWords).",
                                         default: 30, in: ValueRanges.framesPerSecond).parameter()
    /// `--length <time>`: the loop window.
    static let length = ValueOption<TimePosition>.time(
        "length", help: "How long the loop window lasts: the poster is its first good frame, and the video wraps at its end.",
        default: WindowOptions.length.defaultValue, showing: WindowOptions.length.spec.defaultValue!, positive: true).parameter()
    /// `--poster-at <time>`.
    static let posterAt = ValueOption<TimePosition?>(
        "poster-at", value: "time",
        help: "Take the poster at this time of the clip (seconds, mm:ss, hh:mm:ss.ms or a "
            + "percentage) instead of the window's first good frame; the video then plays from --start.",
        default: nil, showing: "the first good frame",
        expecting: "seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage from 0 to 100 (10%)") { text in
        TimePosition(parsing: text).map { .some($0) }
    }.parameter()
    /// `-t, --at <time>`: a still's instant.
    static let at = ValueOption<Double>.seconds(
        "at", short: "t", help: "For a still: the instant of the sequence to show, in seconds from its start "
            + "(0: the poster; poster-hold + 0.3: mid-reveal).",
        default: 0, showing: "0", allowsZero: true).parameter()
    /// `--flash-safety <check|off>`: render's option, without `avoid` (a card plays from its poster).
    static let flashSafety = ValueOption<FlashSafety>.choice(
        "flash-safety", value: "mode",
        help: "check: analyse an animation's pictures, played on repeat (the jump back to the poster included), for "
            + "photosensitive flashes (WCAG 2.3.1) and report a warning line on standard error for an extended_failure "
            + "or failure (and the verdicts in --json); the file is written either way. off: no analysis. Stills and "
            + "PNG frames are not analysed; avoid is render's (a card plays from its poster, it has no window to move).",
        default: .check, among: [.check, .off]).parameter()
    /// `-q, --quality <0-100>`.
    static let quality = ValueOption<Int?>.optionalInteger(
        "quality", short: "q", value: "0-100", help: "Quality for .webp, .mp4 and .jpg outputs, 0 (smallest) to 100 (best).",
        in: ValueRanges.quality).parameter()

    /// Takes the input and the output with what it asks for, and turns the folded options into the
    /// card's style.
    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        source.input = try arguments.input()
        output = try arguments.requiredOutput(Self.output, example: "card.webp")
        destination = Self.destination(for: output)
        style.size = try arguments.value(Self.size)
        style.cornerRadius = try arguments.value(Self.cornerRadius)
        style.reveal = try arguments.value(Self.reveal)
        style.posterHold = try arguments.value(Self.posterHold)
        style.playLength = try arguments.value(Self.playLength)
        style.closes = arguments.isSet(Self.close)
        style.background = try arguments.value(PictureOptions.background)
        if $sizeOption.isGiven && arguments.isGiven(Self.aspect) {
            throw UsageError(.conflictingOptions("size", "aspect"), subcommand: Self.subcommand,
                             "'--size' and '--aspect' both set the card's shape; give one of them.")
        }
        if let ratio = try arguments.value(Self.aspect) {
            style.size = CardStyle.size(width: 480, aspectRatio: ratio, even: destination == .animation(.mp4))
        }
        style.showsPlayButton = !arguments.isSet(Self.noPlayButton)
    }

    /// Whether the values, each valid on its own, go together, and the card fits the work budget.
    func validate() throws(UsageError) {
        if destination == .animation(.mp4) && (style.size.width % 2 != 0 || style.size.height % 2 != 0) {
            throw UsageError(.invalidValue(option: "size", value: style.size.description), subcommand: Self.subcommand,
                             "Invalid value '\(style.size)' for '--size <WxH>': H.264 MP4 needs an even width and height; "
                                 + ".webp, .gif and .png take any size.")
        }
        if destination == .directory && ObjectOutput.isObject(output) {
            throw UsageError(.invalidValue(option: "output", value: output), subcommand: Self.subcommand,
                             "'\(output)' names a folder of PNG frames, which cannot go to a store; "
                                 + "write one file there: .webp, .gif, .mp4, or a still .png, .jpg or .ppm.")
        }
        if $stillTime.isGiven {
            guard case .still = destination else {
                throw UsageError(.conflictingOptions("at", "output"), subcommand: Self.subcommand,
                                 "'--at' picks the instant of a still; '\(output)' gets the whole sequence. "
                                     + "Write a .png, .jpg or .ppm to use it.")
            }
        }
        let isLossy: Bool
        switch destination {
        case .animation(let format): isLossy = format.hasQuality
        case .still(let format): isLossy = format.isLossy
        case .directory: isLossy = false
        }
        try ScannedArguments.checkQuality(quality, option: Self.quality, lossy: isLossy, output: output,
                                          alternatives: ".webp, .mp4, .jpg", for: Self.subcommand)
        let size = style.size
        let encoderRefusal: String? = switch destination {
        case .animation(let format): WorkBudget.encoderRefusal(size, webp: format == .webp)
        case .still(let format): WorkBudget.encoderRefusal(size, format: format)
        case .directory: WorkBudget.encoderRefusal(size, webp: false)
        }
        try ScannedArguments.refuse(encoderRefusal.map { WorkBudget.Refusal(option: $aspectOption.isGiven ? "aspect" : "size",
                                                               message: "A \(size) card cannot be written: \($0)") },
                                    for: Self.subcommand)
        var frames = 1.0
        if case .still = destination {} else {
            frames = Double(PreviewCard.frameCount(duration: CardTimeline(style: style).duration,
                                                   framesPerSecond: framesPerSecond))
            try ScannedArguments.refuse(budget.frameRefusal(frames, what: "A card of \(Format.fixed(CardTimeline(style: style).duration, 3)) s "
                                                                + "at \(framesPerSecond) fps").map { WorkBudget.Refusal(option: "max-frames", message: $0) },
                                        for: Self.subcommand)
        }
        // The poster, the video frame, the composited and encoded pictures, the encoder's own frames;
        // a GIF holds all its frames.
        let gifFrames = destination == .animation(.gif) ? frames : 0
        var encoder = 0.0
        if case .animation(let format) = destination { encoder = OutputLimits.encoderBytes(size, format: format) }
        try ScannedArguments.refuse(budget.memoryRefusal(8 * WorkBudget.rgba(size) + gifFrames * WorkBudget.rgb(size) + encoder,
                                                         what: "A \(size) card").map { WorkBudget.Refusal(option: "max-memory", message: $0) },
                                    for: Self.subcommand)
    }

    /// What an output path asks for: an animation or still by extension, else a directory.
    static func destination(for path: String) -> CardDestination {
        if let format = AnimationFormat(path: path) { return .animation(format) }
        if let format = ImageFileFormat(path: path), format != .webp { return .still(format) }
        return .directory
    }

    /// The aspect ratios `--aspect` accepts: 1:16 to 16:1 (at 480 wide, 480x7680 to 480x30).
    static let aspectRange = 0.0625...16.0

    /// `16:9`, `4:3` or a plain number such as `1.5`, as width ÷ height; `nil` for text that is not one.
    /// Ratios that are numbers but not usable (`0:9`, `-1`, `16:0`, `nan`, `inf`) are returned as such,
    /// for ``CardStyle/usableAspectRatio(_:)`` to replace.
    static func aspectRatio(parsing text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            return DecimalText.number(text)
        case 2:
            guard let width = DecimalText.number(parts[0]), let height = DecimalText.number(parts[1]) else { return nil }
            return width / height
        default:
            return nil
        }
    }
}

/// What `preview-loop card` writes, chosen by the output path.
enum CardDestination: Equatable, Sendable {
    /// `.webp`, `.gif`, `.mp4`: the whole sequence as a looping animation.
    case animation(AnimationFormat)
    /// `.png`, `.jpg`, `.ppm`: the card at one instant (`--at`).
    case still(ImageFileFormat)
    /// Anything else (a directory): every picture as `card-NNNNN.png`.
    case directory
}

/// One run of `preview-loop card` on the command line: the preview card's sequence as an animation or PNG frames, or one still of it.
struct CardRun {
    /// The parsed options.
    var options: CardCommand
    /// With `--json`: what was done, printed as one batch record instead of the summary line.
    var report: ClipReport? = nil

    /// What ``render()`` made: a still's encoded bytes, or the animation it wrote to `options.output`.
    enum Rendered {
        /// `picture`: the still as its bytes show it, on the card's background (white where it has none).
        case still(bytes: [UInt8], time: Double, phase: CardPhase, picture: RGBImage)
        case sequence(CardSummary)
    }

    /// Renders the card: a still is encoded in memory; an animation or frame directory is written to
    /// `options.output`, or an animation to memory with `inMemory` (the summary's `bytes`: what the
    /// file gets). Returns the poster too. Prints nothing.
    func render(inMemory: Bool = false) throws -> (poster: CardPoster, rendered: Rendered) {
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
                                                background: options.style.opaqueBackground(for: nil))
            return (poster, .still(bytes: bytes, time: still.time, phase: still.phase,
                                   picture: image.flattened(on: options.style.opaqueBackground(for: nil))))
        case .animation(let format) where inMemory:
            return (poster, .sequence(try card.render(to: .memory, format: format, framesPerSecond: options.framesPerSecond,
                                                      quality: options.quality, maxFrames: options.budget.maxFrames,
                                                      flashSafety: options.flashSafety)))
        case .animation, .directory:
            // An s3:// animation is rendered into a staging folder, then uploaded.
            let summary = try FileOutput.writing(options.output) { path in
                try card.render(to: path, framesPerSecond: options.framesPerSecond, quality: options.quality,
                                maxFrames: options.budget.maxFrames,
                                flashSafety: options.destination == .directory ? .off : options.flashSafety)
            }
            return (poster, .sequence(summary))
        }
    }

    /// Renders the card, writes it and prints one summary line on standard output.
    func run() throws -> Int32 {
        if let note = options.note { Console.writeError(note + "\n") }
        let (poster, rendered) = try render()
        let posterNote = "poster at \(Format.fixed(poster.frame.sourceTime, 3)) s (\(poster.choice.map(ThumbRun.explanation) ?? "as asked")), "
            + "video from \(Format.fixed(poster.videoStart, 3)) s"
        switch rendered {
        case .still(let bytes, let time, let phase, _):
            try ImageDestination.write(bytes, to: options.output)
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
            if let flashes = summary.flashes, let warning = RenderRun.flashWarning(flashes, output: options.output),
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
        "poster: " + (poster.choice.map(ThumbRun.explanation) ?? "--poster-at") + "; video from \(Format.fixed(poster.videoStart, 3)) s"
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

extension CardCommand: ServedJob {
    /// The card's size (its `aspect` at 480 wide by default) times `factor`, even for H.264.
    mutating func scaleDefaultSize(by factor: Double) {
        let even = destination == .animation(.mp4)
        func side(_ value: Int) -> Int {
            let scaled = max(1, Int((Double(value) * factor).rounded()))
            return even ? max(2, scaled / 2 * 2) : scaled
        }
        style.size = Size(width: side(style.size.width), height: side(style.size.height))
    }

    static func isAnimation(_ fileName: String) -> Bool { AnimationFormat(path: fileName) != nil }

    /// Writes the route's file; `at` picks a still's instant; the card's size is both sides or `aspect`.
    static func prepare(_ given: inout ScannedArguments, for request: ServingRequest) throws(PreviewRequestError) {
        if isAnimation(request.fileName) && request.has("at") {
            throw PreviewRequestError(status: 400, parameter: "at",
                                      detail: "at picks the instant of a still: ask for card.png or card.jpg.")
        }
        if (request.width == nil) != (request.height == nil) {
            throw PreviewRequestError(status: 400, parameter: request.width == nil ? "height" : "width",
                                      detail: "A card takes width and height together, or aspect.")
        }
        given.give("output", request.fileName)
    }

    /// Within the server's caps: the compositor's layers, a GIF's frames held for its palette, the encoder
    /// and the file it makes in memory.
    mutating func prepareToServe(_ request: ServingRequest) throws(PreviewRequestError) -> Int {
        let caps = request.caps
        isQuiet = true
        let size = style.size
        var frames = 1.0, encoder = 0.0
        if case .animation(let animation) = destination {
            try Self.checkFramesPerSecond(framesPerSecond, caps: caps)
            let duration = CardTimeline(style: style).duration
            guard duration <= caps.seconds + 1e-9 else {
                throw PreviewRequestError(status: 413, parameter: "play_length",
                                          detail: "At most \(Format.limit(caps.seconds)) s for an animation on this server; "
                                              + "this card lasts \(Format.fixed(duration, 3)) s.")
            }
            guard max(size.width, size.height) <= caps.side else {
                throw PreviewRequestError(status: 413, parameter: "aspect",
                                          detail: "At most \(caps.side) pixels a side for an animation on this server.")
            }
            let count = Double(PreviewCard.frameCount(duration: duration, framesPerSecond: framesPerSecond))
            if animation == .gif { frames = count }
            // The encoder, and the file it makes in memory.
            encoder = OutputLimits.encoderBytes(size, format: animation)
                + OutputLimits.encodedAnimationBytes(frames: count, size: size, format: animation)
        }
        return Int(8 * WorkBudget.rgba(size) + frames * WorkBudget.rgb(size) + encoder)
    }

    /// A still with its placeholder headers, or the sequence rendered in memory (the bytes `card -o`
    /// writes) with its flash verdict.
    func body(for job: PreviewJob, scratch: String, siblings: [PreviewJob]) throws -> RenderedBody {
        switch try CardRun(options: self).render(inMemory: true).rendered {
        case .still(let bytes, _, _, let picture):
            return RenderedBody(body: bytes, headers: PreviewRequests.headers(of: ImagePlaceholder(picture)))
        case .sequence(let summary):
            return RenderedBody(body: summary.bytes ?? [], flashes: summary.flashes)
        }
    }
}
