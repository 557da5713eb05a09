import CFFmpeg
internal import PreviewLoopFFmpeg
import Glibc

/// Owns an output `AVFormatContext` muxing one video stream into a temporary file beside the
/// destination; ``finish()`` writes the trailer and renames the file over the destination. Until then
/// (and after any failure) `deinit` closes and deletes the temporary file, so readers see either the
/// whole file or nothing. Used from one thread.
final class OutputContext {
    private let liveToken = LiveObjects.Token()
    let pointer: UnsafeMutablePointer<AVFormatContext>
    /// Where the finished file goes.
    let path: String
    /// Where it is written meanwhile: `.NAME.PID.RANDOM.tmp` in the same directory.
    let temporaryPath: String
    private var stream: UnsafeMutablePointer<AVStream>?
    private var isFinished = false

    /// Opens `muxer` (an FFmpeg short name: `mp4`, `webp`, `gif`) on a temporary file next to `path`.
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when the directory is missing or not
    ///   writable, or `path` is a directory.
    init(path: String, muxer: String) throws(PreviewLoopError) {
        FFmpegLog.applyDefault
        self.path = path
        temporaryPath = try AtomicFile.temporaryPath(for: path)
        var context: UnsafeMutablePointer<AVFormatContext>?
        let allocated = avformat_alloc_output_context2(&context, nil, muxer, temporaryPath)
        guard allocated >= 0, let context else {
            throw PreviewLoopError(.encodingFailed, "\(path): no \(muxer) muxer in this FFmpeg build",
                                   operation: "avformat_alloc_output_context2", ffmpegCode: allocated,
                                   ffmpegMessage: FFmpegError.text(allocated))
        }
        pointer = context
        TemporaryFiles.register(temporaryPath)
        let opened = avio_open(&context.pointee.pb, temporaryPath, AVIO_FLAG_WRITE)
        if opened < 0 {
            throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(FFmpegError.text(opened)))",
                                   operation: "avio_open", ffmpegCode: opened, ffmpegMessage: FFmpegError.text(opened))
        }
    }

    deinit {
        if !isFinished {
            avio_closep(&pointer.pointee.pb)
            unlink(temporaryPath)
            TemporaryFiles.unregister(temporaryPath)
        }
        avformat_free_context(pointer)
    }

    /// Whether the container wants codec headers out of band: set the encoder up with
    /// `needsGlobalHeader` before opening it.
    var needsGlobalHeader: Bool { pointer.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 }

    /// Adds the video stream an opened encoder feeds, and writes the container header.
    ///
    /// - Parameter options: muxer options (`movflags`, `loop`, `final_delay`…); an unknown one is an error.
    func start(with encoder: EncoderContext, options: [String: String]) throws(PreviewLoopError) {
        guard let stream = avformat_new_stream(pointer, nil) else {
            throw PreviewLoopError(.tooLarge, "\(path): out of memory adding a stream")
        }
        self.stream = stream
        try check(avcodec_parameters_from_context(stream.pointee.codecpar, encoder.pointer), "avcodec_parameters_from_context",
                  code: .encodingFailed, "\(path): cannot describe the \(encoder.encoderName) stream")
        stream.pointee.time_base = encoder.timeBase
        stream.pointee.avg_frame_rate = encoder.pointer.pointee.framerate
        var dictionary: OpaquePointer? = nil
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        try check(avformat_write_header(pointer, &dictionary), "avformat_write_header", code: .encodingFailed,
                  "\(path): cannot start the file")
        if let unused = av_dict_get(dictionary, "", nil, AV_DICT_IGNORE_SUFFIX) {
            throw PreviewLoopError(.encodingFailed, "\(path): the muxer has no option '\(String(cString: unused.pointee.key))'",
                                   operation: "avformat_write_header")
        }
    }

    /// Writes one encoded packet whose timestamps are in `timeBase`; the packet's contents move out.
    func write(_ packet: Packet, timeBase: AVRational) throws(PreviewLoopError) {
        guard let stream else { preconditionFailure("start(with:options:) comes first") }
        packet.pointer.pointee.stream_index = stream.pointee.index
        av_packet_rescale_ts(packet.pointer, timeBase, stream.pointee.time_base)
        try check(av_interleaved_write_frame(pointer, packet.pointer), "av_interleaved_write_frame",
                  code: .outputNotWritable, "\(path): cannot write")
    }

    /// Writes the trailer, closes the file and renames it over the destination.
    func finish() throws(PreviewLoopError) {
        try check(av_write_trailer(pointer), "av_write_trailer", code: .outputNotWritable, "\(path): cannot finish the file")
        let closed = avio_closep(&pointer.pointee.pb)
        try check(closed, "avio_closep", code: .outputNotWritable, "\(path): cannot write")
        let kept = AtomicFile.keepMode(of: path, on: temporaryPath)
        guard kept == 0 else {
            throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(String(cString: strerror(kept))))")
        }
        guard rename(temporaryPath, path) == 0 else {
            throw PreviewLoopError(.outputNotWritable, "\(path): cannot write (\(String(cString: strerror(errno))))")
        }
        isFinished = true
        TemporaryFiles.unregister(temporaryPath)
    }
}
