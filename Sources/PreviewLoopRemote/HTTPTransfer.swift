import CCurl

/// One libcurl easy handle, reused for every request of one input so its connection is kept (and with it
/// TLS sessions and DNS answers). Used from one thread at a time: `@unchecked Sendable` only so that a
/// pool (``ObjectStore``) can hand an idle one to the next thread, never to two at once.
package final class HTTPTransfer: @unchecked Sendable {
    /// What one request got back.
    package struct Response: Sendable {
        /// The HTTP status (0 when no response came).
        package var status: Int
        package var body: [UInt8]
        /// Header fields, names lowercased (the last response's, not an interim one's).
        package var headers: [String: String]
        /// libcurl's failure, when the transfer failed (`nil` for a transfer that ran to its end).
        package var failure: String?
        /// Whether the transfer was stopped by `shouldStop`.
        package var wasStopped: Bool
    }

    /// The limits a transfer runs under.
    package struct Limits: Sendable {
        /// Seconds to connect (TCP and TLS).
        package var connectTimeout: Double
        /// Seconds without a byte before a transfer is abandoned (a stalled server).
        package var stallTimeout: Double
        /// Whether https certificates are verified (chain and name).
        package var verifiesCertificates: Bool
        /// A PEM file of authorities to trust instead of the system's.
        package var certificateAuthorities: String?

        package init(connectTimeout: Double, stallTimeout: Double, verifiesCertificates: Bool = true, certificateAuthorities: String? = nil) {
            self.connectTimeout = connectTimeout
            self.stallTimeout = stallTimeout
            self.verifiesCertificates = verifiesCertificates
            self.certificateAuthorities = certificateAuthorities
        }
    }

    /// The state the C callbacks write into, reached through their context pointer.
    private final class Exchange {
        var body: [UInt8] = []
        var bodyLimit = 0
        var headers: [String: String] = [:]
        var shouldStop: () -> Bool = { false }
        var wasStopped = false
        /// The status of the response being received, from its status line.
        var status = 0
        /// Asked once a final response's header block is complete; `false` ends the transfer there.
        var acceptsHeaders: ((Int, [String: String]) -> Bool)?
        /// The request body being sent, and how much of it curl has taken.
        var upload: [UInt8] = []
        var uploaded = 0
    }

    private let handle: UnsafeMutableRawPointer
    private let exchange = Exchange()
    /// The libcurl error text of the last failed transfer.
    private var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    private let limits: Limits

    package init(limits: Limits) throws(RemoteFailure) {
        Self.globalInit
        guard let handle = curl_easy_init() else { throw RemoteFailure(.transport, "out of memory for an HTTP client") }
        self.handle = handle
        self.limits = limits
    }

    deinit { curl_easy_cleanup(handle) }

    /// Another transfer under the same limits, with a connection of its own (for ranges fetched at once).
    package func sibling() throws(RemoteFailure) -> HTTPTransfer {
        try HTTPTransfer(limits: limits)
    }

    /// libcurl's global state, made once before the first handle (it is not thread-safe to race).
    private static let globalInit: Void = { _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// A `GET` of `url` with the given header lines, keeping at most `bodyLimit` bytes of body (a
    /// server that sends more is cut off there, so a response is never bigger than what was asked).
    ///
    /// - Parameter acceptsHeaders: asked with the status and header fields once they are all in;
    ///   `false` ends the transfer before any body is read (the response then has them and no body).
    package func get(url: String, headers: [String], bodyLimit: Int, shouldStop: @escaping () -> Bool,
                     acceptsHeaders: ((Int, [String: String]) -> Bool)? = nil) -> Response {
        exchange.acceptsHeaders = acceptsHeaders
        defer { exchange.acceptsHeaders = nil }
        return perform(method: "GET", url: url, headers: headers, body: nil, bodyLimit: bodyLimit, shouldStop: shouldStop)
    }

    /// A request of any method: `HEAD` asks for no body; a `body` (even empty) is sent with its
    /// `Content-Length`, never chunked and never after an `Expect: 100-continue` wait. At most
    /// `bodyLimit` bytes of the response's body are kept, as ``get(url:headers:bodyLimit:shouldStop:)`` does.
    package func perform(method: String, url: String, headers: [String], body: [UInt8]?, bodyLimit: Int,
                         shouldStop: @escaping () -> Bool) -> Response {
        exchange.upload = body ?? []
        exchange.uploaded = 0
        exchange.body = []
        exchange.body.reserveCapacity(min(bodyLimit, 16 << 20))
        exchange.bodyLimit = bodyLimit
        exchange.headers = [:]
        exchange.status = 0
        exchange.shouldStop = shouldStop
        exchange.wasStopped = false
        curl_easy_reset(handle)
        var list: UnsafeMutablePointer<curl_slist>?
        for line in headers { list = curl_slist_append(list, line) }
        // Without it curl adds `Expect:` and `Accept: */*`; harmless, but signed requests stay minimal.
        list = curl_slist_append(list, "Accept:")
        if body != nil { list = curl_slist_append(list, "Expect:") }
        defer { curl_slist_free_all(list) }
        let context = Unmanaged.passUnretained(exchange).toOpaque()
        let result: CURLcode = errorBuffer.withUnsafeMutableBufferPointer { errors in
            errors[0] = 0
            _ = ccurl_setopt_string(handle, CURLOPT_URL, url)
            _ = ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
            _ = ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
            _ = ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
            _ = ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, limits.connectTimeout * 1000)))
            _ = ccurl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
            _ = ccurl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, Int(max(1, limits.stallTimeout.rounded(.up))))
            _ = ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, limits.verifiesCertificates ? 1 : 0)
            _ = ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, limits.verifiesCertificates ? 2 : 0)
            if let authorities = limits.certificateAuthorities { _ = ccurl_setopt_string(handle, CURLOPT_CAINFO, authorities) }
            switch (method, body) {
            case ("HEAD", _):
                _ = ccurl_setopt_long(handle, CURLOPT_NOBODY, 1)
            case (_, let body?):
                // An upload: curl sends PUT unless told the method; it reads the body through the callback.
                _ = ccurl_setopt_long(handle, CURLOPT_UPLOAD, 1)
                _ = ccurl_setopt_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(body.count))
                if method != "PUT" { _ = ccurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method) }
                _ = ccurl_setopt_write(handle, CURLOPT_READFUNCTION) { buffer, size, count, context in
                    guard let buffer, let context else { return 0 }
                    let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
                    let length = min(size * count, exchange.upload.count - exchange.uploaded)
                    guard length > 0 else { return 0 }
                    exchange.upload.withUnsafeBytes { source in
                        UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + exchange.uploaded, byteCount: length)
                    }
                    exchange.uploaded += length
                    return length
                }
                _ = ccurl_setopt_pointer(handle, CURLOPT_READDATA, context)
            default:
                if method != "GET" { _ = ccurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method) }
            }
            _ = ccurl_setopt_headers(handle, list)
            _ = ccurl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errors.baseAddress)
            _ = ccurl_setopt_write(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                guard let data, let context else { return 0 }
                let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
                let length = size * count
                let room = exchange.bodyLimit - exchange.body.count
                exchange.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: min(length, max(0, room))))
                return length <= room ? length : 0
            }
            _ = ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
            _ = ccurl_setopt_write(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                guard let data, let context else { return 0 }
                let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
                let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
                if line.hasPrefix("HTTP/") {
                    exchange.headers = [:]
                    let words = line.split(separator: " ", maxSplits: 2)
                    exchange.status = words.count >= 2 ? Int(words[1]) ?? 0 : 0
                } else if line.allSatisfy(\.isNewline), exchange.status >= 200, let accepts = exchange.acceptsHeaders,
                          !accepts(exchange.status, exchange.headers) {
                    // The end of a final response's header block, and the caller wants no body.
                    return 0
                } else if let colon = line.firstIndex(of: ":") {
                    let value = line[line.index(after: colon)...].filter { !$0.isNewline }.trimmingSpaces
                    exchange.headers[line[..<colon].lowercased()] = value
                }
                return size * count
            }
            _ = ccurl_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
            _ = ccurl_setopt_long(handle, CURLOPT_NOPROGRESS, 0)
            _ = ccurl_setopt_progress(handle) { context, _, _, _, _ in
                guard let context else { return 0 }
                let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
                if exchange.shouldStop() { exchange.wasStopped = true; return 1 }
                return 0
            }
            _ = ccurl_setopt_pointer(handle, CURLOPT_XFERINFODATA, context)
            return curl_easy_perform(handle)
        }
        var status = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var failure: String?
        if result != CURLE_OK {
            let detail = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            failure = detail.isEmpty ? String(cString: curl_easy_strerror(result)) : detail
        }
        let response = Response(status: status, body: exchange.body, headers: exchange.headers, failure: failure,
                                wasStopped: exchange.wasStopped)
        exchange.body = []
        exchange.upload = []
        exchange.shouldStop = { false }
        return response
    }
}
