internal import PreviewLoopFFmpeg

extension PreviewLoopError {
    /// The FFmpeg layer's failure as the library's error: same code, message and FFmpeg details.
    init(_ failure: FFmpegFailure) {
        self.init(Code(rawValue: failure.code.rawValue) ?? .decodingFailed, failure.message, operation: failure.operation,
                  ffmpegCode: failure.ffmpegCode, ffmpegMessage: failure.ffmpegMessage)
    }
}

extension PreviewLoopError.Code {
    /// The FFmpeg layer's name for this code.
    var ffmpegCode: FFmpegFailure.Code { FFmpegFailure.Code(rawValue: rawValue) ?? .decodingFailed }
}

/// Runs work in the FFmpeg layer; its failure becomes a ``PreviewLoopError``.
func ffmpeg<T>(_ work: () throws(FFmpegFailure) -> T) throws(PreviewLoopError) -> T {
    do { return try work() } catch { throw PreviewLoopError(error) }
}

