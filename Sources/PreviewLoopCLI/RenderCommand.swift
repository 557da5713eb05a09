import Glibc
import PreviewLoop

/// `preview-loop render`: one pass of the loop window written as a hover preview that loops cleanly
/// (MP4, animated WebP or GIF), whole or not at all.
struct RenderCommand {
    /// The parsed options.
    var options: RenderOptions

    /// Renders the window and prints one summary line on standard output.
    func run() throws -> Int32 {
        let source = options.source.source
        let limits = options.source.sourceOptions
        // The window as given: the library resolves a percentage from the input it opens.
        let loop = try LoopPlayer(source: source, configuration: .init(
            contentMode: options.contentMode, windowStart: options.start,
            windowLength: options.length, threads: options.source.threads, sourceOptions: limits),
            sizeRequest: options.size, evenSize: options.format.needsEvenSize)
        let size = loop.configuration.size
        try WorkLimitError.check(options.sizeRefusal(size))
        // Before decoding: the frames the window makes once cut at the clip's end, and what they hold.
        if let warning = loop.info.colorWarning { Console.writeError("Warning: \(warning)\n") }
        let start = loop.windowStart.seconds, length = loop.windowLength.seconds
        let windowLength = loop.info.duration.map { min(length, max(0, $0 - start)) } ?? length
        let frames = (windowLength * Double(options.framesPerSecond)).rounded(.up)
        let what = "A \(Format.fixed(windowLength, 3)) s window at \(options.framesPerSecond) fps"
        if let refusal = options.budget.frameRefusal(frames, what: what)
            ?? options.budget.memoryRefusal(RenderOptions.bytes(frames: frames, size: size, format: options.format),
                                            what: what + " of \(size) \(options.format.rawValue)") {
            throw WorkLimitError(message: refusal)
        }
        let summary = try loop.render(to: options.output, format: options.format,
                                      framesPerSecond: options.framesPerSecond, quality: options.quality,
                                      maxFrames: options.budget.maxFrames)
        var status = stat()
        let bytes = stat(options.output, &status) == 0 ? Int(status.st_size) : 0
        Console.writeOutput("wrote \(options.output) (\(options.format.rawValue), \(summary.size), "
            + "\(summary.frameCount) frames at \(summary.framesPerSecond) fps = \(Format.fixed(summary.duration.seconds, 3)) s "
            + "from \(Format.fixed(start, 3)) s, \(Format.byteCount(bytes)))\n")
        return ExitStatus.success
    }
}

extension Format {
    /// `812 B`, `97.7 KB`, `1.4 MB` (powers of 1000, as file managers show sizes).
    static func byteCount(_ bytes: Int) -> String {
        switch bytes {
        case ..<1000: "\(bytes) B"
        case ..<1_000_000: "\(fixed(Double(bytes) / 1000, 1)) KB"
        default: "\(fixed(Double(bytes) / 1_000_000, 1)) MB"
        }
    }
}
