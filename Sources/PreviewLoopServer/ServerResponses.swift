import Glibc
import PreviewLoop
import PreviewLoopJobs
import PreviewLoopRemote
import Synchronization

// The responses the server builds: validators, bodies and problem bodies.

extension ServerCore {
    /// A strong validator, and the response's cache key: the SHA-256 of the engine's version, the
    /// source's version (its path under the root, size and modification time), the route and the
    /// normalised query (with, for a storyboard index under signed URLs, what its picture URL's
    /// signature depends on).
    static func entityTag(source: ResolvedSource, job: PreviewJob) -> String {
        let key = "\(Tool.version)\n\(source.version)\n\(job.route)\n\(job.canonicalQuery)"
        return "\"" + SHA256.hex(SHA256.hash(Array(key.utf8))) + "\""
    }

    /// A rendered body, in memory or in the disk cache.
    enum Content {
        case bytes([UInt8])
        /// An open cache entry; the response takes the descriptor (and closes it when it sends none).
        case file(DiskCache.Hit)

        var count: Int {
            switch self {
            case .bytes(let bytes): bytes.count
            case .file(let hit): hit.size
            }
        }
    }

    /// A rendered body as 200, whole, offering byte ranges (``ConditionalRequests`` answers a `Range`).
    static func success(_ content: Content, contentType: String, validators: [(name: String, value: String)],
                        entityHeaders: [(name: String, value: String)] = []) -> HTTPResponse {
        let headers = [("Content-Type", contentType), ("Accept-Ranges", "bytes")] + validators + entityHeaders
        switch content {
        case .bytes(let bytes):
            return HTTPResponse(status: 200, headers: headers, body: bytes)
        case .file(let hit):
            return HTTPResponse(status: 200, headers: headers, file: FileBody(descriptor: hit.descriptor, offset: hit.offset, length: hit.size))
        }
    }

    static func text(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")],
                     body: Array(body.utf8))
    }
}

/// Error responses as RFC 9457 problem details.
enum Problem {
    static func response(_ error: PreviewRequestError) -> HTTPResponse {
        var members: [String: JSONValue] = [
            "type": .string("about:blank"), "title": .string(title(error.status)), "status": .integer(error.status),
            "detail": .string(error.detail),
        ]
        if let parameter = error.parameter { members["parameter"] = .string(parameter) }
        var headers = [("Content-Type", "application/problem+json"), ("Cache-Control", "no-store")]
        // Every 503 is a moment's refusal (a full queue, a changed source, too many lookups): ask again.
        if error.status == 503 { headers.append(("Retry-After", "1")) }
        return HTTPResponse(status: error.status, headers: headers,
                            body: Array((JSONValue.object(members).text(.compact) + "\n").utf8))
    }

    static func title(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 499: "Client Closed Request"
        case 422: "Unprocessable Content"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Internal Server Error"
        }
    }
}
