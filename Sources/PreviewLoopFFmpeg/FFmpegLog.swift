import CFFmpeg
internal import CFFmpegLog
import Glibc
import Synchronization

/// FFmpeg's process-wide log: its level by name, and the last error line each thread saw. The
/// library's public `FFmpegLog`/`FFmpegLogLevel` are a thin layer over this.
package enum FFmpegLogging {
    /// The level names the library offers (`quiet` … `debug`), each with FFmpeg's value.
    private static let levels: [(name: String, value: Int32)] = [
        ("quiet", AV_LOG_QUIET), ("fatal", AV_LOG_FATAL), ("error", AV_LOG_ERROR), ("warning", AV_LOG_WARNING),
        ("info", AV_LOG_INFO), ("verbose", AV_LOG_VERBOSE), ("debug", AV_LOG_DEBUG),
    ]

    /// The current level's name; setting a known name calls `av_log_set_level`.
    package static var levelName: String {
        get { levels.first { $0.value == av_log_get_level() }?.name ?? "info" }
        set { if let value = levels.first(where: { $0.name == newValue })?.value { av_log_set_level(value) } }
    }

    /// Applies the default level once per process (`quiet`, or the environment variable
    /// `PREVIEW_LOOP_FFMPEG_LOG`), before the first FFmpeg call that could log, and installs the
    /// callback that remembers each thread's last FFmpeg error.
    package static let applyDefault: Void = {
        let requested = getenv("PREVIEW_LOOP_FFMPEG_LOG").flatMap { name in levels.first { $0.name == String(cString: name) } }
        av_log_set_level(requested?.value ?? AV_LOG_QUIET)
        cffmpeg_install_log_handler(callback)
    }()

    /// The last error FFmpeg logged on each thread (bounded), so a failure can say why in FFmpeg's
    /// words — for example that a picture "exceeds specified max pixel count".
    private static let lastErrors = Mutex<[UInt: String]>([:])

    /// Forgets the calling thread's last error (before an operation whose errors matter).
    package static func clearLastError() {
        let thread = UInt(pthread_self())
        _ = lastErrors.withLock { $0.removeValue(forKey: thread) }
    }

    /// The last error FFmpeg logged on the calling thread since ``clearLastError()``.
    package static var lastError: String? {
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
            let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
            let trimmed = line.firstIndex(where: { !isSpace($0) }).flatMap { first in
                line.lastIndex(where: { !isSpace($0) }).map { String(line[first...$0]) }
            } ?? ""
            lastErrors.withLock { errors in
                if errors.count > 256 { errors.removeAll() }
                errors[thread] = trimmed
            }
        }
        // stderr is unbuffered: the line goes out whole, as FFmpeg's own callback writes it.
        if level <= av_log_get_level() { _ = write(STDERR_FILENO, text, strlen(text)) }
    }
}
