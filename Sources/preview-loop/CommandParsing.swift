import PreviewLoop

// Typing and validating scanned arguments, one initializer per subcommand. Everything here is pure.

extension ProbeOptions {
    /// Types `probe`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        self.init(input: try arguments.input())
        isJSON = arguments.flags.contains("json")
        timeout = try arguments.timeout()
        allowsRedirects = arguments.flags.contains("allow-redirects")
        deadline = try arguments.deadline()
    }
}

extension ThumbOptions {
    /// Types and validates `thumb`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        let input = try arguments.input()
        let (output, format) = try arguments.output()
        self.init(input: input, output: output, format: format)
        time = try arguments.thumbTime(default: time)
        start = try arguments.time("start", default: start)
        length = try arguments.length(default: length)
        size = try arguments.sizeRequest(default: Self.defaultBox)
        quality = try arguments.quality(lossy: format.isLossy, output: output)
        contentMode = try arguments.choice("fit", default: contentMode)
        accuracy = try arguments.choice("accuracy", default: accuracy, among: [.exact, .keyframe])
        showsPlayButton = arguments.flags.contains("play-button")
        cornerRadius = try arguments.cornerRadius(default: cornerRadius)
        background = try arguments.background()
        // Each value is valid on its own; now whether they go together.
        switch time {
        case .auto:
            if arguments.values["accuracy"] != nil {
                throw UsageError(.conflictingOptions("accuracy", "at"), subcommand: .thumb,
                                 "'--accuracy' applies only to an explicit '--at' time, not to '--at auto' (the default).")
            }
        case .best:
            for name in ["start", "length", "accuracy"] where arguments.values[name] != nil {
                throw UsageError(.conflictingOptions(name, "at"), subcommand: .thumb,
                                 "'--\(name)' has no effect with '--at best', which looks at the whole clip.")
            }
        case .at:
            for name in ["start", "length"] where arguments.values[name] != nil {
                throw UsageError(.conflictingOptions(name, "at"), subcommand: .thumb,
                                 "'--\(name)' sets the window of '--at auto'; it has no effect with an explicit '--at' time.")
            }
        }
        budget = try arguments.budget()
        try arguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first)
        threads = try arguments.threads()
        timeout = try arguments.timeout()
        allowsRedirects = arguments.flags.contains("allow-redirects")
        toneMapping = try arguments.choice("tonemap", default: toneMapping)
        deinterlacing = try arguments.choice("deinterlace", default: deinterlacing)
        deadline = try arguments.deadline()
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
    /// Types and validates `strip`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        let input = try arguments.input()
        let (output, format) = try arguments.output()
        self.init(input: input, output: output, format: format)
        count = try arguments.integer("count", default: count, in: 1...1000)
        columns = min(try arguments.integer("columns", default: count, in: 1...Int.max), count)
        size = try arguments.sizeRequest(default: Self.defaultBox)
        quality = try arguments.quality(lossy: format.isLossy, output: output)
        span = try arguments.choice("span", default: span)
        if span == .all {
            for name in ["start", "length"] where arguments.values[name] != nil {
                throw UsageError(.conflictingOptions(name, "span"), subcommand: .strip,
                                 "'--\(name)' applies only to '--span window', not '--span all'.")
            }
        }
        start = try arguments.time("start", default: start)
        length = try arguments.length(default: length)
        accuracy = try arguments.choice("accuracy", default: accuracy)
        contentMode = try arguments.choice("fit", default: contentMode)
        gap = try arguments.integer("gap", default: gap, in: 0...256)
        showsTimestamps = arguments.flags.contains("timestamps")
        budget = try arguments.budget()
        pick = try arguments.choice("pick", default: pick)
        json = arguments.flags.contains("json")
        try arguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first)
        threads = try arguments.threads()
        timeout = try arguments.timeout()
        allowsRedirects = arguments.flags.contains("allow-redirects")
        toneMapping = try arguments.choice("tonemap", default: toneMapping)
        deadline = try arguments.deadline()
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
    /// Types `timing`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        self.init(input: try arguments.input())
        isJSON = arguments.flags.contains("json")
    }
}

extension LoopOptions {
    /// Types and validates `loop`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        self.init(input: try arguments.input())
        start = try arguments.time("start", default: start)
        length = try arguments.length(default: length)
        loops = try arguments.integer("loops", default: loops, in: 0...Int.max)
        size = try arguments.sizeRequest(default: Self.defaultBox)
        contentMode = try arguments.choice("fit", default: contentMode)
        isRealtime = arguments.flags.contains("realtime")
        log = try arguments.nonEmpty("log").map { $0 == "-" ? .standardOutput : .file($0) }
        framesDirectory = try arguments.nonEmpty("frames")
        captureTimes = try arguments.captureTimes()
        recordSpan = try arguments.recordSpan()
        captureDirectory = try arguments.nonEmpty("capture-dir")
        if (!captureTimes.isEmpty || recordSpan != nil) && captureDirectory == nil && framesDirectory == nil {
            throw UsageError(.missingOption("capture-dir"), subcommand: .loop,
                             "'--capture-at' and '--record' need '--capture-dir <dir>' (or '--frames <dir>').")
        }
        budget = try arguments.budget()
        try arguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first)
        threads = try arguments.threads()
        timeout = try arguments.timeout()
        allowsRedirects = arguments.flags.contains("allow-redirects")
        toneMapping = try arguments.choice("tonemap", default: toneMapping)
        deadline = try arguments.deadline()
    }
    /// Why a loop at `size` is refused before decoding; `nil` when it fits.
    func sizeRefusal(_ size: Size) -> WorkBudget.Refusal? {
        // Frames in flight between the decoder and the consumer, the scaler's and the writer's copies.
        budget.memoryRefusal(12 * WorkBudget.rgb(size), what: "A loop at \(size)").map { .init(option: "max-memory", message: $0) }
    }
}

extension ScannedArguments {
    /// The one positional argument, the input.
    func input() throws(UsageError) -> String {
        guard let input = positionals.first else {
            throw UsageError(.missingInput, subcommand: subcommand,
                             "Missing expected argument '<input>' (a video file or an http(s) URL).")
        }
        if let extra = positionals.dropFirst().first {
            throw UsageError(.unexpectedArgument(extra), subcommand: subcommand,
                             "Unexpected argument '\(extra)'; only one input is accepted (the first was '\(input)').")
        }
        guard !input.isEmpty else {
            throw UsageError(.missingInput, subcommand: subcommand, "The input is an empty string.")
        }
        return input
    }

    /// The required `-o` path and the image format its extension names.
    func output() throws(UsageError) -> (path: String, format: ImageFormat) {
        guard let path = values["output"] else {
            throw UsageError(.missingOption("output"), subcommand: subcommand,
                             "Missing expected option '-o <file>' (the image to write, for example out.ppm).")
        }
        guard let format = ImageFormat(path: path) else {
            throw UsageError(.unsupportedOutputFormat(path), subcommand: subcommand,
                             "Cannot tell an image format from '\(path)'; use an extension among: \(ImageFormat.extensionList).")
        }
        return (path, format)
    }

    /// A value run through `transform`, or `defaultValue` when the option is absent.
    ///
    /// - Parameter expectation: what a valid value looks like, for the error message.
    func typed<Value>(_ name: String, default defaultValue: Value, expectation: String,
                      _ transform: (String) -> Value?) throws(UsageError) -> Value {
        guard let text = values[name] else { return defaultValue }
        guard let value = transform(text) else {
            let spelling = subcommand.option(named: name).errorSpelling
            throw UsageError(.invalidValue(option: name, value: text), subcommand: subcommand,
                             "Invalid value '\(text)' for '\(spelling)': expected \(expectation).")
        }
        return value
    }

    /// A decimal integer within `range`.
    func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        let expectation = switch (range.lowerBound, range.upperBound) {
        case (let low, Int.max): "a whole number of at least \(low)"
        case (let low, let high): "a whole number from \(low) to \(high)"
        }
        return try typed(name, default: defaultValue, expectation: expectation) { text in
            Int(text).flatMap { range.contains($0) ? $0 : nil }
        }
    }

    /// `--quality`, 0 to 100, or `nil` when absent; a usage error for an output without a quality setting.
    ///
    /// - Parameters:
    ///   - lossy: whether the output format has a quality setting.
    ///   - output: the output path, for the message.
    ///   - alternatives: the extensions that do take a quality, for the message.
    func quality(lossy: Bool, output: String,
                 alternatives: String = ImageFormat.lossyExtensionList) throws(UsageError) -> Int? {
        guard values["quality"] != nil else { return nil }
        let quality = try integer("quality", default: 0, in: 0...100)
        guard lossy else {
            throw UsageError(.conflictingOptions("quality", "output"), subcommand: subcommand,
                             "'--quality' has no effect on '\(output)': its format is lossless or has no quality "
                                 + "setting; drop it or write \(alternatives).")
        }
        return quality
    }

    /// `--threads`, 1 to 64.
    func threads() throws(UsageError) -> Int {
        try integer("threads", default: 2, in: 1...64)
    }

    /// `--timeout`, seconds above 0 and at most a day.
    func timeout() throws(UsageError) -> Double {
        try typed("timeout", default: 30, expectation: "a number of seconds above 0 and at most 86400") { text in
            DecimalText.number(text).flatMap { $0 > 0 && $0 <= 86_400 ? $0 : nil }
        }
    }

    /// `--deadline`: seconds above 0 and at most a day, or `nil` when absent.
    func deadline() throws(UsageError) -> Double? {
        guard values["deadline"] != nil else { return nil }
        return try typed("deadline", default: 0, expectation: "a number of seconds above 0 and at most 86400") { text in
            Double(text).flatMap { $0.isFinite && $0 > 0 && $0 <= 86_400 ? $0 : nil }
        }
    }

    /// `--size`: `WxH`, one side (`W`, `Wx`, `xH`, `Wx-1`, `-1xH`) keeping the source's shape, or
    /// `source`; absent, the default box, turned for a portrait source.
    func sizeRequest(default box: Size) throws(UsageError) -> SizeRequest {
        try typed("size", default: .orientedBox(box),
                  expectation: "WIDTHxHEIGHT in pixels, each 1 to 16384 (320x180), one side keeping the source's "
                      + "shape (320, 320x-1, x180) or source") { SizeRequest(parsing: $0) }
    }

    /// `--size WxH`.
    func size(default defaultValue: Size) throws(UsageError) -> Size {
        try typed("size", default: defaultValue,
                  expectation: "WIDTHxHEIGHT in pixels, each 1 to 16384, for example 320x180") { Size(parsing: $0) }
    }

    /// A time: seconds, `mm:ss`, `hh:mm:ss.ms` or a percentage.
    func time(_ name: String, default defaultValue: TimePosition) throws(UsageError) -> TimePosition {
        try typed(name, default: defaultValue,
                  expectation: "seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage from 0 to 100 (10%)") {
            TimePosition(parsing: $0)
        }
    }

    /// `--at`: `auto`, `best` or a time as ``time(_:default:)`` reads it.
    func thumbTime(default defaultValue: ThumbTime) throws(UsageError) -> ThumbTime {
        try typed("at", default: defaultValue,
                  expectation: "auto, best, seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage from 0 to 100 (10%)") { text in
            text == "auto" ? .auto : text == "best" ? .best : TimePosition(parsing: text).map(ThumbTime.at)
        }
    }

    /// `--capture-at T[,T…]`: wall times in seconds from the loop's start (no percentages), sorted.
    func captureTimes() throws(UsageError) -> [Double] {
        try typed("capture-at", default: [], expectation: "times from the loop's start, comma-separated (2.5,00:10)") { text in
            let times = text.split(separator: ",", omittingEmptySubsequences: false).map { Self.wallTime(String($0)) }
            return times.contains(nil) ? nil : times.compactMap { $0 }.sorted()
        }
    }

    /// `--record FROM-TO`: a wall-time span from the loop's start, FROM before TO.
    func recordSpan() throws(UsageError) -> Range<Double>? {
        guard values["record"] != nil else { return nil }
        return try typed("record", default: nil, expectation: "FROM-TO, two times from the loop's start (2-5, 00:02-00:05.5)") { text in
            let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, let from = Self.wallTime(parts[0]), let to = Self.wallTime(parts[1]), from < to else { return nil }
            return from..<to
        }
    }

    /// A wall time: seconds, mm:ss or hh:mm:ss.ms — a percentage means nothing for wall time.
    private static func wallTime(_ text: String) -> Double? {
        if case .seconds(let value)? = TimePosition(parsing: text) { return value }
        return nil
    }

    /// `--length`: a time above zero.
    func length(default defaultValue: TimePosition) throws(UsageError) -> TimePosition {
        try typed("length", default: defaultValue,
                  expectation: "a time above 0: seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage (10%)") { text in
            switch TimePosition(parsing: text) {
            case .seconds(let value)? where value > 0: .seconds(value)
            case .percent(let value)? where value > 0: .percent(value)
            default: nil
            }
        }
    }

    /// One of an enumeration's raw values, limited to `allowed`.
    func choice<Value: RawRepresentable & CaseIterable>(
        _ name: String, default defaultValue: Value, among allowed: [Value] = Array(Value.allCases)
    ) throws(UsageError) -> Value where Value.RawValue == String, Value: Equatable {
        let names = allowed.map(\.rawValue)
        let expectation = names.dropLast().joined(separator: ", ") + " or " + names.last!
        return try typed(name, default: defaultValue, expectation: expectation) { text in
            Value(rawValue: text).flatMap { allowed.contains($0) ? $0 : nil }
        }
    }

    /// A path or other text that must not be empty, or `nil` when the option is absent.
    func nonEmpty(_ name: String) throws(UsageError) -> String? {
        guard let text = values[name] else { return nil }
        return try typed(name, default: text, expectation: "a non-empty path") { $0.isEmpty ? nil : $0 }
    }
}
