/// The one error type PreviewLoop throws: a code to switch on, a one-line message that names the input
/// and the cause, and, when FFmpeg reported it, the failing FFmpeg call and its `av_strerror` text.
public struct PreviewLoopError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in terms a caller can act on. Tests and callers switch on this, never on wording.
    public enum Code: String, Sendable, CaseIterable {
        /// The file does not exist (or the URL answered 404).
        case inputNotFound
        /// The input exists but could not be read (permissions, I/O error, network failure).
        case inputNotReadable
        /// The input is not a media file FFmpeg can demux (empty, random bytes, text…).
        case notMediaFile
        /// The input has no video stream (audio-only, subtitles-only).
        case noVideoStream
        /// The video codec has no decoder in this FFmpeg build.
        case unsupportedCodec
        /// The data is damaged beyond use: no frame could be decoded.
        case corruptData
        /// An open, a read or the whole job exceeded its deadline.
        case timedOut
        /// The caller stopped the work (task cancellation or `stop()`).
        case cancelled
        /// The input was refused by the source policy (protocol, format, stream count).
        case refusedByPolicy
        /// The input exceeds a size limit (pixels, streams).
        case tooLarge
        /// An output file could not be written.
        case outputNotWritable
        /// A setting or argument is out of range (for example a window that starts past the end).
        case invalidArgument
        /// A frame could not be decoded or converted for a reason not covered above.
        case decodingFailed
        /// An image or video could not be encoded or muxed (the encoder refused the settings or failed).
        case encodingFailed
        /// No loop window near the one asked for is free of photosensitive flashes
        /// (``FlashSafety/avoid``): nothing was written.
        case unsafeFlashes
    }

    /// What went wrong.
    public var code: Code
    /// One line for a person: names the input and the cause.
    public var message: String
    /// The FFmpeg function that failed, if the error came from FFmpeg (for example `avformat_open_input`).
    public var operation: String?
    /// FFmpeg's return code, if any.
    public var ffmpegCode: Int32?
    /// FFmpeg's `av_strerror` text for `ffmpegCode`, if any.
    public var ffmpegMessage: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, operation: String? = nil, ffmpegCode: Int32? = nil, ffmpegMessage: String? = nil) {
        self.code = code
        self.message = message
        self.operation = operation
        self.ffmpegCode = ffmpegCode
        self.ffmpegMessage = ffmpegMessage
    }

    /// The message, followed by the FFmpeg call and its text when known; always one line.
    public var description: String {
        var text = message
        if let operation, let ffmpegMessage {
            text += " (\(operation): \(ffmpegMessage))"
        }
        return text.replacingNewlines()
    }
}

extension String {
    /// The text on one line: newlines become spaces.
    func replacingNewlines() -> String {
        String(map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
