internal import PreviewLoopFFmpeg

/// The one demuxing loop: each read of the container has the read deadline around it, and packets of
/// other streams (audio, subtitles: a preview is muted) are passed over.
enum PacketReading {
    /// Reads until a packet of `streamIndex` is in `packet`; `false` at the input's end, or once
    /// `limit` packets (of any stream) have been read in this call.
    ///
    /// - Parameter skipped: counts the packets of other streams passed over.
    static func nextPacket(of streamIndex: Int32, from format: FormatContext, into packet: Packet, interrupter: Interrupter,
                           readTimeout: Double, skipped: inout Int, limit: Int = .max) throws(PreviewLoopError) -> Bool {
        var reads = 0
        while reads < limit {
            interrupter.setDeadline(after: readTimeout)
            let hasPacket = try ffmpeg { () throws(FFmpegFailure) in try format.readPacket(into: packet) }
            interrupter.setDeadline(after: nil)
            reads += 1
            guard hasPacket else { return false }
            if packet.streamIndex == streamIndex { return true }
            skipped += 1
        }
        return false
    }
}

extension MediaInput {
    /// ``PacketReading/nextPacket(of:from:into:interrupter:readTimeout:skipped:limit:)`` on this input's
    /// video stream, with its read timeout.
    func nextVideoPacket(into packet: Packet, interrupter: Interrupter, skipped: inout Int) throws(PreviewLoopError) -> Bool {
        try PacketReading.nextPacket(of: streamIndex, from: format, into: packet, interrupter: interrupter,
                                     readTimeout: options.readTimeout, skipped: &skipped)
    }
}
