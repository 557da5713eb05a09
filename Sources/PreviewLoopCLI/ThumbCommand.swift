import PreviewLoop

/// `preview-loop thumb`: one frame at a time, written as an image, whole or not at all.
struct ThumbCommand {
    /// The parsed options.
    var options: ThumbOptions
    /// With `--json`: what was done, printed as one batch record instead of the summary line.
    var report: ClipReport? = nil

    /// Samples the frame, writes the image and prints one summary line on standard output; with
    /// `--at auto` the line says why the frame was chosen and what was skipped.
    func run() throws -> Int32 {
        try ImageDestination.check(options.output)
        let picture = try render()
        let frame = picture.frame
        try ImageDestination.write(picture.bytes, to: options.output)
        if let report {
            // A poster when the frame was chosen (--at auto or best), else the frame asked for.
            var output = ClipReport.output(picture.chosen == nil ? "frame" : "poster", options.output,
                                           width: frame.image.width, height: frame.image.height)
            output.time = frame.sourceTime
            output.timeAsked = picture.still?.asked
            output.choice = picture.chosen.map(Self.explanation) ?? picture.still?.choice(accuracy: options.accuracy)
                ?? "the time asked (\(options.accuracy.rawValue))"
            output.skippedFrames = picture.chosen?.rejected.count
            output.placeholder = ImagePlaceholder(frame.image)
            output.phash = PerceptualHash(frame.image).description
            if let count = options.candidates { output.candidates = Array(picture.chosen?.ranking.prefix(count) ?? []) }
            report.add(output, timing: picture.chosen == nil ? "frame" : "poster")
            try report.print()
            return ExitStatus.success
        }
        var explanation = picture.chosen.map { ": " + Self.explanation(of: $0) } ?? ""
        if let still = picture.still, still.isPastDataEnd { explanation = ": " + still.choice(accuracy: options.accuracy) }
        let info = picture.info
        if info.isTruncated, !(picture.still?.isPastDataEnd ?? false) {
            explanation += "; the file is truncated: its data ends at \(Format.fixed(info.decodableDuration ?? 0, 3)) s of the "
                + "\(Format.fixed(info.declaredDuration ?? 0, 3)) s declared"
        }
        var summary = "wrote \(ImageDestination.name(options.output)) (\(frame.image.width)x\(frame.image.height), "
            + "frame at \(Format.fixed(frame.sourceTime, 3)) s\(explanation))\n"
        if let count = options.candidates, let chosen = picture.chosen { summary += Self.table(of: chosen.ranking, top: count) }
        Console.writeSummary(summary, toError: options.output == ImageDestination.standardOutput)
        return ExitStatus.success
    }

    /// The encoded image, the frame it shows and, for a chosen poster, why it was chosen.
    struct Picture {
        var bytes: [UInt8]
        var frame: VideoFrame
        var chosen: PosterChoice?
        /// For `--at` a time or percentage: the time asked and where the frame was taken.
        var still: StillTime?
        /// The clip as probed.
        var info: VideoInfo
    }

    /// Opens the input, samples the frame and encodes it; writes nothing. `serve` answers a thumbnail
    /// request with these bytes, so a served thumbnail is byte for byte what `thumb` writes.
    func render() throws -> Picture {
        let sampler = try FrameSampler(source: options.source.source, threads: options.source.threads,
                                       options: options.source.sourceOptions)
        if let warning = sampler.info.colorWarning { Console.writeWarning(warning) }
        report?.opened(sampler.info)
        let duration = sampler.info.duration
        let display = sampler.info.displaySize
        let size: Size
        if options.preservesShape, case .exact(let box) = options.size {
            // Inside the box, keeping the shape: the side that binds is exact, the other follows.
            let wide = Double(display.width) * Double(box.height) >= Double(display.height) * Double(box.width)
            size = (wide ? SizeRequest.width(box.width) : SizeRequest.height(box.height)).resolved(display: display)
        } else {
            size = options.size.resolved(display: display)
        }
        try WorkLimitError.check(options.sizeRefusal(size))
        let frame: VideoFrame
        var chosen: PosterChoice?
        var still: StillTime?
        switch options.time {
        case .auto:
            let span = try SampleSpan.window(start: options.start, length: options.length, duration: duration)
            let poster = try sampler.posterFrame(in: span.start..<(span.start + span.length), size: size,
                                                 mode: options.contentMode)
            frame = poster.frame
            chosen = poster
        case .best:
            let poster = try sampler.bestPosterFrame(size: size, mode: options.contentMode)
            frame = poster.frame
            chosen = poster
        case .at(let position):
            // A percentage is of the video's duration: for a truncated file, of the part its data holds.
            let time = StillTime(asked: try position.resolved(duration: duration, "--at"), info: sampler.info)
            frame = try sampler.frame(at: time.taken, size: size, mode: options.contentMode, accuracy: options.accuracy)
            still = time
        }
        let bytes: [UInt8]
        if options.hasOverlays || options.background != nil {
            // The card's poster picture: the same compositor, play button and corners.
            let style = CardStyle(size: frame.image.size, cornerRadius: options.cornerRadius, background: options.background,
                                  showsPlayButton: options.showsPlayButton)
            let compositor = try CardCompositor(style: style)
            let picture = compositor.withBackground(try compositor.picture(at: .poster, poster: frame.image, video: nil))
            bytes = try ImageEncoder.encode(picture, as: options.format, quality: options.quality,
                                            background: options.background ?? .white)
        } else {
            bytes = try options.format.encode(frame.image, quality: options.quality)
        }
        return Picture(bytes: bytes, frame: frame, chosen: chosen, still: still, info: sampler.info)
    }

    /// `--candidates`' table: the top `count` of `ranking`, one line each, the chosen one marked `*`;
    /// a rejected candidate's score column says why. Says so when the search found no candidate.
    static func table(of ranking: [PosterRanking], top count: Int) -> String {
        guard !ranking.isEmpty else { return "no candidates: the clip's duration is unknown or it cannot seek\n" }
        func cell(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        var lines = ["rank    time s  bright  contrast  sharp   uniform  colour  exposure  typical  score"]
        for (index, candidate) in ranking.prefix(count).enumerated() {
            let scores = candidate.scores
            var line = (candidate.isChosen ? "*" : " ") + cell("\(index + 1)", 3)
            line += cell(Format.fixed(candidate.time, 3), 10) + cell(Format.fixed(scores.brightness, 3), 8)
                + cell(Format.fixed(scores.contrast, 3), 10) + cell(Format.fixed(scores.sharpness, 4), 7)
                + cell(Format.fixed(scores.uniformity, 3), 9) + cell(Format.fixed(candidate.colourfulness, 3), 8)
                + cell(Format.fixed(candidate.exposure, 3), 10)
            if let score = candidate.score {
                line += cell(Format.fixed(candidate.typicality, 3), 9) + "  " + Format.fixed(score, 5)
            } else {
                line += cell("-", 9) + "  rejected: \(candidate.rejection?.description ?? "")"
            }
            lines.append(line)
        }
        if ranking.count > count { lines.append("(\(ranking.count - count) more)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `first good frame; skipped 5: black ×3, fading ×2`, or `best available (itself flat); …`: why
    /// the poster was chosen, and the candidates passed over by reason, in order of first appearance.
    static func explanation(of poster: PosterChoice) -> String {
        var text = poster.reason.description
        if let flaw = poster.flaw { text += " (itself \(flaw))" }
        guard !poster.rejected.isEmpty else { return text }
        var counts: [(reason: PosterRejection, count: Int)] = []
        for candidate in poster.rejected {
            if let index = counts.firstIndex(where: { $0.reason == candidate.reason }) {
                counts[index].count += 1
            } else {
                counts.append((candidate.reason, 1))
            }
        }
        return text + "; skipped \(poster.rejected.count): " + counts.map { "\($0.reason) ×\($0.count)" }.joined(separator: ", ")
    }
}
