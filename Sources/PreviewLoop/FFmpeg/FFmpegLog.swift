import CFFmpeg
import Glibc
import Synchronization

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

    /// Applies the default level once per process, before the first FFmpeg call that could log, and
    /// installs the callback that remembers each thread's last FFmpeg error.
    static let applyDefault: Void = {
        let requested = getenv("PREVIEW_LOOP_FFMPEG_LOG").flatMap { FFmpegLogLevel(rawValue: String(cString: $0)) }
        av_log_set_level((requested ?? .quiet).ffmpegValue)
        cffmpeg_install_log_handler(callback)
    }()

    /// The last error FFmpeg logged on each thread (bounded), so a failure can say why in FFmpeg's
    /// words — for example that a picture "exceeds specified max pixel count".
    private static let lastErrors = Mutex<[UInt: String]>([:])

    /// Forgets the calling thread's last error (before an operation whose errors matter).
    static func clearLastError() {
        let thread = UInt(pthread_self())
        _ = lastErrors.withLock { $0.removeValue(forKey: thread) }
    }

    /// The last error FFmpeg logged on the calling thread since ``clearLastError()``.
    static var lastError: String? {
        let thread = UInt(pthread_self())
        return lastErrors.withLock { $0[thread] }
    }

    /// Prints what the configured level lets through, as FFmpeg's default callback does, and keeps
    /// error-level lines per thread. Called by the C trampoline with the formatted line.
    private static let callback: @convention(c) (Int32, UnsafePointer<CChar>?) -> Void = { level, text in
        guard let text else { return }
        let line = String(cString: text)
        if level <= AV_LOG_ERROR {
            let thread = UInt(pthread_self())
            lastErrors.withLock { errors in
                if errors.count > 256 { errors.removeAll() }
                errors[thread] = line.trimmingWhitespace()
            }
        }
        if level <= av_log_get_level() {
            _ = Array(line.utf8).withUnsafeBytes { FileSystem.writeAll($0, to: STDERR_FILENO) }
        }
    }
}
