import Foundation
import Glibc
import Testing
import PreviewLoopJobs
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// The image API's routes through the server's whole middleware chain, in-process (no socket, no
/// daemon): byte ranges, validators, problems and metrics. What needs the daemon (connections, limits,
/// timeouts, suspended connections, the binary) stays in ServeTests and ServeAbuseTests.
@Suite("serve: routes in-process", .serialized, .timeLimit(.minutes(10)))
struct ServeInProcessTests {
    /// A response as the in-process client read it; the header names are lowercased.
    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: Data
        /// The body's length as the daemon would announce it in `Content-Length` (also for `HEAD`).
        var length: Int
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// A server's chain behind the in-process client.
    struct Server {
        let client: InProcessClient

        /// Sends `method target` with `headers` (`Name: value`).
        func fetch(_ target: String, method: String = "GET", headers: [String] = []) throws -> Reply {
            let fields = headers.map { line in
                let colon = line.firstIndex(of: ":") ?? line.endIndex
                return (name: String(line[..<colon]), value: line[colon...].dropFirst().trimmingCharacters(in: .whitespaces))
            }
            let reply = try client.send(target, method: method, headers: fields)
            var lowered: [String: String] = [:]
            for header in reply.headers { lowered[header.name.lowercased()] = header.value }
            return Reply(status: reply.status, headers: lowered, body: Data(reply.body), length: reply.length)
        }
    }

    static func withServer<T>(_ configure: (inout ServeCommand) -> Void = { _ in },
                              _ body: (Server, String) throws -> T) throws -> T {
        let root = try ServeTests.makeRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var options = ServeCommand(root: root)
        options.workers = 2
        configure(&options)
        let server = try PreviewServer.inProcess(options: options)
        defer { server.stop() }
        return try body(Server(client: server.client), root)
    }

    @Test("Byte ranges: one range is 206 with Content-Range, past the end 416, several or malformed the whole body")
    func byteRanges() throws {
        try Self.withServer { server, _ in
            let url = "/landscape.mp4/animated.mp4?length=1"
            let whole = try server.fetch(url)
            #expect(whole.status == 200 && whole.headers["accept-ranges"] == "bytes")
            let length = whole.body.count
            let first = try server.fetch(url, headers: ["Range: bytes=0-99"])
            #expect(first.status == 206 && first.body == whole.body.prefix(100))
            #expect(first.headers["content-range"] == "bytes 0-99/\(length)")
            let suffix = try server.fetch(url, headers: ["Range: bytes=-10"])
            #expect(suffix.status == 206 && suffix.body == whole.body.suffix(10))
            let open = try server.fetch(url, headers: ["Range: bytes=\(length - 5)-"])
            #expect(open.status == 206 && open.body == whole.body.suffix(5))
            let clamped = try server.fetch(url, headers: ["Range: bytes=10-99999999999999999999999"])
            #expect(clamped.status == 206 && clamped.body == whole.body.dropFirst(10))
            for past in ["bytes=\(length)-", "bytes=99999999999999999999999-"] {
                let reply = try server.fetch(url, headers: ["Range: " + past])
                #expect(reply.status == 416 && reply.headers["content-range"] == "bytes */\(length)", "\(past)")
            }
            let many = (0..<1000).map { "\($0)-\($0)" }.joined(separator: ",")
            for ignored in ["bytes=0-1,5-6", "bytes=" + many, "bytes=5-1", "items=0-1", "bytes=a-b"] {
                let reply = try server.fetch(url, headers: ["Range: " + ignored])
                #expect(reply.status == 200 && reply.body == whole.body, "\(ignored.prefix(40))")
            }
            // If-Range with another validator: the whole body.
            let stale = try server.fetch(url, headers: ["Range: bytes=0-9", "If-Range: \"other\""])
            #expect(stale.status == 200 && stale.body.count == length)
            let fresh = try server.fetch(url, headers: ["Range: bytes=0-9", "If-Range: " + (whole.headers["etag"] ?? "")])
            #expect(fresh.status == 206 && fresh.body.count == 10)
        }
    }

    @Test("Validators: a strong ETag from the source and the query, 304, HEAD, one-year immutable caching")
    func validators() throws {
        try Self.withServer { server, root in
            let url = "/landscape.mp4/thumbnail.jpg?time=1&width=160"
            let first = try server.fetch(url)
            #expect(first.status == 200)
            let tag = try #require(first.headers["etag"])
            #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && !tag.hasPrefix("W/"))
            #expect(first.headers["cache-control"] == "public, max-age=31536000, immutable")
            // The same parameters in another order (and a default spelled out) name the same response.
            #expect(try server.fetch("/landscape.mp4/thumbnail.jpg?width=160&time=1").headers["etag"] == tag)
            #expect(try server.fetch("/landscape.mp4/thumbnail.jpg?time=2&width=160").headers["etag"] != tag)
            #expect(try server.fetch("/landscape.mp4/thumbnail.png?time=1&width=160").headers["etag"] != tag)
            let again = try server.fetch(url, headers: ["If-None-Match: \(tag)"])
            #expect(again.status == 304 && again.body.isEmpty && again.headers["etag"] == tag)
            #expect(try server.fetch(url, headers: ["If-None-Match: \"other\", \(tag)"]).status == 304)
            #expect(try server.fetch(url, headers: ["If-None-Match: \"other\""]).status == 200)
            let head = try server.fetch(url, method: "HEAD")
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.length == first.body.count)
            // A changed source (a new modification time) has a new validator.
            let later = Date().addingTimeInterval(60)
            try FileManager.default.setAttributes([.modificationDate: later], ofItemAtPath: root + "/landscape.mp4")
            let changed = try server.fetch(url)
            #expect(changed.status == 200 && changed.headers["etag"] != tag)
            #expect(try server.fetch(url, headers: ["If-None-Match: \(tag)"]).status == 200)
        }
    }

    @Test("Bad requests get one problem body with the right status, naming the parameter, echoing nothing")
    func problems() throws {
        try Self.withServer { server, _ in
            let clip = "/landscape.mp4"
            let cases: [(url: String, status: Int, parameter: String?)] = [
                ("\(clip)/thumbnail.jpg?widht=320", 400, "widht"),
                ("\(clip)/thumbnail.jpg?width=0", 400, "width"),
                ("\(clip)/thumbnail.jpg?width=99999", 400, "width"),
                ("\(clip)/thumbnail.jpg?width=12abc", 400, "width"),
                ("\(clip)/thumbnail.jpg?time=soon", 400, "time"),
                ("\(clip)/thumbnail.jpg?fit_mode=zoom", 400, "fit_mode"),
                ("\(clip)/thumbnail.jpg?quality=101", 400, "quality"),
                ("\(clip)/thumbnail.jpg?accuracy=fuzzy", 400, "accuracy"),
                ("\(clip)/thumbnail.jpg?time=1&time=2", 400, "time"),
                ("\(clip)/thumbnail.jpg?%3Cscript%3E=1", 400, nil),
                ("\(clip)/thumbnail.jpg?time=%ZZ", 400, nil),
                ("\(clip)/thumbnail.jpg?time=1%00", 400, nil),
                ("\(clip)/probe.json?x=1", 400, "x"),
                ("\(clip)/thumbnail.gif", 404, nil),
                ("\(clip)/thumbnail.jpg/thumbnail.jpg", 404, nil),
                ("/missing.mp4/thumbnail.jpg", 404, nil),
                ("/../etc/passwd/thumbnail.jpg", 404, nil),
                ("/..%2F..%2Fetc%2Fpasswd/thumbnail.jpg", 404, nil),
                ("/%2e%2e/%2e%2e/etc/passwd/thumbnail.jpg", 404, nil),
                ("//etc/passwd/thumbnail.jpg", 404, nil),
                ("/%2Fetc%2Fpasswd/thumbnail.jpg", 404, nil),
                ("/sub%20dir/..%5C..%5Cetc/thumbnail.jpg", 404, nil),
                ("/landscape.mp4%00.txt/thumbnail.jpg", 404, nil),
                ("/outside.mp4/thumbnail.jpg", 404, nil),
                ("/sub%20dir/thumbnail.jpg", 404, nil),
                ("/notes.mp4/thumbnail.jpg", 415, nil),
            ]
            for item in cases {
                let reply = try server.fetch(item.url)
                #expect(reply.status == item.status, "\(item.url): \(reply.text)")
                #expect(reply.headers["content-type"] == "application/problem+json", "\(item.url)")
                let object = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any], "\(item.url)")
                #expect(object["status"] as? Int == item.status && object["title"] is String && object["detail"] is String)
                #expect(object["parameter"] as? String == item.parameter, "\(item.url): \(reply.text)")
                for echoed in ["<script>", "passwd", "/etc", "99999", "soon", "zoom", "/tmp", "previewloop-tests"] {
                    #expect(!reply.text.contains(echoed), "\(item.url) echoes \(echoed): \(reply.text)")
                }
            }
            // A link inside the root to a file inside it is followed.
            #expect(try server.fetch("/inside.mp4/thumbnail.jpg?width=64").status == 200)
            let post = try server.fetch("\(clip)/thumbnail.jpg", method: "POST")
            #expect(post.status == 405 && post.headers["allow"] == "GET, HEAD")
        }
    }

    @Test("Health, readiness and Prometheus metrics count what happened")
    func metrics() throws {
        try Self.withServer { server, _ in
            #expect(try server.fetch("/healthz").text == "ok\n")
            #expect(try server.fetch("/readyz").status == 200)
            let url = "/landscape.mp4/thumbnail.jpg?time=1&width=96"
            #expect(try server.fetch(url).status == 200)
            #expect(try server.fetch(url).status == 200)
            #expect(try server.fetch("/landscape.mp4/thumbnail.jpg?width=0").status == 400)
            let metrics = try server.fetch("/metrics")
            #expect(metrics.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            let lines = Set(metrics.text.split(separator: "\n").map(String.init))
            for expected in ["previewloop_http_requests_total{route=\"thumbnail.jpg\",status=\"200\"} 2",
                             "previewloop_http_requests_total{route=\"thumbnail.jpg\",status=\"400\"} 1",
                             "previewloop_cache_hits_total 1", "previewloop_cache_misses_total 1", "previewloop_renders_total 1",
                             "previewloop_renders_in_flight 0", "previewloop_queue_depth 0",
                             "previewloop_http_request_duration_seconds_count 5"] {
                #expect(lines.contains(expected), "missing \(expected) in\n\(metrics.text)")
            }
        }
    }
}
