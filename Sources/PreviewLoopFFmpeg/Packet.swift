import CFFmpeg

/// Owns an `AVPacket`, reused across reads.
package final class Packet {
    private let liveToken = LiveObjects.Token()
    package let pointer: UnsafeMutablePointer<AVPacket>

    package init() throws(FFmpegFailure) {
        guard let packet = av_packet_alloc() else { throw FFmpegFailure(.tooLarge, "out of memory allocating a packet") }
        pointer = packet
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
    }
}
