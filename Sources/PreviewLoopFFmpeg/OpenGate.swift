import CFFmpeg

/// FFmpeg's `io_open` hook: every resource a demuxer opens (the input itself, playlist segments,
/// referenced files, in nested demuxers too) passes ``OpenPolicy/refusal(for:)`` before FFmpeg's
/// own opener runs.
///
/// http(s) URLs are opened with `max_redirects=0`, so FFmpeg's http protocol never follows a redirect
/// on its own (it would do so past this hook); the gate follows them itself, at most
/// ``maxRedirects`` hops, each hop checked by ``OpenPolicy/refusal(forRedirectTo:ofInput:)`` before
/// anything is sent to it (``RedirectProbe`` learns where a hop leads from the server that answered).
/// A refused hop is never contacted.
///
/// Reached through `AVFormatContext.opaque`, which FFmpeg copies to nested contexts.
/// `@unchecked Sendable`: immutable after `init`; the policy is thread-safe.
package final class OpenGate: @unchecked Sendable {
    typealias Opener = @convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
                                       UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Int32

    /// The most redirects followed for one open (FFmpeg's own limit).
    package static let maxRedirects = 8

    let policy: any OpenPolicy
    private let defaultOpen: Opener?
    /// `rw_timeout` (microseconds) for the redirect probe's connection, as the input has it.
    private let readTimeout: String?
    /// The TLS options every https open gets (`tls_verify`, `ca_file`), the input's own and every
    /// nested one's (playlist segments, redirects): FFmpeg's demuxers do not pass them on themselves.
    private let tls: [String: String]

    /// The option names that carry TLS verification.
    package static let tlsOptionNames: Set<String> = ["tls_verify", "ca_file"]

    init(policy: any OpenPolicy, defaultOpen: Opener?, readTimeout: String? = nil, tls: [String: String] = [:]) {
        self.policy = policy
        self.defaultOpen = defaultOpen
        self.readTimeout = readTimeout
        self.tls = tls
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
            for (key, value) in tls { av_dict_set(&attempt, key, value, 0) }
            let result = target.withCString { open(context, io, $0, flags, &attempt) }
            if result >= 0 {
                // Should an FFmpeg build ignore max_redirects, the place it read from is still checked
                // before the caller reads a byte of the body (the other origin would have been contacted).
                if let opened = io?.pointee, let reached = Self.location(of: opened), reached != target,
                   type(of: policy).origin(of: reached) != type(of: policy).origin(of: target),
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
                  let next = RedirectProbe.location(of: target, interrupt: context.pointee.interrupt_callback, readTimeout: readTimeout, tls: tls)
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

/// What an input may make FFmpeg open besides itself, asked by ``OpenGate`` for every resource and
/// redirect hop. The library's source policy implements it, so this layer never names the policy type.
/// Implementations are thread-safe: FFmpeg calls them from the thread that reads the input.
package protocol OpenPolicy: AnyObject, Sendable {
    /// Why `url` may not be opened, or `nil` when it may (counts the open).
    func refusal(for url: String) -> String?
    /// Why a redirect to `url` may not be followed, or `nil` when it may.
    func refusal(forRedirectTo url: String, ofInput: Bool) -> String?
    /// Remembers the first refusal, so the error can name it.
    func record(_ reason: String)
    /// How many opens were asked about so far (the first is the input itself).
    var openCount: Int { get }
    /// The first refusal recorded, if any.
    var firstRefusal: String? { get }
    /// `scheme://host:port` of an http(s) URL, `nil` for anything else.
    static func origin(of url: String) -> String?
}
