import Foundation
import Testing
@testable import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs
import PreviewLoopTestSupport

/// `batch report --duplicates`: re-encodes of one clip at other bitrates and sizes, made here with the
/// ffmpeg CLI, land in one group within the threshold; clips of other content stay out of it; the
/// records carry the hashes; the threshold is stated and its range enforced.
@Suite("batch report --duplicates: re-uploads found by pHash", .serialized, .timeLimit(.minutes(10)))
struct BatchDuplicatesTests {
    /// 4 s clips of different content (the ffmpeg CLI's sources), at 25 fps.
    static let sources: [(name: String, filter: String)] = [
        ("testsrc", "testsrc2=s=320x240:r=25:d=4"),
        ("mandelbrot", "mandelbrot=s=320x240:r=25,trim=duration=4"),
        ("life", "life=s=320x240:r=25:seed=7:mold=10:ratio=0.2:death_color=#204080:life_color=#f0c020,trim=duration=4"),
        ("bars", "smptehdbars=s=320x240:r=25:d=4,drawbox=x='mod(t*80,280)':y=100:w=40:h=40:color=white:t=fill"),
    ]

    /// The re-uploads of `testsrc`: another bitrate, other sizes, both.
    static let reencodes: [(name: String, arguments: [String])] = [
        ("testsrc-lowrate", ["-c:v", "libx264", "-b:v", "80k"]),
        ("testsrc-small", ["-vf", "scale=160:120", "-c:v", "libx264", "-crf", "30"]),
        ("testsrc-large", ["-vf", "scale=640:480", "-c:v", "libx264", "-crf", "38"]),
        ("testsrc-webm", ["-vf", "scale=256:192", "-c:v", "libvpx-vp9", "-b:v", "100k"]),
    ]

    @Test("Re-encodes group together within the threshold; other clips do not; --json and text say so")
    func reuploads() throws {
        let bench = BatchBench()
        defer { try? FileManager.default.removeItem(atPath: bench.directory) }
        var clips: [(id: String, input: String)] = []
        for source in Self.sources {
            let path = bench.directory + "/\(source.name).mp4"
            let made = try Child.tool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", source.filter, "-c:v", "libx264", "-crf", "18",
                                                 "-pix_fmt", "yuv420p", path], killAfter: 120)
            try #require(made.status == 0, "\(made.stderr)")
            clips.append((source.name, path))
        }
        for reencode in Self.reencodes {
            let path = bench.directory + "/\(reencode.name)." + (reencode.name.hasSuffix("webm") ? "webm" : "mp4")
            let made = try Child.tool("ffmpeg", ["-v", "error", "-i", clips[0].input] + reencode.arguments + ["-pix_fmt", "yuv420p", path],
                                      killAfter: 120)
            try #require(made.status == 0, "\(made.stderr)")
            clips.append((reencode.name, path))
        }
        try bench.writeManifest(clips)
        let recipe = bench.directory + "/recipe.json"
        try #"{"poster": {}, "sheet": {"grid": "3x3", "width": 480, "header": false}, "sprites": {"every": 1}}"#
            .write(toFile: recipe, atomically: true, encoding: .utf8)
        let run = try bench.batch(["--recipe", recipe, "--jobs", "2"])
        #expect(run.status == 0, "\(run.stderr)")

        // The records carry a poster hash and a hash a tile.
        let records = try bench.records()
        for (id, record) in records {
            let outputs = record["outputs"] as? [[String: Any]] ?? []
            let poster = outputs.first { $0["kind"] as? String == "poster" }
            #expect((poster?["phash"] as? String).flatMap(PerceptualHash.init(hex:)) != nil, "\(id)")
            let sheet = outputs.first { $0["kind"] as? String == "sheet" }
            #expect((sheet?["tile_phashes"] as? [String])?.count == sheet?["tiles"] as? Int, "\(id)")
            let sprites = outputs.filter { $0["kind"] as? String == "sprite_sheet" }.flatMap { $0["tile_phashes"] as? [String] ?? [] }
            let track = outputs.first { $0["kind"] as? String == "webvtt" }
            #expect(sprites.count == track?["tiles"] as? Int, "\(id)")
        }

        let report = try Child.run(TestPaths.cliBinary, ["batch", "report", bench.out, "--duplicates", "--json"])
        #expect(report.status == 0, "\(report.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: report.stdout) as? [String: Any])
        let near = try #require(object["near_duplicates"] as? [String: Any], "\(report.stdoutText)")
        #expect(near["threshold"] as? Int == DuplicateFinder.defaultThreshold)
        #expect(near["hashed"] as? Int == clips.count)
        let groups = near["groups"] as? [[String]] ?? []
        let expected = (["testsrc"] + Self.reencodes.map(\.name)).sorted()
        #expect(groups == [expected], "\(report.stdoutText)")
        for pair in near["pairs"] as? [[String: Any]] ?? [] {
            for key in ["poster_distance", "tile_distance"] {
                if let distance = pair[key] as? Int { #expect(distance <= DuplicateFinder.defaultThreshold, "\(pair)") }
            }
        }
        // The distances measured: every re-encode against the original, and every other clip against it.
        let hashes = records.mapValues { record in
            ((record["outputs"] as? [[String: Any]])?.first { $0["kind"] as? String == "poster" }?["phash"] as? String)
                .flatMap(PerceptualHash.init(hex:))
        }
        let original = try #require(hashes["testsrc"] ?? nil)
        for other in Self.sources.dropFirst() {
            let distance = try #require(hashes[other.name] ?? nil).distance(to: original)
            #expect(distance > DuplicateFinder.defaultThreshold, "\(other.name): \(distance)")
        }
        for reencode in Self.reencodes {
            let distance = try #require(hashes[reencode.name] ?? nil).distance(to: original)
            #expect(distance <= DuplicateFinder.defaultThreshold, "\(reencode.name): \(distance)")
        }

        // The text names the threshold and the group; a threshold of 0 keeps only identical hashes.
        let text = try Child.run(TestPaths.cliBinary, ["batch", "report", bench.out, "--duplicates"])
        #expect(text.stdoutText.contains("at most \(DuplicateFinder.defaultThreshold) bits of 64"), "\(text.stdoutText)")
        #expect(text.stdoutText.contains("  " + expected.joined(separator: ", ") + "\n"), "\(text.stdoutText)")
        let strict = try Child.run(TestPaths.cliBinary, ["batch", "report", bench.out, "--duplicates", "--hamming", "24", "--json"])
        #expect(strict.status == 0)
    }

    @Test("Solid clips of different colours are not duplicates; the same colour re-encoded is, by its colour")
    func flatColours() throws {
        let bench = BatchBench()
        defer { try? FileManager.default.removeItem(atPath: bench.directory) }
        // Every flat picture hashes to 8000000000000000: only the colour can tell them apart.
        var clips: [(id: String, input: String)] = []
        for (name, filter, size) in [("red", "color=red:s=320x240:r=25:d=3", "320:240"), ("blue", "color=blue:s=320x240:r=25:d=3", "320:240"),
                                     ("red-small", "color=red:s=320x240:r=25:d=3", "160:120")] {
            let path = bench.directory + "/\(name).mp4"
            let made = try Child.tool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", filter, "-vf", "scale=\(size)", "-c:v", "libx264",
                                                 "-pix_fmt", "yuv420p", path], killAfter: 120)
            try #require(made.status == 0, "\(made.stderr)")
            clips.append((name, path))
        }
        try bench.writeManifest(clips)
        let recipe = bench.directory + "/recipe.json"
        try #"{"poster": {}, "sprites": {"every": 1}}"#.write(toFile: recipe, atomically: true, encoding: .utf8)
        let run = try bench.batch(["--recipe", recipe])
        #expect(run.status == 0, "\(run.stderr)")
        let records = try bench.records()
        for (id, record) in records {
            let poster = (record["outputs"] as? [[String: Any]])?.first { $0["kind"] as? String == "poster" }
            #expect(poster?["phash"] as? String == "8000000000000000", "\(id): a flat picture's hash")
        }

        let report = try Child.run(TestPaths.cliBinary, ["batch", "report", bench.out, "--duplicates", "--json"])
        #expect(report.status == 0, "\(report.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: report.stdout) as? [String: Any])
        let near = try #require(object["near_duplicates"] as? [String: Any], "\(report.stdoutText)")
        #expect(near["groups"] as? [[String]] == [["red", "red-small"]], "\(report.stdoutText)")
        #expect(near["flat_by_color"] as? [String] == ["blue", "red", "red-small"], "\(report.stdoutText)")
        #expect(near["incomparable"] as? [String] == [], "\(report.stdoutText)")
        let pairs = near["pairs"] as? [[String: Any]] ?? []
        #expect(pairs.count == 1 && pairs.first?["poster_distance"] == nil, "\(report.stdoutText)")
        #expect((pairs.first?["color_distance"] as? Int).map { $0 <= DuplicateFinder.maxColorDistance } == true, "\(report.stdoutText)")

        let text = try Child.run(TestPaths.cliBinary, ["batch", "report", bench.out, "--duplicates"])
        #expect(text.stdoutText.contains("near-duplicates: 1 group "), "\(text.stdoutText)")
        #expect(text.stdoutText.contains("\n  red, red-small\n") && !text.stdoutText.contains("\n  blue"), "\(text.stdoutText)")
        #expect(text.stdoutText.contains("flat pictures") && text.stdoutText.contains("compared by the poster's colour alone"),
                "\(text.stdoutText)")
    }

    @Test("Flat hashes: posters compared by colour, tiles flat in both clips left out, no colour means no comparison")
    func flatRules() {
        func print(_ id: String, poster: UInt64?, color: String? = nil, tiles: [UInt64] = []) -> DuplicateFinder.Fingerprint {
            var record = BatchRecord(id: id, input: id, status: .ok, attempts: 1, outputs: [], clip: nil, timings: [:], shard: nil,
                                     fingerprint: nil)
            var posterEntry = BatchRecord.Output(kind: "poster", path: "p", bytes: 1)
            posterEntry.phash = poster.map { PerceptualHash(bits: $0).description }
            posterEntry.dominantColor = color
            var sheet = BatchRecord.Output(kind: "sheet", path: "s", bytes: 1)
            sheet.tilePhashes = tiles.map { PerceptualHash(bits: $0).description }
            record.outputs = [posterEntry, sheet]
            return DuplicateFinder.Fingerprint(record)!
        }
        let flat: UInt64 = 0x8000_0000_0000_0000
        let red = print("red", poster: flat, color: "#ff0000", tiles: [flat, flat])
        let blue = print("blue", poster: flat, color: "#0000ff", tiles: [flat, flat])
        let darkRed = print("dark-red", poster: flat, color: "#f00a05", tiles: [flat, 0])
        let black = print("black", poster: 0, tiles: [0, 0])                      // no colour: nothing to compare
        let grey = print("grey", poster: flat, tiles: [flat, flat])
        #expect(DuplicateFinder.isFlat(PerceptualHash(bits: flat)) && DuplicateFinder.isFlat(PerceptualHash(bits: 0)))
        #expect(!DuplicateFinder.isFlat(PerceptualHash(bits: flat | 1)))
        let matches = DuplicateFinder.matches([red, blue, darkRed, black, grey], threshold: 8)
        #expect(matches.map { "\($0.first)~\($0.second)" } == ["red~dark-red"])
        #expect(matches.first?.colorDistance == 15 && matches.first?.posterDistance == nil && matches.first?.tileDistance == nil)
        #expect(DuplicateFinder.incomparable([red, blue, black, grey]) == ["black", "grey"])
        #expect(DuplicateFinder.flatByColor([red, blue, black, grey]) == ["red", "blue"])
        // A flat tile against one with structure is a real difference and counts.
        let structured = print("structured", poster: flat, color: "#ff0000", tiles: [0x0F0F_0F0F_0F0F_0F0F, flat])
        #expect(DuplicateFinder.matches([red, structured], threshold: 8).isEmpty)
    }

    @Test("--hamming out of range, without --duplicates, or on a run is a usage error")
    func refusals() throws {
        for arguments in [["report", "OUT", "--duplicates", "--hamming", "25"], ["report", "OUT", "--duplicates", "--hamming=-1"],
                          ["report", "OUT", "--duplicates", "--hamming", "x"], ["report", "OUT", "--hamming", "4"],
                          ["clips.txt", "--out", "OUT", "--duplicates"]] {
            let result = try Child.run(TestPaths.cliBinary, ["batch"] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error:") && (result.stderr.contains("--hamming") || result.stderr.contains("--duplicates")),
                    "\(arguments): \(result.stderr)")
        }
    }

    @Test("Matching rules: posters and tiles must both agree; groups are transitive")
    func rules() {
        func print(_ id: String, poster: UInt64?, tiles: [UInt64] = []) -> DuplicateFinder.Fingerprint {
            var record = BatchRecord(id: id, input: id, status: .ok, attempts: 1, outputs: [], clip: nil, timings: [:], shard: nil,
                                     fingerprint: nil)
            // Every hash moved by one pattern (distances unchanged), so that none is a flat picture's.
            let pattern: UInt64 = 0x3C5A_0000_0000_0000
            var posterEntry = BatchRecord.Output(kind: "poster", path: "p", bytes: 1)
            posterEntry.phash = poster.map { PerceptualHash(bits: $0 ^ pattern).description }
            var sheet = BatchRecord.Output(kind: "sheet", path: "s", bytes: 1)
            sheet.tilePhashes = tiles.map { PerceptualHash(bits: $0 ^ pattern).description }
            record.outputs = [posterEntry, sheet]
            return DuplicateFinder.Fingerprint(record)!
        }
        let a = print("a", poster: 0, tiles: [0, 0xFF, 0xFFFF])
        let b = print("b", poster: 0b111, tiles: [0b1, 0xFF, 0xFFFF])           // 3 bits off; tiles median 0
        let c = print("c", poster: 0b111_1111, tiles: [0, 0xFF, 0xFFFF_FFFF])    // 4 from b, 7 from a; tiles median 0
        let d = print("d", poster: 0, tiles: [.max, .max, .max])                 // the poster alone agrees with a
        let e = print("e", poster: nil, tiles: [0, 0xFF, 0xFFFF])               // only tiles to compare
        let matches = DuplicateFinder.matches([a, b, c, d, e], threshold: 4)
        #expect(matches.map { "\($0.first)~\($0.second)" } == ["a~b", "a~e", "b~c", "b~e", "c~e"])
        #expect(DuplicateFinder.groups(matches) == [["a", "b", "c", "e"]])
        #expect(matches[0].posterDistance == 3 && matches[0].tileDistance == 0 && matches[0].tiles == 3)
        #expect(DuplicateFinder.matches([a, b, c, d, e], threshold: 2).isEmpty == false)
        #expect(DuplicateFinder.matches([a, d], threshold: 64).count == 1)
    }
}
