import PreviewLoop

// `render --loop-point` and `--seam`: their declarations and typing. Everything here is pure.

extension RenderCommand {
    /// `--loop-point <auto|time>`; absent, the loop ends at the end of `--length`.
    static let loopPoint = ValueOption<LoopEnd?>(
        "loop-point", value: "auto|time",
        help: "Where the loop ends: auto (within ±25 % of --length, the frame whose picture best matches the "
            + "first one, by mean luma difference on small pictures, becomes the one after the last) or a time in "
            + "the clip in the same forms as --start, after it (replaces --length).",
        default: nil, showing: "the end of --length",
        expecting: "auto or a time: seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage (10%)") { text in
        LoopEnd(parsing: text).map { .some($0) }
    }.parameter()

    /// `--seam <cut|crossfade[=T]>`: `cut`, `crossfade` (half a second) or `crossfade=T` with `T` in
    /// seconds above 0 (checked against the length by ``validateSeam(_:)``).
    static let seam = ValueOption<LoopSeam>(
        "seam", value: "cut|crossfade[=T]",
        help: "How the last frame joins the first: cut, or crossfade: the T seconds after the loop point are "
            + "blended over the loop's first T seconds (T above 0 and below the length, default 0.5, at most half "
            + "the loop). The summary line reports the seam either way.",
        default: .cut, showing: "cut",
        expecting: "cut, crossfade or crossfade=T with T in seconds above 0 and below the length") { text in
        LoopSeam(parsing: text)
    }.parameter()

    /// `--flash-safety <check|avoid|off>`.
    static let flashSafety = ValueOption<FlashSafety>.choice(
        "flash-safety", value: "mode",
        help: "check: analyse the frames written, played on repeat through the loop's seam, for photosensitive "
            + "flashes (WCAG 2.3.1, as probe --flashes does) and report a warning line on standard error for an "
            + "extended_failure or failure (and the verdicts in --json); the file is written and the exit status is 0 "
            + "either way. avoid: move the window to the nearest start (within 10 s, in steps of about 0.25 s) whose loop "
            + "is below an extended failure, reading the clip once, and say where on standard error; fail, writing "
            + "nothing, when there is none. off: no analysis.",
        default: .check).parameter()

    /// Checks `--loop-point` and `--seam`: a loop point at or before `--start`, or a crossfade not shorter
    /// than the loop (when both are known in seconds), is a usage error.
    func validateSeam() throws(UsageError) {
        let length = try renderLength()
        if case .crossfade(let duration) = seam, case .seconds(let seconds) = length, duration.seconds >= seconds {
            let text = $seam.text ?? ""
            throw UsageError(.invalidValue(option: Self.seam.spec.name, value: text), subcommand: Self.subcommand,
                             "Invalid value '\(text)' for '\(Self.seam.spec.errorSpelling)': the crossfade must be "
                                 + "shorter than the loop (\(Format.limit(seconds)) s).")
        }
    }

    /// The loop's length as far as the arguments tell it: `--loop-point <time>` minus `--start` when both
    /// are seconds (a loop point at or before the start is a usage error), else `--length`.
    private func renderLength() throws(UsageError) -> TimePosition {
        guard case .at(let point)? = loopPoint else { return length }
        if startsAtPoster, case .seconds = point {
            throw UsageError(.conflictingOptions(Self.loopPoint.spec.name, "start"), subcommand: Self.subcommand,
                             "A '--loop-point' time needs a '--start' time: with '--start poster' the start is not known "
                                 + "before the poster is found; give '--length' (or '--loop-point auto') instead.")
        }
        guard case .seconds(let end) = point, case .seconds(let begin) = start else { return .percent(100) }
        guard end > begin else {
            let text = $loopPoint.text ?? ""
            throw UsageError(.invalidValue(option: Self.loopPoint.spec.name, value: text), subcommand: Self.subcommand,
                             "Invalid value '\(text)' for '\(Self.loopPoint.spec.errorSpelling)': "
                                 + "the loop point must come after --start (\(Format.limit(begin)) s).")
        }
        return .seconds(end - begin)
    }

    /// `--loop-point <time>`, if given.
    var loopPointTime: TimePosition? { loopPoint?.windowEnd }

    /// Seconds decoded for a window of `length`: past it by the search (+25 %) and the crossfade.
    func decodedLength(_ length: Double) -> Double {
        let fade = if case .crossfade(let duration) = seam {
            duration.seconds
        } else { 0.0 }
        return length * (loopPoint == .auto ? 1 + LoopEnd.searchFraction : 1) + fade
    }

    /// The bytes of the frames a seamed render holds until its out point is known (GIF holds them anyway),
    /// or, with `--flash-safety avoid`, at most those of the search's reach on both sides as well.
    func heldBytes(frames: Double, size: Size) -> Double {
        if flashSafety == .avoid {
            return (frames + 2 * FlashAvoidance.searchReach * Double(framesPerSecond)) * WorkBudget.rgb(size)
        }
        return loopPoint == .auto || seam != .cut ? (format == .gif ? 0 : frames * WorkBudget.rgb(size)) : 0
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
