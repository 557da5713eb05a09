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
    /// An `s3://` input's bytes (fetched in ranges, shared by every open of this input).
    let objectBytes: ObjectStoreBytes?
    /// An http(s) input's bytes when its server takes byte ranges (fetched in bounded ranges, shared by
    /// every open of this input); `nil` when FFmpeg's protocol reads it (playlists, servers without ranges).
    let webBytes: HTTPRangeBytes?
    /// What reading a remote input (`s3://` or http(s) in ranges) cost so far; `nil` for anything else.
    var remoteReads: RemoteReads? { objectBytes?.reads ?? webBytes?.reads }
    /// A remote input's bytes read in ranges (`s3://`, http(s) with ranges); `nil` for anything else.
    var rangedBytes: (any RangedBytes)? { objectBytes ?? webBytes }

    /// For an input read in ranges, the keyframes its index lists with where their packets lie (decode
    /// time in seconds, byte offset, size), in time order; empty for any other input, or without an
    /// index that gives packet positions (Matroska's cues, MPEG-TS).
    func indexedKeyframePackets() -> [(time: Double, offset: Int64, size: Int)] {
        guard rangedBytes != nil else { return [] }
        return format.indexedKeyframePackets(stream: streamIndex).map { (seconds(fromTimestamp: $0.timestamp), $0.offset, $0.size) }
            .sorted { $0.time < $1.time }
    }

    /// Opens `source` and selects its best video stream.
    init(source: Source, options: SourceOptions = .init(), interrupter: Interrupter = .forCurrentCall()) throws(PreviewLoopError) {
        FFmpegLog.applyDefault
        self.source = source
        self.options = options
        let name = source.description
        var chosen = try options.ffmpegInput(for: source)
        if let jobTimeout = options.jobTimeout { interrupter.setJobDeadline(after: jobTimeout) }
        interrupter.setDeadline(after: options.openTimeout)
        var memory: RandomAccessReader?
        if case .data(let data) = source { memory = try ffmpeg { () throws(FFmpegFailure) in try RandomAccessReader(memory: [UInt8](data)) } }
        let objectBytes = try source.objectInStore.map { object throws(PreviewLoopError) in
            try ObjectStoreBytes(object: object, options: options, interrupter: interrupter)
        }
        self.objectBytes = objectBytes
        let webBytes = try HTTPRangeBytes.open(source, options: options, interrupter: interrupter)
        self.webBytes = webBytes
        if webBytes != nil {
            // Read through the range reader's custom I/O: FFmpeg opens no protocol and nothing nested.
            chosen.url = ""
            chosen.options = chosen.options.filter { ["max_streams", "format_whitelist"].contains($0.key) }
            chosen.options["protocol_whitelist"] = ""
            chosen.policy = SourcePolicy(kind: .nothing)
        }
        let input = chosen
        let rangedBytes: (any RandomAccessBytes)? = objectBytes ?? webBytes
        /// Why a ranged read failed, in the store's or server's words.
        func rangedReadError() -> PreviewLoopError? { objectBytes?.readError ?? webBytes?.readError }
        // Each open gets its own I/O context over the same bytes.
        func ranged() throws(FFmpegFailure) -> RandomAccessReader? {
            try rangedBytes.map { bytes throws(FFmpegFailure) in try RandomAccessReader(bytes) }
        }
        FFmpegLog.clearLastError()
        if case .data = source, let name = Self.probedFormatName(source, options: options), Self.referencingFormats.contains(name) {
            throw PreviewLoopError(.refusedByPolicy, "\(source): a \(name) list in memory names other resources, and an input "
                                   + "in memory may not open any")
        }
        let stillFormat = Self.stillImageFormat(source, allowed: options.allowedFormats)
        let standardInputMode = source == .standardInput ? NonBlockingStandardInput() : nil
        self.standardInputMode = standardInputMode
        do {
            format = try ffmpeg { () throws(FFmpegFailure) in try FormatContext(url: FilePathBytes.cString(input.url), displayName: name, options: input.options, policy: input.policy,
                                       memory: memory, ranged: ranged(), maxPixels: options.maxPixels, interrupter: interrupter, formatName: stillFormat) }
        } catch where rangedReadError() != nil {
            // The store refused or lost a range while FFmpeg read the header: its reason, not FFmpeg's.
            throw rangedReadError() ?? error
        } catch where Self.certificateRefusal(source) != nil {
            // GnuTLS refused the server's certificate (tls_verify): said as such, and never retried.
            throw PreviewLoopError(.refusedByPolicy, "\(name): the server's TLS certificate was not accepted ("
                + (Self.certificateRefusal(source) ?? "") + "); trust its authority with --ca-file FILE, or skip the check with --insecure",
                ffmpegMessage: error.ffmpegMessage)
        } catch where error.code == .notMediaFile && source.isURL && objectBytes == nil {
            // Over the network, "not media" may be the connection's fault (a reset, a server closing
            // early). Asked again for its first bytes: a server that does not answer, or answers with
            // media an allowed demuxer takes, failed in transit (transient: batch retries it); bytes
            // no demuxer recognises (a web page) are not media (permanent).
            guard case .url(let url) = source else { throw error }
            let prefix = FormatProbe.prefix(ofURL: url.absoluteString, count: 64 * 1024, readTimeout: options.readTimeout,
                                            tls: options.tlsOptions)
            let probed = prefix.flatMap { $0.isEmpty ? nil : FormatProbe.formatName(of: $0, filename: []) }
            if let probed, let allowed = options.allowedFormats, !allowed.contains(probed) {
                throw PreviewLoopError(.refusedByPolicy, "\(source): the \(probed) format is not allowed (allowed formats are settable)")
            }
            // A playlist's failure is its segments' (refused or not media), not the connection's.
            guard prefix?.isEmpty != false || probed.map({ !Self.referencingFormats.contains($0) }) == true else { throw error }
            let what = probed.map { "its first bytes are \($0) media" } ?? "it does not answer a second request"
            throw PreviewLoopError(.inputNotReadable, "\(name): the connection failed while opening (\(what)); try again",
                                   operation: error.operation, ffmpegCode: error.ffmpegCode, ffmpegMessage: error.ffmpegMessage)
        } catch where error.code == .notMediaFile && options.allowedFormats != nil {
            // Tell a format we refuse from data that is no media at all.
            throw Self.refusedFormat(source: source, allowed: options.allowedFormats ?? [], options: options) ?? error
        }
        interrupter.setDeadline(after: nil)
        if format.streamCount > options.maxStreams {
            throw PreviewLoopError(.tooLarge, "\(name): has \(format.streamCount) streams, more than the limit of \(options.maxStreams)")
        }

        let best = format.bestVideoStream()
        let counts = format.streamCounts
        guard format.streamCount > 0 else {
            throw PreviewLoopError(.notMediaFile, "\(name): not a media file FFmpeg can read (no streams)")
        }
        guard best >= 0, var stream = format.describeStream(best) else {
            let what = counts.audio > 0 ? "has no video stream (audio only)" : "has no video stream"
            throw PreviewLoopError(best == FFmpegError.decoderNotFound ? .unsupportedCodec : .noVideoStream,
                                   "\(name): \(what)", operation: "av_find_best_stream",
                                   ffmpegCode: best, ffmpegMessage: FFmpegError.text(best))
        }
        streamIndex = best
        if !format.isSeekable, let reason = FFmpegLog.lastError, reason.contains("partial file"),
           format.formatName.hasPrefix("mov") {
            // The MP4's index (moov) follows its frames (mdat): reading forward found the index past
            // every frame, and this input cannot go back to them.
            let reader = source == .standardInput ? "standard input (a pipe) cannot seek back to them"
                : "the input cannot seek back to them (a server that does not take byte ranges)"
            throw PreviewLoopError(.inputNotReadable, "\(name): the MP4's index comes after its frames and \(reader); give a "
                + "file or a server that takes ranges, or move the index to the front (ffmpeg -i in.mp4 -c copy -movflags "
                + "+faststart out.mp4)", ffmpegMessage: reason)
        }
        var start = stream.startTimestamp
        if start == nil, source != .standardInput {
            // TimingRule: without a start from the container, the first video packet's timestamp is the
            // stream's start (not the container's zero, which may lie 1e9 s away). Reading packets moves
            // the demuxer, so the input is opened again afterwards (only for such containers).
            format.discardStreams(except: best)
            let (first, packetsRead) = try Self.firstTimestamp(format: format, streamIndex: best, readTimeout: options.readTimeout,
                                                               interrupter: interrupter)
            start = first
            if packetsRead > 0 {
                interrupter.setDeadline(after: options.openTimeout)
                if case .data(let data) = source { memory = try ffmpeg { () throws(FFmpegFailure) in try RandomAccessReader(memory: [UInt8](data)) } }
                format = try ffmpeg { () throws(FFmpegFailure) in try FormatContext(url: FilePathBytes.cString(input.url), displayName: name, options: input.options, policy: input.policy,
                                           memory: memory, ranged: ranged(), maxPixels: options.maxPixels, interrupter: interrupter, formatName: stillFormat) }
                interrupter.setDeadline(after: nil)
                guard let again = format.describeStream(best) else {
                    throw PreviewLoopError(.corruptData, "\(name): the video stream changed when the input was opened again")
                }
                stream = again
            }
        }
        format.discardStreams(except: best)
        timeBase = stream.timeBaseDenominator > 0 && stream.timeBaseNumerator > 0
            ? Double(stream.timeBaseNumerator) / Double(stream.timeBaseDenominator) : 1.0 / 90_000
        startTimestamp = start
        var described = try Self.describe(format: format, stream: stream, timeBase: timeBase, startTimestamp: startTimestamp,
                                          counts: counts, byteSize: format.byteSize, name: name)
        if !options.transform.isIdentity { described.reorient(by: options.transform) }
        if source.canBeReopened, let declared = described.duration, !described.isStillPicture {
            // A file cut short: the frames end before the stated duration (DataEndCheck).
            interrupter.setDeadline(after: options.openTimeout)
            defer { interrupter.setDeadline(after: nil) }
            let startTicks = start ?? 0, ticks = timeBase
            let decodable = DataEndCheck.decodableDuration(
                format: format, streamIndex: best, declared: declared, frameInterval: described.frameInterval, readsWhole: source.isLocal,
                seconds: { (Double($0) - Double(startTicks)) * ticks },
                timestamp: { Int64(Double(startTicks) + ($0 / ticks).rounded(.down)) },
                reopen: { () throws(PreviewLoopError) -> FormatContext in
                    if case .data(let data) = source { memory = try ffmpeg { () throws(FFmpegFailure) in try RandomAccessReader(memory: [UInt8](data)) } }
                    return try ffmpeg { () throws(FFmpegFailure) in
                        try FormatContext(url: FilePathBytes.cString(input.url), displayName: name, options: input.options, policy: input.policy, memory: memory, ranged: ranged(),
                                          maxPixels: options.maxPixels, interrupter: interrupter, formatName: stillFormat)
                    }
                })
            described.noteDecodableDuration(decodable)
        }
        info = described
        if stream.width <= 0 || stream.height <= 0 {
            // The probing decoder refused the picture size (max_pixels), or found none.
            if let reason = FFmpegLog.lastError, reason.contains("max pixel") {
                throw PreviewLoopError(.tooLarge, "\(name): the picture is larger than the limit of \(options.maxPixels) pixels",
                                       operation: "avformat_find_stream_info", ffmpegMessage: reason)
            }
            throw PreviewLoopError(.corruptData, "\(name): the video stream has no picture size")
        }
        if stream.width * stream.height > options.maxPixels {
            throw PreviewLoopError(.tooLarge, "\(name): the picture is \(stream.width)x\(stream.height), more than the limit of \(options.maxPixels) pixels")
        }
    }

    /// When an open failed, whether the input is a format FFmpeg knows but the allow-list refuses.
    ///
    /// Only the first bytes are probed (`av_probe_input_format2`); nothing is demuxed, so a refused
    /// playlist or concat list never opens what it names.
    /// The demuxer for a still image file (JPEG, PNG, WebP by their first bytes), read as a clip of one
    /// frame: FFmpeg's probe gives such files to `image2` by their extension, a demuxer that expands
    /// file-name patterns and is not allowed. `nil` for anything else, or when the demuxer is not allowed.
    static func stillImageFormat(_ source: Source, allowed: Set<String>?) -> String? {
        guard case .file(let path) = source, let head = FileSystem.prefix(ofFileAt: path, count: 12), head.count >= 12 else { return nil }
        let name: String
        if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            name = "jpeg_pipe"
        } else if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            name = "png_pipe"
        } else if head.starts(with: Array("RIFF".utf8)) && Array(head[8..<12]) == Array("WEBP".utf8) {
            name = "webp_pipe"
        } else {
            return nil
        }
        return allowed.map { $0.contains(name) } ?? true ? name : nil
    }

    /// What GnuTLS said when it refused an https server's certificate in this thread's last open, if it did.
    private static func certificateRefusal(_ source: Source) -> String? {
        guard case .url(let url) = source, url.scheme?.lowercased() == "https", let text = FFmpegLog.lastError,
              text.lowercased().contains("certificate") else { return nil }
        return String(text.split(separator: "\n").first ?? "").trimmedSpaces
    }

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
        case .url where source.objectInStore != nil:
            return nil
        case .url(let url):
            // Only the URL itself, through the same protocol whitelist and read deadline.
            guard let prefix = FormatProbe.prefix(ofURL: url.absoluteString, count: 64 * 1024, readTimeout: options.readTimeout,
                                                  tls: options.tlsOptions) else {
                return nil
            }
            bytes = prefix
        case .standardInput:
            return nil
        }
        // As FFmpeg's own first probe: only a detection scoring above AVPROBE_SCORE_RETRY counts.
        let filename: [CChar] = if case .file(let path) = source { FilePathBytes.cString(path) } else { [] }
        return FormatProbe.formatName(of: bytes, filename: filename)
    }

    /// Whether the input can seek at all (a pipe cannot).
    var isSeekable: Bool { format.isSeekable }

    /// Opens the video stream's decoder with `threads` threads.
    func openDecoder(threads: Int) throws(PreviewLoopError) -> CodecContext {
        try ffmpeg { () throws(FFmpegFailure) in
            try format.openDecoder(stream: streamIndex, threads: threads, maxPixels: options.maxPixels, displayName: source.description)
        }
    }

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
        format.indexedKeyframeTimestamps(stream: streamIndex).map { seconds(fromTimestamp: $0) }.sorted()
    }

    /// The smallest timestamp among the first video packets (up to ``TimingRule/originPackets`` of them,
    /// reading at most ``TimingRule/originReadLimit`` packets), or `nil` when none carries one; and how
    /// many packets were read (the input must then be opened again, whatever was found).
    private static func firstTimestamp(format: FormatContext, streamIndex: Int32, readTimeout: Double,
                                       interrupter: Interrupter) throws(PreviewLoopError) -> (Int64?, Int) {
        let packet = try ffmpeg { () throws(FFmpegFailure) in try Packet() }
        var first: Int64?
        var videoPackets = 0, otherPackets = 0
        while videoPackets < TimingRule.originPackets && videoPackets + otherPackets < TimingRule.originReadLimit {
            guard try PacketReading.nextPacket(of: streamIndex, from: format, into: packet, interrupter: interrupter,
                                               readTimeout: readTimeout, skipped: &otherPackets,
                                               limit: TimingRule.originReadLimit - videoPackets - otherPackets) else { break }
            videoPackets += 1
            if let stamp = packet.timestamp { first = min(first ?? stamp, stamp) }
        }
        return (first, videoPackets + otherPackets)
    }

    private static func describe(format: FormatContext, stream: StreamDescription,
                                 timeBase: Double, startTimestamp: Int64?,
                                 counts: StreamCounts, byteSize: Int64,
                                 name: String) throws(PreviewLoopError) -> VideoInfo {
        let ticks = FormatContext.containerTicksPerSecond
        let formatStart = format.startTime.map { Double($0) / ticks } ?? 0
        let startTime = startTimestamp.map { Double($0) * timeBase } ?? formatStart
        var containerDuration: Double?
        if let containerLength = format.duration, containerLength > 0 {
            // The container's duration runs from its own start; measure from the video stream's start.
            let declared = Double(containerLength) / ticks
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
        if let streamLength = stream.duration, streamLength > 0 {
            let own = Double(streamLength) * timeBase
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
        var sar = Rational(stream.codecSampleAspectRatio.numerator, stream.codecSampleAspectRatio.denominator)
        if !sar.isDefined {
            sar = Rational(stream.streamSampleAspectRatio.numerator, stream.streamSampleAspectRatio.denominator)
        }
        if !sar.isDefined { sar = Rational(1, 1) }
        let orientation = stream.displayMatrix.flatMap {
            Orientation(displayMatrix: $0.values, counterClockwiseDegrees: $0.counterClockwiseDegrees)
        } ?? .up
        let rate = stream.averageFrameRate.numerator > 0 && stream.averageFrameRate.denominator > 0
            ? stream.averageFrameRate : stream.baseFrameRate
        let frameRate = rate.numerator > 0 && rate.denominator > 0 ? Rational(rate.numerator, rate.denominator) : nil
        let pixelFormat = stream.pixelFormatName ?? "unknown"
        let range: String = switch stream.colorRange {
        case .limited: "tv"
        case .full: "pc"
        case .unspecified: pixelFormat.hasPrefix("yuvj") ? "pc" : "unknown"
        }
        let space = stream.colorSpaceName ?? "unknown"
        var info = VideoInfo(
            duration: duration,
            containerDuration: containerDuration,
            startTime: startTime,
            codecName: stream.codecName,
            width: stream.width,
            height: stream.height,
            sampleAspectRatio: sar,
            orientation: orientation,
            rotation: orientation.clockwiseDegrees,
            displaySize: VideoInfo.displaySize(width: stream.width, height: stream.height,
                                               sampleAspectRatio: sar, orientation: orientation),
            frameRate: frameRate,
            pixelFormat: pixelFormat,
            colorRange: range,
            colorSpace: space == "unknown" || space == "reserved" ? "unknown" : space,
            formatName: format.formatName,
            bitRate: format.bitRate > 0 ? format.bitRate : nil,
            videoStreamCount: counts.video,
            audioStreamCount: counts.audio,
            subtitleStreamCount: counts.subtitle,
            isStillPicture: stream.isAttachedPicture
        )
        info.describeColor(of: stream)
        // The field order the stream declares, for --deinterlace auto on frames the decoder does not flag.
        info.declaredTopFieldFirst = stream.declaredTopFieldFirst
        info.declaredDuration = duration
        return info
    }
}
