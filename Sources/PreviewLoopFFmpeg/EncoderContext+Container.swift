import CFFmpeg

extension EncoderContext {
    /// Encodes one picture with the encoder `settings` name and wraps its packets in `muxer`'s container
    /// in memory: the bytes of an image file whose codec writes no file of its own (AV1 in AVIF).
    ///
    /// The muxer is opened first, so the encoder is told whether the container wants its headers out of
    /// band (AVIF's `av1C` box holds the sequence header); the frame is stamped at time 0.
    ///
    /// - Parameter fill: fills the frame the encoder takes (already of `settings`' size and layout).
    /// - Throws: `encodingFailed` when the encoder or the muxer is missing or fails.
    package static func encodeContained(_ settings: EncoderSettings, muxer: String, displayName: String,
                                        fill: (DecodedFrame) throws(FFmpegFailure) -> Void) throws(FFmpegFailure) -> [UInt8] {
        let output = try OutputContext(inMemory: displayName, muxer: muxer)
        var settings = settings
        settings.needsGlobalHeader = output.needsGlobalHeader
        let encoder = try EncoderContext(settings)
        try output.start(with: encoder, options: [:])
        let frame = try DecodedFrame(width: settings.width, height: settings.height, layout: settings.pixelLayout)
        try fill(frame)
        frame.pointer.pointee.pts = 0
        frame.pointer.pointee.color_range = settings.colorRange.value
        func write(_ packet: Packet) throws(FFmpegFailure) { try output.write(packet, from: encoder) }
        try encoder.encode(frame, write)
        try encoder.encode(nil, write)
        return try output.finishInMemory()
    }
}
