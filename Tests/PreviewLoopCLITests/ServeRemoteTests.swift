import Foundation
import Glibc
import Synchronization
import Testing
import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// `serve --allow-source`: videos read over http(s) from allowed URL prefixes only, identified by their
/// server's validators, read as the version validated, with every way out of the prefixes refused
/// before anything is sent.
@Suite("serve: remote sources under allowed URL prefixes", .serialized, .timeLimit(.minutes(10)), .tags(.network))
struct ServeRemoteTests {
    /// `url` as a query value (everything but letters and digits escaped).
    static func encoded(_ url: String) -> String {
        url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    /// An origin folder with a video, a text file and redirects in and out of `/videos/`.
    static func withOrigin<T>(_ body: (_ base: String, _ folder: String) throws -> T) throws -> T {
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: TestPaths.fixture("landscape.mp4"), toPath: folder + "/landscape.mp4")
        try Data("not a video\n".utf8).write(to: URL(fileURLWithPath: folder + "/notes.mp4"))
        let port = HTTPTestServer.unusedPort()
        // The test server serves a path by its last component, so /videos/x and /private/x are one file:
        // only the URL decides what is allowed.
        let origin = try HTTPTestServer(directory: folder, redirects: [
            "inside.mp4": "/videos/landscape.mp4", "outside.mp4": "/private/landscape.mp4",
            "away.mp4": "http://localhost:\(port)/videos/landscape.mp4",
        ])
        defer { origin.stop() }
        return try body("http://127.0.0.1:\(origin.port)", folder)
    }

    @Test("A video under an allowed prefix is served as the same file under the root is; its server's validators make the ETag")
    func servedFromAllowedPrefix() throws {
        try Self.withOrigin { base, folder in
            let allowed = try URLAllowList([base + "/videos/"])
            try ServeTests.withServer({ $0.allowedSources = allowed; $0.sourceCheckInterval = 0 }) { server, _ in
                let url = server + "/thumbnail.jpg?width=320&url=" + Self.encoded(base + "/videos/landscape.mp4")
                let remote = try ServeTests.fetch(url)
                let local = try ServeTests.fetch(server + "/landscape.mp4/thumbnail.jpg?width=320")
                #expect(remote.status == 200 && local.status == 200, "\(remote.text)")
                #expect(remote.body == local.body && !remote.body.isEmpty)
                let tag = try #require(remote.headers["etag"])
                #expect(remote.headers["cache-control"] == "public, max-age=31536000, immutable")
                #expect(tag != local.headers["etag"], "a remote source's identity is its URL and validators, not a file's")
                #expect(try ServeTests.fetch(url, headers: ["If-None-Match: \(tag)"]).status == 304)

                // A redirect that stays under the prefix is followed; the same picture, the same validators.
                let redirected = try ServeTests.fetch(server + "/thumbnail.jpg?width=320&url=" + Self.encoded(base + "/videos/inside.mp4"))
                #expect(redirected.status == 200 && redirected.body == remote.body && redirected.headers["etag"] == tag)

                // Every other route reads remote sources too.
                let probe = try ServeTests.fetch(server + "/probe.json?url=" + Self.encoded(base + "/videos/landscape.mp4"))
                #expect(probe.status == 200 && probe.text.contains("\"width\""), "\(probe.text)")

                // A storyboard index points at its picture with the same source.
                let index = try ServeTests.fetch(server + "/storyboard.vtt?count=4&url=" + Self.encoded(base + "/videos/landscape.mp4"))
                let cue = try #require(index.text.split(separator: "\n").first { $0.hasPrefix("storyboard.jpg?") }, "\(index.text)")
                let picture = try ServeTests.fetch(server + "/" + cue.prefix { $0 != "#" })
                let localPicture = try ServeTests.fetch(server + "/landscape.mp4/storyboard.jpg?count=4")
                #expect(picture.status == 200 && picture.body == localPicture.body, "\(cue): \(picture.text)")

                // A changed video has other validators: a new ETag and the new picture.
                try FileManager.default.removeItem(atPath: folder + "/landscape.mp4")
                try FileManager.default.copyItem(atPath: TestPaths.fixture("card.mp4"), toPath: folder + "/landscape.mp4")
                let changed = try ServeTests.fetch(url)
                #expect(changed.status == 200 && changed.headers["etag"] != tag && changed.body != remote.body)
            }
        }
    }

    @Test("URLs outside the prefixes, redirects out of them, bad and missing sources: a problem body, nothing fetched or echoed")
    func refusals() throws {
        try Self.withOrigin { base, _ in
            let allowed = try URLAllowList([base + "/videos/"])
            let elsewhere = "http://127.0.0.1:\(HTTPTestServer.unusedPort())/videos/landscape.mp4"
            try ServeTests.withServer({ $0.allowedSources = allowed }) { server, _ in
                let cases: [(String, Int)] = [
                    (base + "/private/landscape.mp4", 403),
                    (base + "/videos-private/landscape.mp4", 403),
                    (base + "/videos/../private/landscape.mp4", 403),
                    (base + "/videos/%2e%2e/private/landscape.mp4", 403),
                    (base + "/videos/a%2f..%2flandscape.mp4", 403),
                    (base.replacingOccurrences(of: "http://", with: "http://user:pw@") + "/videos/landscape.mp4", 403),
                    (base.replacingOccurrences(of: "http://", with: "https://") + "/videos/landscape.mp4", 403),
                    (elsewhere, 403),
                    ("file:///etc/passwd", 403),
                    (base + "/videos/outside.mp4", 403),
                    (base + "/videos/away.mp4", 403),
                    (base + "/videos/missing.mp4", 404),
                    (base + "/videos/notes.mp4", 415),
                ]
                for (url, status) in cases {
                    let reply = try ServeTests.fetch(server + "/thumbnail.jpg?url=" + Self.encoded(url))
                    #expect(reply.status == status, "\(url): \(reply.status) \(reply.text)")
                    #expect(reply.headers["content-type"] == "application/problem+json", "\(url)")
                    #expect(!reply.text.contains("127.0.0.1") && !reply.text.contains("videos"), "\(url): \(reply.text)")
                }
                // `url` names the source only where the path names none.
                let both = try ServeTests.fetch(server + "/landscape.mp4/thumbnail.jpg?url=" + Self.encoded(base + "/videos/landscape.mp4"))
                #expect(both.status == 400 && both.text.contains("\"parameter\":\"url\""), "\(both.text)")
                #expect(try ServeTests.fetch(server + "/thumbnail.jpg?url=%zz").status == 400)
            }
            // Without --allow-source no URL is read.
            try ServeTests.withServer { server, _ in
                let reply = try ServeTests.fetch(server + "/thumbnail.jpg?url=" + Self.encoded(base + "/videos/landscape.mp4"))
                #expect(reply.status == 403 && reply.text.contains("--allow-source"), "\(reply.text)")
            }
        }
    }

    @Test("A render never reads another version than the one validated: a failed precondition is 503, and the next request sees the new one")
    func renderReadsTheValidatedVersion() throws {
        try Self.withOrigin { base, _ in
            let url = base + "/videos/landscape.mp4"
            let sources = RemoteSources(allowedURLs: try URLAllowList([base + "/videos/"]), tls: TLSOptions(), checkInterval: 60)
            let current = try sources.validators(of: url).get()
            #expect(current.entityTag != nil && current.preconditions["If-Match"] == current.entityTag)
            let job = try PreviewRequests.job(route: "thumbnail.jpg", query: [("width", "64")], source: url)
            let scratch = TestPaths.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            #expect(try !ServerCore.renderRemote(job, validated: current, from: sources, scratch: scratch).body.isEmpty)
            // Validators from before a change: the origin answers 412 to If-Match, and the render is refused.
            var stale = current
            stale.entityTag = "\"0-0\""
            #expect(throws: PreviewRequestError(status: 503, detail: "The source changed while the request waited; retry.")) {
                try ServerCore.renderRemote(job, validated: stale, from: sources, scratch: scratch)
            }
        }
    }

    @Test("https sources are authenticated: a self-signed certificate is 502 unless its authority is given with --ca-file")
    func certificatesVerified() throws {
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: TestPaths.fixture("landscape.mp4"), toPath: folder + "/a.mp4")
        let origin = try TLSServer(directory: folder, subject: "/CN=127.0.0.1", alternativeName: "IP:127.0.0.1")
        defer { origin.stop() }
        let base = "https://127.0.0.1:\(origin.port)/"
        let request = "/thumbnail.jpg?width=64&url=" + Self.encoded(base + "a.mp4")
        try ServeTests.withServer({ $0.allowedSources = try? URLAllowList([base]) }) { server, _ in
            let reply = try ServeTests.fetch(server + request)
            #expect(reply.status == 502, "\(reply.text)")
        }
        try ServeTests.withServer({ options in
            options.allowedSources = try? URLAllowList([base])
            options.tls.caFile = origin.certificate
        }) { server, _ in
            let reply = try ServeTests.fetch(server + request)
            #expect(reply.status == 200 && reply.headers["content-type"] == "image/jpeg", "\(reply.text)")
        }
    }

    @Test("A video's server that never answers holds up no other request; its requests get 504, asked of it once")
    func stalledOriginHoldsNothingUp() throws {
        // Accepts connections and never answers.
        let script = """
        import socket
        s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
        print(s.getsockname()[1], flush=True)
        held = []
        while True:
            c, _ = s.accept(); held.append(c); print("accepted", flush=True)
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-u", "-c", script]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        let port = try #require(Int(line.prefix { $0.isNumber }))
        // Counts the origin's "accepted" lines until the script is killed.
        let accepted = Mutex(0)
        Thread.detachNewThread {
            while case let data = output.fileHandleForReading.availableData, !data.isEmpty {
                let count = String(decoding: data, as: UTF8.self).components(separatedBy: "accepted").count - 1
                accepted.withLock { $0 += count }
            }
        }
        let base = "http://127.0.0.1:\(port)/"
        try ServeTests.withServer({ options in
            options.allowedSources = try? URLAllowList([base])
            options.requestDeadline = 8
        }) { server, _ in
            // More stalled requests than the daemon has polling threads (one per core).
            let stalled = 6
            let statuses = Mutex<[Int]>([])
            let group = DispatchGroup()
            for number in 0..<stalled {
                // Three URLs, each asked twice: one HEAD per URL.
                let url = server + "/thumbnail.jpg?width=\(64 + number)&url=" + Self.encoded(base + "v\(number % 3).mp4")
                DispatchQueue.global().async(group: group) {
                    let status = (try? ServeTests.fetch(url).status) ?? -1
                    statuses.withLock { $0.append(status) }
                }
            }
            // Every stalled request is in flight once the origin has accepted one connection per URL.
            let soon = ContinuousClock.now + .seconds(30)
            while accepted.withLock({ $0 }) < 3 && ContinuousClock.now < soon { usleep(10_000) }
            let health = try ServeTests.fetch(server + "/healthz")
            let answeredMeanwhile = statuses.withLock { $0.count }
            #expect(health.status == 200 && answeredMeanwhile == 0, "healthz \(health.status) after \(answeredMeanwhile) stalled answers")
            let local = try ServeTests.fetch(server + "/landscape.mp4/thumbnail.jpg?width=64")
            #expect(local.status == 200)
            group.wait()
            #expect(statuses.withLock { $0 } == Array(repeating: 504, count: stalled), "\(statuses.withLock { $0 })")
        }
        #expect(accepted.withLock { $0 } == 3, "the origin accepted \(accepted.withLock { $0 }) connections")
    }

    @Test("serve --allow-source reads its prefixes; a malformed one is a usage error naming it")
    func allowSourceOption() throws {
        let good = try CommandLineParser.parse(["serve", "--root", "/tmp", "--allow-source", "https://A.example/v/",
                                                "--allow-source", "http://b.example:8080"])
        guard case .command(let options as ServeCommand) = good else { Issue.record("not serve"); return }
        #expect(options.allowedSources?.prefixes == ["https://a.example/v/", "http://b.example:8080/"])
        for bad in ["ftp://a.example/", "https://user@a.example/", "https://a.example/v/?q=1", "https://a.example/../", "a.example/v/"] {
            #expect(throws: UsageError.self, "\(bad)") { try CommandLineParser.parse(["serve", "--root", "/tmp", "--allow-source", bad]) }
        }
    }

    @Test("serve --allow-origin takes * or origins in browsers' form; a path, a user, another scheme or * with others is a usage error")
    func allowOriginOption() throws {
        let parsed = try CommandLineParser.parse(["serve", "--root", "/tmp", "--allow-origin", "HTTPS://WWW.Example.com:443/",
                                                  "--allow-origin", "http://b.example:8080", "--allow-origin", "https://www.example.com"])
        guard case .command(let options as ServeCommand) = parsed else { Issue.record("not serve"); return }
        #expect(options.allowedOrigins == ["https://www.example.com", "http://b.example:8080"])
        let any = try CommandLineParser.parse(["serve", "--root", "/tmp", "--allow-origin", "*"])
        guard case .command(let anyOptions as ServeCommand) = any else { Issue.record("not serve"); return }
        #expect(anyOptions.allowedOrigins == ["*"])
        let none = try CommandLineParser.parse(["serve", "--root", "/tmp"])
        guard case .command(let noOptions as ServeCommand) = none else { Issue.record("not serve"); return }
        #expect(noOptions.allowedOrigins.isEmpty)
        for bad in [["https://a.example/page"], ["ftp://a.example"], ["a.example"], ["https://u@a.example"], ["https://a.example?x=1"],
                    ["null"], [""], ["*", "https://a.example"]] {
            #expect(throws: UsageError.self, "\(bad)") {
                try CommandLineParser.parse(["serve", "--root", "/tmp"] + bad.flatMap { ["--allow-origin", $0] })
            }
        }
    }
}

/// The prefix rule on its own.
@Suite("URLAllowList: segment-bounded prefixes in one normal form")
struct URLAllowListTests {
    @Test("Scheme, host and port must match; the path continues the prefix at a segment boundary")
    func matching() throws {
        let list = try URLAllowList(["https://Media.Example.com:443/videos/", "http://cdn.example.net:8080/clips"])
        let admitted = ["https://media.example.com/videos/a.mp4", "HTTPS://MEDIA.EXAMPLE.COM/videos/2024/b.mp4?sig=1",
                        "http://cdn.example.net:8080/clips", "http://cdn.example.net:8080/clips/c.mp4"]
        let refused = ["https://media.example.com/videos", "https://media.example.com/other/a.mp4",
                       "https://media.example.com.evil.test/videos/a.mp4", "http://media.example.com/videos/a.mp4",
                       "https://media.example.com:8443/videos/a.mp4", "https://user@media.example.com/videos/a.mp4",
                       "https://media.example.com/videos/../secret.mp4", "https://media.example.com/videos/%2E%2E/secret.mp4",
                       "https://media.example.com/videos/a%2Fb.mp4", "https://media.example.com/videos/a\\b.mp4",
                       "https://media.example.com/videos/a.mp4#x", "https://media.example.com/videos/a b.mp4",
                       "http://cdn.example.net:8080/clips2/c.mp4", "http://cdn.example.net/clips/c.mp4", "file:///videos/a.mp4",
                       "https://media.example.com/videos/%zz.mp4", String(repeating: "x", count: 5000)]
        for url in admitted { #expect(list.admits(url), "\(url)") }
        for url in refused { #expect(!list.admits(url), "\(url)") }
        #expect(list.prefixes == ["https://media.example.com/videos/", "http://cdn.example.net:8080/clips"])
        #expect(URLAllowList.normalized("HTTP://[::1]:80") == "http://[::1]/")
    }
}
