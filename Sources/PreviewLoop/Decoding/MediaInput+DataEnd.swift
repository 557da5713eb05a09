internal import PreviewLoopFFmpeg

/// Where a file's video data really ends, measured without decoding. A download or copy cut short
/// keeps the header that states the whole duration (an MP4 whose index comes first, a Matroska file's
/// `Duration`), so the declared duration promises frames the file no longer holds.
///
/// - An index with byte positions (MP4): the first sample past the file's end is found in memory;
///   only a cut file is read, from the last whole keyframe to the cut, for the packets' presentation times.
/// - No such index (Matroska, WebM): a whole file's own index (Matroska's cues, at its end) seeks to
///   its last seconds, and the file is whole when the packets from there reach the stated end; else
///   (a cut file lost its cues with its end) the packets are read from the start, for files up to
///   ``fullReadLimit``. (A byte-position seek is no shortcut: Matroska's demuxer, lost mid-cluster,
///   resynchronises from the first cluster.)
/// - A duration FFmpeg measured itself from the last timestamps (MPEG-TS) or guessed from the bit
///   rate promises nothing: it is not checked. Standard input is not checked (a pipe cannot be read
///   twice), and a URL only through an MP4 index (a whole file costs no request; Matroska over the
///   network would cost a read of the whole file).
struct DataEndCheck {
    /// How far short of the stated end the packets may stop and the file still count as whole: two
    /// frames (packets without a duration end at their start; a muxer may count the last one's).
    static func tolerance(frameInterval: Double) -> Double { max(2 * frameInterval, 0.1) }
    /// Packets read in one pass at most.
    static let packetLimit = 50_000
    /// How far before the stated end a whole file's index is asked to seek, in seconds.
    static let tailSeconds = 5.0
    /// The largest file read from its start when no index reaches its end (about 0.1 s a 100 MB).
    static let fullReadLimit: Int64 = 256 << 20

    /// The decodable duration (seconds from the stream's start; the declared duration when the file
    /// is whole), or `nil` when it was not or could not be measured.
    ///
    /// - Parameters:
    ///   - format: the open input (its index and sizes are read, it is not moved).
    ///   - declared: the video's declared duration.
    ///   - readsWhole: whether an input without such an index may be read (not over the network).
    ///   - reopen: opens the same input again, for reading packets without moving `format`.
    static func decodableDuration(format: FormatContext, streamIndex: Int32, declared: Double, frameInterval: Double,
                                  readsWhole: Bool, seconds: (Int64) -> Double, timestamp: (Double) -> Int64, reopen: () throws(PreviewLoopError) -> FormatContext) -> Double? {
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
            guard readsWhole, let statedEnd = format.duration.map({ $0 + (format.startTime ?? 0) }) else { return nil }
            let slack = Int64(tolerance(frameInterval: frameInterval) * FormatContext.containerTicksPerSecond)
            func verdict(_ ends: PacketEnds) -> Double? {
                if let inputEnd = ends.inputEnd, inputEnd >= statedEnd - slack { return declared }
                return ends.streamEnd.map { min(declared, max(0, seconds($0))) }
            }
            // A whole file's index (Matroska's cues, read at the first seek) finds the last seconds at once.
            if let reader = try? reopen(),
               (try? reader.seek(streamIndex: streamIndex, to: timestamp(max(0, declared - tailSeconds)))) != nil,
               let ends = try? reader.packetEnds(stream: streamIndex, limit: packetLimit), ends.packetsRead > 0,
               ends.inputEnd.map({ $0 >= statedEnd - slack }) == true {
                return declared
            }
            // No index (a cut file lost it with its end), or the seek fell short: the packets from the
            // start, as far as the deadline allows.
            guard size <= fullReadLimit, let reader = try? reopen(), let ends = try? reader.packetEnds(stream: streamIndex, limit: Int.max),
                  ends.packetsRead > 0 else { return nil }
            return verdict(ends)
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

    /// Anything but standard input, which cannot be opened twice.
    var canBeReopened: Bool { self != .standardInput }
}
