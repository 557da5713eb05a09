import PreviewLoop

// Option groups shared by the commands that take them; each option declared once (see OptionDeclaration).

/// The output group: `-o` for an image, `--format` and `-q` for its quality.
enum OutputOptions {
    /// `-o, --output <file>`: the image to write.
    static let image = ValueOption<String?>.path(
        "output", short: "o", value: "file",
        help: "The image to write; its extension chooses the format (supported: \(ImageFileFormat.extensionList)). "
            + "Written whole or not at all. - writes it to standard output (PNG unless --format says "
            + "otherwise; refused when standard output is a terminal; the summary line then goes to standard error). "
            + "s3://BUCKET/KEY uploads it to an S3 bucket (the input's credentials), whole or not at all.",
        required: true)

    /// `--format <format>`: the image format when the output's name does not say it.
    static let imageFormat = format(among: ImageFileFormat.allCases, help: "The image format for -o - or an output without "
                                        + "an extension; with an extension it must agree.", showing: "the extension; png for -o -")

    /// `--format <format>` among `formats`, spelled by their extensions (`jpg` or `jpeg` for JPEG).
    static func format(among formats: [ImageFileFormat], help: String, showing: String) -> ValueOption<ImageFileFormat?> {
        let names = formats.map { $0.fileExtensions[0] }
        return ValueOption("format", value: "format", help: help + " One of " + names.joined(separator: ", ") + ".",
                      default: nil, showing: showing,
                      expecting: names.dropLast().joined(separator: ", ") + " or " + names.last!,
                      completing: .choices(names)) { text in
            formats.first { $0.fileExtensions.contains(text.lowercased()) }.map { .some($0) }
        }
    }

    /// `-q, --quality <0-100>` for image outputs; absent, the format's default.
    static let imageQuality = ValueOption<Int?>.optionalInteger(
        "quality", short: "q", value: "0-100",
        help: "Lossy quality, 0 (smallest) to 100 (best), for \(ImageFileFormat.lossyExtensionList) outputs "
            + "(WebP at 100 is lossless); a usage error with .png and .ppm, which are lossless.",
        in: ValueRanges.quality, showing: "85").parameter()
}

/// The picture group: `--size` (each command's own default box), `--fit`, and the overlays.
enum PictureOptions {
    /// `-s, --size <WxH>` with the subcommand's default box, turned for a portrait source.
    static func size(default box: Size, tile: Bool = false) -> ValueOption<SizeRequest> {
        size(default: box,
             help: (tile ? "The size of each tile in pixels, 1 to 16384 a side" : "The output size in pixels, 1 to 16384 a side")
                + ": WxH exactly; one side keeping the source's shape (320, 320x-1, x180); or source (the "
                + "display size). Without it the default turns with a portrait source. \(encoderLimits)")
    }

    /// `-s, --size <WxH>` with its own help.
    static func size(default box: Size, help: String) -> ValueOption<SizeRequest> {
        ValueOption("size", short: "s", value: "WxH", help: help, default: .orientedBox(box),
               showing: box.description + " (\(box.transposed) for a portrait source)",
               expecting: "WIDTHxHEIGHT in pixels, each 1 to 16384 (320x180), one side keeping the source's "
                   + "shape (320, 320x-1, x180) or source") { SizeRequest(parsing: $0) }
    }

    /// What the encoders take, for the help of size options.
    static let encoderLimits = "Encoders limit the written picture (a strip or sheet as tiled): (W+128)x(H+128) "
        + "below 268435456 (about 16250x16250; not for .ppm), JPEG at most 65535 and WebP at most \(ImageFileFormat.maxWebPSide) a side."

    /// `--fit <mode>`.
    static let fit = ValueOption<ContentMode>.choice(
        "fit", value: "mode",
        help: "fill (cover the size, cropping the overflow equally), smartcrop (cover it, the crop placed on what "
            + "matters: edges, colour, skin tones; a loop keeps its first frame's), fit (show it all, on black bars) or stretch.",
        default: .aspectFill)

    /// `--corner-radius <px>` with the subcommand's default.
    static func cornerRadius(default radius: Double) -> ValueOption<Double> {
        ValueOption("corner-radius", value: "px",
               help: "Round the corners with this radius in pixels (anti-aliased); 0 for square corners.",
               default: radius, showing: Format.limit(radius), expecting: "a number of pixels, 0 or more") { text in
            DecimalText.number(text).flatMap { $0 >= 0 ? $0 : nil }
        }
    }

    /// `--background <color>`; absent, transparent where the format can be, else white.
    static let background = ValueOption<RGBAColor?>(
        "background", value: "color",
        help: "The colour outside rounded corners: #rrggbb, #rgb, #rrggbbaa, black, white or transparent. Without "
            + "it, .png, .webp and a card's .gif are transparent there, a card's .mp4 black (H.264 has no alpha) "
            + "and other formats white.",
        default: nil, showing: nil, expecting: "#rrggbb, #rgb, #rrggbbaa, black, white or transparent") { text in
        RGBAColor(parsing: text).map { .some($0) }
    }.parameter()
}

/// The window group: `--start` and `--length`.
enum WindowOptions {
    /// `--start <time>` for a window.
    static let start = ValueOption<TimePosition>.time(
        "start", help: "Where the window starts: seconds (12.5), mm:ss, hh:mm:ss.ms, or a percentage of the duration (10%).",
        default: .seconds(0), showing: "0").parameter()

    /// `--length <time>` for a window (15 s).
    static let length = length(default: 15).parameter()

    /// `--length <time>` with the subcommand's default in seconds.
    static func length(default seconds: Double) -> ValueOption<TimePosition> {
        .time("length", help: "How long the window lasts, in the same forms as --start; cut at the end of the clip. Must be above 0.",
              default: .seconds(seconds), showing: Format.limit(seconds), positive: true)
    }
}

/// How strip and sheet choose their tiles: `--pick`.
enum TilePlanOptions {
    /// `--pick <pick>`.
    static let pick = ValueOption<TilePick>.choice(
        "pick", value: "pick",
        help: "even (the middles of equal slices) or scenes (the first frame of each shot, the "
            + "strongest cuts first, filled in evenly when shots are fewer than tiles, near-identical "
            + "tiles dropped; always exact frames).",
        default: .even).parameter()
}

extension ScannedArguments {
    /// The required `-o` path and its image format: `--format`'s, else the one its extension names;
    /// PNG for `-o -` (standard output) without `--format`.
    func imageOutput() throws(UsageError) -> (path: String, format: ImageFileFormat) {
        guard let path = text(OutputOptions.image) else {
            throw UsageError(.missingOption("output"), subcommand: subcommand,
                             "Missing expected option '-o <file>' (the image to write, for example out.ppm).")
        }
        try checkBucket(path, option: "output")
        let given = try value(OutputOptions.imageFormat)
        if path == ImageDestination.standardOutput { return (path, given ?? .png) }
        let named = ImageFileFormat(path: path)
        if let given, let named, given != named {
            throw UsageError(.conflictingOptions("format", "output"), subcommand: subcommand,
                             "'--format \(text(OutputOptions.imageFormat) ?? "")' disagrees with the extension of '\(path)'; "
                                 + "drop one of them.")
        }
        guard let format = named ?? given else {
            throw UsageError(.unsupportedOutputFormat(path), subcommand: subcommand,
                             "Cannot tell an image format from '\(path)'; use an extension among: \(ImageFileFormat.extensionList), "
                                 + "or --format.")
        }
        return (path, format)
    }

    /// A required output option's value, not empty.
    func requiredOutput(_ option: ValueOption<String?>, example: String) throws(UsageError) -> String {
        guard let path = text(option) else {
            throw UsageError(.missingOption(option.spec.name), subcommand: subcommand,
                             "Missing expected option '\(option.spec.usageSpelling)' (for example -o \(example)).")
        }
        guard !path.isEmpty else {
            throw UsageError(.invalidValue(option: option.spec.name, value: path), subcommand: subcommand, "The output is an empty string.")
        }
        try checkBucket(path, option: option.spec.name)
        // These commands write a named file or a folder; '-' is neither (a folder named '-' is surely not meant).
        guard path != ImageDestination.standardOutput else {
            throw UsageError(.invalidValue(option: option.spec.name, value: path), subcommand: subcommand,
                             "'-o -' (standard output) is not an output of \(subcommand.rawValue): name a file or folder, "
                             + "for example -o \(example); thumb, strip and sheet can write to standard output.")
        }
        return path
    }

    /// Throws a usage error naming the limit when `refusal` is not `nil`.
    static func refuse(_ refusal: WorkBudget.Refusal?, for subcommand: Subcommand) throws(UsageError) {
        guard let refusal else { return }
        throw UsageError(.overLimit(refusal.option), subcommand: subcommand, refusal.message + ".")
    }

    /// `--json`, refused with `-o -`: the image has standard output to itself.
    static func checkReportJSON(_ json: Bool, output: String, for subcommand: Subcommand) throws(UsageError) {
        if json, output == ImageDestination.standardOutput {
            throw UsageError(.conflictingOptions("json", "output"), subcommand: subcommand,
                             "'--json' prints on standard output, which '-o -' gives to the image; write the image to a file.")
        }
    }

    /// A usage error for a `--quality` given to an output without a quality setting.
    ///
    /// - Parameters:
    ///   - lossy: whether the output format has a quality setting.
    ///   - output: the output path, for the message.
    ///   - alternatives: the extensions that do take a quality, for the message.
    static func checkQuality(_ quality: Int?, option: ValueOption<Int?>, lossy: Bool, output: String,
                             alternatives: String = ImageFileFormat.lossyExtensionList,
                             for subcommand: Subcommand) throws(UsageError) {
        guard quality != nil, !lossy else { return }
        throw UsageError(.conflictingOptions(option.spec.name, "output"), subcommand: subcommand,
                         "'--quality' has no effect on '\(output)': its format is lossless or has no quality "
                             + "setting; drop it or write \(alternatives).")
    }
}
