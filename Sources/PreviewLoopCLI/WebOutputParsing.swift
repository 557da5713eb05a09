import PreviewLoop

// Typing and validating `render` and `sprites` arguments. Everything here is pure.

extension RenderOptions {
    /// `-o, --output <file>`.
    static let output = Option<String?>.path(
        "output", short: "o", value: "file",
        help: "The file to write; its extension chooses the format: .mp4 (H.264, +faststart, "
            + "no audio), .webp (animated) or .gif (one palette per clip, dithered), each "
            + "looping forever. Written whole or not at all.",
        required: true)
    /// `--start <poster|time>`.
    static let start = Option<HoverStart>(
        "start", value: "poster|time",
        help: "Where the window starts: poster (the poster frame 'thumb' picks by default, the first good frame of "
            + "the first 15 s, so the preview opens on the picture past a title card or fade; needs an input "
            + "that can be read twice, not -) or seconds (12.5), mm:ss, hh:mm:ss.ms, or a percentage of the duration (10%).",
        default: .at(.seconds(0)), showing: "0",
        expecting: "poster, seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage from 0 to 100 (10%)",
        completing: .choices(["poster"])) { HoverStart(parsing: $0) }
    /// `--length <time>` (3 s).
    static let length = WindowOptions.length(default: 3)
    /// `-s, --size <WxH>`.
    static let size = PictureOptions.size(
        default: defaultBox,
        help: "The picture size in pixels, 1 to 16384 a side: WxH, one side keeping the "
            + "source's shape (480, x270) or source; even for .mp4 (H.264 4:2:0), an odd side given "
            + "is a usage error, a computed one is rounded to even. \(PictureOptions.encoderLimits)")
    /// `--fps <n>`.
    static let fps = Option<Int>.integer("fps", help: "Frames per second, 1 to 120: each frame is the one shown at its instant.",
                                         default: 15, in: 1...120)
    /// `-q, --quality <0-100>`.
    static let quality = Option<Int?>.optionalInteger(
        "quality", short: "q", value: "0-100",
        help: "0 (smallest) to 100 (best): x264's CRF 51 to 14 for .mp4, libwebp's quality "
            + "for .webp (100: lossless); a usage error for .gif, whose palette has no quality.",
        in: 0...100, showing: "75")

    /// Types and validates `render`'s scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        let source = try InputOptions(arguments)
        let output = try arguments.requiredOutput(Self.output, example: "preview.mp4")
        guard let format = AnimationFormat(path: output) else {
            throw UsageError(.unsupportedOutputFormat(output), subcommand: .render,
                             "Cannot tell a video format from '\(output)'; use an extension among: \(AnimationFormat.extensionList).")
        }
        self.init(source: source, output: output, format: format)
        switch try arguments.value(Self.start) {
        case .poster:
            startsAtPoster = true
            if source.input == "-" {
                throw UsageError(.conflictingOptions("start", "input"), subcommand: .render,
                                 "'--start poster' reads the input twice (the poster's search, then the window); "
                                     + "standard input can be read once: save it to a file first.")
            }
        case .at(let position):
            start = position
        }
        length = try arguments.value(Self.length)
        size = try arguments.value(Self.size)
        let given: Size? = switch size {
        case .exact(let exact): exact
        case .width(let width): Size(width: width, height: 2)
        case .height(let height): Size(width: 2, height: height)
        case .source, .orientedBox: nil
        }
        if format.needsEvenSize, let given, given.width % 2 != 0 || given.height % 2 != 0 {
            let even = Size(width: max(2, given.width & ~1), height: max(2, given.height & ~1))
            throw UsageError(.invalidValue(option: "size", value: arguments.text(Self.size) ?? size.description), subcommand: .render,
                             "Invalid value '\(size)' for '--size <WxH>': H.264 MP4 needs an even width and height "
                                 + "(for example \(even)); .webp and .gif take any size.")
        }
        framesPerSecond = try arguments.value(Self.fps)
        quality = try arguments.quality(Self.quality, lossy: format.hasQuality, output: output, alternatives: ".mp4, .webp")
        contentMode = try arguments.value(PictureOptions.fit)
        try readSeam(arguments)
        budget = try WorkBudget(arguments)
        json = arguments.isSet(ReportOptions.json)
        reporting = try ReportingOptions(arguments)
        try arguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first)
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
        OutputLimits.renderBytes(frames: frames, size: size, format: format)
    }
}

extension SpritesOptions {
    /// `-o, --output <dir>`.
    static let output = Option<String?>.path(
        "output", short: "o", value: "dir",
        help: "The directory for sheet-1.jpg, sheet-2.jpg… and thumbnails.vtt, built beside it and "
            + "swapped in whole (a failure keeps the old contents; no stale sheet stays). An existing "
            + "directory holding other files is refused.",
        required: true, completing: .directory)
    /// `--every <auto|time>`: seconds between thumbnails.
    static let every = Option<SpriteInterval>(
        "every", value: "auto|time",
        help: "One thumbnail per this many seconds (or mm:ss) of the clip, above 0; auto chooses from the duration: "
            + "\(SpriteInterval.autoThumbnails) thumbnails for a clip under \(Int(SpriteInterval.longClip / 60)) minutes, "
            + "\(SpriteInterval.autoThumbnailsLong) for a longer one, never closer than one frame "
            + "(\(Format.limit(SpriteInterval.fallback)) s when the duration is unknown). Not with --count.",
        default: .auto, showing: "auto", expecting: "auto or a time above 0: seconds (2.5), mm:ss or hh:mm:ss.ms",
        completing: .choices(["auto"])) { SpriteInterval(parsing: $0) }
    /// `-n, --count <n>`: thumbnails over the clip.
    static let count = Option<Int?>.optionalInteger(
        "count", short: "n", help: "This many thumbnails spread evenly over the clip, 1 to 100000 (never closer than "
            + "one frame). Not with --every.", in: 1...100_000)
    /// `-s, --size <WxH>` of each tile.
    static let size = PictureOptions.size(default: defaultBox, tile: true)
    /// `--grid <CxR>`.
    static let grid = Option<Size>(
        "grid", value: "CxR", help: "Tiles per sheet: C columns by R rows, each 1 to 100.",
        default: Size(width: 10, height: 10), showing: "10x10",
        expecting: "COLUMNSxROWS, each 1 to 100, for example 10x10") { text in
        Size(parsing: text).flatMap { (1...100).contains($0.width) && (1...100).contains($0.height) ? $0 : nil }
    }
    /// `--format <format>`.
    static let format = Option<SheetFormat>.choice("format", value: "format", help: "The sheets' image format: jpg or webp.",
                                                   default: .jpg)
    /// `--accuracy <accuracy>`.
    static let accuracy = Option<SeekAccuracy>.choice(
        "accuracy", value: "accuracy",
        help: "auto (the keyframe nearest each interval's middle when one lies inside the "
            + "interval, else the exact frame), exact (the frame at the middle) or keyframe "
            + "(the keyframe at or before the middle; fastest, may be from an earlier interval).",
        default: .auto)
    /// `-q, --quality <0-100>`.
    static let quality = Option<Int?>.optionalInteger(
        "quality", short: "q", value: "0-100", help: "Lossy quality of the sheets, 0 (smallest) to 100 (best).",
        in: 0...100, showing: "85")

    /// Types and validates `sprites`' scanned arguments.
    init(_ arguments: ScannedArguments) throws(UsageError) {
        let source = try InputOptions(arguments)
        self.init(source: source, outputDirectory: try arguments.requiredOutput(Self.output, example: "thumbnails/"))
        if let fileExtension = ImageFileFormat.fileExtension(of: outputDirectory), Self.fileExtensions.contains(fileExtension) {
            throw UsageError(.invalidValue(option: "output", value: outputDirectory), subcommand: .sprites,
                             "'\(outputDirectory)' looks like a file, but sprites writes a directory (sheet-1.jpg…, "
                                 + "\(SpritesCommand.trackName)); name a directory, for example -o thumbnails/.")
        }
        every = try arguments.value(Self.every)
        if let count = try arguments.value(Self.count) {
            if arguments.isGiven(Self.every) {
                throw UsageError(.conflictingOptions("count", "every"), subcommand: .sprites,
                                 "'--count' and '--every' both set the interval; give one.")
            }
            every = .count(count)
        }
        size = try arguments.value(Self.size)
        let grid = try arguments.value(Self.grid)
        (columns, rows) = (grid.width, grid.height)
        if let size = size.exactSize, columns * size.width > ImageFileFormat.maxWebPSide || rows * size.height > ImageFileFormat.maxWebPSide {
            throw UsageError(.conflictingOptions("grid", "size"), subcommand: .sprites,
                             "A sheet of \(columns)x\(rows) tiles of \(size) would be \(columns * size.width)x\(rows * size.height) "
                                 + "pixels; JPEG and WebP sheets are at most \(ImageFileFormat.maxWebPSide) a side: use a smaller --grid or --size.")
        }
        format = try arguments.value(Self.format)
        accuracy = try arguments.value(Self.accuracy)
        pick = try arguments.value(TilePlanOptions.pick)
        quality = try arguments.quality(Self.quality, lossy: true, output: outputDirectory)
        contentMode = try arguments.value(PictureOptions.fit)
        budget = try WorkBudget(arguments)
        json = arguments.isSet(ReportOptions.json)
        reporting = try ReportingOptions(arguments)
        try arguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first)
    }

    /// The extensions of files the output must not look like: images, videos, WebVTT.
    static let fileExtensions: Set<String> = Set(ImageFileFormat.allCases.flatMap(\.fileExtensions)
        + AnimationFormat.allCases.flatMap(\.fileExtensions) + ["vtt"])

    /// Why sheets of tiles of `size` are refused before decoding; `nil` when they fit.
    func sizeRefusal(_ size: Size) -> WorkBudget.Refusal? {
        let sheet = Size(width: columns * size.width, height: rows * size.height)
        if sheet.width > ImageFileFormat.maxWebPSide || sheet.height > ImageFileFormat.maxWebPSide {
            return .init(option: "size", message: "A sheet of \(columns)x\(rows) tiles of \(size) would be \(sheet) pixels; "
                             + "JPEG and WebP sheets are at most \(ImageFileFormat.maxWebPSide) a side: use a smaller --grid or --size")
        }
        if let reason = WorkBudget.encoderRefusal(sheet, webp: format == .webp) {
            return .init(option: "size", message: "A sheet of \(columns)x\(rows) tiles of \(size) is \(sheet) pixels and cannot be written: \(reason)")
        }
        // The sheet's tiles, the sheet, the encoder's copy.
        return budget.memoryRefusal(3 * WorkBudget.rgb(sheet), what: "A sheet of \(sheet)").map { .init(option: "max-memory", message: $0) }
    }
}

extension AnimationFormat {
    /// `.mp4, .m4v, .webp, .gif`: for help and error messages.
    static var extensionList: String {
        allCases.flatMap(\.fileExtensions).map { ".\($0)" }.joined(separator: ", ")
    }
}
