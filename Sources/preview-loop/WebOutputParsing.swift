import PreviewLoop

// Typing and validating `render` and `sprites` arguments. Everything here is pure.

extension RenderOptions {
    /// Types and validates `render`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        let input = try arguments.input()
        let output = try arguments.requiredOutput(example: "preview.mp4")
        guard let format = AnimationFormat(path: output) else {
            throw UsageError(.unsupportedOutputFormat(output), subcommand: .render,
                             "Cannot tell a video format from '\(output)'; use an extension among: \(AnimationFormat.extensionList).")
        }
        self.init(input: input, output: output, format: format)
        start = try arguments.time("start", default: start)
        length = try arguments.length(default: length)
        size = try arguments.sizeRequest(default: Self.defaultBox)
        let given: Size? = switch size {
        case .exact(let exact): exact
        case .width(let width): Size(width: width, height: 2)
        case .height(let height): Size(width: 2, height: height)
        case .source, .orientedBox: nil
        }
        if format.needsEvenSize, let given, given.width % 2 != 0 || given.height % 2 != 0 {
            let even = Size(width: max(2, given.width & ~1), height: max(2, given.height & ~1))
            throw UsageError(.invalidValue(option: "size", value: arguments.values["size"] ?? size.description), subcommand: .render,
                             "Invalid value '\(size)' for '--size <WxH>': H.264 MP4 needs an even width and height "
                                 + "(for example \(even)); .webp and .gif take any size.")
        }
        framesPerSecond = try arguments.integer("fps", default: framesPerSecond, in: 1...120)
        quality = try arguments.quality(lossy: format.hasQuality, output: output, alternatives: ".mp4, .webp")
        contentMode = try arguments.choice("fit", default: contentMode)
        loopPoint = try arguments.loopPoint()
        seam = try arguments.seam(length: try renderLength(arguments))
        budget = try arguments.budget()
        try arguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first)
        threads = try arguments.threads()
        timeout = try arguments.timeout()
        allowsRedirects = arguments.flags.contains("allow-redirects")
        toneMapping = try arguments.choice("tonemap", default: toneMapping)
        deinterlacing = try arguments.choice("deinterlace", default: deinterlacing)
        deadline = try arguments.deadline()
    }

    /// Why a render at `size` is refused before decoding; `nil` when it fits.
    func sizeRefusal(_ size: Size) -> WorkBudget.Refusal? {
        if let reason = WorkBudget.encoderRefusal(size, webp: format == .webp) {
            return .init(option: "size", message: "A \(size) \(format.rawValue) cannot be written: \(reason)")
        }
        return budget.memoryRefusal(RenderOptions.bytes(frames: 1, size: size, format: format), what: "A \(size) \(format.rawValue)")
            .map { .init(option: "max-memory", message: $0) }
    }

    /// The bytes of pictures a render of `frames` frames holds: a few working pictures, and for GIF every
    /// frame (its palette is computed from all of them).
    static func bytes(frames: Double, size: Size, format: AnimationFormat) -> Double {
        6 * WorkBudget.rgba(size) + (format == .gif ? frames * WorkBudget.rgb(size) : 0)
    }
}

extension SpritesOptions {
    /// Types and validates `sprites`' scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        let input = try arguments.input()
        self.init(input: input, outputDirectory: try arguments.requiredOutput(example: "thumbnails/"))
        every = try arguments.typed("every", default: every,
                                    expectation: "a time above 0: seconds (2.5), mm:ss or hh:mm:ss.ms") { text in
            if case .seconds(let value)? = TimePosition(parsing: text), value > 0 { value } else { nil }
        }
        size = try arguments.sizeRequest(default: Self.defaultBox)
        (columns, rows) = try arguments.typed("grid", default: (columns, rows),
                                              expectation: "COLUMNSxROWS, each 1 to 100, for example 10x10") { text in
            Size(parsing: text).flatMap { (1...100).contains($0.width) && (1...100).contains($0.height) ? ($0.width, $0.height) : nil }
        }
        if let size = size.exactSize, columns * size.width > 16383 || rows * size.height > 16383 {
            throw UsageError(.conflictingOptions("grid", "size"), subcommand: .sprites,
                             "A sheet of \(columns)x\(rows) tiles of \(size) would be \(columns * size.width)x\(rows * size.height) "
                                 + "pixels; JPEG and WebP sheets are at most 16383 a side: use a smaller --grid or --size.")
        }
        format = try arguments.choice("format", default: format)
        accuracy = try arguments.choice("accuracy", default: accuracy)
        quality = try arguments.quality(lossy: true, output: outputDirectory)
        contentMode = try arguments.choice("fit", default: contentMode)
        budget = try arguments.budget()
        try arguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first)
        threads = try arguments.threads()
        timeout = try arguments.timeout()
        allowsRedirects = arguments.flags.contains("allow-redirects")
        toneMapping = try arguments.choice("tonemap", default: toneMapping)
        deadline = try arguments.deadline()
    }

    /// Why sheets of tiles of `size` are refused before decoding; `nil` when they fit.
    func sizeRefusal(_ size: Size) -> WorkBudget.Refusal? {
        let sheet = Size(width: columns * size.width, height: rows * size.height)
        if sheet.width > 16383 || sheet.height > 16383 {
            return .init(option: "size", message: "A sheet of \(columns)x\(rows) tiles of \(size) would be \(sheet) pixels; "
                             + "JPEG and WebP sheets are at most 16383 a side: use a smaller --grid or --size")
        }
        if let reason = WorkBudget.encoderRefusal(sheet, webp: format == .webp) {
            return .init(option: "size", message: "A sheet of \(columns)x\(rows) tiles of \(size) is \(sheet) pixels and cannot be written: \(reason)")
        }
        // The sheet's tiles, the sheet, the encoder's copy.
        return budget.memoryRefusal(3 * WorkBudget.rgb(sheet), what: "A sheet of \(sheet)").map { .init(option: "max-memory", message: $0) }
    }
}

extension ScannedArguments {
    /// The required `-o` value, not empty.
    func requiredOutput(example: String) throws(UsageError) -> String {
        guard let path = values["output"] else {
            let spelling = subcommand.option(named: "output").usageSpelling
            throw UsageError(.missingOption("output"), subcommand: subcommand,
                             "Missing expected option '\(spelling)' (for example -o \(example)).")
        }
        guard !path.isEmpty else {
            throw UsageError(.invalidValue(option: "output", value: path), subcommand: subcommand, "The output is an empty string.")
        }
        return path
    }
}

extension AnimationFormat {
    /// `.mp4, .m4v, .webp, .gif`: for help and error messages.
    static var extensionList: String {
        allCases.flatMap(\.fileExtensions).map { ".\($0)" }.joined(separator: ", ")
    }
}
