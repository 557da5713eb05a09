import PreviewLoop

/// One option a subcommand accepts: its spellings, whether it takes a value, and its help.
///
/// The same table drives the scanner (which spellings exist, which take values) and the help text,
/// so the two cannot drift apart.
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

extension OptionSpec {
    /// `-o, --output <file>`: the image to write.
    static let output = OptionSpec(
        name: "output", shortName: "o", valueName: "file",
        abstract: "The image to write; its extension chooses the format (supported: \(ImageFormat.extensionList)). "
            + "Written whole or not at all.",
        isRequired: true)

    /// `-q, --quality <0-100>` for image outputs.
    static let imageQuality = OptionSpec(
        name: "quality", shortName: "q", valueName: "0-100",
        abstract: "Lossy quality, 0 (smallest) to 100 (best), for \(ImageFormat.lossyExtensionList) outputs "
            + "(WebP at 100 is lossless); a usage error with .png and .ppm, which are lossless.",
        defaultValue: "85")

    /// `-s, --size <WxH>` with the subcommand's default.
    static func size(default size: Size, tile: Bool = false) -> OptionSpec {
        OptionSpec(name: "size", shortName: "s", valueName: "WxH",
                   abstract: (tile ? "The size of each tile in pixels, 1 to 16384 a side" : "The output size in pixels, 1 to 16384 a side")
                       + ": WxH exactly; one side keeping the source's shape (320, 320x-1, x180); or source (the "
                       + "display size). Without it the default turns with a portrait source. \(encoderLimits)",
                   defaultValue: size.description + " (\(size.transposed) for a portrait source)")
    }

    /// What the encoders take, for the help of size options.
    static let encoderLimits = "Encoders limit the written picture (a strip or sheet as tiled): (W+128)x(H+128) "
        + "below 268435456 (about 16250x16250; not for .ppm), JPEG at most 65535 and WebP at most 16383 a side."

    /// `--fit <mode>`.
    static let fit = OptionSpec(
        name: "fit", valueName: "mode",
        abstract: "fill (cover the size, cropping the overflow), fit (show it all, on black bars) or stretch.",
        defaultValue: ContentMode.aspectFill.rawValue)

    /// `--tonemap <curve>`.
    static let tonemap = OptionSpec(
        name: "tonemap", valueName: "curve",
        abstract: "How HDR (PQ, HLG) frames become SDR: auto (reference white at SDR white, highlights rolled off "
            + "to the picture's peak, BT.2020 colours desaturated into BT.709), clip (reference white at SDR white, "
            + "brighter clipped) or none (no conversion: washed out). SDR input is never changed.",
        defaultValue: ToneMapping.auto.rawValue)

    /// `--threads <n>`.
    static let threads = OptionSpec(
        name: "threads", valueName: "n", abstract: "Decoding threads, 1 to 64.", defaultValue: "2")

    /// `--timeout <seconds>`: a stall, not work.
    static let timeout = OptionSpec(
        name: "timeout", valueName: "seconds",
        abstract: "Give up when opening the input takes longer, or when nothing is read for this long (a "
            + "stalled server or pipe). A long job that keeps reading is never cut short by it.",
        defaultValue: "30")

    /// `--deadline <seconds>`: the whole job.
    static let deadline = OptionSpec(
        name: "deadline", valueName: "seconds",
        abstract: "Give up when the whole job's reading takes longer than this, however steady.",
        defaultValue: "none")

    /// `--allow-redirects`.
    static let allowRedirects = OptionSpec(
        name: "allow-redirects",
        abstract: "Let a URL input redirect to another http(s) host or port (by default only redirects within its "
            + "own host and port are followed). Never to another protocol; a playlist's segments stay on the "
            + "input's origins either way.")

    /// `--start <time>` for a window.
    static let start = OptionSpec(
        name: "start", valueName: "time",
        abstract: "Where the window starts: seconds (12.5), mm:ss, hh:mm:ss.ms, or a percentage of the duration (10%).",
        defaultValue: "0")

    /// `--length <time>` for a window.
    static let length = OptionSpec(
        name: "length", valueName: "time",
        abstract: "How long the window lasts, in the same forms as --start; cut at the end of the clip. Must be above 0.",
        defaultValue: "15")

    /// `--corner-radius <px>`.
    static func cornerRadius(default radius: String) -> OptionSpec {
        OptionSpec(name: "corner-radius", valueName: "px",
                   abstract: "Round the corners with this radius in pixels (anti-aliased); 0 for square corners.",
                   defaultValue: radius)
    }

    /// `--background <color>`.
    static let background = OptionSpec(
        name: "background", valueName: "color",
        abstract: "The colour outside rounded corners: #rrggbb, #rrggbbaa, black, white or transparent. Without "
            + "it, .png, .webp and a card's .gif are transparent there and other formats white.")

    /// `--pick <pick>` for strip and sheet.
    static let pick = OptionSpec(
        name: "pick", valueName: "pick",
        abstract: "even (the middles of equal slices) or scenes (the first frame of each shot, the "
            + "strongest cuts first, filled in evenly when shots are fewer than tiles, near-identical "
            + "tiles dropped; always exact frames).",
        defaultValue: TilePick.even.rawValue)

    /// `--json` for strip and sheet: the chosen tiles instead of the summary line.
    static let tilePlanJSON = OptionSpec(
        name: "json",
        abstract: "Print one JSON object (each tile's time, reason and cut score; dropped "
            + "duplicates) instead of the summary line.")

    /// `-h, --help`.
    static let help = OptionSpec(name: "help", shortName: "h", abstract: "Show help information.")
}

extension Subcommand {
    /// The options this subcommand accepts, in help order (`--help` last).
    var options: [OptionSpec] {
        switch self {
        case .timing:
            [OptionSpec(name: "json", abstract: "Print one JSON object with sorted keys instead of aligned text."), .help]
        case .probe:
            [OptionSpec(name: "json", abstract: "Print one JSON object with sorted keys instead of aligned text."),
             .timeout, .deadline, .allowRedirects, .help]
        case .thumb:
            [.output,
             OptionSpec(name: "at", shortName: "t", valueName: "time",
                        abstract: "When to take the frame: auto (the poster frame: the first frame of the window "
                            + "that is not black, white, flat, a title card, fading, dark or blurred, judged against "
                            + "the next second), best (the most representative good frame of the whole clip, from "
                            + "9 keyframes across it: colourful, sharp, well exposed, typical), or seconds (12.5), mm:ss, hh:mm:ss.ms, or a percentage of the duration "
                            + "(10%), kept within the clip.",
                        defaultValue: "auto"),
             OptionSpec(name: "start", valueName: "time",
                        abstract: "Where the window --at auto searches starts: seconds, mm:ss, hh:mm:ss.ms, or a "
                            + "percentage of the duration. Only with --at auto.",
                        defaultValue: "0"),
             OptionSpec(name: "length", valueName: "time",
                        abstract: "How long that window lasts, in the same forms; cut at the end of the clip. "
                            + "Must be above 0. Only with --at auto.",
                        defaultValue: "15"),
             .size(default: Size(width: 320, height: 180)),
             .imageQuality,
             .fit,
             OptionSpec(name: "accuracy", valueName: "accuracy",
                        abstract: "exact (the frame shown at that time) or keyframe (the nearest keyframe at or "
                            + "before it; faster). Only with an explicit --at time.",
                        defaultValue: SeekAccuracy.exact.rawValue),
             OptionSpec(name: "play-button",
                        abstract: "Draw a play button in the middle: a white triangle in a translucent dark disc, "
                            + "72 pixels across at 320 wide, scaling with the picture."),
             .cornerRadius(default: "0"),
             .background,
             .maxMemory, .tonemap, .deinterlace, .threads, .allowRedirects, .timeout, .deadline, .help]
        case .strip:
            [.output,
             OptionSpec(name: "count", shortName: "n", valueName: "n",
                        abstract: "How many frames, 1 to 1000, taken at the middles of equal slices of the span.",
                        defaultValue: "8"),
             OptionSpec(name: "columns", shortName: "c", valueName: "n",
                        abstract: "Frames per row, at least 1; more than --count is reduced to --count.",
                        defaultValue: "--count, one row"),
             .size(default: Size(width: 160, height: 90), tile: true),
             .imageQuality,
             OptionSpec(name: "span", valueName: "span",
                        abstract: "window (from --start for --length) or all (the whole clip; then --start and "
                            + "--length do not apply).",
                        defaultValue: StripSpan.window.rawValue),
             .start, .length,
             OptionSpec(name: "accuracy", valueName: "accuracy",
                        abstract: "exact (the frame shown at each time), keyframe (the nearest keyframe at or "
                            + "before it; fastest) or auto (a keyframe when one lies within half a slice, "
                            + "otherwise exact).",
                        defaultValue: SeekAccuracy.auto.rawValue),
             .pick, .tilePlanJSON,
             .fit,
             OptionSpec(name: "gap", valueName: "px",
                        abstract: "Black pixels between neighbouring tiles, 0 to 256.", defaultValue: "0"),
             OptionSpec(name: "timestamps",
                        abstract: "Print each frame's time (DejaVu Sans Mono, white on a dark box) in its tile's "
                            + "bottom-right corner, as 'sheet' does."),
             .tonemap, .maxMemory, .threads, .allowRedirects, .timeout, .deadline, .help]
        case .sheet:
            [.output,
             OptionSpec(name: "grid", valueName: "CxR",
                        abstract: "C columns by R rows of tiles, each 1 to 100, at most \(SheetOptions.maximumTiles) "
                            + "tiles; the frames are taken at the middles of C×R equal slices of the clip.",
                        defaultValue: "4x4"),
             OptionSpec(name: "width", valueName: "px",
                        abstract: "The sheet's width, 16 to 16383: the tiles share what the margins and gaps leave "
                            + "(so the sheet may come out up to C-1 pixels narrower); their height keeps the picture's "
                            + "display aspect ratio. Not with --tile-width.",
                        defaultValue: "1280"),
             OptionSpec(name: "tile-width", valueName: "px",
                        abstract: "Each tile's width instead, 16 to 4096; the sheet's width follows from it."),
             OptionSpec(name: "gap", valueName: "px",
                        abstract: "Pixels between tiles and below the header, 0 to 256.", defaultValue: "6"),
             OptionSpec(name: "margin", valueName: "px",
                        abstract: "Pixels around everything, 0 to 1024.", defaultValue: "12"),
             OptionSpec(name: "background", valueName: "color",
                        abstract: "The colour of the margins, gaps and header: #rrggbb, #rgb, black or white.",
                        defaultValue: "black"),
             OptionSpec(name: "text-color", valueName: "color",
                        abstract: "The colour of the header and of the tile times, in the same forms.",
                        defaultValue: "white"),
             OptionSpec(name: "font", valueName: "file",
                        abstract: "A TrueType/OpenType font for all text, instead of DejaVu Sans (header) and DejaVu "
                            + "Sans Mono (times) from Debian's fonts-dejavu-core."),
             OptionSpec(name: "no-header",
                        abstract: "Leave out the header (file name; duration, display size, codec, frame rate, bit "
                            + "rate, file size)."),
             OptionSpec(name: "no-timestamps", abstract: "Leave out the times on the tiles."),
             .imageQuality,
             OptionSpec(name: "accuracy", valueName: "accuracy",
                        abstract: "exact (the frame shown at each slice's middle), keyframe (the nearest keyframe at or "
                            + "before it; fastest) or auto (a keyframe when one lies within half a slice, otherwise "
                            + "exact; two slices may then share a keyframe). Each tile prints the time of the frame "
                            + "it shows.",
                        defaultValue: SeekAccuracy.exact.rawValue),
             .pick, .tilePlanJSON,
             .threads, .timeout, .deadline, .help]
        case .loop:
            [.start, .length,
             OptionSpec(name: "loops", valueName: "n",
                        abstract: "Passes over the window; 0 loops until interrupted (Ctrl-C or SIGTERM), "
                            + "then finishes the log and exits 0.",
                        defaultValue: "1"),
             .size(default: Size(width: 320, height: 180)),
             .fit,
             OptionSpec(name: "realtime",
                        abstract: "Deliver frames at playback speed; without it frames are decoded as fast as "
                            + "possible and lateness is not measured."),
             OptionSpec(name: "log", valueName: "file",
                        abstract: "Write a CSV timing log (pass, index, presentation_time, wall_time, decode_ms, "
                            + "scale_ms, lateness_ms, dropped) to the file when the loop ends, or to standard output as "
                            + "it runs with '-'."),
             OptionSpec(name: "frames", valueName: "dir",
                        abstract: "Write every frame to the directory as PPP-FFFFF.ppm (pass and frame number, "
                            + "from 1); created if missing."),
             OptionSpec(name: "capture-at", valueName: "times",
                        abstract: "Write a still of the frame presented at each of these times from the loop's "
                            + "start (comma-separated; seconds, mm:ss or hh:mm:ss.ms) as capture-NN.ppm."),
             OptionSpec(name: "record", valueName: "from-to",
                        abstract: "Record every frame presented in this span of time from the loop's start as "
                            + "record-PPP-FFFFF.ppm, across seams."),
             OptionSpec(name: "capture-dir", valueName: "dir",
                        abstract: "Where --capture-at and --record write (default: the --frames directory); "
                            + "created if missing."),
             .maxMemory, .tonemap, .threads, .allowRedirects, .timeout, .deadline, .help]
        case .render:
            [OptionSpec(name: "output", shortName: "o", valueName: "file",
                        abstract: "The file to write; its extension chooses the format: .mp4 (H.264, +faststart, "
                            + "no audio), .webp (animated) or .gif (one palette per clip, dithered), each "
                            + "looping forever. Written whole or not at all.",
                        isRequired: true),
             .start,
             OptionSpec(name: "length", valueName: "time",
                        abstract: "How long the window lasts, in the same forms as --start; cut at the end of "
                            + "the clip. Must be above 0.",
                        defaultValue: "3"),
             OptionSpec(name: "size", shortName: "s", valueName: "WxH",
                        abstract: "The picture size in pixels, 1 to 16384 a side: WxH, one side keeping the "
                            + "source's shape (480, x270) or source; even for .mp4 (H.264 4:2:0), an odd side given "
                            + "is a usage error, a computed one is rounded to even. \(OptionSpec.encoderLimits)",
                        defaultValue: "480x270 (270x480 for a portrait source)"),
             OptionSpec(name: "fps", valueName: "n",
                        abstract: "Frames per second, 1 to 120: each frame is the one shown at its instant.",
                        defaultValue: "15"),
             OptionSpec(name: "quality", shortName: "q", valueName: "0-100",
                        abstract: "0 (smallest) to 100 (best): x264's CRF 51 to 14 for .mp4, libwebp's quality "
                            + "for .webp (100: lossless); a usage error for .gif, whose palette has no quality.",
                        defaultValue: "75"),
             .fit, .loopPoint, .seam, .maxMemory, .maxFrames, .tonemap, .deinterlace, .threads, .allowRedirects, .timeout, .deadline, .help]
        case .sprites:
            [OptionSpec(name: "output", shortName: "o", valueName: "dir",
                        abstract: "The directory for sheet-1.jpg, sheet-2.jpg… and thumbnails.vtt, built beside it and "
                            + "swapped in whole (a failure keeps the old contents; no stale sheet stays). An existing "
                            + "directory holding other files is refused.",
                        isRequired: true),
             OptionSpec(name: "every", valueName: "time",
                        abstract: "One thumbnail per this many seconds (or mm:ss) of the clip, above 0.",
                        defaultValue: "10"),
             .size(default: Size(width: 160, height: 90), tile: true),
             OptionSpec(name: "grid", valueName: "CxR",
                        abstract: "Tiles per sheet: C columns by R rows, each 1 to 100.",
                        defaultValue: "10x10"),
             OptionSpec(name: "format", valueName: "format",
                        abstract: "The sheets' image format: jpg or webp.", defaultValue: SheetFormat.jpg.rawValue),
             OptionSpec(name: "accuracy", valueName: "accuracy",
                        abstract: "auto (the keyframe nearest each interval's middle when one lies inside the "
                            + "interval, else the exact frame), exact (the frame at the middle) or keyframe "
                            + "(the keyframe at or before the middle; fastest, may be from an earlier interval).",
                        defaultValue: SeekAccuracy.auto.rawValue),
             OptionSpec(name: "quality", shortName: "q", valueName: "0-100",
                        abstract: "Lossy quality of the sheets, 0 (smallest) to 100 (best).", defaultValue: "85"),
             .fit, .maxMemory, .maxFrames, .tonemap, .threads, .allowRedirects, .timeout, .deadline, .help]
        case .card:
            [OptionSpec(name: "output", shortName: "o", valueName: "path",
                        abstract: "What to write, by extension: .webp or .gif (animated, transparent corners), .mp4 "
                            + "(animated, corners in --background), .png (one still, transparent corners), .jpg or "
                            + ".ppm (one still); any other path is a directory of PNG frames card-00001.png…, "
                            + "built beside it and swapped in whole (an existing directory holding other files is "
                            + "refused). Files are written whole or not at all.",
                        isRequired: true),
             OptionSpec(name: "size", shortName: "s", valueName: "WxH",
                        abstract: "The card's size in pixels; even for .mp4. Not with --aspect. \(OptionSpec.encoderLimits)",
                        defaultValue: "480x270"),
             OptionSpec(name: "aspect", valueName: "W:H",
                        abstract: "The card's aspect ratio at 480 pixels wide (16:9, 4:3, 1.5), from 1:16 to 16:1. "
                            + "Not with --size."),
             .cornerRadius(default: "22"),
             OptionSpec(name: "reveal", valueName: "reveal",
                        abstract: "circle (a disc grows from the centre to the frame's diagonal in 0.6 s, eased) or "
                            + "fade (a cross-fade of the same length, the Reduce Motion variant).",
                        defaultValue: CardReveal.circle.rawValue),
             OptionSpec(name: "poster-hold", valueName: "time",
                        abstract: "How long the poster with its play button shows before the reveal.", defaultValue: "1"),
             OptionSpec(name: "play-length", valueName: "time",
                        abstract: "How long the video plays after the reveal, from the poster's time.", defaultValue: "3"),
             OptionSpec(name: "close",
                        abstract: "End by fading back to the poster (0.35 s), as the close button does: a looping "
                            + "animation then joins its end to its start."),
             .background,
             OptionSpec(name: "no-play-button", abstract: "Show the poster without the play button."),
             OptionSpec(name: "fps", valueName: "n",
                        abstract: "Frames per second of animations and frame directories, 1 to 120.", defaultValue: "30"),
             .start,
             OptionSpec(name: "length", valueName: "time",
                        abstract: "How long the loop window lasts: the poster is its first good frame, and the video "
                            + "wraps at its end.",
                        defaultValue: "15"),
             OptionSpec(name: "poster-at", valueName: "time",
                        abstract: "Take the poster at this time of the clip (seconds, mm:ss, hh:mm:ss.ms or a "
                            + "percentage) instead of the window's first good frame; the video then plays from --start.",
                        defaultValue: "the first good frame"),
             OptionSpec(name: "at", shortName: "t", valueName: "time",
                        abstract: "For a still: the instant of the sequence to show, in seconds from its start "
                            + "(0: the poster; poster-hold + 0.3: mid-reveal).",
                        defaultValue: "0"),
             OptionSpec(name: "quality", shortName: "q", valueName: "0-100",
                        abstract: "Quality for .webp, .mp4 and .jpg outputs, 0 (smallest) to 100 (best)."),
             .tonemap, .maxMemory, .maxFrames, .threads, .allowRedirects, .timeout, .deadline, .help]
        case .batch:
            OptionSpec.batchOptions
        }
    }

    /// The spec for a spelling as typed (`--size`, `-s`), if the subcommand has it.
    func option(spelled spelling: String) -> OptionSpec? {
        if spelling.hasPrefix("--") {
            let name = spelling.dropFirst(2)
            return options.first { $0.name == name }
        }
        guard spelling.count == 2, spelling.first == "-", let letter = spelling.last else { return nil }
        return options.first { $0.shortName == letter }
    }

    /// The spec for a long name, which must exist.
    func option(named name: String) -> OptionSpec {
        guard let spec = options.first(where: { $0.name == name }) else {
            preconditionFailure("\(rawValue) has no option '\(name)'")
        }
        return spec
    }
}
