import CFFmpeg

/// What the demuxer's index says about the end of a stream's data, compared with the input's size.
package enum IndexedDataEnd: Sendable, Equatable {
    /// The index lists no entries, or entries without a byte position and size (MPEG-TS, Matroska cues).
    case unavailable
    /// Every packet the index lists lies within the input.
    case complete
    /// The index lists packets past the input's end: the first such packet's decode timestamp, and the
    /// decode timestamp of the last keyframe before it (stream ticks; `nil` when no keyframe is whole).
    case cut(firstMissing: Int64, lastKeyframe: Int64?)
}

/// The ends of the packets read from a place in the input to its end.
package struct PacketEnds: Sendable, Equatable {
    /// The largest presentation end (pts + duration, stream ticks) among the chosen stream's packets.
    package var streamEnd: Int64?
    /// The largest presentation end among every stream's packets, in microseconds (`AV_TIME_BASE`).
    package var inputEnd: Int64?
    /// How many packets were read.
    package var packetsRead = 0
}

extension FormatContext {
    /// Whether the container states its duration in its headers (MP4, Matroska), rather than FFmpeg
    /// measuring it from the last timestamps (MPEG-TS) or estimating it from the bit rate: only a
    /// stated duration can promise more than the data holds.
    package var statesDuration: Bool { pointer.pointee.duration_estimation_method == AVFMT_DURATION_FROM_STREAM }

    /// Compares the positions and sizes of stream `index`'s index entries (`avformat_index_get_entry`)
    /// with `byteSize`: an MP4 whose index (moov) comes first lists every sample, including those a cut
    /// took away. Reads nothing.
    package func indexedDataEnd(stream index: Int32, byteSize: Int64) -> IndexedDataEnd {
        guard byteSize > 0, index >= 0, Int(index) < streamCount, let stream = pointer.pointee.streams[Int(index)] else {
            return .unavailable
        }
        let count = avformat_index_get_entries_count(stream)
        guard count > 0 else { return .unavailable }
        var lastKeyframe: Int64?
        for position in 0..<count {
            guard let entry = avformat_index_get_entry(stream, position)?.pointee else { return .unavailable }
            // Entries without a position or size (cue points of clusters) say nothing about the packets' bytes.
            guard entry.pos >= 0, entry.size > 0 else { return .unavailable }
            if entry.pos + Int64(entry.size) > byteSize {
                return .cut(firstMissing: entry.timestamp, lastKeyframe: lastKeyframe)
            }
            if entry.flags & AVINDEX_KEYFRAME != 0 { lastKeyframe = entry.timestamp }
        }
        return .complete
    }

    /// Reads packets from where the demuxer is to the end of the input (or `limit` packets) and notes
    /// where they end, without decoding.
    ///
    /// - Parameters:
    ///   - index: the stream whose end is wanted.
    ///   - before: only that stream's packets whose decode timestamp is below this count (a packet the
    ///     input holds only part of is not whole); `nil` for all.
    ///   - limit: the most packets read.
    package func packetEnds(stream index: Int32, before: Int64? = nil, limit: Int) throws(FFmpegFailure) -> PacketEnds {
        let packet = try Packet()
        var ends = PacketEnds()
        let nopts = cffmpeg_nopts_value()
        while ends.packetsRead < limit, try readPacket(into: packet) {
            ends.packetsRead += 1
            let raw = packet.pointer.pointee
            guard raw.flags & AV_PKT_FLAG_CORRUPT == 0, raw.flags & AV_PKT_FLAG_DISCARD == 0 else { continue }
            let stamp = raw.pts != nopts ? raw.pts : raw.dts
            guard stamp != nopts, Int(raw.stream_index) < streamCount,
                  let stream = pointer.pointee.streams[Int(raw.stream_index)] else { continue }
            let end = stamp + max(0, raw.duration)
            if raw.stream_index == index {
                if let before, raw.dts != nopts, raw.dts >= before { continue }
                ends.streamEnd = max(ends.streamEnd ?? end, end)
            }
            let microseconds = av_rescale_q(end, stream.pointee.time_base, cffmpeg_time_base_q())
            ends.inputEnd = max(ends.inputEnd ?? microseconds, microseconds)
        }
        return ends
    }
}
