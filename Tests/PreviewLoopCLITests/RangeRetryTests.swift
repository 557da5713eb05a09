import Foundation
import Testing
import PreviewLoopTestSupport

/// Range reads survive a store that drops connections: a range cut off halfway is asked for again
/// (bounded retries with back-off), and the picture is still the local file's, byte for byte.
@Suite("s3:// ranges retried when a connection drops", .serialized, .timeLimit(.minutes(10)), .tags(.network))
struct RangeRetryTests {
    @Test("Every other response cut off mid-range: the poster is the local file's, in twice the requests")
    func droppedConnections() throws {
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: TestPaths.fixture("landscape.mp4"), toPath: folder + "/cut.mp4")
        // The test server serves a path by its last component: s3://clips/cut.mp4 is /clips/cut.mp4 there.
        let server = try HTTPTestServer(directory: folder, redirects: ["cut.mp4": "!drop"])
        defer { server.stop() }
        let environment = ["-u", "AWS_ACCESS_KEY_ID", "-u", "AWS_SECRET_ACCESS_KEY", "-u", "AWS_SESSION_TOKEN", "-u", "AWS_PROFILE",
                           "-u", "AWS_ENDPOINT_URL_S3", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_CONFIG_FILE=/dev/null",
                           "AWS_ENDPOINT_URL=http://127.0.0.1:\(server.port)"]
        let remote = folder + "/remote.jpg", local = folder + "/local.jpg"
        let result = try Child.run("/usr/bin/env", environment + [TestPaths.cliBinary, "thumb", "s3://clips/cut.mp4", "-o", remote, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Child.cli(["thumb", TestPaths.fixture("landscape.mp4"), "-o", local]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: remote)) == Data(contentsOf: URL(fileURLWithPath: local)))
        let record = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        let requests = try #require((record?["remote"] as? [String: Any])?["requests"] as? Int, "\(result.stdoutText)")
        #expect(requests >= 2 && requests % 2 == 0, "each range asked for twice: \(requests) requests")
    }
}
