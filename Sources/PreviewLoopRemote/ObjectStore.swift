import Glibc
import Synchronization

/// Objects in an S3-compatible store, written and read whole: `put` of bytes or of a file (one signed
/// `PUT` up to ``multipartThreshold``, a multipart upload above it, aborted on any failure so no
/// partial object is left), `head`, `get`, `list` of a prefix (ListObjectsV2, paged) and `delete` of an
/// object this store value created. Every request is signed with Signature Version 4 in its headers, its
/// `x-amz-content-sha256` the SHA-256 of the body sent (anonymous and unsigned without credentials).
/// Failures are ``RemoteFailure``s whose reason is the store's own code and message, never a secret.
///
/// Thread-safe: each request takes a libcurl handle from a small pool (a kept connection each), and the
/// counters and the set of created objects are guarded by one mutex.
package final class ObjectStore: Sendable {
    /// What a listing or a `HEAD` tells about an object.
    package struct ObjectInfo: Sendable, Equatable {
        /// The object's key (for `head`, the key asked for).
        package var key: String
        /// Its size in bytes.
        package var size: Int64
        /// The store's entity tag, quotes included (`"…"`), when it gave one.
        package var etag: String?
        /// `Last-Modified` as the store wrote it (`2026-12-06T23:50:25Z` in a listing, an HTTP date from `HEAD`).
        package var lastModified: String?

        package init(key: String, size: Int64, etag: String? = nil, lastModified: String? = nil) {
            self.key = key
            self.size = size
            self.etag = etag
            self.lastModified = lastModified
        }
    }

    /// What the requests so far cost.
    package struct Counts: Sendable, Equatable {
        /// HTTP requests made, retries included.
        package var requests = 0
        /// Request body bytes sent (object data and multipart part lists).
        package var bytesSent: Int64 = 0
        /// Response body bytes received.
        package var bytesReceived: Int64 = 0
    }

    package let configuration: AWSConfiguration
    private let limits: HTTPTransfer.Limits
    /// Bodies larger than this go as a multipart upload.
    package let multipartThreshold: Int
    /// The size of each part but the last (S3 asks at least 5 MiB of every part but the last).
    package let partSize: Int
    /// Attempts after a failed transfer or a server error (5xx, 408, 429), with back-off.
    private let retries: Int
    private let shouldStop: @Sendable () -> Bool

    private struct State {
        var idle: [HTTPTransfer] = []
        var counts = Counts()
        var created: Set<S3Object> = []
    }

    private let state = Mutex(State())

    /// - Parameters:
    ///   - multipartThreshold: bodies above this many bytes are uploaded in parts (default 64 MiB).
    ///   - partSize: the size of each part (default 16 MiB; at least 5 MiB for AWS).
    ///   - shouldStop: polled while a transfer runs and between retries (a deadline, a signal).
    package init(configuration: AWSConfiguration, limits: HTTPTransfer.Limits, multipartThreshold: Int = 64 << 20,
                 partSize: Int = 16 << 20, retries: Int = 3, shouldStop: @escaping @Sendable () -> Bool = { false }) {
        self.configuration = configuration
        self.limits = limits
        self.multipartThreshold = max(1, multipartThreshold)
        self.partSize = max(1, partSize)
        self.retries = retries
        self.shouldStop = shouldStop
    }

    /// What the requests so far cost.
    package var counts: Counts { state.withLock { $0.counts } }

    /// Whether `object` was created by this store value (a put that made a new object or replaced one).
    package func created(_ object: S3Object) -> Bool { state.withLock { $0.created.contains(object) } }

    // MARK: Writing

    /// Writes `bytes` as `object`: one `PUT`, or a multipart upload above ``multipartThreshold``.
    ///
    /// - Parameters:
    ///   - ifAbsent: only when no object has that key (`If-None-Match: *`, which the store checks at the
    ///     moment it commits); an existing object makes it fail with ``RemoteFailure/Kind/alreadyExists``.
    ///   - contentType: the object's `Content-Type` (see ``contentType(forName:)``).
    /// - Returns: the new object's entity tag, when the store gave one.
    @discardableResult
    package func put(_ bytes: [UInt8], at object: S3Object, ifAbsent: Bool = false, contentType: String? = nil) throws(RemoteFailure) -> String? {
        if bytes.count <= multipartThreshold {
            return try putWhole(bytes, at: object, ifAbsent: ifAbsent, contentType: contentType)
        }
        var offset = 0
        return try putParts(at: object, ifAbsent: ifAbsent, contentType: contentType) { () throws(RemoteFailure) -> [UInt8]? in
            guard offset < bytes.count else { return nil }
            defer { offset += partSize }
            return Array(bytes[offset..<min(bytes.count, offset + partSize)])
        }
    }

    /// Writes the file at `path` as `object`, read part by part (at most ``partSize`` bytes of it in
    /// memory above the threshold).
    @discardableResult
    package func put(file path: String, at object: S3Object, ifAbsent: Bool = false, contentType: String? = nil) throws(RemoteFailure) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw RemoteFailure(.local, "cannot read \(path) (\(String(cString: strerror(errno))))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw RemoteFailure(.local, "cannot read \(path) (\(String(cString: strerror(errno))))") }
        let size = Int(status.st_size)
        func readChunk(_ count: Int) throws(RemoteFailure) -> [UInt8] {
            var chunk = [UInt8](repeating: 0, count: count)
            var filled = 0
            while filled < count {
                let got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, count - filled) }
                if got < 0 && errno == EINTR { continue }
                guard got >= 0 else { throw RemoteFailure(.local, "cannot read \(path) (\(String(cString: strerror(errno))))") }
                if got == 0 { break }
                filled += got
            }
            chunk.removeLast(count - filled)
            return chunk
        }
        if size <= multipartThreshold {
            return try putWhole(try readChunk(size), at: object, ifAbsent: ifAbsent, contentType: contentType)
        }
        return try putParts(at: object, ifAbsent: ifAbsent, contentType: contentType) { () throws(RemoteFailure) -> [UInt8]? in
            let chunk = try readChunk(partSize)
            return chunk.isEmpty ? nil : chunk
        }
    }

    private func putWhole(_ bytes: [UInt8], at object: S3Object, ifAbsent: Bool, contentType: String?) throws(RemoteFailure) -> String? {
        var headers: [(String, String)] = []
        if let contentType { headers.append(("Content-Type", contentType)) }
        if ifAbsent { headers.append(("If-None-Match", "*")) }
        let response = try send("PUT", object, headers: headers, body: bytes)
        guard response.status == 200 else { throw Self.failure(response, ifAbsent: ifAbsent) }
        state.withLock { _ = $0.created.insert(object) }
        return response.headers["etag"]
    }

    /// A multipart upload of the parts `nextPart` gives (nil after the last): CreateMultipartUpload,
    /// UploadPart for each, CompleteMultipartUpload; AbortMultipartUpload when anything fails, so the
    /// store keeps neither an object nor the parts.
    private func putParts(at object: S3Object, ifAbsent: Bool, contentType: String?,
                          nextPart: () throws(RemoteFailure) -> [UInt8]?) throws(RemoteFailure) -> String? {
        if ifAbsent, try head(object) != nil {
            throw RemoteFailure(.alreadyExists, "the object already exists", storeCode: "PreconditionFailed")
        }
        var headers: [(String, String)] = []
        if let contentType { headers.append(("Content-Type", contentType)) }
        let created = try send("POST", object, query: [("uploads", "")], headers: headers, body: [])
        guard created.status == 200 else { throw Self.failure(created, ifAbsent: false) }
        guard let uploadID = XMLText.first("UploadId", in: created.body) else {
            throw RemoteFailure(.transport, "the store started a multipart upload without an UploadId")
        }
        do throws(RemoteFailure) {
            var etags: [String] = []
            while let part = try nextPart() {
                let number = etags.count + 1
                let response = try send("PUT", object, query: [("partNumber", "\(number)"), ("uploadId", uploadID)], body: part)
                guard response.status == 200 else { throw Self.failure(response, ifAbsent: false) }
                guard let etag = response.headers["etag"] else { throw RemoteFailure(.transport, "the store took part \(number) without an ETag") }
                etags.append(etag)
            }
            var list = "<CompleteMultipartUpload>"
            for (index, etag) in etags.enumerated() {
                list += "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(XMLText.escaped(etag))</ETag></Part>"
            }
            list += "</CompleteMultipartUpload>"
            let completed = try send("POST", object, query: [("uploadId", uploadID)], headers: ifAbsent ? [("If-None-Match", "*")] : [],
                                     body: Array(list.utf8))
            // The store may answer 200 and still fail: the error is then in the body.
            guard completed.status == 200, XMLText.first("Code", in: completed.body) == nil else {
                throw Self.failure(completed, ifAbsent: ifAbsent)
            }
            state.withLock { _ = $0.created.insert(object) }
            return XMLText.first("ETag", in: completed.body) ?? completed.headers["etag"]
        } catch {
            // Best effort: a store that cannot be reached now keeps the parts until its lifecycle rule.
            _ = try? send("DELETE", object, query: [("uploadId", uploadID)], body: nil)
            throw error
        }
    }

    /// Deletes `object`, which this store value must have created (never anything else).
    package func delete(_ object: S3Object) throws(RemoteFailure) {
        guard created(object) else {
            throw RemoteFailure(.refused, "not deleted: this run did not create it")
        }
        let response = try send("DELETE", object, body: nil)
        guard response.status == 204 || response.status == 200 || response.status == 404 else { throw Self.failure(response, ifAbsent: false) }
        state.withLock { _ = $0.created.remove(object) }
    }

    // MARK: Reading

    /// The object's size, entity tag and time, or `nil` when there is no such object (a missing bucket
    /// is a failure).
    package func head(_ object: S3Object) throws(RemoteFailure) -> ObjectInfo? {
        let response = try send("HEAD", object, body: nil)
        switch response.status {
        case 200:
            return ObjectInfo(key: object.key, size: response.headers["content-length"].flatMap { Int64($0) } ?? 0,
                              etag: response.headers["etag"], lastModified: response.headers["last-modified"])
        case 404:
            // A HEAD answer has no body to name the reason: a listing of the bucket tells a missing bucket.
            if try bucketExists(object.bucket) { return nil }
            throw RemoteFailure(.notFound, "the store answered 404 NoSuchBucket", storeCode: "NoSuchBucket")
        default:
            throw Self.failure(response, ifAbsent: false)
        }
    }

    /// The whole object (at most `limit` bytes: a larger one is a failure); with `ifMatch`, only while
    /// it still has that entity tag (another is a failure of kind `changed`).
    package func get(_ object: S3Object, limit: Int = 256 << 20, ifMatch: String? = nil) throws(RemoteFailure) -> [UInt8] {
        let response = try send("GET", object, headers: ifMatch.map { [("If-Match", $0)] } ?? [], body: nil, bodyLimit: limit + 1)
        if ifMatch != nil, response.status == 412 {
            throw RemoteFailure(.changed, "the object changed (its ETag no longer matches)", storeCode: "PreconditionFailed")
        }
        guard response.status == 200 else { throw Self.failure(response, ifAbsent: false) }
        guard response.body.count <= limit else { throw RemoteFailure(.refused, "the object is larger than \(limit) bytes") }
        return response.body
    }

    /// Every object whose key starts with `prefix`, in key order, read page by page (`pageSize` keys a
    /// page, at most 1000; each next page asked with the previous page's continuation token), stopping
    /// once `limit` objects are read.
    package func list(bucket: String, prefix: String, pageSize: Int = 1000, limit: Int = .max) throws(RemoteFailure) -> [ObjectInfo] {
        var objects: [ObjectInfo] = []
        var token: String?
        repeat {
            var query = [("list-type", "2"), ("prefix", prefix), ("max-keys", "\(min(1000, max(1, pageSize)))")]
            if let token { query.append(("continuation-token", token)) }
            let response = try send("GET", S3Object(bucket: bucket, key: ""), query: query, body: nil)
            guard response.status == 200 else { throw Self.failure(response, ifAbsent: false) }
            for entry in XMLText.all("Contents", in: response.body) {
                guard let key = XMLText.first("Key", in: entry) else { continue }
                objects.append(ObjectInfo(key: key, size: XMLText.first("Size", in: entry).flatMap { Int64($0) } ?? 0,
                                          etag: XMLText.first("ETag", in: entry), lastModified: XMLText.first("LastModified", in: entry)))
            }
            let truncated = XMLText.first("IsTruncated", in: response.body) == "true"
            token = truncated ? XMLText.first("NextContinuationToken", in: response.body) : nil
            if truncated && token == nil { throw RemoteFailure(.transport, "the store cut a listing short without a continuation token") }
        } while token != nil && objects.count < limit
        return Array(objects.prefix(limit))
    }

    private func bucketExists(_ bucket: String) throws(RemoteFailure) -> Bool {
        let response = try send("GET", S3Object(bucket: bucket, key: ""), query: [("list-type", "2"), ("max-keys", "0")], body: nil)
        if response.status == 200 { return true }
        if response.status == 404 { return false }
        throw Self.failure(response, ifAbsent: false)
    }

    // MARK: Requests

    /// Sends one signed request (retrying a failed transfer or a server error) and returns the store's
    /// answer, whatever its status.
    private func send(_ method: String, _ object: S3Object, query: [(String, String)] = [], headers extra: [(String, String)] = [],
                      body: [UInt8]?, bodyLimit: Int = 1 << 20) throws(RemoteFailure) -> HTTPTransfer.Response {
        let payloadHash = body.map { SHA256.hex(SHA256.hash($0)) } ?? SignatureV4.emptyPayloadHash
        let transfer = try takeTransfer()
        defer { state.withLock { $0.idle.append(transfer) } }
        var attempt = 0
        while true {
            if shouldStop() { throw RemoteFailure(.stopped, "stopped") }
            let request = signedRequest(method, object, query: query, headers: extra, payloadHash: payloadHash,
                                        secondsSince1970: Int(time(nil)))
            let response = transfer.perform(method: method, url: request.url, headers: request.headers, body: body,
                                            bodyLimit: bodyLimit, shouldStop: shouldStop)
            state.withLock {
                $0.counts.requests += 1
                $0.counts.bytesSent += Int64(body?.count ?? 0)
                $0.counts.bytesReceived += Int64(response.body.count)
            }
            if response.wasStopped { throw RemoteFailure(.stopped, "stopped") }
            let retryable = response.status == 0 || (500...599).contains(response.status) || response.status == 408 || response.status == 429
            guard retryable, attempt < retries else {
                if response.status == 0 { throw RemoteFailure(.transport, "no answer (\(response.failure ?? "no response"))") }
                return response
            }
            attempt += 1
            try RemoteFailure.pauseBeforeRetry(attempt, shouldStop: shouldStop)
        }
    }

    private func takeTransfer() throws(RemoteFailure) -> HTTPTransfer {
        if let idle = state.withLock({ $0.idle.popLast() }) { return idle }
        return try HTTPTransfer(limits: limits)
    }

    /// The URL and header lines of a request: path-style for a custom endpoint, the bucket's own host on
    /// AWS; an empty key addresses the bucket.
    func signedRequest(_ method: String, _ object: S3Object, query: [(String, String)], headers extra: [(String, String)],
                       payloadHash: String, secondsSince1970: Int) -> (url: String, headers: [String]) {
        var address = object.address(in: configuration)
        if object.key.isEmpty, address.path.hasSuffix("/"), address.path.count > 1 {
            // `ENDPOINT/BUCKET`, not `ENDPOINT/BUCKET/`, for a bucket path-style.
            address.path.removeLast()
            address.url.removeLast()
        }
        if !query.isEmpty {
            address.url += "?" + query.map { SignatureV4.encode($0.0) + "=" + SignatureV4.encode($0.1) }.joined(separator: "&")
        }
        var headers = extra
        guard let credentials = configuration.credentials else {
            return (address.url, headers.map { "\($0.0): \($0.1)" })
        }
        let date = SignatureV4.amzDate(secondsSince1970: secondsSince1970)
        headers += [("x-amz-content-sha256", payloadHash), ("x-amz-date", date)]
        if let token = credentials.sessionToken { headers.append(("x-amz-security-token", token)) }
        let signer = SignatureV4(accessKeyID: credentials.accessKeyID, secretAccessKey: credentials.secretAccessKey,
                                 region: configuration.region, service: "s3")
        let authorization = signer.authorization(method: method, path: address.path, query: query, headers: headers + [("Host", address.host)],
                                                 payloadHash: payloadHash, amzDate: date)
        return (address.url, (headers + [("Authorization", authorization)]).map { "\($0.0): \($0.1)" })
    }

    /// The failure an answer other than success means: the store's code and message in one line.
    static func failure(_ response: HTTPTransfer.Response, ifAbsent: Bool) -> RemoteFailure {
        if ifAbsent && response.status == 412 {
            return RemoteFailure(.alreadyExists, "the object already exists", storeCode: "PreconditionFailed")
        }
        return RemoteFailure.answered(status: response.status, body: response.body)
    }

    /// The `Content-Type` for a file name's extension (`image/jpeg` for `.jpg`), `nil` for one not known.
    package static func contentType(forName name: String) -> String? {
        guard let dot = name.lastIndex(of: ".") else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "webp": return "image/webp"
        case "gif": return "image/gif"
        case "avif": return "image/avif"
        case "ppm": return "image/x-portable-pixmap"
        case "mp4": return "video/mp4"
        case "vtt": return "text/vtt; charset=utf-8"
        case "html": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js": return "text/javascript; charset=utf-8"
        case "json": return "application/json"
        case "jsonl": return "application/x-ndjson"
        case "csv": return "text/csv; charset=utf-8"
        case "txt": return "text/plain; charset=utf-8"
        default: return nil
        }
    }
}

/// The few elements of S3's XML answers this client reads, found by name (the answers are flat and
/// their element names unique where they are read); text with the five XML entities and numeric
/// references decoded.
enum XMLText {
    /// The text of the first `<name>…</name>` in `body`.
    static func first(_ name: String, in body: [UInt8]) -> String? {
        first(name, in: String(decoding: body, as: UTF8.self))
    }

    static func first(_ name: String, in text: String) -> String? {
        guard let open = text.firstRange(of: "<\(name)>"), let close = text[open.upperBound...].firstRange(of: "</\(name)>") else { return nil }
        return decoded(text[open.upperBound..<close.lowerBound])
    }

    /// The raw insides of every `<name>…</name>` in `body`.
    static func all(_ name: String, in body: [UInt8]) -> [String] {
        let text = String(decoding: body, as: UTF8.self)
        var found: [String] = []
        var rest = text[...]
        while let open = rest.firstRange(of: "<\(name)>"), let close = rest[open.upperBound...].firstRange(of: "</\(name)>") {
            found.append(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return found
    }

    static func decoded(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        var result = ""
        var rest = text
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            guard let semicolon = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semicolon) <= 10 else {
                result += rest[amp...]
                return result
            }
            let entity = rest[rest.index(after: amp)..<semicolon]
            switch entity {
            case "amp": result += "&"
            case "lt": result += "<"
            case "gt": result += ">"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                let value: UInt32? = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16)
                    : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                if let value, let scalar = Unicode.Scalar(value) { result.unicodeScalars.append(scalar) } else { result += "&\(entity);" }
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }

    /// `text` with `&`, `<` and `>` escaped, for an element's content.
    static func escaped(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }
}
