import Glibc
import PreviewLoopJobs

/// Conditional requests and byte ranges (RFC 9110 §13, §14), on the way out:
/// - a response whose validators are known before its body (``HTTPReply/validated(validators:body:)``)
///   is 304 with those validators when `If-None-Match` lists its `ETag` (or is `*`), and its body is
///   never made;
/// - a 200 that offers byte ranges (`Accept-Ranges: bytes`) is cut to the one range a `Range` header
///   asks for (206 with `Content-Range`), or 416 when the range starts past the end; `If-Range` naming
///   another validator than the response's `ETag` gets the whole body.
struct ConditionalRequests: HTTPMiddleware {
    func handle(_ request: HTTPRequest, in exchange: HTTPExchange, next: (HTTPRequest) -> HTTPReply) -> HTTPReply {
        let ifNoneMatch = request.header("If-None-Match")
        exchange.evaluatePreconditions { validators, body in
            if let ifNoneMatch, let tag = validators.first(where: { $0.name == "ETag" })?.value, Self.matches(ifNoneMatch, tag) {
                return .now(HTTPResponse(status: 304, headers: validators))
            }
            return body()
        }
        if let range = request.header("Range") {
            let ifRange = request.header("If-Range")
            exchange.mapResponse { Self.part(of: $0, range: range, ifRange: ifRange) }
        }
        return next(request)
    }

    /// Whether an `If-None-Match` value lists `tag` (or is `*`); weak comparison, as RFC 9110 asks.
    static func matches(_ header: String, _ tag: String) -> Bool {
        header.split(separator: ",").contains { item in
            var item = item.trimmingPrefix(while: { $0 == " " || $0 == "\t" })
            while let last = item.last, last == " " || last == "\t" { item = item.dropLast() }
            if item == "*" { return true }
            if item.hasPrefix("W/") { item = item.dropFirst(2) }
            return item == tag
        }
    }

    /// `response` cut to the part `range` asks for, when it is a 200 that offers ranges.
    static func part(of response: HTTPResponse, range: String, ifRange: String?) -> HTTPResponse {
        guard response.status == 200, response.header("Accept-Ranges") == "bytes",
              ifRange.map({ $0 == response.headers.first { $0.name == "ETag" }?.value }) ?? true else { return response }
        let length = response.length
        switch ByteRange(header: range, length: length) {
        case .whole:
            return response
        case .part(let bounds):
            var part = response
            part.status = 206
            part.headers.append(("Content-Range", "bytes \(bounds.lowerBound)-\(bounds.upperBound)/\(length)"))
            if var file = response.file {
                file.offset += bounds.lowerBound
                file.length = bounds.count
                part.file = file
            } else if bounds.count != response.body.count {
                part.body = Array(response.body[bounds])
            }
            return part
        case .unsatisfiable:
            if let file = response.file { close(file.descriptor) }
            var problem = Problem.response(PreviewRequestError(
                status: 416, detail: "The range starts at or past the end of the \(length) bytes."))
            problem.headers += [("Content-Range", "bytes */\(length)"), ("Accept-Ranges", "bytes")]
            return problem
        }
    }
}
