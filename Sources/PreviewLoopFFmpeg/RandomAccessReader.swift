import CFFmpeg

/// Bytes FFmpeg can read at any offset, from something other than a file or FFmpeg's own protocols (an
/// object store read in ranges). The library implements it; ``RandomAccessReader`` hands it to FFmpeg.
package protocol RandomAccessBytes: AnyObject {
    /// The size in bytes, or a negative number when it is not known.
    var byteSize: Int64 { get }
    /// Copies bytes from `offset` into `buffer`: how many (0 at the end), or `nil` when the read failed
    /// (the implementation keeps why, for the caller's error).
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Int?
    /// Whether the read that failed was stopped by the interrupter (a deadline or cancellation).
    var wasStopped: Bool { get }
}

/// A custom `AVIOContext` (read and seek, `AVSEEK_SIZE` included) over ``RandomAccessBytes``; owns the
/// context and its buffer. One per opened `FormatContext`; the bytes behind it may be shared by several
/// in turn (an input opened again reads what the first open already fetched). Used from one thread.
package final class RandomAccessReader {
    private let bytes: any RandomAccessBytes
    private var position: Int64 = 0
    private(set) var context: UnsafeMutablePointer<AVIOContext>?

    package init(_ bytes: any RandomAccessBytes) throws(FFmpegFailure) {
        self.bytes = bytes
        // FFmpeg's reads; the network granularity is the reader's window.
        let size = 64 * 1024
        guard let buffer = av_malloc(size)?.assumingMemoryBound(to: UInt8.self) else {
            throw FFmpegFailure(.tooLarge, "out of memory for an I/O buffer")
        }
        context = avio_alloc_context(buffer, Int32(size), 0, nil, { opaque, destination, wanted in
            guard let opaque, let destination, wanted > 0 else { return cffmpeg_averror(EINVAL) }
            let reader = Unmanaged<RandomAccessReader>.fromOpaque(opaque).takeUnretainedValue()
            guard let count = reader.bytes.read(at: reader.position, into: UnsafeMutableRawBufferPointer(start: destination, count: Int(wanted))) else {
                return reader.bytes.wasStopped ? FFmpegError.exit : cffmpeg_averror(EIO)
            }
            guard count > 0 else { return cffmpeg_averror_eof() }
            reader.position += Int64(count)
            return Int32(count)
        }, nil, { opaque, offset, whence in
            guard let opaque else { return Int64(cffmpeg_averror(EINVAL)) }
            let reader = Unmanaged<RandomAccessReader>.fromOpaque(opaque).takeUnretainedValue()
            let size = reader.bytes.byteSize
            let target: Int64
            switch whence & ~AVSEEK_FORCE {
            case AVSEEK_SIZE: return size >= 0 ? size : Int64(cffmpeg_averror(ENOSYS))
            case SEEK_SET: target = offset
            case SEEK_CUR: target = reader.position + offset
            case SEEK_END:
                guard size >= 0 else { return Int64(cffmpeg_averror(ENOSYS)) }
                target = size + offset
            default: return Int64(cffmpeg_averror(EINVAL))
            }
            guard target >= 0 else { return Int64(cffmpeg_averror(EINVAL)) }
            // Moving costs nothing: bytes are fetched when read.
            reader.position = target
            return target
        })
        guard context != nil else {
            var freed: UnsafeMutableRawPointer? = UnsafeMutableRawPointer(buffer)
            av_freep(&freed)
            throw FFmpegFailure(.tooLarge, "out of memory for an I/O context")
        }
        context?.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        if context != nil {
            av_freep(&context!.pointee.buffer)
            avio_context_free(&context)
        }
    }
}
