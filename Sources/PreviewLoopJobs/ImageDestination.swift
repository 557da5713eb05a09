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

    /// Writes the encoded image to `path`, uploads it as the object an `s3://` path names, or writes
    /// it to standard output for `-`.
    static func write(_ bytes: [UInt8], to path: String) throws(PreviewLoopError) {
        if ObjectOutput.isObject(path) { return try ObjectOutput.upload(bytes, to: path) }
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

/// A file output that a writer makes by path (a muxer): the path itself, or for an `s3://` object a
/// file in a staging folder, uploaded once the writer is done and removed after. A failure (or a
/// signal) before the upload leaves nothing at the key; an upload itself is whole or nothing.
enum FileOutput {
    /// Runs `write` with the local path to write `output` at, then uploads it when `output` is an object.
    static func writing<Result>(_ output: String, _ write: (String) throws -> Result) throws -> Result {
        guard ObjectOutput.isObject(output) else { return try write(output) }
        let staging = try ObjectStaging()
        let local = staging.file(for: output)
        let result = try write(local)
        try ObjectOutput.upload(file: local, to: output)
        return result
    }

    /// The size of a written output: the file's, or the object's as the store accepted it.
    static func size(_ output: String) -> Int {
        if ObjectOutput.isObject(output) { return ObjectOutput.uploadedSize(output) ?? 0 }
        var status = stat()
        return FileSystem.stat(output, &status) == 0 ? Int(status.st_size) : 0
    }
}
