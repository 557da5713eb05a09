import CFFmpeg

/// Owns an output `AVFormatContext` muxing one video stream into the file at `path` (or into memory);
/// ``finish()`` writes the trailer and closes it (``finishInMemory()`` hands the bytes back). Where the
/// file lives is the caller's business: the library writes a temporary beside the destination and
/// renames it once finished, so readers see the whole file or nothing. `deinit` closes an unfinished
/// file (it does not remove it). Used from one thread.
package final class OutputContext {
    private let liveToken = LiveObjects.Token()
    let pointer: UnsafeMutablePointer<AVFormatContext>
    /// How errors name the output (the destination, not the temporary being written).
    package let displayName: String
    private var stream: UnsafeMutablePointer<AVStream>?

    /// Opens `muxer` (an FFmpeg short name: `mp4`, `webp`, `gif`) writing to `path`, the NUL-terminated
    /// bytes of the file's name (a file name is bytes, which a `String` cannot always hold).
    ///
    /// - Throws: `outputNotWritable` when `path` cannot be opened for writing; `encodingFailed` when this
    ///   FFmpeg build has no such muxer.
    package init(path: [CChar], displayName: String, muxer: String) throws(FFmpegFailure) {
        FFmpegLogging.applyDefault
        self.displayName = displayName
        precondition(path.last == 0, "the path is a NUL-terminated C string")
        let context = try Self.allocate(muxer: muxer, path: path, displayName: displayName)
        pointer = context
        let opened = avio_open(&context.pointee.pb, path, AVIO_FLAG_WRITE)
        if opened < 0 {
            throw FFmpegFailure(.outputNotWritable, "\(displayName): cannot write (\(FFmpegError.text(opened)))",
                                operation: "avio_open", ffmpegCode: opened, ffmpegMessage: FFmpegError.text(opened))
        }
    }

    /// Opens `muxer` writing into a growing buffer in memory (`avio_open_dyn_buf`), for a container
    /// around one still (AVIF); ``finishInMemory()`` returns the file's bytes.
    ///
    /// - Throws: `encodingFailed` when this FFmpeg build has no such muxer; `tooLarge` when out of memory.
    package init(inMemory displayName: String, muxer: String) throws(FFmpegFailure) {
        FFmpegLogging.applyDefault
        self.displayName = displayName
        let context = try Self.allocate(muxer: muxer, path: nil, displayName: displayName)
        pointer = context
        isInMemory = true
        // No version strings or dates in the file: the same picture gives the same bytes.
        context.pointee.flags |= AVFMT_FLAG_BITEXACT
        let opened = avio_open_dyn_buf(&context.pointee.pb)
        if opened < 0 {
            throw FFmpegFailure(.tooLarge, "\(displayName): out of memory starting the file", operation: "avio_open_dyn_buf",
                                ffmpegCode: opened, ffmpegMessage: FFmpegError.text(opened))
        }
    }

    /// Opens `muxer` writing into a file in memory of at most `limit` bytes (``MemoryFile``), which
    /// the muxer may seek in and read back as it does a file on disk (MP4's `+faststart`): the bytes
    /// ``finishInMemory()`` returns are those ``init(path:displayName:muxer:)`` writes to a file.
    ///
    /// - Throws: `encodingFailed` when this FFmpeg build has no such muxer; `tooLarge` when out of memory.
    package init(memory displayName: String, muxer: String, limit: Int) throws(FFmpegFailure) {
        FFmpegLogging.applyDefault
        self.displayName = displayName
        let context = try Self.allocate(muxer: muxer, path: nil, displayName: displayName)
        pointer = context
        let file = MemoryFile(limit: limit)
        memoryFile = file
        guard let pb = MemoryCursor(file: file).makeContext(writable: true) else {
            throw FFmpegFailure(.tooLarge, "\(displayName): out of memory starting the file", operation: "avio_alloc_context")
        }
        context.pointee.pb = pb
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        // A second opening (MP4's trailer reading its data back to move it) reads the same bytes.
        context.pointee.opaque = Unmanaged.passUnretained(file).toOpaque()
        context.pointee.io_open = MemoryCursor.openForReading
        context.pointee.io_close2 = MemoryCursor.close
    }

    /// Whether the output is a buffer in memory (closed with `avio_close_dyn_buf`) rather than a file.
    private var isInMemory = false
    /// The file in memory of ``init(memory:muxer:limit:)``; `nil` for the other outputs.
    private var memoryFile: MemoryFile?

    /// The most bytes a file in memory (``init(memory:muxer:limit:)``) may reach; more fails the write
    /// with `tooLarge`.
    package var memoryLimit: Int {
        get { memoryFile?.limit ?? .max }
        set { memoryFile?.limit = newValue }
    }

    /// A new output context for `muxer`, naming the file `path` (`nil` for a buffer in memory).
    private static func allocate(muxer: String, path: [CChar]?, displayName: String) throws(FFmpegFailure) -> UnsafeMutablePointer<AVFormatContext> {
        var context: UnsafeMutablePointer<AVFormatContext>?
        let allocated = avformat_alloc_output_context2(&context, nil, muxer, path)
        guard allocated >= 0, let context else {
            throw FFmpegFailure(.encodingFailed, "\(displayName): no \(muxer) muxer in this FFmpeg build",
                                operation: "avformat_alloc_output_context2", ffmpegCode: allocated,
                                ffmpegMessage: FFmpegError.text(allocated))
        }
        return context
    }

    deinit {
        if let pb = pointer.pointee.pb, memoryFile != nil {
            MemoryCursor.freeContext(pb)
            pointer.pointee.pb = nil
        }
        if pointer.pointee.pb != nil {
            if isInMemory {
                var buffer: UnsafeMutablePointer<UInt8>?
                _ = avio_close_dyn_buf(pointer.pointee.pb, &buffer)
                pointer.pointee.pb = nil
                av_free(buffer)
            } else {
                avio_closep(&pointer.pointee.pb)
            }
        }
        avformat_free_context(pointer)
    }

    /// Whether the container wants codec headers out of band: set the encoder up with
    /// `needsGlobalHeader` before opening it.
    package var needsGlobalHeader: Bool { pointer.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 }

    /// Adds the video stream an opened encoder feeds, and writes the container header.
    ///
    /// - Parameter options: muxer options (`movflags`, `loop`, `final_delay`…); an unknown one is an error.
    package func start(with encoder: EncoderContext, options: [String: String]) throws(FFmpegFailure) {
        guard let stream = avformat_new_stream(pointer, nil) else {
            throw FFmpegFailure(.tooLarge, "\(displayName): out of memory adding a stream")
        }
        self.stream = stream
        try check(avcodec_parameters_from_context(stream.pointee.codecpar, encoder.pointer), "avcodec_parameters_from_context",
                  code: .encodingFailed, "\(displayName): cannot describe the \(encoder.encoderName) stream")
        stream.pointee.time_base = encoder.timeBase
        stream.pointee.avg_frame_rate = encoder.pointer.pointee.framerate
        var dictionary: OpaquePointer? = nil
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        try check(avformat_write_header(pointer, &dictionary), "avformat_write_header", code: .encodingFailed,
                  "\(displayName): cannot start the file")
        if let unused = av_dict_get(dictionary, "", nil, AV_DICT_IGNORE_SUFFIX) {
            throw FFmpegFailure(.encodingFailed, "\(displayName): the muxer has no option '\(String(cString: unused.pointee.key))'",
                                operation: "avformat_write_header")
        }
    }

    /// Writes one packet `encoder` produced (timestamps in its time base); the packet's contents move out.
    package func write(_ packet: Packet, from encoder: EncoderContext) throws(FFmpegFailure) {
        guard let stream else { preconditionFailure("start(with:options:) comes first") }
        packet.pointer.pointee.stream_index = stream.pointee.index
        av_packet_rescale_ts(packet.pointer, encoder.timeBase, stream.pointee.time_base)
        let written = av_interleaved_write_frame(pointer, packet.pointer)
        try checkMemoryLimit(written)
        try check(written, "av_interleaved_write_frame", code: .outputNotWritable, "\(displayName): cannot write")
    }

    /// Throws `tooLarge` when `result` failed because the file in memory reached its limit.
    private func checkMemoryLimit(_ result: Int32) throws(FFmpegFailure) {
        guard result < 0, let memoryFile, memoryFile.isOverLimit else { return }
        throw FFmpegFailure(.tooLarge, "\(displayName): the file would pass its limit of \(Self.megabytes(memoryFile.limit)) in memory",
                            operation: "avio_write", ffmpegCode: result, ffmpegMessage: FFmpegError.text(result))
    }

    /// `512 MB`, `1.5 KB`: a byte count for an error message.
    private static func megabytes(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MB" : bytes >= 1 << 10 ? "\(bytes >> 10) KB" : "\(bytes) bytes"
    }

    /// Writes the trailer and closes the file.
    package func finish() throws(FFmpegFailure) {
        try check(av_write_trailer(pointer), "av_write_trailer", code: .outputNotWritable, "\(displayName): cannot finish the file")
        let closed = avio_closep(&pointer.pointee.pb)
        try check(closed, "avio_closep", code: .outputNotWritable, "\(displayName): cannot write")
    }

    /// Writes the trailer and returns the bytes of a file muxed in memory (``init(inMemory:muxer:)``,
    /// ``init(memory:muxer:limit:)``).
    package func finishInMemory() throws(FFmpegFailure) -> [UInt8] {
        if let memoryFile {
            let finished = av_write_trailer(pointer)
            try checkMemoryLimit(finished)
            try check(finished, "av_write_trailer", code: .encodingFailed, "\(displayName): cannot finish the file")
            if let pb = pointer.pointee.pb {
                MemoryCursor.freeContext(pb)
                pointer.pointee.pb = nil
            }
            return memoryFile.takeBytes()
        }
        precondition(isInMemory, "the file is written to a path; finish() closes it")
        try check(av_write_trailer(pointer), "av_write_trailer", code: .encodingFailed, "\(displayName): cannot finish the file")
        var buffer: UnsafeMutablePointer<UInt8>?
        let size = avio_close_dyn_buf(pointer.pointee.pb, &buffer)
        pointer.pointee.pb = nil
        defer { av_free(buffer) }
        guard size > 0, let buffer else {
            throw FFmpegFailure(.encodingFailed, "\(displayName): the muxer wrote nothing", operation: "avio_close_dyn_buf")
        }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
    }
}
