import PreviewLoop

/// `preview-loop probe` as a job: its options (declared once, for every front end), checks and work.
struct ProbeCommand: Equatable, Sendable {
    /// The input and how it is read: `<input>`, `--tonemap`, `--threads`, `--allow-redirects`, `--insecure`,
    /// `--ca-file`, `--timeout`, `--deadline` (the input group).
    var source = InputOptions()
    /// Whether to print one JSON object (`--json`) rather than aligned text lines.
    @Flag("json", help: "Print one JSON object with sorted keys instead of aligned text.")
    var isJSON = false
    /// Whether every frame is decoded and analysed for photosensitive flashes (`--flashes`).
    @Flag("flashes",
          help: "Also decode every frame (at most 96 pixels a side, HDR tone mapped) and look for photosensitive flashes "
              + "as WCAG 2.3.1 defines them: per second the luminance and red flashes in its worst one-second window, "
              + "the largest area changing together, and a verdict (pass, warning, extended_failure, failure), then "
              + "the risky spans. See Docs/flashes.md.")
    var analysesFlashes = false
}

extension ProbeCommand: ClipCommand {
    /// `preview-loop probe`: its name, summary, arguments and the group options it leaves out.
    static let configuration = CommandConfiguration(
        name: "probe",
        abstract: "Show a video's duration, size, rotation, frame rate and streams.",
        arguments: [.input],
        hiding: [InputOptions.deinterlace, InputOptions.rotate, InputOptions.flipH, InputOptions.flipV])

    func run(in context: CommandContext) -> Int32 {
        CommandFailure.reporting(for: source) { try ProbeRun(options: self).run() }
    }

    /// Takes the input.
    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        source.input = try arguments.input()
    }

    /// `--tonemap` and `--threads` apply to the frames `--flashes` decodes.
    func validate() throws(UsageError) {
        for (given, option) in [(source.$toneMapping.isGiven, InputOptions.tonemap), (source.$threads.isGiven, InputOptions.threads)]
            as [(Bool, any OptionDeclaration)] where given && !analysesFlashes {
            throw UsageError(.conflictingOptions(option.spec.name, "flashes"), subcommand: Self.subcommand,
                             "'\(option.spec.longSpelling)' applies to the frames '--flashes' decodes; give '--flashes' too.")
        }
    }
}

/// One run of `preview-loop probe` on the command line: prints what `MediaProbe.probe` found, as JSON or as aligned text lines.
struct ProbeRun {
    /// The parsed options.
    var options: ProbeCommand

    /// Probes the input and prints the result on standard output.
    func run() throws -> Int32 {
        let source = options.source.source
        var flashes: FlashAnalysis?
        if options.analysesFlashes {
            flashes = try MediaProbe.flashes(source, options: options.source.sourceOptions, threads: options.source.threads)
        }
        // Standard input is read once: then the analysis's own description of the stream stands.
        let info = if let flashes, source == .standardInput { flashes.info }
                   else { try MediaProbe.probe(source, options: options.source.sourceOptions) }
        Console.writeOutput(options.isJSON ? Self.json(for: info, flashes: flashes?.report)
                                           : Self.text(for: info) + (flashes.map(Self.text(for:)) ?? ""))
        if let warning = info.colorWarning { Console.writeError("Warning: \(warning)\n") }
        return ExitStatus.success
    }

    /// One JSON object, keys sorted, one per line; numbers in seconds, ratios as strings; with a flash
    /// report, its `"flashes"` object.
    static func json(for info: VideoInfo, flashes: FlashReport? = nil) -> String {
        var fields = jsonFields(for: info)
        if let flashes { fields.append(("flashes", json(for: flashes))) }
        return JSONValue.object(Dictionary(uniqueKeysWithValues: fields.map { ($0.key, $0.value) }))
            .text(.memberPerLine) + "\n"
    }

    /// The JSON keys and values, unsorted.
    static func jsonFields(for info: VideoInfo) -> [(key: String, value: JSONValue)] {
        [
            ("duration", (info.declaredDuration ?? info.duration).map { .numberText(decimal($0)) } ?? .null),
            ("decodable_duration", info.decodableDuration.map { .numberText(decimal($0)) } ?? .null),
            ("truncated", info.decodableDuration == nil ? .null : .bool(info.isTruncated)),
            ("container_duration", info.containerDuration.map { .numberText(decimal($0)) } ?? .null),
            ("start_time", .numberText(decimal(info.startTime))),
            ("codec", .string(info.codecName)),
            ("width", .integer(info.width)),
            ("height", .integer(info.height)),
            ("display_width", .integer(info.displaySize.width)),
            ("display_height", .integer(info.displaySize.height)),
            ("rotation", .integer(info.rotation)),
            ("orientation", .string(info.orientation.rawValue)),
            ("sample_aspect_ratio", .string(info.sampleAspectRatio.description)),
            ("frame_rate", info.frameRate.map { .string(frameRateText($0)) } ?? .null),
            ("fps", info.frameRate?.doubleValue.map { .numberText(decimal($0)) } ?? .null),
            ("video_streams", .integer(info.videoStreamCount)),
            ("audio_streams", .integer(info.audioStreamCount)),
            ("subtitle_streams", .integer(info.subtitleStreamCount)),
            ("pixel_format", .string(info.pixelFormat)),
            ("color_range", .string(info.colorRange)),
            ("color_space", .string(info.colorSpace)),
            ("color_transfer", .string(info.colorTransfer)),
            ("color_primaries", .string(info.colorPrimaries)),
            ("bit_depth", info.bitDepth > 0 ? .integer(info.bitDepth) : .null),
            ("hdr", .string(info.hdrFormat.rawValue)),
            ("mastering_display", info.masteringDisplay.map(masteringJSON) ?? .null),
            ("content_light_level", info.contentLightLevel.map { light in
                .object(["max_cll": .integer(light.maxContentLightLevel),
                         "max_fall": .integer(light.maxFrameAverageLightLevel)])
            } ?? .null),
            ("dolby_vision", info.dolbyVision.map { dv in
                .object(["profile": .integer(dv.profile), "level": .integer(dv.level),
                         "compatibility_id": .integer(dv.compatibilityID),
                         "base_layer": dv.baseLayer.map { .string($0.rawValue) } ?? .null,
                         "reconstructible": .bool(dv.baseLayer != nil),
                         "summary": .string(dv.summary)])
            } ?? .null),
            ("format", .string(info.formatName)),
            ("bit_rate", info.bitRate.map { .integer($0) } ?? .null),
        ]
    }

    /// `HDR10`, `HLG`, or for Dolby Vision its profile and what is shown.
    static func dynamicRangeText(for info: VideoInfo) -> String {
        if let dolbyVision = info.dolbyVision { return "Dolby Vision \(dolbyVision.summary)" }
        return info.hdrFormat.rawValue
    }

    /// `0.0001–1000 cd/m², primaries R 0.708,0.292 G 0.170,0.797 B 0.131,0.046, white 0.3127,0.3290`.
    static func masteringText(_ display: MasteringDisplay) -> String {
        var parts: [String] = []
        if let low = display.minLuminance, let high = display.maxLuminance {
            parts.append("\(decimal(low))–\(decimal(high)) cd/m²")
        }
        if display.primaries.count == 6, display.whitePoint.count == 2 {
            let p = display.primaries.map { Format.fixed($0, 4) }
            let w = display.whitePoint.map { Format.fixed($0, 4) }
            parts.append("primaries R \(p[0]),\(p[1]) G \(p[2]),\(p[3]) B \(p[4]),\(p[5]), white \(w[0]),\(w[1])")
        }
        return parts.joined(separator: ", ")
    }

    static func masteringJSON(_ display: MasteringDisplay) -> JSONValue {
        .object(["min_luminance": display.minLuminance.map { .numberText(decimal($0)) } ?? .null,
                 "max_luminance": display.maxLuminance.map { .numberText(decimal($0)) } ?? .null,
                 "primaries": display.primaries.count == 6
                     ? .string(display.primaries.map { Format.fixed($0, 4) }.joined(separator: ",")) : .null,
                 "white_point": display.whitePoint.count == 2
                     ? .string(display.whitePoint.map { Format.fixed($0, 4) }.joined(separator: ",")) : .null])
    }

    /// The same facts as aligned `label: value` lines, for people.
    static func text(for info: VideoInfo) -> String {
        let unknown = "unknown"
        var rotation = info.rotation == 0 ? "0°" : "\(info.rotation)° clockwise"
        if info.orientation != .up { rotation += " (\(info.orientation.rawValue))" }
        let frameRate = info.frameRate.map { rate in
            frameRateText(rate) + (rate.doubleValue.map { " (\(Format.fixed($0, 3)) fps)" } ?? "")
        }
        var rows: [(String, String)] = [
            ("format", info.formatName),
            ("duration", (info.declaredDuration ?? info.duration).map { "\(Format.fixed($0, 3)) s" } ?? unknown),
        ]
        if info.isTruncated, let decodable = info.decodableDuration {
            rows[rows.count - 1].1 += " (declared; the data ends at \(Format.fixed(decodable, 3)) s — truncated)"
        } else if let container = info.containerDuration, let video = info.declaredDuration ?? info.duration,
                  abs(container - video) > info.frameInterval {
            // Both when they differ by more than a frame: the picture ends before the container does.
            rows[rows.count - 1].1 += " (video; the container lasts \(Format.fixed(container, 3)) s)"
        }
        rows += [
            ("start time", "\(Format.fixed(info.startTime, 3)) s"),
            ("bit rate", info.bitRate.map { "\(($0 + 500) / 1000) kb/s" } ?? unknown),
            ("streams", "\(info.videoStreamCount) video, \(info.audioStreamCount) audio, "
                + "\(info.subtitleStreamCount) subtitle"),
            ("codec", info.codecName),
            ("coded size", "\(info.width)x\(info.height)"),
            ("display size", info.displaySize.description),
            ("rotation", rotation),
            ("sample aspect", info.sampleAspectRatio.description),
            ("frame rate", frameRate ?? unknown),
            ("pixel format", info.pixelFormat),
            ("color range", info.colorRange),
            ("color space", info.colorSpace),
            ("transfer", info.colorTransfer),
            ("primaries", info.colorPrimaries),
            ("bit depth", info.bitDepth > 0 ? "\(info.bitDepth)" : unknown),
            ("dynamic range", dynamicRangeText(for: info)),
        ] + (info.masteringDisplay.map { [("mastering", masteringText($0))] } ?? [])
          + (info.contentLightLevel.map { [("light level", "MaxCLL \($0.maxContentLightLevel) cd/m², "
                                              + "MaxFALL \($0.maxFrameAverageLightLevel) cd/m²")] } ?? [])
        let labelWidth = rows.map(\.0.count).max()! + 2
        return rows.map { label, value in
            let head = label + ":"
            return head + String(repeating: " ", count: labelWidth - head.count) + value
        }.joined(separator: "\n") + "\n"
    }

    /// The flash report as `probe --flashes --json` prints it: `verdict`, `seconds` (one object a second)
    /// and `spans`.
    static func json(for report: FlashReport) -> JSONValue {
        .object([
            "verdict": .string(report.verdict.rawValue),
            "seconds": .array(report.seconds.map { second in
                .object(["second": .integer(second.second), "luminance_flashes": .integer(second.luminanceFlashes),
                         "red_flashes": .integer(second.redFlashes), "area": .numberText(decimal(second.area)),
                         "verdict": .string(second.verdict.rawValue)])
            }),
            "spans": .array(report.spans.map { span in
                .object(["start": .numberText(decimal(span.start)), "end": .numberText(decimal(span.end)),
                         "verdict": .string(span.verdict.rawValue)])
            }),
        ])
    }

    /// The flash report as text: the verdict, the risky spans, then a table of the seconds.
    static func text(for analysis: FlashAnalysis) -> String {
        let report = analysis.report
        var lines = ["", "flashes:      \(report.verdict.rawValue) (WCAG 2.3.1; \(analysis.frameCount) frames analysed at "
                         + "\(analysis.size))"]
        lines += report.spans.isEmpty ? ["risky spans:  none"] : report.spans.enumerated().map { index, span in
            (index == 0 ? "risky spans:  " : "              ")
                + "\(Format.fixed(span.start, 3))–\(Format.fixed(span.end, 3)) s \(span.verdict.rawValue)"
        }
        lines.append("")
        lines.append("second  luminance  red  area   verdict")
        for second in report.seconds {
            func padded(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
            lines.append(padded("\(second.second)", 6) + padded("\(second.luminanceFlashes)", 11) + padded("\(second.redFlashes)", 5)
                         + "  " + Format.fixed(second.area, 3) + "  " + second.verdict.rawValue)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `N/D`, as `ffprobe` prints frame rates.
    static func frameRateText(_ rate: Rational) -> String {
        "\(rate.numerator)/\(rate.denominator)"
    }

    /// A JSON number with up to six decimals and no trailing zeros beyond the first (`4.0`, `29.97003`).
    static func decimal(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        var text = Format.fixed(value, 6)
        while text.hasSuffix("0") && !text.hasSuffix(".0") { text.removeLast() }
        return text == "-0.0" ? "0.0" : text
    }
}

extension ProbeCommand: ServedJob {
    /// `probe.json` is `probe --json`: nothing is written.
    static func prepare(_ given: inout ScannedArguments, for request: ServingRequest) throws(PreviewRequestError) {
        given.flags.insert("json")
    }

    /// The demuxer's buffers and the probe's reading: 16 MB.
    mutating func prepareToServe(_ request: ServingRequest) throws(PreviewRequestError) -> Int { 16 << 20 }

    func body(for job: PreviewJob, scratch: String, siblings: [PreviewJob]) throws -> RenderedBody {
        let info = try MediaProbe.probe(source.source, options: source.sourceOptions)
        return RenderedBody(body: Array(ProbeRun.json(for: info).utf8))
    }
}
