import CFFmpeg

/// A stream as the library needs to know it, copied out of FFmpeg's borrowed `AVStream` and its
/// `codecpar` (nothing here points into FFmpeg's memory).
package struct StreamDescription: Sendable {
    /// The stream's index in its container.
    package var index: Int32
    /// The time base as a fraction (0/0 when the container gives none).
    package var timeBaseNumerator: Int, timeBaseDenominator: Int
    /// The stream's start in its own ticks, `nil` when the container gives none.
    package var startTimestamp: Int64?
    /// The stream's duration in its own ticks, `nil` when the container gives none.
    package var duration: Int64?
    /// The coded picture size (0 when unknown).
    package var width: Int, height: Int
    /// The codec's short name (`h264`).
    package var codecName: String
    /// The pixel format's name (`yuv420p`), `nil` when unknown.
    package var pixelFormatName: String?
    /// The sample range the stream declares.
    package var colorRange: ColorRange
    /// FFmpeg's name of the YCbCr matrix (`bt709`), `nil` when it has none.
    package var colorSpaceName: String?
    /// FFmpeg's name of the transfer (`smpte2084`), `unknown` when unspecified or reserved.
    package var colorTransferName: String
    /// FFmpeg's name of the primaries (`bt2020`), `unknown` when unspecified or reserved.
    package var colorPrimariesName: String
    /// Bits per sample of the pixel format (or the stream's raw sample depth), `nil` when unknown.
    package var bitDepth: Int?
    /// The sample aspect ratio of the codec parameters, then of the stream (0/0, 0/1 when unset).
    package var codecSampleAspectRatio: (numerator: Int, denominator: Int)
    package var streamSampleAspectRatio: (numerator: Int, denominator: Int)
    /// The average frame rate, and FFmpeg's guess of the base rate (`r_frame_rate`).
    package var averageFrameRate: (numerator: Int, denominator: Int)
    package var baseFrameRate: (numerator: Int, denominator: Int)
    /// A cover-art picture (`AV_DISPOSITION_ATTACHED_PIC`).
    package var isAttachedPicture: Bool
    /// The display matrix (9 values, row-major) and its counter-clockwise rotation in degrees, if any.
    package var displayMatrix: (values: [Int32], counterClockwiseDegrees: Double)?
    /// HDR side data (mastering display, content light level, Dolby Vision record).
    package var hdr: HDRSideData
    /// The field order the stream declares (Matroska's FieldOrder, MP4's `fiel`, a codec's headers):
    /// `true` when the top field is displayed first, `false` bottom first, `nil` progressive or unknown.
    package var declaredTopFieldFirst: Bool?
}

/// The kinds of streams in a container.
package struct StreamCounts: Sendable {
    package var video = 0, audio = 0, subtitle = 0
}

extension FormatContext {
    /// FFmpeg's time base for container times (`AV_TIME_BASE`: microseconds).
    package static let containerTicksPerSecond = Double(AV_TIME_BASE)

    /// How many streams the container has.
    package var streamCount: Int { Int(pointer.pointee.nb_streams) }

    /// The container's short name(s), for example `mov,mp4,m4a,3gp,3g2,mj2`.
    package var formatName: String { String(cString: pointer.pointee.iformat.pointee.name) }

    /// The container's start in microseconds, `nil` when it gives none.
    package var startTime: Int64? { pointer.pointee.start_time == cffmpeg_nopts_value() ? nil : pointer.pointee.start_time }

    /// The container's duration in microseconds, `nil` when it gives none.
    package var duration: Int64? { pointer.pointee.duration == cffmpeg_nopts_value() ? nil : pointer.pointee.duration }

    /// The container's overall bit rate (0 when unknown).
    package var bitRate: Int { Int(pointer.pointee.bit_rate) }

    /// The input's size in bytes, negative when unknown.
    package var byteSize: Int64 { pointer.pointee.pb.map { avio_size($0) } ?? -1 }

    /// `av_find_best_stream` for video: the stream's index, or a negative FFmpeg code
    /// (``FFmpegError/decoderNotFound`` when the best stream has no decoder).
    package func bestVideoStream() -> Int32 {
        av_find_best_stream(pointer, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
    }

    /// How many video, audio and subtitle streams there are.
    package var streamCounts: StreamCounts {
        var counts = StreamCounts()
        for stream in streams {
            switch stream.pointee.codecpar.pointee.codec_type {
            case AVMEDIA_TYPE_VIDEO: counts.video += 1
            case AVMEDIA_TYPE_AUDIO: counts.audio += 1
            case AVMEDIA_TYPE_SUBTITLE: counts.subtitle += 1
            default: break
            }
        }
        return counts
    }

    /// Discards every stream but `index` at the demuxer (`AVDISCARD_ALL`): their packets are never read.
    package func discardStreams(except index: Int32) {
        for (position, stream) in streams.enumerated() where position != Int(index) {
            stream.pointee.discard = AVDISCARD_ALL
        }
    }

    /// The stream at `index` described, or `nil` when there is none.
    package func describeStream(_ index: Int32) -> StreamDescription? {
        guard index >= 0, Int(index) < streamCount, let stream = pointer.pointee.streams[Int(index)] else { return nil }
        let parameters = stream.pointee.codecpar.pointee
        let nopts = cffmpeg_nopts_value()
        let pixelFormat = AVPixelFormat(rawValue: parameters.format)
        var bitDepth: Int?
        if let descriptor = av_pix_fmt_desc_get(pixelFormat) {
            bitDepth = Int(descriptor.pointee.comp.0.depth)
        } else if parameters.bits_per_raw_sample > 0 {
            bitDepth = Int(parameters.bits_per_raw_sample)
        }
        var matrix: (values: [Int32], counterClockwiseDegrees: Double)?
        if let data = FFmpegCompat.streamSideData(stream, AV_PKT_DATA_DISPLAYMATRIX), data.count >= 9 * 4 {
            let values = UnsafeRawPointer(data.baseAddress!).withMemoryRebound(to: Int32.self, capacity: 9) {
                Array(UnsafeBufferPointer(start: $0, count: 9))
            }
            let degrees = values.withUnsafeBufferPointer { av_display_rotation_get($0.baseAddress!) }
            matrix = (values, degrees)
        }
        let range: ColorRange = switch parameters.color_range {
        case AVCOL_RANGE_MPEG: .limited
        case AVCOL_RANGE_JPEG: .full
        default: .unspecified
        }
        func pair(_ value: AVRational) -> (Int, Int) { (Int(value.num), Int(value.den)) }
        let fieldOrder: Bool? = switch parameters.field_order {
        case AV_FIELD_TT, AV_FIELD_BT: true
        case AV_FIELD_BB, AV_FIELD_TB: false
        default: nil
        }
        return StreamDescription(
            index: index,
            timeBaseNumerator: Int(stream.pointee.time_base.num), timeBaseDenominator: Int(stream.pointee.time_base.den),
            startTimestamp: stream.pointee.start_time == nopts ? nil : stream.pointee.start_time,
            duration: stream.pointee.duration == nopts ? nil : stream.pointee.duration,
            width: Int(parameters.width), height: Int(parameters.height),
            codecName: String(cString: avcodec_get_name(parameters.codec_id)),
            pixelFormatName: av_get_pix_fmt_name(pixelFormat).map { String(cString: $0) },
            colorRange: range,
            colorSpaceName: av_color_space_name(parameters.color_space).map { String(cString: $0) },
            colorTransferName: HDRColor.name(av_color_transfer_name(parameters.color_trc)),
            colorPrimariesName: HDRColor.name(av_color_primaries_name(parameters.color_primaries)),
            bitDepth: bitDepth,
            codecSampleAspectRatio: pair(parameters.sample_aspect_ratio),
            streamSampleAspectRatio: pair(stream.pointee.sample_aspect_ratio),
            averageFrameRate: pair(stream.pointee.avg_frame_rate),
            baseFrameRate: pair(stream.pointee.r_frame_rate),
            isAttachedPicture: stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0,
            displayMatrix: matrix,
            hdr: HDRColor.sideData(of: stream),
            declaredTopFieldFirst: fieldOrder)
    }

    /// Timestamps (stream ticks) of the keyframes the demuxer's index lists for stream `index`, in index
    /// order; empty when the container has no index (MPEG-TS, raw streams).
    package func indexedKeyframeTimestamps(stream index: Int32) -> [Int64] {
        guard index >= 0, Int(index) < streamCount, let stream = pointer.pointee.streams[Int(index)] else { return [] }
        let count = avformat_index_get_entries_count(stream)
        guard count > 0 else { return [] }
        var stamps: [Int64] = []
        stamps.reserveCapacity(Int(count))
        for position in 0..<count {
            guard let entry = avformat_index_get_entry(stream, position) else { continue }
            if entry.pointee.flags & AVINDEX_KEYFRAME != 0 { stamps.append(entry.pointee.timestamp) }
        }
        return stamps
    }

    /// The keyframes the demuxer's index lists for stream `index` with where their packets lie: timestamp
    /// (stream ticks), byte offset and size, in index order; only entries that give a position and a
    /// size (an MP4's samples; not Matroska's cue points, nor anything without an index).
    package func indexedKeyframePackets(stream index: Int32) -> [(timestamp: Int64, offset: Int64, size: Int)] {
        guard index >= 0, Int(index) < streamCount, let stream = pointer.pointee.streams[Int(index)] else { return [] }
        let count = avformat_index_get_entries_count(stream)
        guard count > 0 else { return [] }
        var packets: [(timestamp: Int64, offset: Int64, size: Int)] = []
        for position in 0..<count {
            guard let entry = avformat_index_get_entry(stream, position)?.pointee else { continue }
            if entry.flags & AVINDEX_KEYFRAME != 0, entry.pos >= 0, entry.size > 0 {
                packets.append((entry.timestamp, entry.pos, Int(entry.size)))
            }
        }
        return packets
    }

    /// Opens a decoder for stream `index` (see ``CodecContext/init(parameters:decoder:threads:lowDelay:maxPixels:displayName:)``):
    /// FFmpeg's default one for the codec, or the one that keeps the stream's alpha (``alphaDecoder(for:)``).
    package func openDecoder(stream index: Int32, threads: Int, lowDelay: Bool = false, maxPixels: Int,
                             displayName: String) throws(FFmpegFailure) -> CodecContext {
        guard index >= 0, Int(index) < streamCount, let stream = pointer.pointee.streams[Int(index)] else {
            throw FFmpegFailure(.noVideoStream, "\(displayName): no stream \(index)")
        }
        return try CodecContext(parameters: stream.pointee.codecpar, decoder: Self.alphaDecoder(for: stream), threads: threads,
                                lowDelay: lowDelay, maxPixels: maxPixels, displayName: displayName)
    }

    /// The decoder that keeps a VP8 or VP9 stream's alpha, or `nil` for FFmpeg's default decoder.
    ///
    /// WebM carries a VP8/VP9 picture's alpha as a second coded picture in each block's BlockAdditional
    /// and says so with the track's `AlphaMode` 1 (FFmpeg's tag `alpha_mode`). FFmpeg's own `vp8` and
    /// `vp9` decoders ignore it, so such a clip would show its colour planes as if opaque; libvpx's
    /// wrappers (`libvpx`, `libvpx-vp9`) decode both pictures into `yuva420p`, which the scaler then
    /// flattens like any other picture with alpha. `nil` too when this FFmpeg build has no libvpx.
    static func alphaDecoder(for stream: UnsafeMutablePointer<AVStream>) -> UnsafePointer<AVCodec>? {
        guard let tag = av_dict_get(stream.pointee.metadata, "alpha_mode", nil, 0), let value = tag.pointee.value,
              String(cString: value) == "1" else { return nil }
        switch stream.pointee.codecpar.pointee.codec_id {
        case AV_CODEC_ID_VP9: return avcodec_find_decoder_by_name("libvpx-vp9")
        case AV_CODEC_ID_VP8: return avcodec_find_decoder_by_name("libvpx")
        default: return nil
        }
    }
}

/// Which demuxer FFmpeg would pick for a file's first bytes, without demuxing anything.
package enum FormatProbe {
    /// The short name of the demuxer whose probe scores `bytes` above `AVPROBE_SCORE_RETRY` (as FFmpeg's
    /// own first probe), or `nil`. `filename` (NUL-terminated bytes, or empty for none) helps formats
    /// known by their extension.
    package static func formatName(of bytes: [UInt8], filename: [CChar]) -> String? {
        guard !bytes.isEmpty else { return nil }
        var padded = bytes
        padded.append(contentsOf: [UInt8](repeating: 0, count: Int(AVPROBE_PADDING_SIZE)))
        var score: Int32 = AVPROBE_SCORE_RETRY
        let format = padded.withUnsafeMutableBufferPointer { buffer -> UnsafePointer<AVInputFormat>? in
            (filename.last == 0 ? filename : filename + [0]).withUnsafeBufferPointer { characters in
                let name = characters.baseAddress
                var probe = AVProbeData(filename: name, buf: buffer.baseAddress, buf_size: Int32(buffer.count) - AVPROBE_PADDING_SIZE,
                                        mime_type: nil)
                return av_probe_input_format2(&probe, 1, &score)
            }
        }
        return format?.pointee.name.map { String(cString: $0) }
    }

    /// Up to `count` first bytes of an http(s) URL, read through FFmpeg (`http,https,tcp,tls` only, with
    /// `rw_timeout` of `readTimeout` seconds); `nil` when it cannot be opened.
    package static func prefix(ofURL url: String, count: Int, readTimeout: Double, tls: [String: String] = [:]) -> [UInt8]? {
        var io: UnsafeMutablePointer<AVIOContext>?
        var dictionary: OpaquePointer?
        av_dict_set(&dictionary, "protocol_whitelist", "http,https,tcp,tls", 0)
        av_dict_set(&dictionary, "rw_timeout", String(Int(readTimeout * 1_000_000)), 0)
        for (key, value) in tls { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        guard avio_open2(&io, url, AVIO_FLAG_READ, nil, &dictionary) >= 0, let io else { return nil }
        defer { var closing: UnsafeMutablePointer<AVIOContext>? = io; avio_closep(&closing) }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBufferPointer { avio_read(io, $0.baseAddress, Int32($0.count)) }
        return Array(bytes.prefix(max(0, Int(read))))
    }
}
