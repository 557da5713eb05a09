import CFFmpeg

/// The pixel layouts the library hands FFmpeg's encoders and converters, with their FFmpeg names.
package enum PixelLayout: Sendable, Equatable {
    /// Packed 8-bit RGB (`AV_PIX_FMT_RGB24`).
    case rgb24
    /// Packed 8-bit RGBA (`AV_PIX_FMT_RGBA`).
    case rgba
    /// Packed 8-bit BGRA (`AV_PIX_FMT_BGRA`): libwebp's ARGB on little-endian machines.
    case bgra
    /// Planar 4:2:0 YCbCr (`AV_PIX_FMT_YUV420P`).
    case yuv420p
    /// Planar 4:4:4 YCbCr (`AV_PIX_FMT_YUV444P`).
    case yuv444p
    /// 8-bit palette indices with a 256-entry ARGB palette (`AV_PIX_FMT_PAL8`).
    case pal8

    var format: AVPixelFormat {
        switch self {
        case .rgb24: AV_PIX_FMT_RGB24
        case .rgba: AV_PIX_FMT_RGBA
        case .bgra: AV_PIX_FMT_BGRA
        case .yuv420p: AV_PIX_FMT_YUV420P
        case .yuv444p: AV_PIX_FMT_YUV444P
        case .pal8: AV_PIX_FMT_PAL8
        }
    }
}

/// The sample range written into a stream (`AVColorRange`).
package enum ColorRange: Sendable, Equatable {
    case unspecified
    /// Limited range, 16–235 (`AVCOL_RANGE_MPEG`, video).
    case limited
    /// Full range, 0–255 (`AVCOL_RANGE_JPEG`).
    case full

    var value: AVColorRange {
        switch self {
        case .unspecified: AVCOL_RANGE_UNSPECIFIED
        case .limited: AVCOL_RANGE_MPEG
        case .full: AVCOL_RANGE_JPEG
        }
    }
}

/// The colour description written into a stream's metadata (matrix, primaries, transfer).
package enum ColorTags: Sendable, Equatable {
    case unspecified
    /// BT.709 matrix, primaries and transfer (web video).
    case bt709
    /// The BT.601 matrix (`AVCOL_SPC_BT470BG`, JPEG/JFIF), primaries and transfer unspecified.
    case bt601Matrix
}

/// How an encoder is set up: the picture it takes, its clock, and its options.
package struct EncoderSettings {
    /// The encoder's short name in this FFmpeg build, for example `libx264`, `mjpeg`, `png`.
    package var encoderName: String
    /// The picture size in pixels.
    package var width: Int, height: Int
    /// The pixel layout frames arrive in.
    package var pixelLayout: PixelLayout
    /// Timestamp units per second (the time base is 1 / this).
    package var ticksPerSecond = 25
    /// The nominal frame rate, for encoders that use one (x264's rate control).
    package var framesPerSecond: Int?
    /// Full range (JPEG) or limited range (video) samples.
    package var colorRange = ColorRange.unspecified
    /// The matrix, primaries and transfer written into the stream's metadata.
    package var colorTags = ColorTags.unspecified
    /// A fixed quantizer scale for every frame (`-q:v`), for encoders such as MJPEG.
    package var fixedQuantizer: Int?
    /// Encoder threads; 0 lets the encoder choose.
    package var threads = 1
    /// Whether the container wants codec headers out of band (`AVFMT_GLOBALHEADER`, for MP4).
    package var needsGlobalHeader = false
    /// Encoder options by name (`crf`, `preset`, `quality`…), applied at open; an unknown one is an error.
    package var options: [String: String] = [:]

    package init(encoderName: String, width: Int, height: Int, pixelLayout: PixelLayout, options: [String: String] = [:]) {
        self.encoderName = encoderName
        self.width = width
        self.height = height
        self.pixelLayout = pixelLayout
        self.options = options
    }
}

/// Owns an encoder `AVCodecContext`: allocated, configured and opened in `init`, freed in `deinit`.
/// Used from one thread at a time.
package final class EncoderContext {
    private let liveToken = LiveObjects.Token()
    let pointer: UnsafeMutablePointer<AVCodecContext>
    /// The encoder's short name, for example `libx264`.
    package let encoderName: String
    private let packet: Packet
    private let settings: EncoderSettings

    /// Finds and opens an encoder.
    ///
    /// - Throws: `encodingFailed` when this FFmpeg build lacks the encoder or it refuses the settings
    ///   (an odd size for 4:2:0, an unknown option…).
    package init(_ settings: EncoderSettings) throws(FFmpegFailure) {
        FFmpegLogging.applyDefault
        let name = settings.encoderName
        let size = "\(settings.width)x\(settings.height)"
        guard let codec = avcodec_find_encoder_by_name(name) else {
            throw FFmpegFailure(.encodingFailed, "the \(name) encoder is not in this FFmpeg build",
                                operation: "avcodec_find_encoder_by_name")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw FFmpegFailure(.tooLarge, "out of memory opening the \(name) encoder")
        }
        pointer = context
        encoderName = name
        self.settings = settings
        packet = try Packet()
        context.pointee.width = Int32(settings.width)
        context.pointee.height = Int32(settings.height)
        context.pointee.pix_fmt = settings.pixelLayout.format
        context.pointee.time_base = AVRational(num: 1, den: Int32(settings.ticksPerSecond))
        if let frameRate = settings.framesPerSecond { context.pointee.framerate = AVRational(num: Int32(frameRate), den: 1) }
        context.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        context.pointee.color_range = settings.colorRange.value
        switch settings.colorTags {
        case .unspecified:
            break
        case .bt709:
            context.pointee.colorspace = AVCOL_SPC_BT709
            context.pointee.color_primaries = AVCOL_PRI_BT709
            context.pointee.color_trc = AVCOL_TRC_BT709
        case .bt601Matrix:
            context.pointee.colorspace = AVCOL_SPC_BT470BG
        }
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
                  "cannot open the \(name) encoder for \(size) pictures")
        if let unused = av_dict_get(dictionary, "", nil, AV_DICT_IGNORE_SUFFIX) {
            throw FFmpegFailure(.encodingFailed, "the \(name) encoder has no option '\(String(cString: unused.pointee.key))'",
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
    package func encode(_ frame: DecodedFrame?, _ handle: (Packet) throws(FFmpegFailure) -> Void) throws(FFmpegFailure) {
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

    /// Encodes one picture and drains the encoder: the bytes of an image file (PNG, JPEG, WebP). The
    /// frame is tagged with the encoder's range and fixed quantizer first.
    package func encodeStill(_ frame: DecodedFrame) throws(FFmpegFailure) -> [UInt8] {
        frame.pointer.pointee.color_range = settings.colorRange.value
        if let quantizer = settings.fixedQuantizer {
            frame.pointer.pointee.quality = Int32(quantizer) * FF_QP2LAMBDA
        }
        var bytes: [UInt8] = []
        func append(_ packet: Packet) {
            let size = Int(packet.pointer.pointee.size)
            guard size > 0, let data = packet.pointer.pointee.data else { return }
            bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: size))
        }
        try encode(frame, append)
        try encode(nil, append)
        guard !bytes.isEmpty else {
            throw FFmpegFailure(.encodingFailed, "the \(encoderName) encoder produced no data")
        }
        return bytes
    }
}
