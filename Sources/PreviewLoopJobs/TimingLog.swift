import Glibc
import PreviewLoop

/// The loop's CSV timing log: a header, then one row per frame.
///
/// To a file it is written under a temporary name and renamed into place by ``commit()``, so a
/// reader never sees half a log; to standard output (`--log -`) each row goes out as it is made.
final class TimingLog {
    /// The header row, exactly; scripts rely on it.
    static let header = "pass,index,presentation_time,wall_time,decode_ms,scale_ms,lateness_ms,dropped"

    /// Where rows go.
    private enum Sink {
        /// `--log -`: rows are written as they come.
        case standardOutput
        /// `--log FILE`: rows go to a temporary renamed into place on commit.
        case file(PendingFile)
        /// `--log s3://BUCKET/KEY`: rows go to a file in a staging folder, uploaded on commit.
        case object(PendingFile, url: String, staging: ObjectStaging)
    }

    /// Where this log's rows go.
    private let sink: Sink
    /// Rows not yet written to a file, flushed in blocks of about 64 KB.
    private var buffer: [UInt8] = []

    /// Opens the log and writes its header.
    ///
    /// - Throws: `PreviewLoopError(.outputNotWritable)` when the file's directory does not accept it.
    init(destination: LogDestination) throws {
        switch destination {
        case .standardOutput: sink = .standardOutput
        case .file(let path) where ObjectOutput.isObject(path):
            let staging = try ObjectStaging()
            sink = .object(try PendingFile(path: staging.file(for: path), purpose: "timing log"), url: path, staging: staging)
        case .file(let path): sink = .file(try PendingFile(path: path, purpose: "timing log"))
        }
        try append(row: Self.header)
    }

    /// The temporary file being written, if the log goes to a file; for removal on a forced exit.
    var temporaryPath: String? {
        switch sink {
        case .file(let file), .object(let file, _, _): file.temporaryPath
        case .standardOutput: nil
        }
    }

    /// Appends a frame's row.
    func append(_ frame: VideoFrame) throws {
        let timings = frame.timings
        try append(row: Self.row(pass: frame.loopIndex + 1, index: frame.index + 1,
                                 presentationTime: frame.presentationTime, wallTime: timings.wallTime,
                                 decode: timings.decode, conversion: timings.conversion, lateness: timings.lateness,
                                 dropped: timings.droppedBefore))
    }

    /// One CSV row: pass and index from 1, times in seconds with 6 decimals, durations in
    /// milliseconds with 3, lateness empty when not measured (offline clock), then the frames dropped
    /// just before this one (realtime clock only).
    static func row(pass: Int, index: Int, presentationTime: Duration, wallTime: Duration,
                    decode: Duration, conversion: Duration, lateness: Duration?, dropped: Int = 0) -> String {
        [String(pass), String(index),
         Format.fixed(Format.seconds(presentationTime), 6), Format.fixed(Format.seconds(wallTime), 6),
         Format.fixed(Format.milliseconds(decode), 3), Format.fixed(Format.milliseconds(conversion), 3),
         lateness.map { Format.fixed(Format.milliseconds($0), 3) } ?? "", String(dropped)].joined(separator: ",")
    }

    /// Writes everything and, for a file, renames it into place.
    func commit() throws {
        switch sink {
        case .standardOutput:
            return
        case .file(let file):
            try file.write(buffer)
            buffer.removeAll()
            try file.commit()
        case .object(let file, let url, _):
            try file.write(buffer)
            buffer.removeAll()
            try file.commit()
            try ObjectOutput.upload(file: file.path, to: url)
        }
    }

    /// Abandons the log: a file's temporary is removed and nothing appears at its path.
    func discard() {
        switch sink {
        case .file(let file), .object(let file, _, _): file.discard()
        case .standardOutput: break
        }
        buffer.removeAll()
    }

    /// Appends a line: at once to standard output, in blocks to a file.
    private func append(row: String) throws {
        switch sink {
        case .standardOutput:
            guard Console.write(row + "\n", to: STDOUT_FILENO) else {
                throw PreviewLoopError(.outputNotWritable, "cannot write the timing log to standard output: "
                    + Format.systemError())
            }
        case .file(let file), .object(let file, _, _):
            buffer += Array(row.utf8)
            buffer.append(UInt8(ascii: "\n"))
            if buffer.count >= 1 << 16 {
                try file.write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
    }
}

