import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
import PreviewLoopFFmpeg

/// Redirects against the source policy, with real servers on 127.0.0.1: origin A serves playlists and
/// answers some names with `302 Location: …`; server B serves the real segment and records every
/// request, so a test proves B was never contacted when the hop to it is refused (the redirect is
/// learned from A and checked before anything is sent to B).
@Suite("Redirects: every hop checked, the other origin never contacted", .timeLimit(.minutes(10)))
struct RedirectTests {
    let size = Size(width: 320, height: 180)

    /// A directory with the catalogue's one-second segment and playlists naming `uris` as segments.
    private func site(playlists: [String: [String]]) throws -> String {
        let directory = TestPaths.temporaryDirectory()
        try FileManager.default.copyItem(atPath: try BadInputs.path("segment.ts"), toPath: directory + "/segment.ts")
        for (name, uris) in playlists {
            let entries = uris.map { "#EXTINF:1.0,\n\($0)\n" }.joined()
            try "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n\(entries)#EXT-X-ENDLIST\n"
                .write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
        }
        return directory
    }

    /// The CLI on `arguments` + `-o DIR/out.png` (thumb) must fail with one `Error:` line and leave nothing.
    private func expectCLIRefused(_ arguments: [String], input: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let isThumb = arguments.first == "thumb"
        let result = try Child.cli(arguments + (isThumb ? ["-o", output + "/out.png"] : []), killAfter: 20)
        expectCLIFailure(result, input: input, outputDirectory: output, sourceLocation: sourceLocation)
        #expect(result.stderr.contains("refused"), "\(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test("A playlist segment that redirects to another port is refused; that port receives no request", .tags(.network))
    func segmentRedirectToOtherPortRefused() throws {
        let other = try HostileServer(.serve(file: try BadInputs.path("segment.ts")))
        defer { other.stop() }
        let directory = try site(playlists: ["first.m3u8": ["/redir.ts"], "second.m3u8": ["segment.ts", "/redir.ts"]])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let origin = try HTTPTestServer(directory: directory, redirects: ["redir.ts": "http://127.0.0.1:\(other.port)/segment.ts"])
        defer { origin.stop() }

        // The first segment redirects: refused while opening.
        let first = origin.url(for: "first.m3u8")
        #expect(errorCode { _ = try MediaProbe.probe(.url(first)) } == .refusedByPolicy)
        #expect(errorCode { _ = try FrameSampler(source: .url(first)).frame(at: 0, size: size) } == .refusedByPolicy)
        try expectCLIRefused(["probe", first.absoluteString], input: first.absoluteString)
        try expectCLIRefused(["thumb", first.absoluteString, "--at", "0"], input: first.absoluteString)
        // The second segment redirects: the clip does not silently end after the first, the job fails.
        let second = origin.url(for: "second.m3u8")
        var frames = 0
        let code = errorCode { try LoopPlayer(source: .url(second), configuration: .init(size: size)).run { _ in frames += 1 } }
        #expect(code == .refusedByPolicy, "got \(String(describing: code)) after \(frames) frames")
        try expectCLIRefused(["thumb", second.absoluteString, "--at", "1.5"], input: second.absoluteString)
        // Even allowing cross-origin redirects of the input does not open the door for its segments.
        #expect(errorCode {
            _ = try FrameSampler(source: .url(first), options: SourceOptions(allowsCrossOriginRedirects: true)).frame(at: 0, size: size)
        } == .refusedByPolicy)
        try expectCLIRefused(["thumb", first.absoluteString, "--at", "0", "--allow-redirects"], input: first.absoluteString)
        #expect(other.receivedRequests.isEmpty, "the other port was contacted: \(other.receivedRequests)")
    }

    @Test("A segment redirected within its own origin plays", .tags(.network))
    func sameOriginSegmentRedirectPlays() throws {
        let directory = try site(playlists: ["moved.m3u8": ["/moved.ts"]])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let origin = try HTTPTestServer(directory: directory, redirects: ["moved.ts": "/segment.ts"])
        defer { origin.stop() }
        var frames = 0
        try LoopPlayer(source: .url(origin.url(for: "moved.m3u8")), configuration: .init(size: size)).run { _ in frames += 1 }
        #expect(frames == 25)
    }

    @Test("The input itself: same-origin redirects are followed, another origin only with --allow-redirects, file: never", .tags(.network))
    func topLevelRedirects() throws {
        let other = try HostileServer(.serve(file: try BadInputs.path("segment.ts")))
        defer { other.stop() }
        let directory = try site(playlists: [:])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let origin = try HTTPTestServer(directory: directory, redirects: [
            "same.ts": "/segment.ts",                                           // relative, same origin
            "hop.ts": "same.ts",                                                // two hops, both same origin
            "away.ts": "http://127.0.0.1:\(other.port)/segment.ts",
            "file.ts": "file://\(directory)/segment.ts",
            "loop.ts": "/loop.ts",
        ])
        defer { origin.stop() }

        for name in ["same.ts", "hop.ts"] {
            let info = try MediaProbe.probe(.url(origin.url(for: name)))
            #expect(info.width == 320, "\(name)")
            let result = try Child.cli(["probe", origin.url(for: name).absoluteString], killAfter: 20)
            #expect(result.status == 0, "\(name): \(result.stderr)")
        }
        #expect(other.receivedRequests.isEmpty)

        // Another origin: refused by default, before B hears of it.
        let away = origin.url(for: "away.ts")
        #expect(errorCode { _ = try MediaProbe.probe(.url(away)) } == .refusedByPolicy)
        try expectCLIRefused(["probe", away.absoluteString], input: away.absoluteString)
        try expectCLIRefused(["thumb", away.absoluteString, "--at", "0.5"], input: away.absoluteString)
        #expect(other.receivedRequests.isEmpty, "the other port was contacted: \(other.receivedRequests)")

        // file: and endless redirects: refused, with or without permission.
        for name in ["file.ts", "loop.ts"] {
            let url = origin.url(for: name)
            #expect(errorCode { _ = try MediaProbe.probe(.url(url), options: SourceOptions(allowsCrossOriginRedirects: true)) }
                    == .refusedByPolicy, "\(name)")
            try expectCLIRefused(["probe", url.absoluteString, "--allow-redirects"], input: url.absoluteString)
        }
        #expect(other.receivedRequests.isEmpty, "the other port was contacted: \(other.receivedRequests)")

        // Allowed: the library and the CLI follow it to B.
        let info = try MediaProbe.probe(.url(away), options: SourceOptions(allowsCrossOriginRedirects: true))
        #expect(info.width == 320)
        let output = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try Child.cli(["thumb", away.absoluteString, "-o", output + "/out.png", "--at", "0.5", "--allow-redirects"],
                                   killAfter: 20)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: output + "/out.png"))
        #expect(!other.receivedRequests.isEmpty)
    }

    @Test("A redirect's Location is read from the status line and headers, made absolute against the request")
    func locationParsing() {
        let base = "http://example.com:8080/a/b/list.m3u8"
        #expect(RedirectProbe.redirectTarget(inHeader: "HTTP/1.1 302 Found\r\nLocation: /seg.ts\r\n\r\n", relativeTo: base)
                == "http://example.com:8080/seg.ts")
        #expect(RedirectProbe.redirectTarget(inHeader: "HTTP/1.1 301 Moved\r\nlocation:  seg.ts \r\n\r\n", relativeTo: base)
                == "http://example.com:8080/a/b/seg.ts")
        #expect(RedirectProbe.redirectTarget(inHeader: "HTTP/1.0 307 X\r\nLocation: https://cdn.test/x\r\n\r\n", relativeTo: base)
                == "https://cdn.test/x")
        #expect(RedirectProbe.redirectTarget(inHeader: "HTTP/1.1 200 OK\r\nLocation: /seg.ts\r\n\r\n", relativeTo: base) == nil)
        #expect(RedirectProbe.redirectTarget(inHeader: "HTTP/1.1 302 Found\r\n\r\nLocation: /seg.ts\r\n", relativeTo: base) == nil)
        #expect(RedirectProbe.redirectTarget(inHeader: "garbage", relativeTo: base) == nil)
        #expect(SourcePolicy.origin(of: "HTTPS://Example.COM/x") == "example.com:443")
        #expect(SourcePolicy.origin(of: "file:///etc/passwd") == nil)
    }
}
