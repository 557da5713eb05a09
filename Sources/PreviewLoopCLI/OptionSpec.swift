import PreviewLoop

/// One option's spellings, whether it takes a value, and its help: the part of an ``Option`` or ``Flag``
/// declaration that the scanner and the help text read.
///
/// The same declarations drive the scanner (which spellings exist, which take values), the help text
/// and the typed values, so the three cannot drift apart.
struct OptionSpec: Sendable {
    /// The long name without dashes, for example `size`; also the key the scanner files values under.
    var name: String
    /// The one-letter alias without its dash, for example `s`.
    var shortName: Character?
    /// The placeholder shown for the value, for example `WxH`; `nil` for a flag.
    var valueName: String?
    /// What the option does, one sentence or two.
    var abstract: String
    /// The default shown in help, if any.
    var defaultValue: String?
    /// Whether the option must be given.
    var isRequired = false
    /// What a shell's completion offers for the value.
    var completion = ValueCompletion.none

    /// Whether the option takes a value.
    var takesValue: Bool { valueName != nil }

    /// `--name`.
    var longSpelling: String { "--\(name)" }

    /// `-o, --output <file>`, the label in the OPTIONS section.
    var helpLabel: String {
        var label = shortName.map { "-\($0), " } ?? ""
        label += longSpelling
        if let valueName { label += " <\(valueName)>" }
        return label
    }

    /// `-o <file>` when required (short form, as scripts write it), else `[--at <time>]`.
    var usageSpelling: String {
        let name = isRequired ? (shortName.map { "-\($0)" } ?? longSpelling) : longSpelling
        let spelling = valueName.map { "\(name) <\($0)>" } ?? name
        return isRequired ? spelling : "[\(spelling)]"
    }

    /// `--size <WxH>`, how error messages name the option.
    var errorSpelling: String {
        valueName.map { "\(longSpelling) <\($0)>" } ?? longSpelling
    }
}

/// What a shell's completion offers for an option's value or a positional argument.
enum ValueCompletion: Equatable, Sendable {
    /// Nothing to offer: a number, a time, a size.
    case none
    /// One of these words.
    case choices([String])
    /// A path to a file (folders are offered on the way).
    case path
    /// A path to a folder.
    case directory
}

/// Options every subcommand has.
enum CommonOptions {
    /// `-h, --help`.
    static let help = Flag("help", short: "h", help: "Show help information.")
}

extension Subcommand {
    /// The options this subcommand accepts, in help order (`--help` last): the declarations themselves,
    /// from the shared groups (``InputOptions``, ``OutputOptions``, ``PictureOptions``, ``WindowOptions``,
    /// ``WorkBudget``) and the command's own (static members of its options type).
    var declarations: [any OptionDeclaration] {
        switch self {
        case .timing:
            [TimingOptions.json, CommonOptions.help]
        case .probe:
            [ProbeOptions.json, ProbeOptions.flashes, InputOptions.tonemap, InputOptions.threads, InputOptions.timeout, InputOptions.deadline, InputOptions.allowRedirects, TLSOptions.insecure, TLSOptions.caFile, CommonOptions.help]
        case .thumb:
            [OutputOptions.image, OutputOptions.imageFormat, ThumbOptions.at, ThumbOptions.start, ThumbOptions.length, ThumbOptions.size,
             OutputOptions.imageQuality, PictureOptions.fit, ThumbOptions.accuracy, ThumbOptions.playButton,
             ThumbOptions.cornerRadius, PictureOptions.background, ReportOptions.json,
             WorkBudget.maxMemory, InputOptions.tonemap, InputOptions.deinterlace, InputOptions.threads, InputOptions.allowRedirects, TLSOptions.insecure, TLSOptions.caFile,
             InputOptions.timeout, InputOptions.deadline, ReportingOptions.quiet, CommonOptions.help]
        case .strip:
            [OutputOptions.image, OutputOptions.imageFormat, StripOptions.count, StripOptions.columns, StripOptions.size, OutputOptions.imageQuality,
             StripOptions.span, WindowOptions.start, WindowOptions.length, StripOptions.accuracy,
             TilePlanOptions.pick, ReportOptions.json, PictureOptions.fit, StripOptions.gap, StripOptions.timestamps,
             InputOptions.tonemap, InputOptions.deinterlace, WorkBudget.maxMemory, InputOptions.threads, InputOptions.allowRedirects, TLSOptions.insecure, TLSOptions.caFile,
             InputOptions.timeout, InputOptions.deadline, ReportingOptions.progress, ReportingOptions.quiet, CommonOptions.help]
        case .sheet:
            [OutputOptions.image, OutputOptions.imageFormat, SheetOptions.grid, SheetOptions.width, SheetOptions.tileWidth, SheetOptions.gap,
             SheetOptions.margin, SheetOptions.background, SheetOptions.textColor, SheetOptions.font,
             SheetOptions.noHeader, SheetOptions.noTimestamps, OutputOptions.imageQuality, SheetOptions.accuracy,
             TilePlanOptions.pick, ReportOptions.json,
             InputOptions.tonemap, InputOptions.deinterlace, InputOptions.threads, InputOptions.allowRedirects, TLSOptions.insecure, TLSOptions.caFile, InputOptions.timeout,
             InputOptions.deadline, ReportingOptions.progress, ReportingOptions.quiet, CommonOptions.help]
        case .loop:
            [WindowOptions.start, WindowOptions.length, LoopOptions.loops, LoopOptions.size, PictureOptions.fit,
             LoopOptions.realtime, LoopOptions.log, LoopOptions.frames, LoopOptions.captureAt, LoopOptions.record,
             LoopOptions.captureDir, LoopOptions.format, ReportOptions.json,
             WorkBudget.maxMemory, InputOptions.tonemap, InputOptions.deinterlace, InputOptions.threads, InputOptions.allowRedirects, TLSOptions.insecure, TLSOptions.caFile,
             InputOptions.timeout, InputOptions.deadline, ReportingOptions.progress, ReportingOptions.quiet, CommonOptions.help]
        case .render:
            [RenderOptions.output, RenderOptions.start, RenderOptions.length, RenderOptions.size, RenderOptions.fps,
             RenderOptions.quality, PictureOptions.fit, RenderOptions.loopPoint, RenderOptions.seam, RenderOptions.flashSafety, ReportOptions.json, WorkBudget.maxMemory, WorkBudget.maxFrames,
             InputOptions.tonemap, InputOptions.deinterlace, InputOptions.threads, InputOptions.allowRedirects, TLSOptions.insecure, TLSOptions.caFile, InputOptions.timeout,
             InputOptions.deadline, ReportingOptions.progress, ReportingOptions.quiet, CommonOptions.help]
        case .sprites:
            [SpritesOptions.output, SpritesOptions.every, SpritesOptions.count, SpritesOptions.size, SpritesOptions.grid, SpritesOptions.format,
             SpritesOptions.accuracy, TilePlanOptions.pick, SpritesOptions.quality, PictureOptions.fit, ReportOptions.json, WorkBudget.maxMemory, WorkBudget.maxFrames,
             InputOptions.tonemap, InputOptions.deinterlace, InputOptions.threads, InputOptions.allowRedirects, TLSOptions.insecure, TLSOptions.caFile, InputOptions.timeout,
             InputOptions.deadline, ReportingOptions.progress, ReportingOptions.quiet, CommonOptions.help]
        case .card:
            [CardOptions.output, CardOptions.size, CardOptions.aspect, CardOptions.cornerRadius, CardOptions.reveal,
             CardOptions.posterHold, CardOptions.playLength, CardOptions.close, PictureOptions.background,
             CardOptions.noPlayButton, CardOptions.fps, WindowOptions.start, CardOptions.length, CardOptions.posterAt,
             CardOptions.at, CardOptions.quality, CardOptions.flashSafety, ReportOptions.json,
             InputOptions.tonemap, InputOptions.deinterlace, WorkBudget.maxMemory, WorkBudget.maxFrames, InputOptions.threads,
             InputOptions.allowRedirects, TLSOptions.insecure, TLSOptions.caFile, InputOptions.timeout, InputOptions.deadline, CommonOptions.help]
        case .batch:
            BatchCommandOptions.declarations
        case .wall:
            OptionSpec.wallOptions
        case .serve:
            ServeOptions.declarations
        }
    }

    /// The options' spellings and help, in help order.
    var options: [OptionSpec] { declarations.map(\.spec) }

    /// The spec for a spelling as typed (`--size`, `-s`), if the subcommand has it.
    func option(spelled spelling: String) -> OptionSpec? {
        if spelling.hasPrefix("--") {
            let name = spelling.dropFirst(2)
            return options.first { $0.name == name }
        }
        guard spelling.count == 2, spelling.first == "-", let letter = spelling.last else { return nil }
        return options.first { $0.shortName == letter }
    }
}
