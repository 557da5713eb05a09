import Foundation
import Glibc
import Synchronization
import Testing
import PreviewLoopJobs
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// The server's middlewares, each alone around a closure and together in the server's own chain,
/// through the in-process client (no socket): what each adds or answers, and in which order.
@Suite("serve: the middleware chain")
struct ServeChainTests {
    /// A responder that answers 200 with `body` and records the requests it saw.
    final class Inner: HTTPResponder, @unchecked Sendable {
        let lock = NSLock()
        private var requests: [HTTPRequest] = []
        let headers: [(name: String, value: String)]
        let body: [UInt8]

        init(headers: [(name: String, value: String)] = [("Content-Type", "text/plain")], body: [UInt8] = Array("0123456789".utf8)) {
            self.headers = headers
            self.body = body
        }

        var seen: [HTTPRequest] { lock.withLock { requests } }

        func respond(to request: HTTPRequest, in exchange: HTTPExchange) -> HTTPReply {
            lock.withLock { requests.append(request) }
            return .now(HTTPResponse(status: 200, headers: headers, body: body))
        }
    }

    /// Adds `X-Step: name` to every response.
    struct Tag: HTTPMiddleware {
        let name: String
        func handle(_ request: HTTPRequest, in exchange: HTTPExchange, next: (HTTPRequest) -> HTTPReply) -> HTTPReply {
            exchange.mapResponse { var response = $0; response.headers.append(("X-Step", name)); return response }
            return next(request)
        }
    }

    static func client(_ steps: [any HTTPMiddleware], _ inner: any HTTPResponder) -> InProcessClient {
        InProcessClient(HTTPChain(steps, responder: inner))
    }

    @Test("Requests carry every header, found whatever the case; the query is split as sent and decoded on demand")
    func requestValues() throws {
        let request = HTTPRequest(method: "GET", target: "/a%20b.mp4/thumbnail.jpg?time=+1&&w=1%2B2&flag",
                                  headers: [("X-One", "1"), ("x-two", "2"), ("X-ONE", "again")], peer: "10.0.0.1")
        #expect(request.path == "/a%20b.mp4/thumbnail.jpg")
        #expect(request.header("x-one") == "1" && request.header("X-TWO") == "2" && request.header("three") == nil)
        #expect(request.headers.count == 3 && request.peer == "10.0.0.1" && !request.hasBody)
        #expect(request.rawQuery.map(\.name) == ["time", "w", "flag"] && request.rawQuery.map(\.value) == ["+1", "1%2B2", nil])
        let decoded = try #require(request.decodedQuery)
        #expect(decoded.map(\.value) == [" 1", "1+2", ""])
        #expect(HTTPRequest(method: "GET", target: "/?x=%ZZ").decodedQuery == nil)
        #expect(HTTPRequest(method: "GET", target: "/", headers: [("content-length", "5")]).hasBody)
        #expect(HTTPRequest(method: "GET", target: "/", headers: [("Content-Length", " 0")]).hasBody == false)
    }

    @Test("Response changes apply innermost first, to answers given now and later alike")
    func order() throws {
        let now = Self.client([Tag(name: "outer"), Tag(name: "inner")], Inner())
        #expect(try now.send("/").headers.filter { $0.name == "X-Step" }.map(\.value) == ["inner", "outer"])
        let later = Self.client([Tag(name: "outer"), Tag(name: "inner")], ClosureResponder { _, exchange in
            exchange.suspend()
            Thread.detachNewThread { exchange.answer(HTTPResponse(status: 202)) }
            return .later
        })
        let reply = try later.send("/")
        #expect(reply.status == 202 && reply.headers.map(\.value) == ["inner", "outer"])
    }

    @Test("CORS alone: its headers on every response, preflights answered, nothing without origins")
    func crossOriginAlone() throws {
        let inner = Inner()
        let client = Self.client([CrossOriginPolicy(origins: ["https://a.example"])], inner)
        let get = try client.send("/x", headers: [("Origin", "https://a.example")])
        #expect(get.headers.map(\.name) == ["Content-Type", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers"])
        let preflight = try client.send("/x", method: "OPTIONS")
        #expect(preflight.status == 204 && preflight.header("access-control-allow-origin") == "https://a.example")
        #expect(inner.seen.map(\.method) == ["GET"])
        let off = Self.client([CrossOriginPolicy(origins: [])], inner)
        #expect(try off.send("/x", method: "OPTIONS").status == 200 && inner.seen.map(\.method) == ["GET", "OPTIONS"])
        #expect(try off.send("/x", headers: [("Origin", "https://a.example")]).headers.count == 1)
    }

    @Test("Allowed methods alone: others 405 with Allow, a GET with a body 400, GET and HEAD passed on")
    func methodsAlone() throws {
        let inner = Inner()
        let client = Self.client([AllowedMethods(["GET", "HEAD"])], inner)
        let post = try client.send("/x", method: "POST")
        #expect(post.status == 405 && post.header("Allow") == "GET, HEAD" && post.header("Content-Type") == "application/problem+json")
        #expect(try client.send("/x", method: "GET", headers: [("Content-Length", "5")]).status == 400)
        #expect(try client.send("/x", method: "GET", headers: [("Transfer-Encoding", "chunked")]).status == 400)
        let head = try client.send("/x", method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty && head.length == 10)
        #expect(inner.seen.map(\.method) == ["HEAD"])
    }

    @Test("Signed URLs alone: unsigned or wrong is 403 before the routes; signed passes on without its parameters")
    func signingAlone() throws {
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let keyFile = folder + "/key.txt"
        try Data("correct horse battery staple\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        let signer = try URLSigner(keyFile: keyFile)
        let inner = Inner()
        let client = Self.client([SignedURLs(signer: signer, unsigned: ["/healthz"])], inner)
        #expect(try client.send("/a.mp4/thumbnail.jpg?width=64").status == 403)
        #expect(try client.send("/a.mp4/thumbnail.jpg?width=64&expires=9999999999&signature=00").status == 403)
        #expect(inner.seen.isEmpty)
        #expect(try client.send("/healthz").status == 200)
        // Signed by Python's hmac, as the documented recipe signs.
        let query = "expires=9999999999&width=64"
        let signature = try ServeTests.signature(keyFile: keyFile, path: "/a.mp4/thumbnail.jpg", query: query)
        #expect(try client.send("/a.mp4/thumbnail.jpg?\(query)&signature=\(signature)").status == 200)
        #expect(inner.seen.map(\.path) == ["/healthz", "/a.mp4/thumbnail.jpg"])
        #expect(inner.seen.last?.rawQuery.map(\.name) == ["width"])
    }

    @Test("Conditional requests alone: 304 without making the body, one range 206, past the end 416, If-Range")
    func conditionalAlone() throws {
        let made = Mutex(0)
        let tag = "\"v1\""
        let validators = [(name: "ETag", value: tag), (name: "Cache-Control", value: "no-cache")]
        let body = Array("0123456789".utf8)
        let client = Self.client([ConditionalRequests()], ClosureResponder { _, _ in
            .validated(validators: validators) {
                made.withLock { $0 += 1 }
                return .now(HTTPResponse(status: 200, headers: [("Accept-Ranges", "bytes")] + validators, body: body))
            }
        })
        let unchanged = try client.send("/", headers: [("If-None-Match", "\"other\", W/\(tag)")])
        #expect(unchanged.status == 304 && unchanged.body.isEmpty && unchanged.header("ETag") == tag)
        #expect(made.withLock { $0 } == 0)
        let part = try client.send("/", headers: [("Range", "bytes=2-4")])
        #expect(part.status == 206 && part.body == Array("234".utf8) && part.header("Content-Range") == "bytes 2-4/10")
        let past = try client.send("/", headers: [("Range", "bytes=10-")])
        #expect(past.status == 416 && past.header("Content-Range") == "bytes */10")
        #expect(try client.send("/", headers: [("Range", "bytes=0-1"), ("If-Range", "\"v0\"")]).status == 200)
        #expect(try client.send("/", headers: [("Range", "bytes=0-1"), ("If-Range", tag)]).status == 206)
        #expect(made.withLock { $0 } == 4)
        // Without the middleware the body is made and sent whole.
        let bare = Self.client([], ClosureResponder { _, _ in .validated(validators: validators) { .now(HTTPResponse(status: 200, body: body)) } })
        #expect(try bare.send("/", headers: [("If-None-Match", tag), ("Range", "bytes=0-1")]).body == body)
    }

    @Test("Metrics and the access log alone count and log every request when it is over")
    func metricsAndLogAlone() throws {
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let metrics = ServerMetrics()
        let log = try AccessLog(path: folder + "/access.log")
        let client = Self.client([MetricsRecorder(metrics: metrics, label: { $0 == "/x" ? "x" : "other" }), log], Inner())
        _ = try client.send("/x")
        _ = try client.send("/y", method: "HEAD")
        let exposition = metrics.exposition()
        #expect(exposition.contains("previewloop_http_requests_total{route=\"x\",status=\"200\"} 1"))
        #expect(exposition.contains("previewloop_http_requests_total{route=\"other\",status=\"200\"} 1"))
        let lines = try String(contentsOfFile: folder + "/access.log", encoding: .utf8).split(separator: "\n")
        let objects = try lines.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(objects.map { $0["path"] as? String } == ["/x", "/y"] && objects.map { $0["method"] as? String } == ["GET", "HEAD"])
        #expect(objects.allSatisfy { $0["status"] as? Int == 200 && $0["bytes"] as? Int == 10 })
    }

    @Test("The server's chain: a refused signature still carries CORS headers, is counted and logged; health needs no signature")
    func serverOrder() throws {
        let root = try ServeTests.makeRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let keyFile = root + "/key.txt"
        try Data("correct horse battery staple\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        var options = ServeCommand(root: root)
        options.workers = 1
        options.signingKeyFile = keyFile
        options.allowedOrigins = ["https://a.example"]
        let server = try PreviewServer.inProcess(options: options, accessLog: AccessLog(path: root + "/access.log"))
        defer { server.stop() }
        let refused = try server.client.send("/landscape.mp4/thumbnail.jpg?width=64")
        #expect(refused.status == 403 && refused.header("Access-Control-Allow-Origin") == "https://a.example")
        // A method is refused before the signature is asked for; a preflight answered before both.
        let post = try server.client.send("/landscape.mp4/thumbnail.jpg", method: "POST")
        #expect(post.status == 405 && post.header("Allow") == "GET, HEAD, OPTIONS")
        #expect(try server.client.send("/landscape.mp4/thumbnail.jpg", method: "OPTIONS").status == 204)
        #expect(try server.client.send("/healthz").text == "ok\n")
        let metrics = try server.client.send("/metrics").text
        for counted in ["route=\"thumbnail.jpg\",status=\"403\"} 1", "route=\"thumbnail.jpg\",status=\"405\"} 1",
                        "route=\"thumbnail.jpg\",status=\"204\"} 1", "route=\"healthz\",status=\"200\"} 1"] {
            #expect(metrics.contains("previewloop_http_requests_total{" + counted), "\(counted)")
        }
        let log = try String(contentsOfFile: root + "/access.log", encoding: .utf8)
        // The five requests above, /metrics last.
        #expect(log.split(separator: "\n").count == 5)
        #expect(log.hasPrefix("{\"bytes\":") && log.contains("\"status\":403}"))
    }
}
