import PreviewLoop

/// `preview-loop strip`: frames at the middles of equal slices of a span, tiled row by row into
/// one image, written whole or not at all.
struct StripCommand {
    /// The parsed options.
    var options: StripOptions

    /// Samples the frames, writes the tiled image and prints one summary line on standard output.
    func run() throws -> Int32 {
        let sampler = try FrameSampler(source: Source(argument: options.input), threads: options.threads,
                                       options: SourceOptions(timeout: options.timeout, deadline: options.deadline))
        let span = try SampleSpan.resolve(options.span, start: options.start, length: options.length,
                                          duration: sampler.info.duration)
        let times = span.sampleTimes(count: options.count)
        let size = options.size.resolved(display: sampler.info.displaySize)
        let frames = try sampler.frames(at: times, size: size, mode: options.contentMode,
                                        accuracy: options.accuracy, interval: span.interval(count: options.count))
        let sheet = RGBImage.tiled(frames.map(\.image), columns: options.columns)
        try AtomicFile.write(try options.format.encode(sheet, quality: options.quality), to: options.output)
        let rows = (frames.count + options.columns - 1) / options.columns
        Console.writeOutput("wrote \(options.output) (\(sheet.width)x\(sheet.height), \(frames.count) frames "
            + "in \(options.columns)x\(rows) tiles of \(size), "
            + "\(Format.fixed(span.start, 3))–\(Format.fixed(span.start + span.length, 3)) s)\n")
        return ExitStatus.success
    }
}
