internal import PreviewLoopFFmpeg
internal import PreviewLoopRemote

/// A remote input's bytes read through a ``RangeReader`` (an `s3://` object, an http(s) resource whose
/// server answers ranges), as FFmpeg's custom I/O asks for them; a failed read keeps its reason.
protocol RangedBytes: RandomAccessBytes {
    /// The reader, which counts what it fetched.
    var reader: RangeReader { get }
    /// Why the last read failed.
    var failure: RemoteFailure? { get set }
}

extension RangedBytes {
    var byteSize: Int64 { reader.size }
    var wasStopped: Bool { failure?.kind == .stopped }
    /// What reading cost so far, as a record carries it.
    var reads: RemoteReads { RemoteReads(bytesFetched: reader.bytesReceived, requests: reader.requests) }

    /// Fetches byte ranges that reads will ask for soon, several at once (``RangeReader/prefetch(_:)``);
    /// how many of them, from the first, are now fetched.
    func prefetch(_ ranges: [(offset: Int64, count: Int)]) -> Int { reader.prefetch(ranges) }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        do {
            return try reader.read(at: offset, into: buffer)
        } catch {
            failure = error
            return nil
        }
    }
}
