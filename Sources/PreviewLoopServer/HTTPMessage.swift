// The HTTP layer's values: a request as it arrived and a response to send. They know HTTP only; the
// daemon (HTTPDaemon) converts libmicrohttpd's request to an `HTTPRequest` and an `HTTPResponse` back,
// and the in-process client (InProcessClient) does the same without a socket.

/// A request as it arrived: the request line, every header and the peer's address. The body is never
/// read (every route is `GET` or `HEAD`); `hasBody` says whether one was announced.
package struct HTTPRequest: Sendable {
    /// `GET`, `HEAD`, …
    package var method: String
    /// The request target as sent (`/a%20b.mp4/thumbnail.jpg?width=160`).
    package var target: String
    /// The target's path, percent escapes kept (`/a%20b.mp4/thumbnail.jpg`).
    package var path: String
    /// The query's items in order, exactly as sent (escapes and `+` kept); a value is `nil` for an item
    /// without `=`. A middleware may pass on a request with items removed (the signature check does).
    package var rawQuery: [(name: String, value: String?)]
    /// Every header in the order sent, names as sent.
    package var headers: [(name: String, value: String)]
    /// Whether the request announced a body (`Content-Length` above 0 or `Transfer-Encoding`).
    package var hasBody: Bool
    /// The client's address (`127.0.0.1`), when known.
    package var peer: String?

    /// A request for `target`: the path and query are split from it, the body announced from the headers.
    package init(method: String, target: String, headers: [(name: String, value: String)] = [], peer: String? = nil) {
        self.method = method
        self.target = target
        let bytes = target.utf8
        let mark = bytes.firstIndex(of: UInt8(ascii: "?"))
        path = String(decoding: bytes[..<(mark ?? bytes.endIndex)], as: UTF8.self)
        rawQuery = Self.query(of: target)
        self.headers = headers
        self.peer = peer
        let length = headers.first { Self.same($0.name, "Content-Length") }?.value.filter { $0 != " " && $0 != "\t" }
        hasBody = headers.contains { Self.same($0.name, "Transfer-Encoding") } || (length.map { $0 != "0" } ?? false)
    }

    /// The first value of the header `name`, whatever the case of its letters.
    package func header(_ name: String) -> String? {
        headers.first { Self.same($0.name, name) }?.value
    }

    /// The query's items with percent escapes decoded and `+` read as a space; `nil` when an item is not
    /// percent-encoded UTF-8 (or holds a control character).
    package var decodedQuery: [(name: String, value: String)]? {
        try? SourcePath.decodedQuery(rawQuery).get()
    }

    /// The query's items of a request target, in order and exactly as sent: split at `&` (empty items
    /// dropped) and each at its first `=`; escapes and `+` kept.
    package static func query(of target: String) -> [(name: String, value: String?)] {
        let bytes = target.utf8
        guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return [] }
        return bytes[bytes.index(after: mark)...].split(separator: UInt8(ascii: "&")).map { item in
            guard let equals = item.firstIndex(of: UInt8(ascii: "=")) else { return (String(decoding: item, as: UTF8.self), nil) }
            return (String(decoding: item[..<equals], as: UTF8.self), String(decoding: item[item.index(after: equals)...], as: UTF8.self))
        }
    }

    /// Whether two header names are the same (ASCII case-insensitive, as RFC 9110 says).
    static func same(_ first: String, _ second: String) -> Bool {
        func folded(_ byte: UInt8) -> UInt8 { (0x41...0x5a).contains(byte) ? byte | 0x20 : byte }
        return first.utf8.count == second.utf8.count && zip(first.utf8, second.utf8).allSatisfy { folded($0) == folded($1) }
    }
}

/// A response: status, headers and the body, in memory or a part of an open file (`Content-Length` is
/// set by the daemon).
package struct HTTPResponse: Sendable {
    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]
    /// A body sent from a file instead of `body`: the daemon owns the descriptor once the response is
    /// queued, and closes it when the response is sent or dropped.
    package var file: FileBody?

    package init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = [], file: FileBody? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.file = file
    }

    /// The bytes it sends.
    package var length: Int { file?.length ?? body.count }

    /// The first value of the header `name`, whatever the case of its letters.
    package func header(_ name: String) -> String? {
        headers.first { HTTPRequest.same($0.name, name) }?.value
    }
}

/// `length` bytes from `offset` of an open file.
package struct FileBody: Sendable {
    package var descriptor: Int32
    package var offset: Int
    package var length: Int
}
