import Glibc
import PreviewLoop

/// Where a still goes: a file written whole or not at all, or standard output for `-o -`.
enum ImageDestination {
    /// The output path that means standard output.
    static let standardOutput = "-"

    /// Refuses `-o -` when standard output is a terminal, before any decoding: image bytes would only
    /// garble it (as `gzip` refuses; ffmpeg writes anyway). Exit 64, like other refusals.
    static func check(_ path: String) throws(WorkLimitError) {
        if path == standardOutput && isatty(STDOUT_FILENO) == 1 {
            throw WorkLimitError(message: "-o - writes image data to standard output, which is a terminal; "
                + "redirect it to a file or a pipe (> poster.png, | program), or name a file with -o.")
        }
    }

    /// Writes the encoded image to `path`, or to standard output for `-`.
    static func write(_ bytes: [UInt8], to path: String) throws(PreviewLoopError) {
        guard path == standardOutput else { return try AtomicFile.write(bytes, to: path) }
        guard Console.writeOutput(bytes: bytes) else {
            throw PreviewLoopError(.outputNotWritable, "cannot write to standard output (\(Format.systemError(Console.outputError ?? EIO)))")
        }
    }

    /// How the summary line names the output: `standard output` for `-`.
    static func name(_ path: String) -> String {
        path == standardOutput ? "standard output" : path
    }
}
