import Foundation
import Glibc
import Testing
import PreviewLoop
import PreviewLoopCLI
import PreviewLoopJobs
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// `serve`'s placeholders: `thumbnail.*` and card stills carry `Thumbhash`, `Blurhash` and
/// `Dominant-Color` headers equal to the reference encoders' on the served picture, kept with the
/// memory and disk cache entries; `placeholder.json` carries them with the pHash (equal to
/// `imagehash.phash`) and the time, with validators, 304, signed URLs and problem bodies as the
/// other routes have them.
@Suite("serve: placeholders", .serialized, .timeLimit(.minutes(10)))
struct ServePlaceholderTests {
    typealias Reply = ServeTests.Reply

    /// The reference encoders' placeholder of a served PNG, and its pHash: the PNG decoded by ffmpeg,
    /// reduced as the library reduces every picture before hashing, hashed by Python.
    static func reference(png: Data) throws -> (result: PlaceholderOracle.Result, phash: String) {
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try png.write(to: URL(fileURLWithPath: folder + "/served.png"))
        let size = ServeTests.pngSize(png)
        try #require(size.count == 2)
        let raw = try Child.tool("ffmpeg", ["-v", "error", "-i", folder + "/served.png", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        let image = try RGBImage(width: size[0], height: size[1], pixels: [UInt8](raw.stdout))
        try Data(PPM.encode(ImagePlaceholder.hashedPicture(of: image))).write(to: URL(fileURLWithPath: folder + "/hashed.ppm"))
        return (try PlaceholderOracle.hash(folder + "/hashed.ppm"), try PlaceholderOracle.phash(folder + "/served.png"))
    }

    static func expectPlaceholderHeaders(_ reply: Reply, _ reference: PlaceholderOracle.Result, _ what: String) {
        #expect(reply.headers["thumbhash"] == reference.thumbHash, "\(what): \(reply.headers)")
        #expect(reply.headers["blurhash"] == reference.blurHash, "\(what): \(reply.headers)")
        let color = reply.headers["dominant-color"] ?? ""
        #expect(color.count == 7 && color.hasPrefix("#") && color.dropFirst().allSatisfy(\.isHexDigit), "\(what): \(color)")
    }

    @Test("thumbnail.* and card stills carry the placeholder headers, from a render, the memory cache, a range and a HEAD")
    func thumbnailHeaders() throws {
        try ServeTests.withServer { base, _ in
            let url = "\(base)/landscape.mp4/thumbnail.png?time=1&width=320&height=180"
            let rendered = try ServeTests.fetch(url)
            #expect(rendered.status == 200)
            let reference = try Self.reference(png: rendered.body).result
            Self.expectPlaceholderHeaders(rendered, reference, "rendered")
            let cached = try ServeTests.fetch(url)
            #expect(cached.body == rendered.body)
            Self.expectPlaceholderHeaders(cached, reference, "from memory")
            let part = try ServeTests.fetch(url, headers: ["Range: bytes=0-15"])
            #expect(part.status == 206)
            Self.expectPlaceholderHeaders(part, reference, "a range")
            let head = try ServeTests.fetch(url, method: "HEAD")
            Self.expectPlaceholderHeaders(head, reference, "HEAD")
            // The JPEG of the same frame carries the same placeholder: it is the frame's, not the file's.
            let jpeg = try ServeTests.fetch("\(base)/landscape.mp4/thumbnail.jpg?time=1&width=320&height=180")
            Self.expectPlaceholderHeaders(jpeg, reference, "jpeg")
            // A card still carries its own (opaque, so the PNG holds the picture hashed); an animation and a
            // strip carry none.
            let card = try ServeTests.fetch("\(base)/landscape.mp4/card.png?width=240&height=136&at=0&background=white")
            #expect(card.status == 200, "\(card.text)")
            Self.expectPlaceholderHeaders(card, try Self.reference(png: card.body).result, "card.png")
            for route in ["animated.gif?length=1&width=64", "strip.png?count=2&width=64"] {
                let reply = try ServeTests.fetch("\(base)/landscape.mp4/\(route)")
                #expect(reply.status == 200 && reply.headers["thumbhash"] == nil && reply.headers["blurhash"] == nil, "\(route)")
            }
        }
    }

    @Test("The disk cache keeps the headers with the body: a second server answers from disk with both")
    func diskCacheKeepsHeaders() throws {
        let root = try ServeTests.makeRoot(), cache = TestPaths.temporaryDirectory() + "/cache"
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: (cache as NSString).deletingLastPathComponent)
        }
        let path = "/landscape.mp4/thumbnail.png?time=2&width=200"
        let first = try ServeCacheTests.start(root: root, cache: cache)
        let rendered = try ServeTests.fetch("http://127.0.0.1:\(first.port)" + path)
        #expect(rendered.status == 200 && rendered.headers["thumbhash"] != nil)
        #expect(ServeCacheTests.eventually { ServeCacheTests.entries(cache).count == 1 })
        first.stop(grace: 5)
        let second = try ServeCacheTests.start(root: root, cache: cache)
        defer { second.stop(grace: 5) }
        let base = "http://127.0.0.1:\(second.port)"
        let hit = try ServeTests.fetch(base + path)
        #expect(hit.status == 200 && hit.body == rendered.body)
        #expect(hit.headers["content-length"] == "\(rendered.body.count)")
        for name in ["thumbhash", "blurhash", "dominant-color", "etag"] { #expect(hit.headers[name] == rendered.headers[name], "\(name)") }
        let part = try ServeTests.fetch(base + path, headers: ["Range: bytes=4-11"])
        #expect(part.status == 206 && part.body == rendered.body.dropFirst(4).prefix(8))
        #expect(part.headers["thumbhash"] == rendered.headers["thumbhash"])
        #expect(try ServeCacheTests.metric("previewloop_renders_total", base) == 0)
        // An entry file without the head (a file of an older server, or damaged) is a miss, rendered again.
        let entry = try #require(ServeCacheTests.entries(cache).first)
        try rendered.body.write(to: URL(fileURLWithPath: cache + "/" + entry))
        let third = try ServeCacheTests.start(root: root, cache: cache)
        defer { third.stop(grace: 5) }
        let rerendered = try ServeTests.fetch("http://127.0.0.1:\(third.port)" + path)
        #expect(rerendered.status == 200 && rerendered.body == rendered.body && rerendered.headers["thumbhash"] == rendered.headers["thumbhash"])
        #expect(try ServeCacheTests.metric("previewloop_renders_total", "http://127.0.0.1:\(third.port)") == 1)
    }

    @Test("placeholder.json: the placeholder, pHash and time of thumbnail's picture; ETag, 304, problems, signed URLs")
    func placeholderRoute() throws {
        let keyFolder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: keyFolder) }
        let keyFile = keyFolder + "/key.txt"
        try Data("placeholder signing key\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        try ServeTests.withServer({ $0.signingKeyFile = keyFile }) { base, _ in
            let expires = Int(Date().timeIntervalSince1970) + 600
            func signed(_ path: String, _ query: String) throws -> String {
                "\(base)\(path)?\(query)&signature=" + (try ServeTests.signature(keyFile: keyFile, path: path, query: query))
            }
            let query = "expires=\(expires)&height=180&time=1&width=320"  // sorted, as signed
            let json = try ServeTests.fetch(try signed("/landscape.mp4/placeholder.json", query))
            #expect(json.status == 200, "\(json.text)")
            #expect(json.headers["content-type"] == "application/json")
            let object = try #require(try JSONSerialization.jsonObject(with: json.body) as? [String: Any])
            let png = try ServeTests.fetch(try signed("/landscape.mp4/thumbnail.png", query))
            #expect(png.status == 200)
            let reference = try Self.reference(png: png.body)
            #expect(object["thumbhash"] as? String == reference.result.thumbHash)
            #expect(object["blurhash"] as? String == reference.result.blurHash)
            #expect(object["dominant_color"] as? String == png.headers["dominant-color"])
            #expect(object["phash"] as? String == reference.phash)
            #expect(object["width"] as? Int == 320 && object["height"] as? Int == 180)
            #expect(abs((object["time"] as? Double ?? -1) - 1) < 0.041, "\(object)")
            let tag = try #require(json.headers["etag"])
            #expect(json.headers["cache-control"] == "public, max-age=31536000, immutable")
            #expect(tag != png.headers["etag"])
            let again = try ServeTests.fetch(try signed("/landscape.mp4/placeholder.json", query), headers: ["If-None-Match: \(tag)"])
            #expect(again.status == 304 && again.body.isEmpty)
            // Unsigned, or signed for another picture: 403.
            #expect(try ServeTests.fetch("\(base)/landscape.mp4/placeholder.json?time=1").status == 403)
            let other = try signed("/landscape.mp4/thumbnail.png", query).replacingOccurrences(of: "thumbnail.png", with: "placeholder.json")
            #expect(try ServeTests.fetch(other).status == 403)
            // Problems as for thumbnail.*: the parameter named, nothing echoed; quality is not a parameter here.
            for (bad, parameter, status) in [("time=soon", "time", 400), ("width=0", "width", 400), ("quality=50", "quality", 400)] {
                let reply = try ServeTests.fetch(try signed("/landscape.mp4/placeholder.json", "expires=\(expires)&\(bad)"))
                #expect(reply.status == status && reply.headers["content-type"] == "application/problem+json", "\(bad): \(reply.text)")
                let problem = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
                #expect(problem["parameter"] as? String == parameter)
                #expect(!reply.text.contains("soon"))
            }
            let missing = try ServeTests.fetch(try signed("/missing.mp4/placeholder.json", "expires=\(expires)"))
            #expect(missing.status == 404 && missing.headers["content-type"] == "application/problem+json")
            let notVideo = try ServeTests.fetch(try signed("/notes.mp4/placeholder.json", "expires=\(expires)"))
            #expect(notVideo.status == 415)
        }
    }
}
