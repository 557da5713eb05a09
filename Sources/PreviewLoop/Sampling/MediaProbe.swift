/// Reads what a clip is without decoding it.
public enum MediaProbe {
    /// Opens `source`, picks its best video stream and describes it.
    ///
    /// For a PQ or HLG stream the first frame is decoded too: x265 writes its mastering display and
    /// content light levels as SEI, and HDR10+ travels with frames, which FFmpeg only exposes as frame side data.
    public static func probe(_ source: Source, options: SourceOptions = .init()) throws(PreviewLoopError) -> VideoInfo {
        var info = try MediaInput(source: source, options: options).info
        guard info.isHDR || info.dolbyVision != nil, source != .standardInput else { return info }
        // Best effort: the stream's own description stands if the first frame cannot be decoded.
        if let decoder = try? VideoDecoder(source: source, options: options, threads: 1),
           let first = try? decoder.nextFrame() {
            info.describeColor(ofFirstFrame: first.frame)
        }
        return info
    }
}
