import Glibc
import PreviewLoop
import Synchronization

/// Standard output and standard error, written with `write(2)` so nothing is lost or reordered by
/// buffering when the process exits right after.
enum Console {
    /// Writes text to standard output; a failure is remembered in ``outputError``.
    static func writeOutput(_ text: String) {
        if !write(text, to: STDOUT_FILENO) {
            let code = errno
            _ = failedOutput.compareExchange(expected: 0, desired: code == 0 ? EIO : code, ordering: .relaxed)
        }
    }

    /// The first `errno` a write to standard output failed with (a full disk, `/dev/full`), if any.
    static var outputError: Int32? {
        let code = failedOutput.load(ordering: .relaxed)
        return code == 0 ? nil : code
    }

    /// The first failure of ``writeOutput(_:)``; 0 for none.
    private static let failedOutput = Atomic<Int32>(0)

    /// Writes text to standard error.
    static func writeError(_ text: String) {
        write(text, to: STDERR_FILENO)
    }

    /// Writes all of the text's UTF-8 bytes to a file descriptor, retrying after interruptions.
    /// Returns `false` if the descriptor refused them (a closed pipe, a full disk).
    @discardableResult
    static func write(_ text: String, to descriptor: Int32) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }
}

/// Number spellings shared by the commands' output.
enum Format {
    /// `value` with exactly `digits` decimals, rounded as `printf`'s `%.Nf`: `fixed(4, 3)` → `4.000`.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        DecimalText.fixed(value, digits)
    }

    /// A duration in seconds as a floating-point number.
    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }

    /// A duration in milliseconds as a floating-point number.
    static func milliseconds(_ duration: Duration) -> Double {
        seconds(duration) * 1000
    }

    /// The text on one line: line breaks become spaces.
    static func oneLine(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }

    /// `errno`'s `strerror` text.
    static func systemError(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
