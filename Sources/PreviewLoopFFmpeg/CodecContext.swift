import CFFmpeg
import Synchronization

/// What asking the decoder for a frame gave.
package enum DecodeOutcome {
    /// A frame was written into the destination.
    case frame
    /// The decoder needs another packet first.
    case needsInput
    /// The decoder is drained; flush it before decoding again.
    case endOfStream
}

/// Owns a video `AVCodecContext`: allocated and opened in `init`, freed in `deinit`.
package final class CodecContext {
    private let liveToken = LiveObjects.Token()
    /// How many decoders were opened per media type (`video`, `audio`, …) in this process: lets tests
    /// prove that audio is never decoded.
    package static let openedDecoders = Mutex<[String: Int]>([:])

    let pointer: UnsafeMutablePointer<AVCodecContext>
    /// The decoder's short name, for example `h264`.
    package let decoderName: String

    /// Opens a decoder for a stream's parameters.
    ///
    /// - Parameters:
    ///   - parameters: the stream's `codecpar`.
    ///   - decoder: the decoder to use; `nil` for FFmpeg's default one for the codec.
    ///   - threads: decoder threads; frame and slice threading are both allowed.
    ///   - displayName: how errors name the input.
    init(parameters: UnsafePointer<AVCodecParameters>, decoder: UnsafePointer<AVCodec>? = nil, threads: Int,
         lowDelay: Bool = false, maxPixels: Int, displayName: String) throws(FFmpegFailure) {
        let codecID = parameters.pointee.codec_id
        guard let codec = decoder ?? avcodec_find_decoder(codecID) else {
            throw FFmpegFailure(.unsupportedCodec, "\(displayName): " + Self.missingDecoderReason(codecID: codecID, tag: parameters.pointee.codec_tag),
                                operation: "avcodec_find_decoder")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw FFmpegFailure(.tooLarge, "\(displayName): out of memory")
        }
        pointer = context
        decoderName = String(cString: codec.pointee.name)
        try check(avcodec_parameters_to_context(context, parameters), "avcodec_parameters_to_context",
                  code: .unsupportedCodec, "\(displayName): cannot configure the \(self.decoderName) decoder")
        context.pointee.max_pixels = Int64(maxPixels)
        context.pointee.thread_count = Int32(max(1, threads))
        context.pointee.thread_type = Self.threadType(for: codecID, lowDelay: lowDelay)
        try check(avcodec_open2(context, codec, nil), "avcodec_open2", code: .unsupportedCodec,
                  "\(displayName): cannot open the \(self.decoderName) decoder")
        let mediaType = av_get_media_type_string(codec.pointee.type).map { String(cString: $0) } ?? "unknown"
        Self.openedDecoders.withLock { $0[mediaType, default: 0] += 1 }
    }

    /// The threading a decoder gets: slice threading only for low delay (frame threading holds frames
    /// back) and for HEVC; frame and slice threading (FFmpeg picks frame) for everything else.
    ///
    /// HEVC: FFmpeg 5.1's frame threading gave nothing on 2 cores on x265 4K (120 frames: 2.92 s with
    /// 2 frame threads, 3.00 s with one), while slice threading, which decodes the wavefront rows x265
    /// writes by default in parallel, gave 2.44 s — and frame threads also hold a 4K frame each.
    static func threadType(for codecID: AVCodecID, lowDelay: Bool) -> Int32 {
        lowDelay || codecID == AV_CODEC_ID_HEVC ? FF_THREAD_SLICE : (FF_THREAD_FRAME | FF_THREAD_SLICE)
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = pointer
        avcodec_free_context(&context)
    }

    /// Which frames the decoder may skip: everything but keyframes when `keyframesOnly`.
    package var keyframesOnly: Bool {
        get { pointer.pointee.skip_frame == AVDISCARD_NONKEY }
        set { pointer.pointee.skip_frame = newValue ? AVDISCARD_NONKEY : AVDISCARD_DEFAULT }
    }

    /// Whether frames no other frame refers to are skipped (`AVDISCARD_NONREF`): they can be dropped
    /// unseen while decoding toward a later time, since no kept frame depends on them.
    package var skipsNonReferenceFrames: Bool {
        get { pointer.pointee.skip_frame == AVDISCARD_NONREF }
        set {
            guard !keyframesOnly else { return }
            pointer.pointee.skip_frame = newValue ? AVDISCARD_NONREF : AVDISCARD_DEFAULT
        }
    }

    /// Whether the in-loop deblocking filter is skipped on every frame (`AVDISCARD_ALL`): for analysis
    /// on small pictures, where its smoothing does not show and its cost does.
    package var skipsLoopFilter: Bool {
        get { pointer.pointee.skip_loop_filter == AVDISCARD_ALL }
        set { pointer.pointee.skip_loop_filter = newValue ? AVDISCARD_ALL : AVDISCARD_DEFAULT }
    }

    /// Sends a packet, or `nil` to start draining.
    ///
    /// - Returns: `false` when the decoder must hand out frames before it takes this packet.
    package func send(_ packet: Packet?) throws(FFmpegFailure) -> Bool {
        let result = avcodec_send_packet(pointer, packet?.pointer)
        if result == FFmpegError.tryAgain { return false }
        if result == FFmpegError.endOfFile { return true }       // already draining
        // Damaged data inside a usable stream is concealed: a packet the decoder rejects is skipped.
        if result == FFmpegError.invalidData { return true }
        try check(result, "avcodec_send_packet", code: .decodingFailed, "cannot decode a packet")
        return true
    }

    /// Receives the next decoded frame into `frame`.
    package func receive(into frame: DecodedFrame) throws(FFmpegFailure) -> DecodeOutcome {
        let result = avcodec_receive_frame(pointer, frame.pointer)
        if result == FFmpegError.tryAgain { return .needsInput }
        if result == FFmpegError.endOfFile { return .endOfStream }
        try check(result, "avcodec_receive_frame", code: .decodingFailed, "cannot decode a frame")
        return .frame
    }

    /// Drops buffered frames and state, as needed after a seek or after draining.
    package func flush() { avcodec_flush_buffers(pointer) }
}
