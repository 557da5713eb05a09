import CFFmpeg

/// The one funnel for FFmpeg return codes: a negative code becomes an ``FFmpegFailure`` naming the call.
///
/// - Parameters:
///   - result: what the FFmpeg function returned.
///   - operation: the FFmpeg function's name, for the error.
///   - code: the error code to use when the FFmpeg code does not map to a more specific one.
///   - message: the first, human part of the error message (names the input).
/// - Returns: `result`, when it is not negative.
@discardableResult
func check(_ result: Int32, _ operation: String, code: FFmpegFailure.Code = .decodingFailed,
           _ message: @autoclosure () -> String) throws(FFmpegFailure) -> Int32 {
    guard result < 0 else { return result }
    throw FFmpegFailure(result: result, operation, code: code, message())
}

extension FFmpegFailure {
    /// The failure for a negative FFmpeg `result` of `operation`, with `av_strerror`'s text.
    package init(result: Int32, _ operation: String, code: Code, _ message: String) {
        self.init(FFmpegError.code(for: result, fallback: code), message, operation: operation, ffmpegCode: result,
                  ffmpegMessage: FFmpegError.text(result))
    }
}

/// FFmpeg's error codes and their meaning to PreviewLoop.
package enum FFmpegError {
    package static let endOfFile = cffmpeg_averror_eof()
    package static let tryAgain = cffmpeg_averror(EAGAIN)
    package static let exit = cffmpeg_averror_exit()
    package static let invalidData = cffmpeg_averror_invaliddata()
    package static let decoderNotFound = cffmpeg_averror_decoder_not_found()
    package static let inputOutput = cffmpeg_averror(EIO)

    /// `av_strerror`'s text for a code.
    package static func text(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Maps an FFmpeg code to the error code a caller can act on.
    package static func code(for result: Int32, fallback: FFmpegFailure.Code) -> FFmpegFailure.Code {
        switch result {
        case cffmpeg_averror(ENOENT), cffmpeg_averror_http_not_found(): .inputNotFound
        case cffmpeg_averror(EACCES), cffmpeg_averror(EPERM), cffmpeg_averror(EISDIR),
             cffmpeg_averror_http_forbidden(), cffmpeg_averror_http_unauthorized(), cffmpeg_averror_http_bad_request(),
             cffmpeg_averror_http_other_4xx(), cffmpeg_averror_http_server_error(),
             cffmpeg_averror(ECONNREFUSED), cffmpeg_averror(ECONNRESET), cffmpeg_averror(EHOSTUNREACH),
             cffmpeg_averror(ENETUNREACH), cffmpeg_averror(EIO), cffmpeg_averror(EPIPE): .inputNotReadable
        case cffmpeg_averror(ETIMEDOUT): .timedOut
        case cffmpeg_averror_decoder_not_found(): .unsupportedCodec
        case cffmpeg_averror_protocol_not_found(): .refusedByPolicy
        case cffmpeg_averror(ENOMEM): .tooLarge
        default: fallback
        }
    }
}
