import Foundation
import Testing
import PreviewLoopTestSupport

/// `--json` records say what a ranged http input cost (`remote`: bytes fetched, requests made) for every
/// single-clip command that samples frames, as they do for `s3://` inputs; the server's own log of the
/// ranges asked for agrees with the count of requests.
@Suite("--json records carry remote counts for http inputs", .serialized, .timeLimit(.minutes(10)), .tags(.network))
struct RemoteCountsTests {
    @Test("thumb, strip, sheet and sprites over http report bytes_fetched and requests", arguments: [
        ["thumb", "URL", "-o", "OUT/p.jpg"], ["strip", "URL", "-n", "4", "-o", "OUT/s.jpg"],
        ["sheet", "URL", "-o", "OUT/c.jpg"], ["sprites", "URL", "--every", "2", "-o", "OUT/sprites"],
    ])
    func countsInRecords(arguments: [String]) throws {
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: TestPaths.fixture("landscape.mp4"), toPath: folder + "/clip.mp4")
        let log = folder + "/requests.log"
        let server = try HTTPTestServer(directory: folder, requestLog: log)
        defer { server.stop() }
        let command = arguments.map { $0 == "URL" ? server.url(for: "clip.mp4").absoluteString : $0.replacing("OUT", with: folder) }
        let result = try Child.cli(command + ["--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let record = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        let remote = try #require(record?["remote"] as? [String: Any], "no remote counts: \(result.stdoutText)")
        let requests = try #require(remote["requests"] as? Int)
        let bytes = try #require(remote["bytes_fetched"] as? Int)
        let logged = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count
        #expect(requests == logged, "\(requests) requests counted, \(logged) logged by the server")
        #expect(bytes > 0)
    }
}
