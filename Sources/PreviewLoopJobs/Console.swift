import Glibc
import PreviewLoop
import Synchronization

/// Standard output and standard error, written with `write(2)` so nothing is lost or reordered by
/// buffering when the process exits right after.
package enum Console {
    /// Writes text to standard output; a failure is remembered in ``outputError``.
    package static func writeOutput(_ text: String) {
        if !write(text, to: STDOUT_FILENO) {
            let code = errno
            _ = failedOutput.compareExchange(expected: 0, desired: code == 0 ? EIO : code, ordering: .relaxed)
        }
    }

    /// The first `errno` a write to standard output failed with (a full disk, `/dev/full`), if any.
    package static var outputError: Int32? {
        let code = failedOutput.load(ordering: .relaxed)
        return code == 0 ? nil : code
    }

    /// The first failure of ``writeOutput(_:)``; 0 for none.
    private static let failedOutput = Atomic<Int32>(0)

    /// Writes text to standard error.
    package static func writeError(_ text: String) {
        write(text, to: STDERR_FILENO)
    }

    /// Whether `--quiet` was given: warnings and summary lines are dropped, errors still written.
    package static var isQuiet: Bool {
        get { quiet.load(ordering: .relaxed) }
        set { quiet.store(newValue, ordering: .relaxed) }
    }

    /// Set once per command, before it runs.
    private static let quiet = Atomic<Bool>(false)

    /// `Warning: …` on standard error, unless `--quiet`.
    static func writeWarning(_ text: String) {
        if !isQuiet { writeError("Warning: \(text)\n") }
    }

    /// A command's summary line (`wrote …`): on standard output, or on standard error when standard
    /// output carries the data itself (`-o -`); nothing with `--quiet`.
    static func writeSummary(_ text: String, toError: Bool = false) {
        guard !isQuiet else { return }
        if toError { writeError(text) } else { writeOutput(text) }
    }

    /// Writes bytes (an image for `-o -`) to standard output; a failure is remembered in ``outputError``
    /// and returned as `false`.
    @discardableResult
    static func writeOutput(bytes: [UInt8]) -> Bool {
        let written = bytes.withUnsafeBytes { write($0, to: STDOUT_FILENO) }
        if !written {
            let code = errno
            _ = failedOutput.compareExchange(expected: 0, desired: code == 0 ? EIO : code, ordering: .relaxed)
        }
        return written
    }

    /// Writes all of the text's UTF-8 bytes to a file descriptor, retrying after interruptions, with
    /// every byte of a file name that is not UTF-8 shown as `\xff` (``FilePathBytes/displayed(_:)``):
    /// messages and summaries name such files readably. JSON carries them as `\uf7ff` escapes, which
    /// pass through unchanged. Returns `false` if the descriptor refused them (a closed pipe, a full disk).
    @discardableResult
    static func write(_ text: String, to descriptor: Int32) -> Bool {
        Array(FilePathBytes.displayed(text).utf8).withUnsafeBytes { write($0, to: descriptor) }
    }

    /// Writes all of the bytes to a file descriptor, retrying after interruptions and short writes.
    /// Returns `false` if the descriptor refused them; errno still holds the cause, for the caller.
    @discardableResult
    static func write(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) -> Bool {
        FileSystem.writeAll(buffer, to: descriptor) == 0
    }
}

/// Number spellings shared by the commands' output.
package enum Format {
    /// `value` with exactly `digits` decimals, rounded as `printf`'s `%.Nf`: `fixed(4, 3)` → `4.000`.
    package static func fixed(_ value: Double, _ digits: Int) -> String {
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
    ///
    /// Control characters (from input names, URLs or option values) are escaped so they never reach the
    /// terminal raw: `\n`, `\r`, `\t` as such, others as `\u{1B}`; so are the bidirectional
    /// overrides. A trailing newline FFmpeg adds is dropped first.
    package static func oneLine(_ text: String) -> String {
        var trimmed = Substring(text)
        while let last = trimmed.last, last == "\n" || last == "\r" { trimmed = trimmed.dropLast() }
        return trimmed.replacingScalars { scalar in
            let value = scalar.value
            switch scalar {
            case "\n": return "\\n"
            case "\r": return "\\r"
            case "\t": return "\\t"
            case _ where value < 0x20 || (0x7F...0x9F).contains(value) || (0x202A...0x202E).contains(value)
                    || (0x2066...0x2069).contains(value) || value == 0x2028 || value == 0x2029:
                return "\\u{" + String(value, radix: 16, uppercase: true) + "}"
            default: return nil
            }
        }
    }

    /// `errno`'s `strerror` text.
    package static func systemError(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
