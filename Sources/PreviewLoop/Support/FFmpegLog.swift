internal import PreviewLoopFFmpeg

/// How much FFmpeg itself prints on standard error.
///
/// PreviewLoop reports failures through ``PreviewLoopError``; FFmpeg's own messages (concealed
/// corruption, seek warnings, even its fatal lines) are hidden by default. Set the environment variable
/// `PREVIEW_LOOP_FFMPEG_LOG` (`quiet`, `fatal`, `error`, `warning`, `info`, `verbose`, `debug`) or
/// ``FFmpegLog/level`` to see them.
public enum FFmpegLogLevel: String, Sendable, CaseIterable {
    /// Nothing (`AV_LOG_QUIET`), the default: failures reach callers as ``PreviewLoopError``s, which
    /// carry FFmpeg's own last error line when there is one.
    case quiet
    /// Only unrecoverable errors (`AV_LOG_FATAL`).
    case fatal
    /// Errors, including concealed stream damage (`AV_LOG_ERROR`).
    case error
    /// Warnings (`AV_LOG_WARNING`).
    case warning
    /// Informational messages (`AV_LOG_INFO`).
    case info
    /// Detailed messages (`AV_LOG_VERBOSE`).
    case verbose
    /// Debugging output (`AV_LOG_DEBUG`).
    case debug
}

/// FFmpeg's process-wide log level.
public enum FFmpegLog {
    /// The current level; setting it calls `av_log_set_level`.
    public static var level: FFmpegLogLevel {
        get { FFmpegLogLevel(rawValue: FFmpegLogging.levelName) ?? .info }
        set { FFmpegLogging.levelName = newValue.rawValue }
    }

    /// Applies the default level once per process (see ``FFmpegLogLevel``).
    static var applyDefault: Void { FFmpegLogging.applyDefault }

    /// Forgets the calling thread's last FFmpeg error.
    static func clearLastError() { FFmpegLogging.clearLastError() }

    /// The last error FFmpeg logged on the calling thread since ``clearLastError()``.
    static var lastError: String? { FFmpegLogging.lastError }
}
