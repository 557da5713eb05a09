import CFFmpeg

/// FFmpeg's `io_open` hook: every resource a demuxer opens (the input itself, playlist segments,
/// referenced files, in nested demuxers too) passes ``SourcePolicy/refusal(for:)`` before FFmpeg's
/// own opener runs.
///
/// http(s) URLs are opened with `max_redirects=0`, so FFmpeg's http protocol never follows a redirect
/// on its own (it would do so past this hook); the gate follows them itself, at most
/// ``maxRedirects`` hops, each hop checked by ``SourcePolicy/refusal(forRedirectTo:ofInput:)`` before
/// anything is sent to it (``RedirectProbe`` learns where a hop leads from the server that answered).
/// A refused hop is never contacted.
///
/// Reached through `AVFormatContext.opaque`, which FFmpeg copies to nested contexts.
/// `@unchecked Sendable`: immutable after `init`; the policy is thread-safe.
final class OpenGate: @unchecked Sendable {
    typealias Opener = @convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
                                       UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Int32

    /// The most redirects followed for one open (FFmpeg's own limit).
    static let maxRedirects = 8

    let policy: SourcePolicy
    private let defaultOpen: Opener?
    /// `rw_timeout` (microseconds) for the redirect probe's connection, as the input has it.
    private let readTimeout: String?

    init(policy: SourcePolicy, defaultOpen: Opener?, readTimeout: String? = nil) {
        self.policy = policy
        self.defaultOpen = defaultOpen
        self.readTimeout = readTimeout
    }

    /// The C entry point stored in `AVFormatContext.io_open`.
    static let hook: Opener = { context, io, url, flags, options in
        guard let context, let opaque = context.pointee.opaque, let url else { return cffmpeg_averror(EPERM) }
        let gate = Unmanaged<OpenGate>.fromOpaque(opaque).takeUnretainedValue()
        let address = String(cString: url)
        if let reason = gate.policy.refusal(for: address) {
            gate.policy.record(reason)
            return cffmpeg_averror(EPERM)
        }
        guard let open = gate.defaultOpen else { return cffmpeg_averror(ENOSYS) }
        let lowered = address.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else { return open(context, io, url, flags, options) }
        return gate.openFollowingRedirects(address, isInput: gate.policy.openCount == 1, open: open,
                                           context: context, io: io, flags: flags, options: options)
    }

    /// Opens an http(s) URL with FFmpeg's redirect following off, following each redirect itself
    /// once the policy admits the hop.
    private func openFollowingRedirects(_ url: String, isInput: Bool, open: Opener, context: UnsafeMutablePointer<AVFormatContext>,
                                        io: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?, flags: Int32,
                                        options: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
        var target = url
        var hops = 0
        while true {
            // Each attempt gets its own copy of the caller's options (an open consumes what it uses).
            var attempt: OpaquePointer? = nil
            if let options { av_dict_copy(&attempt, options.pointee, 0) }
            av_dict_set(&attempt, "max_redirects", "0", 0)
            let result = target.withCString { open(context, io, $0, flags, &attempt) }
            if result >= 0 {
                // Should an FFmpeg build ignore max_redirects, the place it read from is still checked
                // before the caller reads a byte of the body (the other origin would have been contacted).
                if let opened = io?.pointee, let reached = Self.location(of: opened), reached != target,
                   SourcePolicy.origin(of: reached) != SourcePolicy.origin(of: target),
                   let reason = policy.refusal(forRedirectTo: reached, ofInput: isInput) {
                    av_dict_free(&attempt)
                    avio_closep(io)
                    policy.record(reason)
                    return cffmpeg_averror(EPERM)
                }
                if let options {
                    av_dict_free(options)
                    options.pointee = attempt
                } else {
                    av_dict_free(&attempt)
                }
                return result
            }
            av_dict_free(&attempt)
            // A redirect FFmpeg declined to follow fails with EIO; any other failure is final.
            guard result == cffmpeg_averror(EIO),
                  let next = RedirectProbe.location(of: target, interrupt: context.pointee.interrupt_callback, readTimeout: readTimeout)
            else { return result }
            if hops >= Self.maxRedirects {
                policy.record("more than \(Self.maxRedirects) redirects from \(url)")
                return cffmpeg_averror(EPERM)
            }
            if let reason = policy.refusal(forRedirectTo: next, ofInput: isInput) {
                policy.record(reason)
                return cffmpeg_averror(EPERM)
            }
            hops += 1
            target = next
        }
    }

    /// The URL an http(s) context ended up reading (FFmpeg's `location` option), if it says.
    private static func location(of io: UnsafeMutablePointer<AVIOContext>) -> String? {
        var value: UnsafeMutablePointer<UInt8>?
        guard av_opt_get(io, "location", AV_OPT_SEARCH_CHILDREN, &value) >= 0, let value else { return nil }
        defer { av_free(value) }
        return String(cString: value)
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
