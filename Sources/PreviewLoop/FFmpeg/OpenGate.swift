import CFFmpeg

/// FFmpeg's `io_open` hook: every resource a demuxer opens (the input itself, playlist segments,
/// referenced files, in nested demuxers too) passes ``SourcePolicy/refusal(for:)`` before FFmpeg's
/// own opener runs.
///
/// Reached through `AVFormatContext.opaque`, which FFmpeg copies to nested contexts.
/// `@unchecked Sendable`: immutable after `init`; the policy is thread-safe.
final class OpenGate: @unchecked Sendable {
    typealias Opener = @convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
                                       UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Int32

    let policy: SourcePolicy
    private let defaultOpen: Opener?

    init(policy: SourcePolicy, defaultOpen: Opener?) {
        self.policy = policy
        self.defaultOpen = defaultOpen
    }

    /// The C entry point stored in `AVFormatContext.io_open`.
    static let hook: Opener = { context, io, url, flags, options in
        guard let context, let opaque = context.pointee.opaque, let url else { return cffmpeg_averror(EPERM) }
        let gate = Unmanaged<OpenGate>.fromOpaque(opaque).takeUnretainedValue()
        if let reason = gate.policy.refusal(for: String(cString: url)) {
            gate.policy.record(reason)
            return cffmpeg_averror(EPERM)
        }
        guard let open = gate.defaultOpen else { return cffmpeg_averror(ENOSYS) }
        return open(context, io, url, flags, options)
    }
}

/// Bytes in memory read by FFmpeg through a custom `AVIOContext`; owns the context and its buffer.
///
/// Used from the one thread that reads the input.
final class MemoryReader {
    private let bytes: [UInt8]
    private var position = 0
    private(set) var context: UnsafeMutablePointer<AVIOContext>?

    init(_ bytes: [UInt8]) throws(PreviewLoopError) {
        self.bytes = bytes
        let size = 32 * 1024
        guard let buffer = av_malloc(size)?.assumingMemoryBound(to: UInt8.self) else {
            throw PreviewLoopError(.tooLarge, "out of memory for an I/O buffer")
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
            throw PreviewLoopError(.tooLarge, "out of memory for an I/O context")
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
