internal import PreviewLoopFFmpeg

/// Where a file's video data really ends, measured without decoding. A download or copy cut short
/// keeps the header that states the whole duration (an MP4 whose index comes first, a Matroska file's
/// `Duration`), so the declared duration promises frames the file no longer holds.
///
/// - An index with byte positions (MP4): the first sample past the file's end is found in memory;
///   only a cut file is read, from the last whole keyframe to the cut, for the packets' presentation times.
/// - No such index (Matroska, WebM, FLV): the last megabyte (then 4, 16) is read packet by packet from a
///   byte position; the file is whole when its packets reach the stated end.
/// - A duration FFmpeg measured itself from the last timestamps (MPEG-TS) or guessed from the bit
///   rate promises nothing: it is not checked, nor is anything but a file or bytes in memory (a network
///   input would cost a request, a pipe cannot seek).
struct DataEndCheck {
    /// How far short of the stated end the packets may stop and the file still count as whole: two
    /// frames (packets without a duration end at their start; a muxer may count the last one's).
    static func tolerance(frameInterval: Double) -> Double { max(2 * frameInterval, 0.1) }
    /// Packets read in one pass at most.
    static let packetLimit = 50_000
    /// The tail windows tried, in bytes, until one holds a video packet.
    static let tailWindows: [Int64] = [1 << 20, 4 << 20, 16 << 20]

    /// The decodable duration (seconds from the stream's start; the declared duration when the file
    /// is whole), or `nil` when it was not or could not be measured.
    ///
    /// - Parameters:
    ///   - format: the open input (its index and sizes are read, it is not moved).
    ///   - declared: the video's declared duration.
    ///   - reopen: opens the same input again, for reading packets without moving `format`.
    static func decodableDuration(format: FormatContext, streamIndex: Int32, declared: Double, frameInterval: Double,
                                  seconds: (Int64) -> Double, reopen: () throws(PreviewLoopError) -> FormatContext) -> Double? {
        let size = format.byteSize
        guard size > 0, format.statesDuration, declared > 0 else { return nil }
        switch format.indexedDataEnd(stream: streamIndex, byteSize: size) {
        case .complete:
            return declared
        case .cut(let firstMissing, let lastKeyframe):
            guard let lastKeyframe else { return 0 }
            guard let reader = try? reopen() else { return nil }
            reader.discardStreams(except: streamIndex)
            guard (try? reader.seek(streamIndex: streamIndex, to: lastKeyframe)) != nil,
                  let ends = try? reader.packetEnds(stream: streamIndex, before: firstMissing, limit: packetLimit),
                  let end = ends.streamEnd else { return nil }
            return min(declared, max(0, seconds(end)))
        case .unavailable:
            guard let statedEnd = format.duration.map({ $0 + (format.startTime ?? 0) }),
                  let reader = try? reopen(), reader.allowsByteSeek else { return nil }
            let slack = Int64(tolerance(frameInterval: frameInterval) * FormatContext.containerTicksPerSecond)
            for window in tailWindows {
                // A window holding the whole file is read from the start, where the reader is.
                guard window >= size || (try? reader.seek(toByte: size - window)) != nil,
                      let ends = try? reader.packetEnds(stream: streamIndex, limit: packetLimit) else { return nil }
                if let inputEnd = ends.inputEnd, inputEnd >= statedEnd - slack { return declared }
                if let end = ends.streamEnd { return min(declared, max(0, seconds(end))) }
                if window >= size { break }
            }
            return nil
        }
    }
}

extension Source {
    /// A file or bytes in memory: read again cheaply, with a known size.
    var isLocal: Bool {
        switch self {
        case .file, .data: true
        case .url, .standardInput: false
        }
    }
}
