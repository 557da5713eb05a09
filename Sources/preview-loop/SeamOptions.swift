import PreviewLoop

// `render --loop-point` and `--seam`: their declarations and typing. Everything here is pure.

/// `--loop-point`: where the rendered loop ends.
enum RenderLoopPoint: Equatable, Sendable {
    /// `auto`: searched near the length for the picture most like the first.
    case auto
    /// A time in the clip (as `--start` reads it): the loop ends there, replacing `--length`.
    case at(TimePosition)
}

extension OptionSpec {
    /// `--loop-point <auto|time>` for render.
    static let loopPoint = OptionSpec(
        name: "loop-point", valueName: "auto|time",
        abstract: "Where the loop ends: auto (within ±25 % of --length, the frame whose picture best matches the "
            + "first one, by mean luma difference on small pictures, becomes the one after the last) or a time in "
            + "the clip in the same forms as --start, after it (replaces --length).",
        defaultValue: "the end of --length")

    /// `--seam <cut|crossfade[=T]>` for render.
    static let seam = OptionSpec(
        name: "seam", valueName: "cut|crossfade[=T]",
        abstract: "How the last frame joins the first: cut, or crossfade: the T seconds after the loop point are "
            + "blended over the loop's first T seconds (T above 0 and below the length, default 0.5, at most half "
            + "the loop). The summary line reports the seam either way.",
        defaultValue: "cut")
}

extension ScannedArguments {
    /// `--loop-point`: `auto` or a time.
    func loopPoint() throws(UsageError) -> RenderLoopPoint? {
        guard values["loop-point"] != nil else { return nil }
        return try typed("loop-point", default: .auto,
                         expectation: "auto or a time: seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage (10%)") { text in
            text == "auto" ? .auto : TimePosition(parsing: text).map(RenderLoopPoint.at)
        }
    }

    /// `--seam`: `cut`, `crossfade` (half a second) or `crossfade=T` with `0 < T < length` when the
    /// length is known in seconds.
    func seam(length: TimePosition) throws(UsageError) -> LoopSeam {
        try typed("seam", default: .cut,
                  expectation: "cut, crossfade or crossfade=T with T in seconds above 0 and below the length") { text in
            if text == "cut" { return .cut }
            if text == "crossfade" { return .crossfade() }
            guard text.hasPrefix("crossfade="), let seconds = Double(text.dropFirst("crossfade=".count)),
                  seconds.isFinite, seconds > 0 else { return nil }
            if case .seconds(let length) = length, seconds >= length { return nil }
            return .crossfade(.seconds(seconds))
        }
    }
}

extension RenderOptions {
    /// The loop's length as far as the arguments tell it: `--loop-point <time>` minus `--start` when both
    /// are seconds (a loop point at or before the start is a usage error), else `--length`.
    func renderLength(_ arguments: ScannedArguments) throws(UsageError) -> TimePosition {
        guard case .at(let point)? = loopPoint else { return length }
        guard case .seconds(let end) = point, case .seconds(let begin) = start else { return .percent(100) }
        guard end > begin else {
            throw UsageError(.invalidValue(option: "loop-point", value: arguments.values["loop-point"] ?? ""), subcommand: .render,
                             "Invalid value '\(arguments.values["loop-point"] ?? "")' for '--loop-point <auto|time>': "
                                 + "the loop point must come after --start (\(begin) s).")
        }
        return .seconds(end - begin)
    }
}

extension RenderOptions {
    /// `--loop-point <time>`, if given.
    var loopPointTime: TimePosition? {
        if case .at(let point)? = loopPoint { point } else { nil }
    }

    /// Seconds decoded for a window of `length`: past it by the search (+25 %) and the crossfade.
    func decodedLength(_ length: Double) -> Double {
        let fade = if case .crossfade(let duration) = seam {
            duration.seconds
        } else { 0.0 }
        return length * (loopPoint == .auto ? 1.25 : 1) + fade
    }

    /// The bytes of the frames a seamed render holds until its out point is known (GIF holds them anyway).
    func heldBytes(frames: Double, size: Size) -> Double {
        loopPoint == .auto || seam != .cut ? (format == .gif ? 0 : frames * WorkBudget.rgb(size)) : 0
    }
}

extension RenderSummary {
    /// `seam 1.02× the median step (last→first 2.31, median 2.26), crossfade 0.467 s`.
    var seamDescription: String {
        let ratio = seam.ratio.isFinite ? Format.fixed(seam.ratio, 2) + "×" : "∞×"
        return "seam \(ratio) the median step (last→first \(Format.fixed(seam.seamDifference, 2)), median "
            + "\(Format.fixed(seam.medianDifference, 2)))"
            + (crossfade > .zero ? ", crossfade \(Format.fixed(crossfade.seconds, 3)) s" : "")
    }
}

extension OptionSpec {
    /// `--deinterlace <mode>` (thumb and render; the other commands deinterlace as `auto`).
    static let deinterlace = OptionSpec(
        name: "deinterlace", valueName: "mode",
        abstract: "auto (deinterlace the frames the decoder flags as interlaced), on (every frame) or off. The "
            + "deinterlacer keeps the first field and rebuilds the other's lines from it (no combing; still "
            + "areas lose half their vertical detail).",
        defaultValue: Deinterlacing.auto.rawValue)
}
