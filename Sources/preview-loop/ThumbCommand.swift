import PreviewLoop

/// `preview-loop thumb`: one frame at a time, written as an image, whole or not at all.
struct ThumbCommand {
    /// The parsed options.
    var options: ThumbOptions

    /// Samples the frame, writes the image and prints one summary line on standard output.
    func run() throws -> Int32 {
        let sampler = try FrameSampler(source: Source(argument: options.input), threads: options.threads,
                                       options: SourceOptions(openTimeout: options.timeout, readTimeout: options.timeout,
                                                              jobTimeout: options.timeout))
        let duration = sampler.info.duration
        var time = try SampleSpan.seconds(options.time, duration: duration, option: "--at")
        if let duration { time = min(max(0, time), duration) }
        let frame = try sampler.frame(at: time, size: options.size, mode: options.contentMode, accuracy: options.accuracy)
        try AtomicFile.write(try options.format.encode(frame.image, quality: options.quality), to: options.output)
        Console.writeOutput("wrote \(options.output) (\(frame.image.width)x\(frame.image.height), "
            + "frame at \(Format.fixed(frame.sourceTime, 3)) s)\n")
        return ExitStatus.success
    }
}
