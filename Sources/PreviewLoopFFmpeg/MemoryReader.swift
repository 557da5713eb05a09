import CFFmpeg

/// Bytes in memory read by FFmpeg through a custom `AVIOContext`; owns the context and its buffer.
///
/// Used from the one thread that reads the input.
package final class MemoryReader {
    private let bytes: [UInt8]
    private var position = 0
    private(set) var context: UnsafeMutablePointer<AVIOContext>?

    package init(_ bytes: [UInt8]) throws(FFmpegFailure) {
        self.bytes = bytes
        let size = 32 * 1024
        guard let buffer = av_malloc(size)?.assumingMemoryBound(to: UInt8.self) else {
            throw FFmpegFailure(.tooLarge, "out of memory for an I/O buffer")
        }
        context = avio_alloc_context(buffer, Int32(size), 0, nil, { opaque, destination, wanted in
            guard let opaque, let destination else { return cffmpeg_averror(EINVAL) }
            let reader = Unmanaged<MemoryReader>.fromOpaque(opaque).takeUnretainedValue()
            let count = min(Int(wanted), reader.bytes.count - reader.position)
            guard count > 0 else { return cffmpeg_averror_eof() }
            reader.bytes.withUnsafeBufferPointer { source in
                destination.update(from: source.baseAddress! + reader.position, count: count)
            }
            reader.position += count
            return Int32(count)
        }, nil, { opaque, offset, whence in
            guard let opaque else { return Int64(cffmpeg_averror(EINVAL)) }
            let reader = Unmanaged<MemoryReader>.fromOpaque(opaque).takeUnretainedValue()
            let size = Int64(reader.bytes.count)
            switch whence & ~AVSEEK_FORCE {
            case AVSEEK_SIZE: return size
            case SEEK_SET: reader.position = Int(max(0, min(offset, size)))
            case SEEK_CUR: reader.position = Int(max(0, min(Int64(reader.position) + offset, size)))
            case SEEK_END: reader.position = Int(max(0, min(size + offset, size)))
            default: return Int64(cffmpeg_averror(EINVAL))
            }
            return Int64(reader.position)
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
