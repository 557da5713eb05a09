import CFFmpeg
import FoundationEssentials

/// Asks an http(s) server for a response's status and header fields only: where a redirect leads
/// (without following it), or a resource's validators.
///
/// FFmpeg 5.1's `http` protocol follows redirects inside `avio_open2`, past the `io_open` hook, so
/// ``OpenGate`` opens every http(s) URL with `max_redirects=0`: a redirect then fails with `EIO` before
/// the new location is contacted, and FFmpeg keeps no trace of where it pointed. This asks the same
/// server the same question once more over FFmpeg's own `tcp`/`tls` protocols (so the interrupt
/// callback and the read timeout hold), reads the status line and headers only, and returns the
/// `Location` resolved against the URL. Nothing is sent anywhere but the URL's own host and port.
package enum RedirectProbe {
    /// The most header bytes read before giving up.
    package static let maxHeaderBytes = 32 * 1024

    /// A NUL-terminated buffer's text (invalid UTF-8 repaired).
    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The absolute URL `url` redirects to (a 301, 302, 303, 307 or 308 with a `Location`), or `nil`
    /// when it does not redirect or the question cannot be asked.
    static func location(of url: String, interrupt: AVIOInterruptCB, readTimeout: String?, tls: [String: String] = [:]) -> String? {
        // The request FFmpeg's http protocol sends, so that the server answers as it did.
        guard let head = responseHead(of: url, method: "GET", headers: [("Range", "bytes=0-"), ("Icy-MetaData", "1")],
                                      interrupt: interrupt, readTimeout: readTimeout, tls: tls) else { return nil }
        return redirectTarget(inHeader: head, relativeTo: url)
    }

    /// The status line and header fields `url`'s server answers a `method` request with (the body, if
    /// any, is not read), or `nil` when the URL is not http(s), the connection fails, the interrupt
    /// fires or no header arrives within ``maxHeaderBytes``. `headers` are sent after `User-Agent` and
    /// `Accept`; their names and values must hold no line break (a request holding one is not sent).
    package static func responseHead(of url: String, method: String, headers: [(String, String)] = [], interrupt: AVIOInterruptCB,
                                     readTimeout: String?, tls: [String: String] = [:]) -> String? {
        var scheme = [CChar](repeating: 0, count: 16), auth = [CChar](repeating: 0, count: 1024)
        var host = [CChar](repeating: 0, count: 1024), path = [CChar](repeating: 0, count: 8192)
        var port: Int32 = -1
        av_url_split(&scheme, Int32(scheme.count), &auth, Int32(auth.count), &host, Int32(host.count), &port,
                     &path, Int32(path.count), url)
        let protocolName = Self.text(scheme).lowercased()
        let hostName = Self.text(host)
        func isClean(_ text: String) -> Bool { !text.contains(where: { $0 == "\r" || $0 == "\n" || $0 == " " }) }
        guard protocolName == "http" || protocolName == "https", !hostName.isEmpty, isClean(hostName) else { return nil }
        let bracketed = hostName.contains(":") ? "[\(hostName)]" : hostName
        let portNumber = port >= 0 ? Int(port) : (protocolName == "https" ? 443 : 80)
        var resource = Self.text(path)
        if resource.isEmpty { resource = "/" }
        guard isClean(resource), isClean(method),
              headers.allSatisfy({ !($0.0 + $0.1).contains(where: { $0 == "\r" || $0 == "\n" }) }) else { return nil }

        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        av_dict_set(&options, "protocol_whitelist", "tcp,tls", 0)
        if let readTimeout { av_dict_set(&options, "rw_timeout", readTimeout, 0) }
        for (key, value) in tls { av_dict_set(&options, key, value, 0) }
        var callback = interrupt
        var io: UnsafeMutablePointer<AVIOContext>?
        let lower = "\(protocolName == "https" ? "tls" : "tcp")://\(bracketed):\(portNumber)"
        guard avio_open2(&io, lower, AVIO_FLAG_READ_WRITE, &callback, &options) >= 0, let context = io else { return nil }
        defer { avio_closep(&io) }

        let version = avformat_version()
        let agent = "Lavf/\(version >> 16).\((version >> 8) & 0xff).\(version & 0xff)"
        let hostHeader = port >= 0 ? "\(bracketed):\(portNumber)" : bracketed
        var request = "\(method) \(resource) HTTP/1.1\r\nUser-Agent: \(agent)\r\nAccept: */*\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "Connection: close\r\nHost: \(hostHeader)\r\n\r\n"
        let bytes = Array(request.utf8)
        avio_write(context, bytes, Int32(bytes.count))
        avio_flush(context)
        guard context.pointee.error == 0 else { return nil }
        // The context was opened for writing; turn its buffer over to reading the answer.
        context.pointee.write_flag = 0
        context.pointee.buf_ptr = context.pointee.buffer
        context.pointee.buf_end = context.pointee.buffer
        context.pointee.eof_reached = 0

        var header: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let terminator: [UInt8] = [13, 10, 13, 10]
        while header.count < maxHeaderBytes {
            let count = chunk.withUnsafeMutableBufferPointer { avio_read_partial(context, $0.baseAddress, Int32($0.count)) }
            if count <= 0 { break }
            header += chunk[0..<Int(count)]
            if let end = header.indices.dropLast(3).first(where: { header[$0..<$0 + 4].elementsEqual(terminator) }) {
                return String(decoding: header[..<(end + 4)], as: UTF8.self)
            }
        }
        // A connection closed (or a header cut) before the blank line: what arrived, if anything.
        return header.isEmpty ? nil : String(decoding: header, as: UTF8.self)
    }

    /// The `Location` of a redirect response's header, made absolute against `base`; `nil` when the
    /// status is not a redirect or there is no `Location`.
    package static func redirectTarget(inHeader text: String, relativeTo base: String) -> String? {
        // "\r\n" is one Character in Swift: split on any line break.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        guard let status = lines.first, status.hasPrefix("HTTP/") else { return nil }
        let fields = status.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2, let code = Int(fields[1]), [301, 302, 303, 307, 308].contains(code) else { return nil }
        for line in lines.dropFirst() {
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == "location" else { continue }
            let value = String(line[line.index(after: colon)...].drop(while: { $0 == " " || $0 == "\t" })
                .reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
            guard !value.isEmpty, let baseURL = URL(string: base), let resolved = URL(string: value, relativeTo: baseURL) else {
                return nil
            }
            return resolved.absoluteString
        }
        return nil
    }
}
