import CFFmpeg

/// Owns an input `AVFormatContext`: opened in `init`, closed in `deinit`. Used from one thread at a time.
package final class FormatContext {
    private let liveToken = LiveObjects.Token()
    let pointer: UnsafeMutablePointer<AVFormatContext>
    /// Kept alive for as long as FFmpeg may call it back.
    package let interrupter: Interrupter
    /// Checks every resource FFmpeg opens for this input (kept alive for the `io_open` hook).
    package let gate: OpenGate
    /// The custom I/O over bytes in memory, when the input is `.data`.
    private let memory: RandomAccessReader?
    /// The custom I/O over bytes read at offsets (an object in a store), when the input is one.
    private let ranged: RandomAccessReader?

    /// Opens an input with `avformat_open_input` and reads stream information.
    ///
    /// - Parameters:
    ///   - url: what FFmpeg opens (`file:/path`, `https://…`, `pipe:0`; ignored for `memory`), as the
    ///     NUL-terminated bytes FFmpeg gets: a file name is bytes, which a `String` cannot always hold.
    ///   - displayName: how errors name the input.
    ///   - options: demuxer and protocol options (`protocol_whitelist`, `format_whitelist`, …).
    ///   - policy: what the input may make FFmpeg open besides itself.
    ///   - memory: bytes to read through a custom I/O context instead of a URL.
    ///   - ranged: remote bytes to read through a custom I/O context instead of a URL.
    ///   - maxPixels: the largest picture the probing decoders may allocate.
    ///   - formatName: the demuxer to use instead of probing (`jpeg_pipe` for a JPEG file, which FFmpeg's
    ///     probe would give to `image2` by its extension), or `nil`.
    package init(url: [CChar], displayName: String, options: [String: String], policy: any OpenPolicy, memory: RandomAccessReader? = nil,
         ranged: RandomAccessReader? = nil, maxPixels: Int, interrupter: Interrupter, formatName: String? = nil) throws(FFmpegFailure) {
        self.interrupter = interrupter
        self.memory = memory
        self.ranged = ranged
        guard let context = avformat_alloc_context() else {
            throw FFmpegFailure(.tooLarge, "\(displayName): out of memory")
        }
        gate = OpenGate(policy: policy, defaultOpen: context.pointee.io_open, readTimeout: options["rw_timeout"],
                        tls: options.filter { OpenGate.tlsOptionNames.contains($0.key) })
        context.pointee.interrupt_callback = interrupter.callback
        context.pointee.opaque = Unmanaged.passUnretained(gate).toOpaque()
        context.pointee.io_open = OpenGate.hook
        if let custom = memory?.context ?? ranged?.context {
            context.pointee.pb = custom
            context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        }
        var dictionary: OpaquePointer? = nil
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        var opened: UnsafeMutablePointer<AVFormatContext>? = context
        let forced = formatName.flatMap { av_find_input_format($0) }
        precondition(url.last == 0, "the URL is a NUL-terminated C string")
        let result = url.withUnsafeBufferPointer { avformat_open_input(&opened, memory == nil && ranged == nil ? $0.baseAddress : nil, forced, &dictionary) }
        // On failure avformat_open_input frees the context and sets `opened` to nil.
        guard result >= 0, let opened else {
            throw Self.openError(result, displayName: displayName, interrupter: interrupter, policy: policy)
        }
        pointer = opened
        // A picture size the container declares is checked before anything is decoded.
        for stream in streams where stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO {
            let parameters = stream.pointee.codecpar.pointee
            if Int(parameters.width) * Int(parameters.height) > maxPixels {
                throw FFmpegFailure(.tooLarge, "\(displayName): the picture is \(parameters.width)x\(parameters.height), "
                                       + "more than the limit of \(maxPixels) pixels")
            }
        }
        // The probing decoders get the same picture-size limit as ours, so a "decompression bomb"
        // is refused before its first frame is allocated.
        let streamCount = Int(pointer.pointee.nb_streams)
        var streamOptions = [OpaquePointer?](repeating: nil, count: max(1, streamCount))
        for index in 0..<streamCount { av_dict_set(&streamOptions[index], "max_pixels", String(maxPixels), 0) }
        defer { for index in 0..<streamCount { av_dict_free(&streamOptions[index]) } }
        let info = streamOptions.withUnsafeMutableBufferPointer { avformat_find_stream_info(pointer, $0.baseAddress) }
        if info < 0 {
            if interrupter.shouldInterrupt {
                throw Self.openError(FFmpegError.exit, displayName: displayName, interrupter: interrupter, policy: policy)
            }
            // Some files still demux without complete stream info; only fail when nothing usable is there.
            if pointer.pointee.nb_streams == 0 {
                throw FFmpegFailure(.notMediaFile, "\(displayName): not a media file FFmpeg can read",
                                       operation: "avformat_find_stream_info", ffmpegCode: info,
                                       ffmpegMessage: FFmpegError.text(info))
            }
        }
    }

    deinit {
        var context: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&context)
    }

    private static func openError(_ result: Int32, displayName: String, interrupter: Interrupter, policy: any OpenPolicy) -> FFmpegFailure {
        let text = FFmpegError.text(result)
        if let refusal = policy.firstRefusal {
            return FFmpegFailure(.refusedByPolicy, "\(displayName): refused: \(refusal)", operation: "avformat_open_input",
                                    ffmpegCode: result, ffmpegMessage: text)
        }
        if result == FFmpegError.exit || interrupter.shouldInterrupt {
            if interrupter.isCancelled {
                return FFmpegFailure(.cancelled, "\(displayName): cancelled while opening", operation: "avformat_open_input")
            }
            let why: String
            if case .operation(let seconds)? = interrupter.expiredLimit {
                why = "opening took more than the \(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)) s allowed (--timeout)"
            } else {
                why = interrupter.expiryDescription
            }
            return FFmpegFailure(.timedOut, "\(displayName): timed out while opening (\(why))",
                                    operation: "avformat_open_input", ffmpegCode: result, ffmpegMessage: text)
        }
        // FFmpeg's text for two limits is not the limit's: say which was crossed.
        if let logged = FFmpegLogging.lastError {
            if logged.contains("exceeds max_streams") {
                let limit = logged.split(separator: "(").dropFirst().first?.split(separator: ")").first.map(String.init) ?? "?"
                return FFmpegFailure(.tooLarge, "\(displayName): has more streams than the limit of \(limit)")
            }
            if logged.contains("Picture size"), logged.contains("is invalid") {
                let size = logged.split(separator: " ").first { $0.contains("x") && $0.first?.isNumber == true }.map(String.init) ?? "?"
                return FFmpegFailure(.tooLarge, "\(displayName): declares a \(size) picture, larger than FFmpeg takes "
                                     + "((width+128)×(height+128) below 268435456)")
            }
        }
        let code = FFmpegError.code(for: result, fallback: .notMediaFile)
        let message: String
        switch code {
        case .inputNotFound: message = displayName.contains("://") ? "\(displayName): not found" : "\(displayName): no such file"
        case .inputNotReadable: message = "\(displayName): cannot be read"
        case .refusedByPolicy: message = "\(displayName): protocol not allowed"
        case .notMediaFile where result == FFmpegError.invalidData || result == FFmpegError.endOfFile:
            message = "\(displayName): not a media file FFmpeg can read"
        default: message = "\(displayName): cannot be opened"
        }
        return FFmpegFailure(code, message, operation: "avformat_open_input", ffmpegCode: result, ffmpegMessage: text)
    }

    /// The streams, borrowed from the context (valid while `self` lives).
    var streams: [UnsafeMutablePointer<AVStream>] {
        (0..<Int(pointer.pointee.nb_streams)).compactMap { pointer.pointee.streams[$0] }
    }

    /// Reads the next packet into `packet`.
    ///
    /// - Returns: `false` at the end of the input.
    package func readPacket(into packet: Packet) throws(FFmpegFailure) -> Bool {
        av_packet_unref(packet.pointer)
        let result = av_read_frame(pointer, packet.pointer)
        if result == FFmpegError.endOfFile {
            // A playlist whose later segment was refused ends early: that is the refusal, not the clip's end.
            if let refusal = gate.policy.firstRefusal {
                throw FFmpegFailure(.refusedByPolicy, "refused: \(refusal)", operation: "av_read_frame")
            }
            return false
        }
        if result < 0 {
            if interrupter.isCancelled { throw FFmpegFailure(.cancelled, "cancelled", operation: "av_read_frame") }
            if let refusal = gate.policy.firstRefusal {
                throw FFmpegFailure(.refusedByPolicy, "refused: \(refusal)", operation: "av_read_frame",
                                       ffmpegCode: result, ffmpegMessage: FFmpegError.text(result))
            }
            if result == FFmpegError.exit || interrupter.isPastDeadline {
                throw FFmpegFailure(.timedOut, "timed out while reading (\(interrupter.expiryDescription))", operation: "av_read_frame",
                                       ffmpegCode: result, ffmpegMessage: FFmpegError.text(result))
            }
            // An I/O error in the middle of a file (for example a truncated download) ends the data we have.
            if result == FFmpegError.invalidData || result == cffmpeg_averror(EIO) { return false }
            try check(result, "av_read_frame", code: .inputNotReadable, "read failed")
        }
        return true
    }

    /// Whether the input can seek at all (a pipe cannot).
    package var isSeekable: Bool {
        guard let io = pointer.pointee.pb else { return true }      // demuxers doing their own I/O
        return io.pointee.seekable & AVIO_SEEKABLE_NORMAL != 0
    }

    /// Whether the demuxer can restart from byte 0 (it allows byte seeks and is not a pipe).
    package var canSeekToFirstByte: Bool {
        guard let io = pointer.pointee.pb, io.pointee.seekable & AVIO_SEEKABLE_NORMAL != 0 else { return false }
        let flags = pointer.pointee.iformat.pointee.flags
        // Formats without a seek index, where timestamp seeks are approximate.
        return flags & AVFMT_NO_BYTE_SEEK == 0 && flags & AVFMT_TS_DISCONT != 0
    }

    /// Whether the demuxer reads the index at the end of the file only when first asked to seek
    /// (Matroska and WebM with their cues after the clusters, as FFmpeg's muxer writes them by default).
    package var defersIndexToFirstSeek: Bool {
        String(cString: pointer.pointee.iformat.pointee.name).hasPrefix("matroska")
    }

    /// Restarts demuxing from the first byte of the input.
    package func seekToFirstByte() throws(FFmpegFailure) {
        try check(av_seek_frame(pointer, -1, 0, AVSEEK_FLAG_BYTE), "av_seek_frame", code: .decodingFailed, "seek to start failed")
    }

    /// Seeks so that the next packets of `streamIndex` start at the keyframe at or before `timestamp`
    /// (in the stream's time base).
    package func seek(streamIndex: Int32, to timestamp: Int64) throws(FFmpegFailure) {
        let result = avformat_seek_file(pointer, streamIndex, Int64.min, timestamp, timestamp, 0)
        if result < 0 {
            // Some demuxers only implement the older entry point.
            try check(av_seek_frame(pointer, streamIndex, timestamp, AVSEEK_FLAG_BACKWARD), "av_seek_frame",
                      code: .decodingFailed, "seek failed")
        }
    }
}
