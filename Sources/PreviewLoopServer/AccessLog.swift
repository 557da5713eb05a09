import Glibc
import PreviewLoop
import PreviewLoopJobs
import Synchronization

/// The access log: one JSON object per request, appended to a file descriptor when the exchange is
/// over (as a middleware, it sees every request the steps inside it answer, refusals included).
package final class AccessLog: HTTPMiddleware {
    private let descriptor: Int32
    private let owns: Bool

    /// Appends to `path`, created with mode 0644 if absent; `nil` for standard error.
    package init(path: String?) throws(ServerStartError) {
        guard let path else {
            descriptor = 2
            owns = false
            return
        }
        let opened = FileSystem.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard opened >= 0 else {
            throw ServerStartError(message: "\(ServeCommand.accessLog.spec.longSpelling) \(Format.oneLine(path)): \(String(cString: strerror(errno)))")
        }
        descriptor = opened
        owns = true
    }

    deinit { if owns { close(descriptor) } }

    package func handle(_ request: HTTPRequest, in exchange: HTTPExchange, next: (HTTPRequest) -> HTTPReply) -> HTTPReply {
        exchange.onFinish { [self] exchange, seconds, completed in record(exchange, seconds: seconds, completed: completed) }
        return next(request)
    }

    func record(_ exchange: HTTPExchange, seconds: Double, completed: Bool) {
        // Written out by hand (keys sorted, as JSONValue writes them): this runs once per request.
        let tenths = Int((seconds * 1e4).rounded())
        // A request whose client left before its answer (499) was sent nothing.
        let clientClosed = exchange.sentStatus == RenderQueue.clientClosed
        var line = "{\"bytes\":\(clientClosed ? 0 : exchange.sentBytes)"
        let cache = exchange.cacheOutcome
        if !cache.isEmpty { line += ",\"cache\":\"\(cache)\"" }
        if !completed || clientClosed { line += ",\"closed\":true" }
        line += ",\"method\":" + Self.quoted(String(exchange.request.method.prefix(16)))
        line += ",\"ms\":\(tenths / 10).\(tenths % 10)"
        line += ",\"path\":" + Self.quoted(String(exchange.request.path.prefix(1024)))
        line += ",\"status\":\(exchange.sentStatus)}\n"
        let bytes = Array(line.utf8)
        // One write per line, on an O_APPEND descriptor: lines from several processes do not interleave.
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// A JSON string: quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5c }) else { return "\"" + text + "\"" }
        return JSONValue.string(text).text(.compact)
    }
}
