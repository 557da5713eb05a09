import CFFmpeg
internal import PreviewLoopFFmpeg
import FoundationEssentials

/// An opened input reduced to its best video stream: every other stream is discarded at the demuxer
/// (`AVDISCARD_ALL`), so audio and subtitles are never read into packets for decoding, let alone decoded.
final class MediaInput {
    let source: Source
    let options: SourceOptions
    private(set) var format: FormatContext
    let streamIndex: Int32
    /// The stream's time base, in seconds per tick.
    let timeBase: Double
    /// The stream's start, in its own ticks (`nil` when the container gives none).
    let startTimestamp: Int64?
    let info: VideoInfo
    /// Keeps standard input non-blocking while this input reads it; restored when released.
    private let standardInputMode: NonBlockingStandardInput?

    /// Opens `source` and selects its best video stream.
    init(source: Source, options: SourceOptions = .init(), interrupter: Interrupter = .forCurrentCall()) throws(PreviewLoopError) {
        FFmpegLog.applyDefault
        self.source = source
        self.options = options
        let name = source.description
        let input = try options.ffmpegInput(for: source)
        if let jobTimeout = options.jobTimeout { interrupter.setJobDeadline(after: jobTimeout) }
        interrupter.setDeadline(after: options.openTimeout)
        var memory: MemoryReader?
        if case .data(let data) = source { memory = try ffmpeg { () throws(FFmpegFailure) in try MemoryReader([UInt8](data)) } }
        FFmpegLog.clearLastError()
        if case .data = source, let name = Self.probedFormatName(source, options: options), Self.referencingFormats.contains(name) {
            throw PreviewLoopError(.refusedByPolicy, "\(source): a \(name) list in memory names other resources, and an input "
                                   + "in memory may not open any")
        }
        let standardInputMode = source == .standardInput ? NonBlockingStandardInput() : nil
        self.standardInputMode = standardInputMode
        do {
            format = try ffmpeg { () throws(FFmpegFailure) in try FormatContext(url: input.url, displayName: name, options: input.options, policy: input.policy,
                                       memory: memory, maxPixels: options.maxPixels, interrupter: interrupter) }
        } catch where error.code == .notMediaFile && options.allowedFormats != nil {
            // Tell a format we refuse from data that is no media at all.
            throw Self.refusedFormat(source: source, allowed: options.allowedFormats ?? [], options: options) ?? error
        }
        interrupter.setDeadline(after: nil)
        if Int(format.pointer.pointee.nb_streams) > options.maxStreams {
            throw PreviewLoopError(.tooLarge, "\(name): has \(format.pointer.pointee.nb_streams) streams, more than the limit of \(options.maxStreams)")
        }

        let best = av_find_best_stream(format.pointer, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        var streams = format.streams
        let counts = Self.countStreams(streams)
        guard !streams.isEmpty else {
            throw PreviewLoopError(.notMediaFile, "\(name): not a media file FFmpeg can read (no streams)")
        }
        guard best >= 0, let bestStream = streams[safe: Int(best)] else {
            let what = counts.audio > 0 ? "has no video stream (audio only)" : "has no video stream"
            throw PreviewLoopError(best == cffmpeg_averror_decoder_not_found() ? .unsupportedCodec : .noVideoStream,
                                   "\(name): \(what)", operation: "av_find_best_stream",
                                   ffmpegCode: best, ffmpegMessage: FFmpegError.text(best))
        }
        streamIndex = best
        var stream = bestStream
        if !format.isSeekable, let reason = FFmpegLog.lastError, reason.contains("partial file"),
           String(cString: format.pointer.pointee.iformat.pointee.name).hasPrefix("mov") {
            // The MP4's index (moov) follows its frames (mdat): reading forward found the index past
            // every frame, and this input cannot go back to them.
            let reader = source == .standardInput ? "standard input (a pipe) cannot seek back to them"
                : "the input cannot seek back to them (a server that does not take byte ranges)"
            throw PreviewLoopError(.inputNotReadable, "\(name): the MP4's index comes after its frames and \(reader); give a "
                + "file or a server that takes ranges, or move the index to the front (ffmpeg -i in.mp4 -c copy -movflags "
                + "+faststart out.mp4)", ffmpegMessage: reason)
        }
        let nopts = cffmpeg_nopts_value()
        var start: Int64? = stream.pointee.start_time == nopts ? nil : stream.pointee.start_time
        if start == nil, source != .standardInput {
            // TimingRule: without a start from the container, the first video packet's timestamp is the
            // stream's start (not the container's zero, which may lie 1e9 s away). Reading packets moves
            // the demuxer, so the input is opened again afterwards (only for such containers).
            for (index, other) in streams.enumerated() where index != Int(best) { other.pointee.discard = AVDISCARD_ALL }
            let (first, packetsRead) = try Self.firstTimestamp(format: format, streamIndex: best, readTimeout: options.readTimeout,
                                                               interrupter: interrupter)
            start = first
            if packetsRead > 0 {
                interrupter.setDeadline(after: options.openTimeout)
                if case .data(let data) = source { memory = try ffmpeg { () throws(FFmpegFailure) in try MemoryReader([UInt8](data)) } }
                format = try ffmpeg { () throws(FFmpegFailure) in try FormatContext(url: input.url, displayName: name, options: input.options, policy: input.policy,
                                           memory: memory, maxPixels: options.maxPixels, interrupter: interrupter) }
                interrupter.setDeadline(after: nil)
                streams = format.streams
                guard let again = streams[safe: Int(best)] else {
                    throw PreviewLoopError(.corruptData, "\(name): the video stream changed when the input was opened again")
                }
                stream = again
            }
        }
        for (index, other) in streams.enumerated() where index != Int(best) {
            other.pointee.discard = AVDISCARD_ALL
        }
        let tb = stream.pointee.time_base
        timeBase = tb.den > 0 && tb.num > 0 ? Double(tb.num) / Double(tb.den) : 1.0 / 90_000
        startTimestamp = start
        info = try Self.describe(format: format.pointer, stream: stream, timeBase: timeBase, startTimestamp: startTimestamp,
                                 counts: counts, byteSize: format.pointer.pointee.pb.map { avio_size($0) } ?? -1, name: name)
        let parameters = stream.pointee.codecpar.pointee
        if parameters.width <= 0 || parameters.height <= 0 {
            // The probing decoder refused the picture size (max_pixels), or found none.
            if let reason = FFmpegLog.lastError, reason.contains("max pixel") {
                throw PreviewLoopError(.tooLarge, "\(name): the picture is larger than the limit of \(options.maxPixels) pixels",
                                       operation: "avformat_find_stream_info", ffmpegMessage: reason)
            }
            throw PreviewLoopError(.corruptData, "\(name): the video stream has no picture size")
        }
        if Int(parameters.width) * Int(parameters.height) > options.maxPixels {
            throw PreviewLoopError(.tooLarge, "\(name): the picture is \(parameters.width)x\(parameters.height), more than the limit of \(options.maxPixels) pixels")
        }
    }

    /// When an open failed, whether the input is a format FFmpeg knows but the allow-list refuses.
    ///
    /// Only the first bytes are probed (`av_probe_input_format2`); nothing is demuxed, so a refused
    /// playlist or concat list never opens what it names.
    private static func refusedFormat(source: Source, allowed: Set<String>, options: SourceOptions) -> PreviewLoopError? {
        guard let name = probedFormatName(source, options: options), !allowed.contains(name) else { return nil }
        return PreviewLoopError(.refusedByPolicy, "\(source): the \(name) format is not allowed (allowed formats are settable)")
    }

    /// Formats that name other resources (playlists, lists): bytes in memory may not use them, since
    /// nothing may be opened from memory.
    static let referencingFormats: Set<String> = ["hls", "dash", "concat", "ffmetadata", "tee"]

    /// The demuxer FFmpeg would pick from the input's first 64 KB, read without demuxing anything;
    /// `nil` for standard input (it cannot be read twice) or when nothing scores.
    static func probedFormatName(_ source: Source, options: SourceOptions) -> String? {
        var bytes: [UInt8]
        switch source {
        case .file(let path):
            bytes = FileSystem.prefix(ofFileAt: path, count: 64 * 1024) ?? []
        case .data(let data):
            bytes = [UInt8](data.prefix(64 * 1024))
        case .url(let url):
            // Only the URL itself, through the same protocol whitelist and read deadline.
            var io: UnsafeMutablePointer<AVIOContext>?
            var dictionary: OpaquePointer?
            av_dict_set(&dictionary, "protocol_whitelist", "http,https,tcp,tls", 0)
            av_dict_set(&dictionary, "rw_timeout", String(Int(options.readTimeout * 1_000_000)), 0)
            defer { av_dict_free(&dictionary) }
            guard avio_open2(&io, url.absoluteString, AVIO_FLAG_READ, nil, &dictionary) >= 0, let io else { return nil }
            defer { var closing: UnsafeMutablePointer<AVIOContext>? = io; avio_closep(&closing) }
            bytes = [UInt8](repeating: 0, count: 64 * 1024)
            let count = bytes.withUnsafeMutableBufferPointer { avio_read(io, $0.baseAddress, Int32($0.count)) }
            bytes = Array(bytes.prefix(max(0, Int(count))))
        case .standardInput:
            return nil
        }
        guard !bytes.isEmpty else { return nil }
        bytes.append(contentsOf: [UInt8](repeating: 0, count: Int(AVPROBE_PADDING_SIZE)))
        // As FFmpeg's own first probe: only a detection scoring above AVPROBE_SCORE_RETRY counts.
        var score: Int32 = AVPROBE_SCORE_RETRY
        let format = bytes.withUnsafeMutableBufferPointer { buffer -> UnsafePointer<AVInputFormat>? in
            let filename: String = if case .file(let path) = source { path } else { "" }
            return filename.withCString { name in
                var probe = AVProbeData(filename: name, buf: buffer.baseAddress, buf_size: Int32(buffer.count) - AVPROBE_PADDING_SIZE,
                                        mime_type: nil)
                return av_probe_input_format2(&probe, 1, &score)
            }
        }
        return format?.pointee.name.map { String(cString: $0) }
    }

    /// The borrowed stream (valid while the input lives).
    var stream: UnsafeMutablePointer<AVStream> { format.pointer.pointee.streams[Int(streamIndex)]! }

    /// Seconds from the stream's start for a timestamp in stream ticks.
    func seconds(fromTimestamp timestamp: Int64) -> Double {
        // In Double: a hostile timestamp minus the start can overflow Int64.
        (Double(timestamp) - Double(startTimestamp ?? 0)) * timeBase
    }

    /// The timestamp in stream ticks for seconds from the stream's start.
    func timestamp(fromSeconds seconds: Double) -> Int64 {
        // A hair of tolerance: 2.0 s must not become the tick before a frame stamped exactly 2.0 s.
        let ticks = (Double(startTimestamp ?? 0) + (seconds / timeBase + 1e-6).rounded(.down))
        guard ticks.isFinite else { return startTimestamp ?? 0 }
        return Int64(min(max(ticks, -9.2e18), 9.2e18))
    }

    /// Times (seconds from the start) of the keyframes the demuxer's index knows, sorted; empty when
    /// the container has no index (MPEG-TS, raw streams).
    func indexedKeyframeTimes() -> [Double] {
        let count = avformat_index_get_entries_count(stream)
        guard count > 0 else { return [] }
        var times: [Double] = []
        times.reserveCapacity(Int(count))
        for index in 0..<count {
            guard let entry = avformat_index_get_entry(stream, index) else { continue }
            if entry.pointee.flags & AVINDEX_KEYFRAME != 0 { times.append(seconds(fromTimestamp: entry.pointee.timestamp)) }
        }
        return times.sorted()
    }

    private static func countStreams(_ streams: [UnsafeMutablePointer<AVStream>]) -> (video: Int, audio: Int, subtitle: Int) {
        var counts = (video: 0, audio: 0, subtitle: 0)
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

    /// The smallest timestamp among the first video packets (up to ``TimingRule/originPackets`` of them,
    /// reading at most ``TimingRule/originReadLimit`` packets), or `nil` when none carries one; and how
    /// many packets were read (the input must then be opened again, whatever was found).
    private static func firstTimestamp(format: FormatContext, streamIndex: Int32, readTimeout: Double,
                                       interrupter: Interrupter) throws(PreviewLoopError) -> (Int64?, Int) {
        let packet = try ffmpeg { () throws(FFmpegFailure) in try Packet() }
        let nopts = cffmpeg_nopts_value()
        var first: Int64?
        var videoPackets = 0, packets = 0
        while videoPackets < TimingRule.originPackets && packets < TimingRule.originReadLimit {
            interrupter.setDeadline(after: readTimeout)
            let hasPacket = try ffmpeg { () throws(FFmpegFailure) in try format.readPacket(into: packet) }
            interrupter.setDeadline(after: nil)
            guard hasPacket else { break }
            packets += 1
            let raw = packet.pointer.pointee
            guard raw.stream_index == streamIndex else { continue }
            videoPackets += 1
            let stamp = raw.pts != nopts ? raw.pts : raw.dts
            if stamp != nopts { first = min(first ?? stamp, stamp) }
        }
        return (first, packets)
    }

    private static func describe(format: UnsafeMutablePointer<AVFormatContext>, stream: UnsafeMutablePointer<AVStream>,
                                 timeBase: Double, startTimestamp: Int64?,
                                 counts: (video: Int, audio: Int, subtitle: Int), byteSize: Int64,
                                 name: String) throws(PreviewLoopError) -> VideoInfo {
        let parameters = stream.pointee.codecpar.pointee
        let nopts = cffmpeg_nopts_value()
        let formatStart = format.pointee.start_time == nopts ? 0 : Double(format.pointee.start_time) / Double(AV_TIME_BASE)
        let startTime = startTimestamp.map { Double($0) * timeBase } ?? formatStart
        var containerDuration: Double?
        if format.pointee.duration != nopts && format.pointee.duration > 0 {
            // The container's duration runs from its own start; measure from the video stream's start.
            let declared = Double(format.pointee.duration) / Double(AV_TIME_BASE)
            containerDuration = declared - max(0, startTime - formatStart)
            if let measured = containerDuration, formatStart > TimingRule.maxGap, declared > formatStart,
               TimingRule.isImplausible(duration: measured, bytes: byteSize) {
                // TimingRule: a container whose start lies far from zero and whose declared duration is
                // an end time (it counts from zero: Matroska with an output offset), not a length.
                containerDuration = declared - startTime
            }
        }
        // The video's own extent where the container records it (MP4 tracks, MPEG-TS estimates), else
        // the container's: an audio or subtitle track that runs on must not stretch the picture's time.
        var duration = containerDuration
        if stream.pointee.duration != nopts && stream.pointee.duration > 0 {
            let own = Double(stream.pointee.duration) * timeBase
            // FFmpeg fills a stream's duration from the container's when the container has none of its
            // own per stream (Matroska): an implausible one then defers to the corrected container's.
            let plausible = own.isFinite && own <= TimingRule.maxDuration && !TimingRule.isImplausible(duration: own, bytes: byteSize)
            if plausible || containerDuration == nil { duration = own }
        }
        if let measured = duration {
            guard measured.isFinite, measured <= TimingRule.maxDuration, !TimingRule.isImplausible(duration: measured, bytes: byteSize) else {
                throw PreviewLoopError(.corruptData, "\(name): corrupt timing: the video declares \(DecimalText.fixed(measured, 3)) s "
                    + "in \(byteSize >= 0 ? "\(byteSize) bytes" : "an input of unknown size") (the timing rule allows at most "
                    + "\(Int(TimingRule.maxDuration)) s and at least \(Int(TimingRule.minBytesPerSecond)) byte per second of a file)")
            }
        }
        var sar = Rational(Int(parameters.sample_aspect_ratio.num), Int(parameters.sample_aspect_ratio.den))
        if !sar.isDefined {
            sar = Rational(Int(stream.pointee.sample_aspect_ratio.num), Int(stream.pointee.sample_aspect_ratio.den))
        }
        if !sar.isDefined { sar = Rational(1, 1) }
        let orientation = Self.orientation(of: stream)
        let rate = stream.pointee.avg_frame_rate.num > 0 && stream.pointee.avg_frame_rate.den > 0
            ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        let frameRate = rate.num > 0 && rate.den > 0 ? Rational(Int(rate.num), Int(rate.den)) : nil
        let pixelFormat = av_get_pix_fmt_name(AVPixelFormat(rawValue: parameters.format)).map { String(cString: $0) } ?? "unknown"
        let range: String = switch parameters.color_range {
        case AVCOL_RANGE_MPEG: "tv"
        case AVCOL_RANGE_JPEG: "pc"
        default: pixelFormat.hasPrefix("yuvj") ? "pc" : "unknown"
        }
        let space = av_color_space_name(parameters.color_space).map { String(cString: $0) } ?? "unknown"
        var info = VideoInfo(
            duration: duration,
            containerDuration: containerDuration,
            startTime: startTime,
            codecName: String(cString: avcodec_get_name(parameters.codec_id)),
            width: Int(parameters.width),
            height: Int(parameters.height),
            sampleAspectRatio: sar,
            orientation: orientation,
            rotation: orientation.clockwiseDegrees,
            displaySize: VideoInfo.displaySize(width: Int(parameters.width), height: Int(parameters.height),
                                               sampleAspectRatio: sar, orientation: orientation),
            frameRate: frameRate,
            pixelFormat: pixelFormat,
            colorRange: range,
            colorSpace: space == "unknown" || space == "reserved" ? "unknown" : space,
            formatName: String(cString: format.pointee.iformat.pointee.name),
            bitRate: format.pointee.bit_rate > 0 ? Int(format.pointee.bit_rate) : nil,
            videoStreamCount: counts.video,
            audioStreamCount: counts.audio,
            subtitleStreamCount: counts.subtitle,
            isStillPicture: stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0
        )
        HDRColor.describe(&info, stream: stream)
        // The field order the stream declares (Matroska's FieldOrder, MP4's fiel, a codec's headers), for
        // --deinterlace auto on frames the decoder does not flag: the field displayed first.
        info.declaredTopFieldFirst = switch parameters.field_order {
        case AV_FIELD_TT, AV_FIELD_BT: true
        case AV_FIELD_BB, AV_FIELD_TB: false
        default: nil
        }
        return info
    }

    /// The orientation from the stream's display matrix side data (FFmpeg 5.1 API).
    private static func orientation(of stream: UnsafeMutablePointer<AVStream>) -> Orientation {
        var size: Int = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 9 * 4 else { return .up }
        let matrix = data.withMemoryRebound(to: Int32.self, capacity: 9) { Array(UnsafeBufferPointer(start: $0, count: 9)) }
        let degrees = matrix.withUnsafeBufferPointer { av_display_rotation_get($0.baseAddress!) }
        return Orientation(displayMatrix: matrix, counterClockwiseDegrees: degrees) ?? .up
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
