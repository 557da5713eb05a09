/// A clip's photosensitive-flash analysis: what ``MediaProbe/flashes(_:options:threads:)`` returns.
public struct FlashAnalysis: Sendable, Hashable {
    /// The probed video stream.
    public var info: VideoInfo
    /// The verdicts.
    public var report: FlashReport
    /// The size frames are decoded at: the whole picture, its shape kept, its longer side at most
    /// ``FlashSample/maximumSide`` pixels and never enlarged (see ``FlashSample`` for the rule).
    public var size: Size
    /// Frames analysed.
    public var frameCount: Int
}

extension MediaProbe {
    /// Decodes every frame of `source` at its analysis size (the whole picture, its shape kept, its
    /// longer side at most ``FlashSample/maximumSide`` pixels and never enlarged, through the engine's
    /// scaler: upright, square pixels, HDR tone mapped as `options.toneMapping` says, interlaced frames
    /// deinterlaced) and runs ``FlashAnalyzer`` over them at their presentation times. The work is bounded
    /// by the source's frames and at most 96 × 96 pixels each, whatever the picture's shape.
    ///
    /// - Throws: ``PreviewLoopError`` for an input that cannot be opened or has no decodable frame.
    public static func flashes(_ source: Source, options: SourceOptions = .init(),
                               threads: Int = DecodingDefaults.threads) throws(PreviewLoopError) -> FlashAnalysis {
        let loop = try LoopPlayer(source: source, configuration: .init(
            contentMode: .aspectFill, windowStart: .zero, windowLength: .seconds(1e9), threads: threads,
            sourceOptions: options, frameCacheLimit: 0), resolvingSize: FlashSample.analysisSize(display:))
        var analyzer = FlashAnalyzer()
        try loop.run(loops: 1) { frame in
            analyzer.add(frame.image, at: frame.presentationTime)
        }
        guard analyzer.frameCount > 0 else {
            throw PreviewLoopError(.corruptData, "\(source): no frame could be decoded")
        }
        let duration = loop.info.duration.map { max(0, $0 - loop.windowStart.seconds) }
        return FlashAnalysis(info: loop.info, report: analyzer.report(duration: duration.flatMap { $0 > 0 ? $0 : nil }),
                             size: loop.configuration.size, frameCount: analyzer.frameCount)
    }
}
