import Foundation
import Testing
import PreviewLoop
import PreviewLoopJobs
import PreviewLoopTestSupport

/// The cues of a WebVTT file.
private func cueCount(_ path: String) throws -> Int {
    try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: " --> ").count - 1
}

@Suite("Sprites on short clips: --every auto by default, --count N, the recipe's every/count")
struct SpriteIntervalTests {
    @Test("auto gives about 50 thumbnails under 15 minutes and 100 above, never closer than a frame")
    func autoInterval() {
        #expect(SpriteInterval.auto.seconds(duration: 4, frameInterval: 0.04) == 0.08)
        #expect(SpriteInterval.auto.seconds(duration: 600, frameInterval: 0.04) == 12)
        #expect(SpriteInterval.auto.seconds(duration: 1800, frameInterval: 0.04) == 18)
        #expect(SpriteInterval.auto.seconds(duration: 0.4, frameInterval: 0.04) == 0.04)
        #expect(SpriteInterval.auto.seconds(duration: nil, frameInterval: 0.04) == SpriteInterval.fallback)
        #expect(SpriteInterval.count(8).seconds(duration: 4, frameInterval: 0.04) == 0.5)
        #expect(SpriteInterval.every(10).seconds(duration: 4, frameInterval: 0.04) == 10)
        #expect(SpriteInterval(parsing: "auto") == .auto && SpriteInterval(parsing: "1:30") == .every(90)
                && SpriteInterval(parsing: "0") == nil && SpriteInterval(parsing: "10%") == nil)
    }

    @Test("sprites on a 4 s clip gives more than one thumbnail by default; --count 8 gives 8; --count with --every is refused")
    func shortClip() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = TestPaths.fixture("landscape.mp4")
        let byDefault = try Child.cli(["sprites", clip, "-o", directory + "/default"])
        #expect(byDefault.status == 0, "\(byDefault.stderr)")
        #expect(try cueCount(directory + "/default/thumbnails.vtt") == 50)
        #expect(byDefault.stdoutText.contains("one per 0.080 s (auto)"), "\(byDefault.stdoutText)")
        let counted = try Child.cli(["sprites", clip, "-o", directory + "/count", "--count", "8"])
        #expect(counted.status == 0, "\(counted.stderr)")
        #expect(try cueCount(directory + "/count/thumbnails.vtt") == 8)
        let every = try Child.cli(["sprites", clip, "-o", directory + "/every", "--every", "10"])
        #expect(every.status == 0)
        #expect(try cueCount(directory + "/every/thumbnails.vtt") == 1)
        let both = try Child.cli(["sprites", clip, "-o", directory + "/both", "--count", "8", "--every", "1"])
        #expect(both.status == 64 && both.stderr.hasPrefix("Error: ") && both.stderr.contains("--count"), "\(both.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/both"))
    }

    @Test("Batch's default sprites on a 4 s clip have many tiles; \"count\" and \"every\" as the command's; bad ones refused")
    func batchSprites() throws {
        let bench = BatchBench()
        try bench.writeManifest([("land", TestPaths.fixture("landscape.mp4"))])
        let recipe = bench.directory + "/recipe.json"
        for (json, cues) in [(#"{"sprites":{}}"#, 50), (#"{"sprites":{"count":12}}"#, 12), (#"{"sprites":{"every":"auto"}}"#, 50),
                             (#"{"sprites":{"every":2}}"#, 2)] {
            try json.write(toFile: recipe, atomically: true, encoding: .utf8)
            let result = try bench.batch(["--recipe", recipe, "--force"])
            #expect(result.status == 0, "\(json): \(result.stderr)")
            #expect(try cueCount(bench.out + "/land/thumbnails.vtt") == cues, "\(json)")
        }
        for json in [#"{"sprites":{"every":0}}"#, #"{"sprites":{"every":"soon"}}"#, #"{"sprites":{"count":0}}"#,
                     #"{"sprites":{"count":5,"every":2}}"#] {
            #expect(throws: PreviewLoopError.self, "\(json)") { try BatchRecipe.parse(json: Array(json.utf8)) }
        }
    }
}

@Suite("batch DIR: every video file under a folder, stable ids from relative paths, --include/--exclude")
struct BatchFolderTests {
    /// A library: two videos at the top, one in a subfolder, one that would collide by id, and what is not a video.
    static func makeLibrary() throws -> String {
        let root = TestPaths.temporaryDirectory() + "/lib"
        let manager = FileManager.default
        for folder in ["", "/trailers", "/photos", "/.cache"] {
            try manager.createDirectory(atPath: root + folder, withIntermediateDirectories: true)
        }
        for (source, name) in [("landscape.mp4", "/a.mp4"), ("short.mp4", "/Big Clip.MOV"), ("vp9.webm", "/trailers/t1.webm"),
                               ("short.mp4", "/.cache/hidden.mp4")] {
            try manager.copyItem(atPath: TestPaths.fixture(source), toPath: root + name)
        }
        try "notes".write(toFile: root + "/notes.txt", atomically: true, encoding: .utf8)
        try Data([0xFF, 0xD8, 0xFF]).write(to: URL(fileURLWithPath: root + "/photos/p1.jpg"))
        try Data([0xFF, 0xD8, 0xFF]).write(to: URL(fileURLWithPath: root + "/photos/p2.jpg"))
        return root
    }

    @Test("The scan finds exactly the videos and counts what it skipped; ids are readable and unique")
    func scan() throws {
        let root = try Self.makeLibrary()
        defer { try? FileManager.default.removeItem(atPath: root + "/..") }
        let scan = try BatchFolder.scan(root)
        #expect(scan.clips.map(\.id) == ["Big_Clip", "a", "trailers_t1"])
        #expect(scan.clips.map(\.input) == [root + "/Big Clip.MOV", root + "/a.mp4", root + "/trailers/t1.webm"])
        #expect(scan.skipped == ["hidden": 1, "not a video": 3])
        #expect(try BatchFolder.scan(root, include: ["*.mp4"]).clips.map(\.id) == ["a"])
        #expect(try BatchFolder.scan(root, exclude: ["trailers"]).clips.map(\.id) == ["Big_Clip", "a"])
        #expect(try BatchFolder.scan(root, exclude: ["*.MOV"]).skipped["excluded"] == 1)
        // Paths that would share an id get a hash; others stay readable.
        let ids = BatchFolder.ids(for: ["x/a.mp4", "x_a.mp4", "b.mov"])
        #expect(ids[2] == "b" && ids[0].hasPrefix("x_a-") && ids[1].hasPrefix("x_a-") && ids[0] != ids[1])
        #expect(throws: PreviewLoopError.self) { try BatchFolder.scan(root + "/missing") }
        // A batch's output folder inside the library (`-o DIR/previews`) is not read as more videos.
        try FileManager.default.createDirectory(atPath: root + "/previews/a", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: root + "/previews/.lock.all", contents: nil)
        try FileManager.default.copyItem(atPath: TestPaths.fixture("short.mp4"), toPath: root + "/previews/a/hover.mp4")
        let again = try BatchFolder.scan(root)
        #expect(again.clips.map(\.id) == ["Big_Clip", "a", "trailers_t1"] && again.skipped["batch output"] == 1, "\(again)")
    }

    @Test("batch DIR without --out writes DIR-previews beside the folder, says so, resumes it, refuses a folder batch did not make")
    func defaultOutput() throws {
        let root = try Self.makeLibrary()
        let parent = root + "/.."
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let manager = FileManager.default
        let inside = try manager.subpathsOfDirectory(atPath: root).sorted()
        let out = root + BatchFolder.defaultOutputSuffix
        let first = try Child.cli(["batch", root, "--jobs", "1", "--recipe", TestRecipes.posterOnly])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(manager.fileExists(atPath: out + "/a/poster.jpg") && manager.fileExists(atPath: out + "/results.jsonl"))
        #expect(try manager.subpathsOfDirectory(atPath: root).sorted() == inside, "nothing is written inside the folder")
        #expect(first.stdoutText.hasPrefix("batch: 3 clips: 3 ok, 0 failed in ")
                    && first.stdoutText.contains("; outputs in \(out), results in \(out)/results.jsonl"), "\(first.stdoutText)")
        #expect(first.stderr.contains("outputs in \(out) (no --out given)"), "\(first.stderr)")
        // The rerun finds its outputs and has nothing to do; `DIR/.` names the same folder.
        let again = try Child.cli(["batch", root, "--jobs", "1", "--recipe", TestRecipes.posterOnly])
        #expect(again.status == 0 && again.stdoutText.contains("3 left as they were"), "\(again.stdoutText)\(again.stderr)")
        let dot = try Child.cli(["batch", root + "/.", "--jobs", "1", "--recipe", TestRecipes.posterOnly])
        let resolved = URL(fileURLWithPath: root).resolvingSymlinksInPath().path + BatchFolder.defaultOutputSuffix
        #expect(dot.status == 0 && dot.stdoutText.contains("; outputs in \(resolved), "), "\(dot.stdoutText)\(dot.stderr)")
        #expect(try manager.contentsOfDirectory(atPath: parent).sorted() == ["lib", "lib" + BatchFolder.defaultOutputSuffix])

        // A folder of that name batch did not make is left as it is.
        let other = parent + "/other"
        try manager.createDirectory(atPath: other + BatchFolder.defaultOutputSuffix, withIntermediateDirectories: true)
        try manager.createDirectory(atPath: other, withIntermediateDirectories: true)
        try manager.copyItem(atPath: TestPaths.fixture("short.mp4"), toPath: other + "/s.mp4")
        try "mine".write(toFile: other + BatchFolder.defaultOutputSuffix + "/notes.txt", atomically: true, encoding: .utf8)
        let refused = try Child.cli(["batch", other])
        #expect(refused.status == 1 && refused.stderr.hasPrefix("Error: ") && refused.stderr.contains("--out"), "\(refused.stderr)")
        #expect(try manager.contentsOfDirectory(atPath: other + BatchFolder.defaultOutputSuffix) == ["notes.txt"])

        // A manifest has no default.
        try (root + "/a.mp4\n").write(toFile: parent + "/list.txt", atomically: true, encoding: .utf8)
        let manifest = try Child.cli(["batch", parent + "/list.txt"])
        #expect(manifest.status == 64 && manifest.stderr.hasPrefix("Error: Missing '--out <dir>'"), "\(manifest.stderr)")
    }

    @Test("The summary line names the shard only for a sharded run")
    func summaryShard() throws {
        let root = try Self.makeLibrary()
        defer { try? FileManager.default.removeItem(atPath: root + "/..") }
        let whole = try Child.cli(["batch", root, "-o", root + "/../OUT", "--include", "a.mp4", "--recipe", TestRecipes.posterOnly])
        #expect(whole.status == 0 && whole.stdoutText.hasPrefix("batch: 1 clip: 1 ok"), "\(whole.stdoutText)\(whole.stderr)")
        let shard = try Child.cli(["batch", root, "-o", root + "/../OUT", "--include", "a.mp4", "--shard", "0/1", "--recipe", TestRecipes.posterOnly])
        #expect(shard.status == 0 && shard.stdoutText.hasPrefix("batch shard 0/1: 1 clip: "), "\(shard.stdoutText)\(shard.stderr)")
    }

    @Test("preview-loop batch DIR makes every video's outputs and says what it skipped")
    func batchFolder() throws {
        let root = try Self.makeLibrary()
        defer { try? FileManager.default.removeItem(atPath: root + "/..") }
        let out = root + "/../OUT"
        let result = try Child.cli(["batch", root, "-o", out, "--exclude", "t1.*", "--jobs", "1", "--recipe", TestRecipes.posterOnly])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("2 videos") && result.stderr.contains("hidden: 1") && result.stderr.contains("excluded: 1"),
                "\(result.stderr)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: out).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".jsonl") }
        #expect(folders.sorted() == ["Big_Clip", "a"])
        #expect(FileManager.default.fileExists(atPath: out + "/a/poster.jpg"))
        let none = try Child.cli(["batch", root, "-o", root + "/../OUT2", "--include", "*.avi"])
        #expect(none.status == 64 && none.stderr.hasPrefix("Error: ") && none.stderr.contains("no video"), "\(none.stderr)")
    }
}
