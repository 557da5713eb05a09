import Foundation
import Glibc
import Testing
import PreviewLoopCLI
import PreviewLoopJobs
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// `serve --cache DIR`: the disk cache on real fixtures over real HTTP. Entries outlive the server and
/// are shared by servers on one folder; a hit is the rendered bytes (whole, ranged, HEAD); eviction holds
/// the cap and removes only the cache's own files; a folder of the user's files is refused; a full disk
/// leaves no torn or temporary file; a replaced source is never answered from its old entry.
@Suite("serve: the disk cache", .serialized, .timeLimit(.minutes(10)))
struct ServeCacheTests {
    typealias Reply = ServeTests.Reply

    static func start(root: String, cache: String, size: Int = 64 << 20, memory: Int = 0) throws -> PreviewServer {
        var options = ServeCommand(root: root)
        options.workers = 2
        options.cacheDirectory = cache
        options.cacheSizeBytes = size
        options.memoryCacheBytes = memory
        return try PreviewServer(options: options, accessLog: nil)
    }

    /// The names in `folder`, sorted.
    static func names(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    /// The cache's entry files (not the tag, not temporaries).
    static func entries(_ folder: String) -> [String] {
        names(folder).filter(DiskCache.isEntryName)
    }

    /// Waits (up to 20 s) until `condition` holds: entries are written after the response is sent.
    static func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0..<400 {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }

    static func metric(_ name: String, _ base: String) throws -> Int? {
        let text = try ServeTests.fetch(base + "/metrics").text
        return text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) }
    }

    @Test("An entry outlives the server: a restarted or second server answers from disk, whole, ranged and HEAD, without rendering")
    func entriesOutliveTheServer() throws {
        let root = try ServeTests.makeRoot(), cache = TestPaths.temporaryDirectory() + "/cache"
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: (cache as NSString).deletingLastPathComponent)
        }
        let path = "/landscape.mp4/thumbnail.png?time=1&width=200"
        let first = try Self.start(root: root, cache: cache)
        let rendered = try ServeTests.fetch("http://127.0.0.1:\(first.port)" + path)
        #expect(rendered.status == 200 && !rendered.body.isEmpty)
        #expect(Self.eventually { Self.entries(cache).count == 1 }, "\(Self.names(cache))")
        // A second server on the same folder, while the first still runs, and the first after a restart.
        let second = try Self.start(root: root, cache: cache)
        first.stop(grace: 5)
        let restarted = try Self.start(root: root, cache: cache)
        defer {
            second.stop(grace: 5)
            restarted.stop(grace: 5)
        }
        for server in [second, restarted] {
            let base = "http://127.0.0.1:\(server.port)"
            let hit = try ServeTests.fetch(base + path)
            #expect(hit.status == 200 && hit.body == rendered.body && hit.headers["etag"] == rendered.headers["etag"])
            #expect(hit.headers["content-type"] == "image/png" && hit.headers["content-length"] == "\(rendered.body.count)")
            let part = try ServeTests.fetch(base + path, headers: ["Range: bytes=8-23"])
            #expect(part.status == 206 && part.body == rendered.body.dropFirst(8).prefix(16))
            #expect(part.headers["content-range"] == "bytes 8-23/\(rendered.body.count)")
            let past = try ServeTests.fetch(base + path, headers: ["Range: bytes=\(rendered.body.count)-"])
            #expect(past.status == 416)
            let head = try ServeTests.fetch(base + path, method: "HEAD")
            #expect(head.status == 200 && head.headers["content-length"] == "\(rendered.body.count)")
            let revalidated = try ServeTests.fetch(base + path, headers: ["If-None-Match: " + (rendered.headers["etag"] ?? "")])
            #expect(revalidated.status == 304)
            #expect(try Self.metric("previewloop_renders_total", base) == 0)
            #expect(try Self.metric("previewloop_disk_cache_hits_total", base) == 4)
        }
        // The descriptors sent from are closed: the process holds none of the entry open.
        let entry = try #require(Self.entries(cache).first)
        func holders() -> [String] {
            Self.names("/proc/self/fd").filter { name in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name))?.hasSuffix(entry) == true
            }
        }
        #expect(Self.eventually { holders().isEmpty }, "\(holders())")
    }

    @Test("Eviction keeps the folder under its cap, least recently used first, and removes only the cache's own files")
    func evictionHoldsTheCap() throws {
        let root = try ServeTests.makeRoot(), cache = TestPaths.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: cache)
        }
        // A leftover of a process that is gone (pid 2^22 + 1 is past Linux's pid_max), and files that are
        // not the cache's.
        let entryLike = String(repeating: "ab", count: 16) + ".jpg"
        let strangers = ["CACHEDIR.TAG": DiskCache.tagText, ".tmp-4194305-1-" + entryLike: "half written"]
        for (name, text) in strangers { try Data(text.utf8).write(to: URL(fileURLWithPath: cache + "/" + name)) }
        let server = try Self.start(root: root, cache: cache, size: 1 << 20)
        defer { server.stop(grace: 5) }
        #expect(!Self.names(cache).contains(".tmp-4194305-1-" + entryLike), "\(Self.names(cache))")
        let userFiles = ["holiday.txt", ".tmp-notes", String(repeating: "cd", count: 16) + ".JPG"]
        for name in userFiles { try Data("mine\n".utf8).write(to: URL(fileURLWithPath: cache + "/" + name)) }
        let base = "http://127.0.0.1:\(server.port)"
        var sizes: [Int] = []
        for step in 0..<24 {
            let reply = try ServeTests.fetch("\(base)/landscape.mp4/thumbnail.png?width=480&time=\(Double(step) / 8)")
            #expect(reply.status == 200)
            sizes.append(reply.body.count)
            _ = Self.eventually { (try? Self.metric("previewloop_renders_total", base)) == step + 1 }
            _ = Self.eventually { Self.names(cache).allSatisfy { !$0.hasPrefix(".tmp-") || $0 == ".tmp-notes" } }
            let total = Self.entries(cache).reduce(0) { sum, name in
                sum + ((try? FileManager.default.attributesOfItem(atPath: cache + "/" + name)[.size] as? Int) ?? 0)
            }
            #expect(total <= 1 << 20, "step \(step): \(total) bytes in the cache")
        }
        #expect(sizes.reduce(0, +) > 1 << 20, "the renders must overflow the cap for this test to mean anything: \(sizes)")
        #expect(try Self.metric("previewloop_disk_cache_evictions_total", base) ?? 0 > 0)
        for name in userFiles + ["CACHEDIR.TAG"] { #expect(Self.names(cache).contains(name), "\(name) was removed") }
        // The newest render is still there: eviction took the oldest.
        let newest = try ServeTests.fetch("\(base)/landscape.mp4/thumbnail.png?width=480&time=\(23.0 / 8)")
        #expect(newest.status == 200)
        #expect(try Self.metric("previewloop_disk_cache_hits_total", base) == 1)
    }

    @Test("A folder of the user's files or another program's cache is refused at start, and left as it was")
    func foreignFoldersAreRefused() throws {
        let root = try ServeTests.makeRoot(), folder = TestPaths.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: folder)
        }
        try FileManager.default.createDirectory(atPath: folder + "/photos", withIntermediateDirectories: true)
        try Data("sun\n".utf8).write(to: URL(fileURLWithPath: folder + "/photos/holiday.txt"))
        let foreign = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: foreign) }
        try Data((DiskCache.signature + "\n# made by some other tool\n").utf8).write(to: URL(fileURLWithPath: foreign + "/CACHEDIR.TAG"))
        for (cache, says) in [(folder + "/photos", "holds files"), (foreign, "another program's"),
                              (root + "/landscape.mp4", "not a folder"), ("/proc/nope/cache", "--cache")] {
            let run = try Child.cli(["serve", "--root", root, "--listen", "127.0.0.1:0", "--cache", cache])
            #expect(run.status == 1 && run.errorLines.count == 1 && run.stderr.contains(says), "\(cache): \(run.stderr)")
        }
        #expect(Self.names(folder + "/photos") == ["holiday.txt"])
        #expect(Self.names(foreign) == ["CACHEDIR.TAG"])
        for size in ["0", "10", "512K", "10X", "-1G", "2P", "99999999999999G", ""] {
            let run = try Child.cli(["serve", "--root", root, "--cache", folder + "/new", "--cache-size", size])
            #expect(run.status == 64 && run.errorLines.first?.hasPrefix("Error: Invalid value") == true, "\(size): \(run.stderr)")
        }
        #expect(ByteSize.parse("10G") == 10 << 30 && ByteSize.parse("300MiB") == 300 << 20 && ByteSize.parse("1tb") == 1 << 40)
        #expect(!FileManager.default.fileExists(atPath: folder + "/new"))
    }

    @Test("A full cache disk: the response is served whole and uncached, no torn or temporary file is left",
          .enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func fullDiskLeavesNoTornFile() throws {
        let root = try ServeTests.makeRoot(), cache = TestPaths.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: cache)
        }
        let mount = try Child.tool("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", cache])
        try #require(mount.status == 0, "\(mount.stderr)")
        defer { _ = try? Child.tool("umount", ["-l", cache]) }
        let server = try Self.start(root: root, cache: cache, size: 1 << 30)
        defer { server.stop(grace: 5) }
        let base = "http://127.0.0.1:\(server.port)"
        let big = "/landscape.mp4/thumbnail.png?width=640"
        let reply = try ServeTests.fetch(base + big)
        #expect(reply.status == 200 && reply.body.count > 64 << 10, "\(reply.body.count) bytes")
        #expect(Self.eventually { (try? Self.metric("previewloop_disk_cache_write_failures_total", base)) == 1 })
        #expect(Self.names(cache) == ["CACHEDIR.TAG"])
        // The same bytes as a server without a cache writes.
        let plain = try ServeTests.withServer { plain, _ in try ServeTests.fetch(plain + big) }
        #expect(plain.body == reply.body)
        // A small one still fits and is kept.
        #expect(try ServeTests.fetch(base + "/landscape.mp4/thumbnail.jpg?width=64").status == 200)
        #expect(Self.eventually { Self.entries(cache).count == 1 })
    }

    @Test("A source replaced while cached gets a new ETag and its own picture, never the old entry")
    func replacedSourceIsRenderedAgain() throws {
        let root = try ServeTests.makeRoot(), cache = TestPaths.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: cache)
        }
        let path = "/landscape.mp4/thumbnail.jpg?width=160"
        let server = try Self.start(root: root, cache: cache)
        let old = try ServeTests.fetch("http://127.0.0.1:\(server.port)" + path)
        #expect(Self.eventually { Self.entries(cache).count == 1 })
        server.stop(grace: 5)
        // Replaced by rename, as deploy tools do: a new inode, size and time.
        try FileManager.default.copyItem(atPath: TestPaths.fixture("portrait-phone.mp4"), toPath: root + "/next.mp4")
        #expect(rename(root + "/next.mp4", root + "/landscape.mp4") == 0)
        let restarted = try Self.start(root: root, cache: cache)
        defer { restarted.stop(grace: 5) }
        let new = try ServeTests.fetch("http://127.0.0.1:\(restarted.port)" + path)
        #expect(new.status == 200 && new.headers["etag"] != old.headers["etag"] && new.body != old.body)
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let thumb = try Child.cli(["thumb", root + "/landscape.mp4", "-o", folder + "/t.jpg", "--size", "160x-1"])
        #expect(thumb.status == 0, "\(thumb.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/t.jpg")) == new.body)
    }
}
