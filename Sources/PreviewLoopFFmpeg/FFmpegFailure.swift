/// What the FFmpeg layer throws: the library turns it into its public `PreviewLoopError` one to one
/// (same code names, same fields), so this layer never names a type from the layers above it.
package struct FFmpegFailure: Error, Sendable, CustomStringConvertible {
    /// What went wrong; the same names (and raw values) as `PreviewLoopError.Code`.
    package enum Code: String, Sendable, CaseIterable {
        case inputNotFound, inputNotReadable, notMediaFile, noVideoStream, unsupportedCodec, corruptData, timedOut
        case cancelled, refusedByPolicy, tooLarge, outputNotWritable, invalidArgument, decodingFailed, encodingFailed
    }

    package var code: Code
    /// One line for a person: names the input and the cause.
    package var message: String
    /// The FFmpeg function that failed, if any.
    package var operation: String?
    /// FFmpeg's return code, if any.
    package var ffmpegCode: Int32?
    /// FFmpeg's `av_strerror` text for `ffmpegCode`, if any.
    package var ffmpegMessage: String?

    package init(_ code: Code, _ message: String, operation: String? = nil, ffmpegCode: Int32? = nil, ffmpegMessage: String? = nil) {
        self.code = code
        self.message = message
        self.operation = operation
        self.ffmpegCode = ffmpegCode
        self.ffmpegMessage = ffmpegMessage
    }

    package var description: String {
        guard let operation, let ffmpegMessage else { return message }
        return message + " (\(operation): \(ffmpegMessage))"
    }
}
