import PreviewLoop

// Typing and validating `card` arguments. Everything here is pure.

extension CardOptions {
    /// Types and validates `card`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        let input = try arguments.input()
        let output = try arguments.requiredOutput(example: "card.webp")
        let destination = Self.destination(for: output)
        self.init(input: input, output: output, destination: destination)
        if arguments.values["size"] != nil && arguments.values["aspect"] != nil {
            throw UsageError(.conflictingOptions("size", "aspect"), subcommand: .card,
                             "'--size' and '--aspect' both set the card's shape; give one of them.")
        }
        let needsEvenSize = destination == .animation(.mp4)
        style.size = try arguments.size(default: style.size)
        if arguments.values["aspect"] != nil {
            let ratio = try arguments.typed("aspect", default: CardStyle.defaultAspectRatio,
                                            expectation: "W:H or a decimal number from 1:16 to 16:1 (0.0625 to 16), for example "
                                                + "16:9, 4:3 or 1.5") { text in
                Self.aspectRatio(parsing: text).flatMap { Self.aspectRange.contains($0) ? $0 : nil }
            }
            style.size = CardStyle.size(width: 480, aspectRatio: ratio, even: needsEvenSize)
        }
        if needsEvenSize && (style.size.width % 2 != 0 || style.size.height % 2 != 0) {
            throw UsageError(.invalidValue(option: "size", value: style.size.description), subcommand: .card,
                             "Invalid value '\(style.size)' for '--size <WxH>': H.264 MP4 needs an even width and height; "
                                 + ".webp, .gif and .png take any size.")
        }
        style.cornerRadius = try arguments.cornerRadius(default: style.cornerRadius)
        style.reveal = try arguments.choice("reveal", default: style.reveal)
        style.posterHold = try arguments.seconds("poster-hold", default: style.posterHold, allowsZero: true)
        style.playLength = try arguments.seconds("play-length", default: style.playLength, allowsZero: true)
        style.closes = arguments.flags.contains("close")
        style.showsPlayButton = !arguments.flags.contains("no-play-button")
        style.background = try arguments.background()
        framesPerSecond = try arguments.integer("fps", default: framesPerSecond, in: 1...120)
        start = try arguments.time("start", default: start)
        length = try arguments.length(default: length)
        if arguments.values["poster-at"] != nil {
            posterTime = try arguments.time("poster-at", default: .seconds(0))
        }
        if arguments.values["at"] != nil {
            guard case .still = destination else {
                throw UsageError(.conflictingOptions("at", "output"), subcommand: .card,
                                 "'--at' picks the instant of a still; '\(output)' gets the whole sequence. "
                                     + "Write a .png, .jpg or .ppm to use it.")
            }
            stillTime = try arguments.seconds("at", default: 0, allowsZero: true)
        }
        let isLossy: Bool
        switch destination {
        case .animation(let format): isLossy = format.hasQuality
        case .still(let format): isLossy = format.isLossy
        case .directory: isLossy = false
        }
        quality = try arguments.quality(lossy: isLossy, output: output, alternatives: ".webp, .mp4, .jpg")
        budget = try arguments.budget()
        let size = style.size
        let encoderRefusal: String? = switch destination {
        case .animation(let format): WorkBudget.encoderRefusal(size, webp: format == .webp)
        case .still(let format): WorkBudget.encoderRefusal(size, webp: false, ownEncoder: format == .ppm)
        case .directory: WorkBudget.encoderRefusal(size, webp: false)
        }
        try arguments.refuse(encoderRefusal.map { "A \(size) card cannot be written: \($0)" },
                             option: arguments.values["aspect"] != nil ? "aspect" : "size")
        var frames = 1.0
        if case .still = destination {} else {
            frames = Double(PreviewCard.frameCount(duration: CardTimeline(style: style).duration,
                                                   framesPerSecond: framesPerSecond))
            try arguments.refuse(budget.frameRefusal(frames, what: "A card of \(Format.fixed(CardTimeline(style: style).duration, 3)) s "
                                                      + "at \(framesPerSecond) fps"), option: "max-frames")
        }
        // The poster, the video frame, the composited and encoded pictures; a GIF holds all its frames.
        let gifFrames = destination == .animation(.gif) ? frames : 0
        try arguments.refuse(budget.memoryRefusal(8 * WorkBudget.rgba(size) + gifFrames * WorkBudget.rgb(size),
                                                  what: "A \(size) card"), option: "max-memory")
        threads = try arguments.threads()
        timeout = try arguments.timeout()
        allowsRedirects = arguments.flags.contains("allow-redirects")
        toneMapping = try arguments.choice("tonemap", default: toneMapping)
        deadline = try arguments.deadline()
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

extension ScannedArguments {
    /// `--corner-radius`: pixels, 0 or more.
    func cornerRadius(default defaultValue: Double) throws(UsageError) -> Double {
        try typed("corner-radius", default: defaultValue, expectation: "a number of pixels, 0 or more") { text in
            DecimalText.number(text).flatMap { $0 >= 0 ? $0 : nil }
        }
    }

    /// `--background`: a colour, or `nil` when absent.
    func background() throws(UsageError) -> RGBAColor? {
        guard values["background"] != nil else { return nil }
        return try typed("background", default: RGBAColor.white,
                         expectation: "#rrggbb, #rrggbbaa, black, white or transparent") { RGBAColor(parsing: $0) }
    }

    /// A duration in seconds (seconds, mm:ss or hh:mm:ss.ms; no percentage), above 0 or, when
    /// `allowsZero`, 0 or more.
    func seconds(_ name: String, default defaultValue: Double, allowsZero: Bool) throws(UsageError) -> Double {
        try typed(name, default: defaultValue,
                  expectation: "a time \(allowsZero ? "of 0 or more" : "above 0"): seconds (1.5), mm:ss or hh:mm:ss.ms") { text in
            if case .seconds(let value)? = TimePosition(parsing: text), allowsZero ? value >= 0 : value > 0 { value } else { nil }
        }
    }
}
