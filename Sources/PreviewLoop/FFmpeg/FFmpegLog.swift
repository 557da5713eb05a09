import CFFmpeg
import Foundation

/// How much FFmpeg itself prints on standard error.
///
/// PreviewLoop reports failures through ``PreviewLoopError``; FFmpeg's own messages (concealed
/// corruption, seek warnings) are hidden by default. Set the environment variable
/// `PREVIEW_LOOP_FFMPEG_LOG` (`quiet`, `fatal`, `error`, `warning`, `info`, `verbose`, `debug`) or
/// ``FFmpegLog/level`` to see them.
public enum FFmpegLogLevel: String, Sendable, CaseIterable {
    /// Nothing (`AV_LOG_QUIET`).
    case quiet
    /// Only unrecoverable errors (`AV_LOG_FATAL`), the default.
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

    var ffmpegValue: Int32 {
        switch self {
        case .quiet: AV_LOG_QUIET
        case .fatal: AV_LOG_FATAL
        case .error: AV_LOG_ERROR
        case .warning: AV_LOG_WARNING
        case .info: AV_LOG_INFO
        case .verbose: AV_LOG_VERBOSE
        case .debug: AV_LOG_DEBUG
        }
    }
}

/// FFmpeg's process-wide log level.
public enum FFmpegLog {
    /// The current level; setting it calls `av_log_set_level`.
    public static var level: FFmpegLogLevel {
        get { FFmpegLogLevel.allCases.first { $0.ffmpegValue == av_log_get_level() } ?? .info }
        set { av_log_set_level(newValue.ffmpegValue) }
    }

    /// Applies the default level once per process, before the first FFmpeg call that could log.
    static let applyDefault: Void = {
        let requested = ProcessInfo.processInfo.environment["PREVIEW_LOOP_FFMPEG_LOG"].flatMap(FFmpegLogLevel.init(rawValue:))
        av_log_set_level((requested ?? .fatal).ffmpegValue)
    }()
}
