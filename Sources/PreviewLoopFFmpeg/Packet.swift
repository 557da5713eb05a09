import CFFmpeg

/// Owns an `AVPacket`, reused across reads.
package final class Packet {
    private let liveToken = LiveObjects.Token()
    let pointer: UnsafeMutablePointer<AVPacket>

    package init() throws(FFmpegFailure) {
        guard let packet = av_packet_alloc() else { throw FFmpegFailure(.tooLarge, "out of memory allocating a packet") }
        pointer = packet
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
    }
}

extension Packet {
    /// The index of the stream the packet belongs to.
    package var streamIndex: Int32 { pointer.pointee.stream_index }

    /// Whether the packet holds a keyframe (`AV_PKT_FLAG_KEY`).
    package var isKeyframe: Bool { pointer.pointee.flags & AV_PKT_FLAG_KEY != 0 }

    /// The presentation timestamp in stream ticks; setting `nil` is not supported.
    package var presentationTimestamp: Int64? {
        pointer.pointee.pts == cffmpeg_nopts_value() ? nil : pointer.pointee.pts
    }

    /// The presentation timestamp, else the decoding one; `nil` when neither is known.
    package var timestamp: Int64? {
        let nopts = cffmpeg_nopts_value()
        let raw = pointer.pointee
        let stamp = raw.pts != nopts ? raw.pts : raw.dts
        return stamp == nopts ? nil : stamp
    }

    /// The size of the packet's data in bytes.
    package var size: Int { Int(pointer.pointee.size) }

    /// The raw presentation timestamp (`pts`, `AV_NOPTS_VALUE` included), for matching an encoder's output.
    package var rawPresentationTimestamp: Int64 { pointer.pointee.pts }

    /// How long the packet is shown, in its time base.
    package var duration: Int64 {
        get { pointer.pointee.duration }
        set { pointer.pointee.duration = newValue }
    }

    /// A new packet referring to the same data (`av_packet_ref`), kept after this one is reused.
    package func reference() throws(FFmpegFailure) -> Packet {
        let copy = try Packet()
        try check(av_packet_ref(copy.pointer, pointer), "av_packet_ref", code: .tooLarge, "cannot keep a packet")
        return copy
    }
}
