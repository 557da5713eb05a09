import FoundationEssentials
import Synchronization

/// Records frames as images in a directory: `PPP-FFFFF.ppm` (pass and index, 1-based) plus
/// `frames.csv` (file, pass, index, presentation_time, wall_time) written when recording stops.
///
/// Each image is written atomically. Thread-safe: the index is guarded by a mutex.
public final class ImageDirectorySink: FrameSink {
    /// The directory written to.
    public let directory: String
    private let rows = Mutex<[String]>([])

    /// Creates the sink, creating the directory if needed.
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when the directory cannot be made.
    public init(directory: String) throws(PreviewLoopError) {
        guard FileSystem.makeDirectories(directory) == 0 else {
            throw PreviewLoopError(.outputNotWritable, "\(directory): cannot create the directory")
        }
        self.directory = directory
    }

    /// Writes the frame as `PPP-FFFFF.ppm`.
    public func write(_ frame: VideoFrame) throws(PreviewLoopError) {
        let name = DecimalText.zeroPadded(frame.loopIndex + 1, 3) + "-" + DecimalText.zeroPadded(frame.index + 1, 5) + ".ppm"
        try AtomicFile.write(PPM.encode(frame.image), to: directory + "/" + name)
        let row = "\(name),\(frame.loopIndex + 1),\(frame.index + 1),\(DecimalText.fixed(frame.presentationTime.seconds, 6)),"
            + DecimalText.fixed(frame.timings.wallTime.seconds, 6)
        rows.withLock { $0.append(row) }
    }

    /// Writes `frames.csv`.
    public func finish() throws(PreviewLoopError) {
        let text = (["file,pass,index,presentation_time,wall_time"] + rows.withLock { $0 }).joined(separator: "\n") + "\n"
        try AtomicFile.write(Array(text.utf8), to: directory + "/frames.csv")
    }
}
