import CFFmpeg
internal import PreviewLoopFFmpeg

/// How an encoder is set up: the picture it takes, its clock, and its options.
struct EncoderSettings {
    /// The encoder's short name in this FFmpeg build, for example `libx264`, `mjpeg`, `png`.
    var encoderName: String
    /// The picture size in pixels.
    var size: Size
    /// The pixel format frames arrive in (`AV_PIX_FMT_YUV420P`, `AV_PIX_FMT_PAL8`…).
    var pixelFormat: AVPixelFormat
    /// The unit of frame timestamps.
    var timeBase = AVRational(num: 1, den: 25)
    /// The nominal frame rate, for encoders that use one (x264's rate control).
    var frameRate: AVRational?
    /// Full range (JPEG) or limited range (video) samples.
    var colorRange = AVCOL_RANGE_UNSPECIFIED
    /// The YCbCr matrix the frames were converted with, written into the stream's metadata.
    var colorSpace = AVCOL_SPC_UNSPECIFIED
    /// The colour primaries written into the stream's metadata.
    var colorPrimaries = AVCOL_PRI_UNSPECIFIED
    /// The transfer characteristic written into the stream's metadata.
    var colorTransfer = AVCOL_TRC_UNSPECIFIED
    /// A fixed quantizer scale for every frame (`-q:v`), for encoders such as MJPEG.
    var fixedQuantizer: Int?
    /// Encoder threads; 0 lets the encoder choose.
    var threads = 1
    /// Whether the container wants codec headers out of band (`AVFMT_GLOBALHEADER`, for MP4).
    var needsGlobalHeader = false
    /// Encoder options by name (`crf`, `preset`, `quality`…), applied at open; an unknown one is an error.
    var options: [String: String] = [:]
}

/// Owns an encoder `AVCodecContext`: allocated, configured and opened in `init`, freed in `deinit`.
/// Used from one thread at a time.
final class EncoderContext {
    private let liveToken = LiveObjects.Token()
    let pointer: UnsafeMutablePointer<AVCodecContext>
    /// The encoder's short name, for example `libx264`.
    let encoderName: String
    private let packet: Packet

    /// Finds and opens an encoder.
    ///
    /// - Throws: ``PreviewLoopError/Code/encodingFailed`` when this FFmpeg build lacks the encoder or it
    ///   refuses the settings (an odd size for 4:2:0, an unknown option…).
    init(_ settings: EncoderSettings) throws(PreviewLoopError) {
        FFmpegLog.applyDefault
        let name = settings.encoderName
        guard let codec = avcodec_find_encoder_by_name(name) else {
            throw PreviewLoopError(.encodingFailed, "the \(name) encoder is not in this FFmpeg build",
                                   operation: "avcodec_find_encoder_by_name")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw PreviewLoopError(.tooLarge, "out of memory opening the \(name) encoder")
        }
        pointer = context
        encoderName = name
        packet = try ffmpeg { () throws(FFmpegFailure) in try Packet() }
        context.pointee.width = Int32(settings.size.width)
        context.pointee.height = Int32(settings.size.height)
        context.pointee.pix_fmt = settings.pixelFormat
        context.pointee.time_base = settings.timeBase
        if let frameRate = settings.frameRate { context.pointee.framerate = frameRate }
        context.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        context.pointee.color_range = settings.colorRange
        context.pointee.colorspace = settings.colorSpace
        context.pointee.color_primaries = settings.colorPrimaries
        context.pointee.color_trc = settings.colorTransfer
        context.pointee.thread_count = Int32(max(0, settings.threads))
        if let quantizer = settings.fixedQuantizer {
            context.pointee.flags |= AV_CODEC_FLAG_QSCALE
            context.pointee.global_quality = Int32(quantizer) * FF_QP2LAMBDA
            context.pointee.qmin = Int32(quantizer)
            context.pointee.qmax = Int32(quantizer)
        }
        if settings.needsGlobalHeader { context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        var dictionary: OpaquePointer? = nil
        for (key, value) in settings.options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        try check(avcodec_open2(context, codec, &dictionary), "avcodec_open2", code: .encodingFailed,
                  "cannot open the \(name) encoder for \(settings.size) pictures")
        if let unused = av_dict_get(dictionary, "", nil, AV_DICT_IGNORE_SUFFIX) {
            throw PreviewLoopError(.encodingFailed, "the \(name) encoder has no option '\(String(cString: unused.pointee.key))'",
                                   operation: "avcodec_open2")
        }
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = pointer
        avcodec_free_context(&context)
    }

    /// The encoder's time base, which may differ from the one asked for after opening.
    var timeBase: AVRational { pointer.pointee.time_base }

    /// Sends a frame (or `nil` to drain) and hands every packet the encoder has ready to `handle`.
    ///
    /// The packet is only valid during the call; `handle` may move its contents elsewhere.
    func encode(_ frame: DecodedFrame?, _ handle: (Packet) throws(PreviewLoopError) -> Void) throws(PreviewLoopError) {
        let sent = avcodec_send_frame(pointer, frame?.pointer)
        if sent != FFmpegError.endOfFile {
            try check(sent, "avcodec_send_frame", code: .encodingFailed, "the \(encoderName) encoder refused a frame")
        }
        while true {
            let received = avcodec_receive_packet(pointer, packet.pointer)
            if received == FFmpegError.tryAgain || received == FFmpegError.endOfFile { return }
            try check(received, "avcodec_receive_packet", code: .encodingFailed, "the \(encoderName) encoder failed")
            defer { av_packet_unref(packet.pointer) }
            try handle(packet)
        }
    }

    /// Encodes one picture and drains the encoder: the bytes of an image file (PNG, JPEG, WebP).
    func encodeStill(_ frame: DecodedFrame) throws(PreviewLoopError) -> [UInt8] {
        var bytes: [UInt8] = []
        func append(_ packet: Packet) {
            let size = Int(packet.pointer.pointee.size)
            guard size > 0, let data = packet.pointer.pointee.data else { return }
            bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: size))
        }
        try encode(frame, append)
        try encode(nil, append)
        guard !bytes.isEmpty else {
            throw PreviewLoopError(.encodingFailed, "the \(encoderName) encoder produced no data")
        }
        return bytes
    }
}
