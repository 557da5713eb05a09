import Foundation
import Glibc
import PreviewLoop
import PreviewLoopCLI
import PreviewLoopJobs
import Testing
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// Outputs that share their work are one render: a storyboard's index (`.vtt`, `.json`) and picture, a
/// thumbnail and its `placeholder.json`; each answered afterwards is the body its own render gives.
@Suite("serve: one render for outputs that share it", .serialized, .timeLimit(.minutes(10)))
struct ServeSharedRenderTests {
    /// Fetches `paths` in order from a new server on the same root; the bodies and the renders made.
    static func fetchAll(_ paths: [String], root: String, cache: String? = nil) throws -> (bodies: [Data], renders: Int) {
        var options = ServeCommand(root: root)
        options.workers = 1
        options.cacheDirectory = cache
        let server = try PreviewServer(options: options, accessLog: nil)
        defer { server.stop(grace: 5) }
        let base = "http://127.0.0.1:\(server.port)"
        var bodies: [Data] = []
        for path in paths {
            let reply = try ServeTests.fetch(base + path)
            #expect(reply.status == 200, "\(path): \(reply.text)")
            bodies.append(reply.body)
        }
        return (bodies, try ServeCacheTests.metric("previewloop_renders_total", base) ?? -1)
    }

    @Test("storyboard.vtt, then .json, then .jpg (and .webp's indexes): one render, each body its own render's")
    func storyboardIsOneRender() throws {
        let root = try ServeTests.makeRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        for (query, picture) in [("count=6&columns=3&width=96&height=54", "storyboard.jpg"),
                                 ("count=4&width=80&format=webp", "storyboard.webp")] {
            let pictureQuery = query.replacing("&format=webp", with: "")
            let paths = ["/landscape.mp4/storyboard.vtt?\(query)", "/landscape.mp4/storyboard.json?\(query)",
                         "/landscape.mp4/\(picture)?\(pictureQuery)"]
            let together = try Self.fetchAll(paths, root: root)
            #expect(together.renders == 1, "\(query): \(together.renders) renders")
            // Each alone, on a server of its own, gives the same bytes.
            for (index, path) in paths.enumerated() {
                let alone = try Self.fetchAll([path], root: root)
                #expect(alone.renders == 1 && alone.bodies[0] == together.bodies[index], "\(path)")
            }
        }
    }

    @Test("thumbnail.jpg then placeholder.json with the same parameters: one render; only the thumbnail goes to disk")
    func placeholderComesWithTheThumbnail() throws {
        let root = try ServeTests.makeRoot(), cache = TestPaths.temporaryDirectory() + "/cache"
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: cache)
        }
        let paths = ["/landscape.mp4/thumbnail.jpg?width=160&time=1", "/landscape.mp4/placeholder.json?width=160&time=1"]
        let together = try Self.fetchAll(paths, root: root, cache: cache)
        #expect(together.renders == 1)
        let alone = try Self.fetchAll([paths[1]], root: root)
        #expect(alone.bodies[0] == together.bodies[1], "\(String(decoding: together.bodies[1], as: UTF8.self))")
        // The placeholder stays in memory: a second server on the same cache renders it.
        #expect(ServeCacheTests.eventually { ServeCacheTests.entries(cache).count == 1 })
        let again = try Self.fetchAll([paths[1]], root: root, cache: cache)
        #expect(again.renders == 1 && again.bodies[0] == alone.bodies[0])
        // A storyboard's parts all go to disk: a second server answers the picture without rendering.
        let storyboard = ["/landscape.mp4/storyboard.vtt?count=4", "/landscape.mp4/storyboard.jpg?count=4"]
        let before = ServeCacheTests.entries(cache).count
        #expect(try Self.fetchAll([storyboard[0]], root: root, cache: cache).renders == 1)
        #expect(ServeCacheTests.eventually { ServeCacheTests.entries(cache).count == before + 3 })
        #expect(try Self.fetchAll([storyboard[1]], root: root, cache: cache).renders == 0)
    }
}
