import Foundation
@testable import PreviewLoop
import PreviewLoopJobs
import Synchronization
import Testing

private final class Flag: Sendable { let value = Atomic<Int>(0) }

@Suite("Batch: manifests and shards")
struct BatchManifestTests {
    @Test("Shards are disjoint and together complete for N = 1…16, and stable when the manifest is re-read")
    func shardsPartition() throws {
        let text = (0..<300).map { "/media/library/clip \($0).mp4" }.joined(separator: "\n")
        let clips = try BatchManifest.parse(text)
        #expect(Set(clips.map(\.id)).count == 300)
        let reread = try BatchManifest.parse((0..<300).reversed().map { "/media/library/clip \($0).mp4" }.joined(separator: "\n"))
        for count in 1...16 {
            var seen: [String: Int] = [:]
            for index in 0..<count {
                let shard = try BatchShard(index: index, count: count)
                for clip in shard.select(clips) {
                    #expect(seen[clip.id] == nil, "clip \(clip.id) in shards \(seen[clip.id] ?? -1) and \(index) of \(count)")
                    seen[clip.id] = index
                }
                #expect(Set(shard.select(reread).map(\.id)) == Set(shard.select(clips).map(\.id)))
            }
            #expect(seen.count == clips.count)
            if count > 1 { #expect(Set(seen.values).count == count, "every one of \(count) shards gets clips") }
        }
    }

    @Test("Derived ids are stable, safe and distinct; unsafe or duplicate ids are refused")
    func ids() throws {
        let id = BatchManifest.derivedID(for: "/a/b/../Beach Day (1).MOV")
        #expect(id == BatchManifest.derivedID(for: "/a/b/../Beach Day (1).MOV"))
        #expect(id.hasPrefix("Beach_Day__1_-"))
        #expect(BatchManifest.derivedID(for: "/x/clip.mp4") != BatchManifest.derivedID(for: "/y/clip.mp4"))
        #expect(BatchManifest.derivedID(for: "https://cdn.example/v/../../etc/passwd?x=1").hasPrefix("passwd-"))
        try BatchManifest.validate(id: BatchManifest.derivedID(for: "../../.."))
        for bad in ["../escape", "a/b", ".hidden", "..", "", "results.jsonl", String(repeating: "x", count: 129), "naïve"] {
            #expect(throws: PreviewLoopError.self, "id \(bad)") { try BatchManifest.validate(id: bad) }
            #expect(throws: PreviewLoopError.self) { try BatchManifest.parse("{\"id\":\"\(bad)\",\"input\":\"a.mp4\"}") }
        }
        #expect(throws: PreviewLoopError.self) { try BatchManifest.parse("{\"id\":\"a\",\"input\":\"x\"}\n{\"id\":\"a\",\"input\":\"y\"}") }
        #expect(throws: PreviewLoopError.self) { try BatchManifest.parse("{\"id\":\"a\",\"input\":\"x\",\"strat\":1}") }
        #expect(throws: PreviewLoopError.self) { try BatchManifest.parse("{\"id\":\"a\",\"input\":\"-\"}") }
        #expect(throws: PreviewLoopError.self) { try BatchManifest.parse("{\"id\":\"a\"}") }
        let parsed = try BatchManifest.parse("# comment\n\nclips/a.mp4\r\nhttps://example.com/b.mp4\n", baseDirectory: "/lib")
        #expect(parsed.map(\.input) == ["/lib/clips/a.mp4", "https://example.com/b.mp4"])
        // A derived id is the plain name unless another clip would share it (or an explicit id is that name).
        #expect(parsed.map(\.id) == ["a", "b"])
        let shared = try BatchManifest.parse("x/clip.mp4\ny/clip.mp4\nz/other.mov\n")
        #expect(shared.map(\.id) == [BatchManifest.derivedID(for: "x/clip.mp4"), BatchManifest.derivedID(for: "y/clip.mp4"), "other"])
        let reserved = try BatchManifest.parse("{\"id\":\"other\",\"input\":\"q.mp4\"}\n{\"input\":\"z/other.mov\"}")
        #expect(reserved.map(\.id) == ["other", BatchManifest.derivedID(for: "z/other.mov")])
        #expect(try BatchManifest.parse("/m/\(String(repeating: "v", count: 80)).mp4").first?.id.count == 64 + 9)
    }

    @Test("An input holding a NUL is refused naming its line, in JSON Lines and in a plain list")
    func nulInput() {
        for (text, line) in [("{\"id\":\"a\",\"input\":\"ok.mp4\"}\n{\"id\":\"b\",\"input\":\"clip.mp4\\u0000.txt\"}", 2),
                             ("ok.mp4\nclip.mp4\u{0}.txt\n", 2), ("{\"input\":\"\\u0000\"}", 1)] {
            #expect { _ = try BatchManifest.parse(text, name: "clips") } throws: { error in
                let message = (error as? PreviewLoopError)?.message ?? ""
                return message.hasPrefix("clips: line \(line): ") && message.contains("NUL") && !message.contains("\n")
            }
        }
    }

    @Test("Shards come from Slurm, Kubernetes and AWS Batch environments")
    func environmentShards() throws {
        #expect(try BatchShard.fromEnvironment([:]) == nil)
        let slurm = try BatchShard.fromEnvironment(["SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "8"])
        #expect(slurm?.shard == (try BatchShard(index: 4, count: 8)))
        let kubernetes = try BatchShard.fromEnvironment(["JOB_COMPLETION_INDEX": "2"], countHint: 3)
        #expect(kubernetes?.shard == (try BatchShard(index: 2, count: 3)))
        let aws = try BatchShard.fromEnvironment(["AWS_BATCH_JOB_ARRAY_INDEX": "0", "AWS_BATCH_JOB_ARRAY_SIZE": "10"])
        #expect(aws?.shard == (try BatchShard(index: 0, count: 10)))
        #expect(throws: PreviewLoopError.self) { try BatchShard.fromEnvironment(["JOB_COMPLETION_INDEX": "2"]) }
        #expect(throws: PreviewLoopError.self) { try BatchShard.fromEnvironment(["SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_COUNT": "4"]) }
    }

    @Test("Recipes: defaults, every output, unknown keys and bad values refused")
    func recipes() throws {
        let recipe = try BatchRecipe.parse(json: Array(#"{"poster":{},"hover":{"length":2,"size":"320x180"},"sprites":{"grid":"5x4"}}"#.utf8))
        #expect(recipe.kinds == ["poster", "sprites", "hover"])
        #expect(recipe.hover?.length == 2 && recipe.sprites?.columns == 5 && recipe.sprites?.rows == 4)
        for bad in [#"{}"#, #"{"poster":{"sise":"1x1"}}"#, #"{"hover":{"size":"321x180"}}"#, #"{"strip":{"count":0}}"#,
                    #"{"gif":{}}"#, #"[1]"#, #"{"sprites":{"every":-1}}"#] {
            #expect(throws: PreviewLoopError.self, "\(bad)") { try BatchRecipe.parse(json: Array(bad.utf8)) }
        }
    }

    @Test("Recipes: the hover starts at the poster by default, or at \"start\": poster, seconds, mm:ss or N%")
    func hoverStartRecipes() throws {
        func start(_ json: String) throws -> HoverStart? { try BatchRecipe.parse(json: Array(json.utf8)).hover?.start }
        #expect(try start(#"{"hover":{}}"#) == .poster)
        #expect(try start(#"{"hover":{"start":"poster"}}"#) == .poster)
        #expect(try start(#"{"hover":{"start":1.5}}"#) == .at(.seconds(1.5)))
        #expect(try start(#"{"hover":{"start":"0:02"}}"#) == .at(.seconds(2)))
        #expect(try start(#"{"hover":{"start":"10%"}}"#) == .at(.percent(10)))
        #expect(HoverStart(parsing: "poster") == .poster && HoverStart(parsing: "auto") == nil && HoverStart(parsing: "25%") == .at(.percent(25)))
        for bad in [#"{"hover":{"start":"auto"}}"#, #"{"hover":{"start":-1}}"#, #"{"hover":{"start":"150%"}}"#, #"{"hover":{"start":true}}"#,
                    #"{"hover":{"loop_point":3}}"#] {
            #expect(throws: PreviewLoopError.self, "\(bad)") { try BatchRecipe.parse(json: Array(bad.utf8)) }
        }
    }

    @Test("Recipes: hover loop_point and seam as render reads them; bad ones refused naming the key; the canonical string names them")
    func hoverSeamRecipes() throws {
        let plain = try BatchRecipe.parse(json: Array(#"{"hover":{"length":2}}"#.utf8))
        #expect(plain.hover?.loopPoint == nil && plain.hover?.seam == .cut && plain.hover?.isSeamed == false)
        let searched = try BatchRecipe.parse(json: Array(#"{"hover":{"length":2,"loop_point":"auto","seam":"crossfade=0.25"}}"#.utf8))
        #expect(searched.hover?.loopPoint == .auto && searched.hover?.seam == .crossfade(.milliseconds(250)))
        #expect(searched.hover?.isSeamed == true)
        let timed = try BatchRecipe.parse(json: Array(#"{"hover":{"start":1,"loop_point":3.5,"seam":"crossfade"}}"#.utf8))
        #expect(timed.hover?.loopPoint == .at(.seconds(3.5)) && timed.hover?.length == 2.5 && timed.hover?.seam == .crossfade())
        let clock = try BatchRecipe.parse(json: Array(#"{"hover":{"start":0,"loop_point":"00:04.5"}}"#.utf8))
        #expect(clock.hover?.loopPoint == .at(.seconds(4.5)))
        let percent = try BatchRecipe.parse(json: Array(#"{"hover":{"loop_point":"40%","seam":"cut"}}"#.utf8))
        #expect(percent.hover?.loopPoint == .at(.percent(40)) && percent.hover?.seam == .cut)
        // The same parsers as render's --loop-point and --seam.
        #expect(LoopEnd(parsing: "auto") == .auto && LoopEnd(parsing: "10%") == .at(.percent(10)) && LoopEnd(parsing: "soon") == nil)
        #expect(LoopSeam(parsing: "crossfade=0.5") == .crossfade(.milliseconds(500)) && LoopSeam(parsing: "crossfade=0") == nil
                && LoopSeam(parsing: "crossfade=-1") == nil && LoopSeam(parsing: "wipe") == nil)
        // A changed loop point or seam redoes the clip; a hover without them keeps its old canonical form.
        let canonicals = [plain, searched, timed, percent].map(\.canonical)
        #expect(Set(canonicals).count == 4)
        #expect(plain.canonical == "hover(poster+2.0,480x270~,15fps,q75)")
        #expect(clock.canonical.hasPrefix("hover(0.0+4.5,"), "a hover at a time keeps its canonical form")
        #expect(searched.canonical.hasSuffix(",loop=auto,seam=crossfade=0.25)"))
        let bad: [(json: String, names: String)] = [
            (#"{"hover":{"loop_point":"soon"}}"#, "\"hover\".\"loop_point\""),
            (#"{"hover":{"loop_point":-1}}"#, "\"hover\".\"loop_point\""),
            (#"{"hover":{"loop_point":true}}"#, "\"hover\".\"loop_point\""),
            (#"{"hover":{"start":5,"loop_point":4}}"#, "\"hover\".\"loop_point\""),
            (#"{"hover":{"start":5,"loop_point":"00:05"}}"#, "\"hover\".\"loop_point\""),
            (#"{"hover":{"seam":"wipe"}}"#, "\"hover\".\"seam\""),
            (#"{"hover":{"seam":"crossfade=0"}}"#, "\"hover\".\"seam\""),
            (#"{"hover":{"length":1,"seam":"crossfade=1"}}"#, "\"hover\".\"seam\""),
            (#"{"hover":{"start":0,"loop_point":2,"seam":"crossfade=3"}}"#, "\"hover\".\"seam\""),
            (#"{"hover":{"seam":"crossfade","size":"3840x2160","fps":60,"length":30}}"#, "\"hover\": a loop point or seam"),
            (#"{"hover":{"loop_pont":"auto"}}"#, "unknown key \"loop_pont\" in \"hover\""),
        ]
        for (json, names) in bad {
            do {
                _ = try BatchRecipe.parse(json: Array(json.utf8), name: "r.json")
                Issue.record("\(json) was accepted")
            } catch {
                #expect(error.code == .invalidArgument && error.message.contains(names) && !error.message.contains("\n"),
                        "\(json): \(error.message)")
            }
        }
    }

    @Test("Recipes: poster at auto, best or a time as thumb --at reads it; bad values and a window with best refused naming the key")
    func posterAtRecipes() throws {
        let plain = try BatchRecipe.parse(json: Array(#"{"poster":{}}"#.utf8))
        #expect(plain.poster?.at == .auto && plain.canonical == "poster(320x180~,q85,0.0+15.0)")
        let best = try BatchRecipe.parse(json: Array(#"{"poster":{"at":"best"}}"#.utf8))
        #expect(best.poster?.at == .best && best.canonical.hasSuffix(",at=best)"))
        let seconds = try BatchRecipe.parse(json: Array(#"{"poster":{"at":2.5}}"#.utf8))
        #expect(seconds.poster?.at == .at(.seconds(2.5)))
        let percent = try BatchRecipe.parse(json: Array(#"{"poster":{"at":"50%"}}"#.utf8))
        #expect(percent.poster?.at == .at(.percent(50)))
        let clock = try BatchRecipe.parse(json: Array(#"{"poster":{"at":"01:02.5"}}"#.utf8))
        #expect(clock.poster?.at == .at(.seconds(62.5)))
        let auto = try BatchRecipe.parse(json: Array(#"{"poster":{"at":"auto","start":3}}"#.utf8))
        #expect(auto.poster?.at == .auto && auto.poster?.start == 3)
        #expect(Set([plain, best, seconds, percent, clock].map(\.canonical)).count == 5)
        #expect(PosterTime(parsing: "best") == .best && PosterTime(parsing: "10%") == .at(.percent(10)) && PosterTime(parsing: "later") == nil)
        let bad: [(json: String, names: String)] = [
            (#"{"poster":{"at":"later"}}"#, "\"poster\".\"at\""),
            (#"{"poster":{"at":-2}}"#, "\"poster\".\"at\""),
            (#"{"poster":{"at":"150%"}}"#, "\"poster\".\"at\""),
            (#"{"poster":{"at":null}}"#, "\"poster\".\"at\""),
            (#"{"poster":{"at":"best","start":2}}"#, "\"poster\".\"start\""),
            (#"{"poster":{"at":4,"length":2}}"#, "\"poster\".\"length\""),
        ]
        for (json, names) in bad {
            do {
                _ = try BatchRecipe.parse(json: Array(json.utf8), name: "r.json")
                Issue.record("\(json) was accepted")
            } catch {
                #expect(error.code == .invalidArgument && error.message.contains(names), "\(json): \(error.message)")
            }
        }
    }

    @Test("Recipes: a sheet as sheet's options give it, strip pick/gap/timestamps; bad values refused naming the key")
    func sheetRecipes() throws {
        let defaults = try BatchRecipe.parse(json: Array(#"{"sheet":{}}"#.utf8))
        #expect(defaults.kinds == ["sheet"] && defaults.sheet?.configuration == ClipContactSheet.Configuration())
        #expect(defaults.sheet?.quality == 85)
        let sheet = try BatchRecipe.parse(json: Array(#"{"sheet":{"grid":"5x3","tile_width":200,"gap":2,"margin":0,"header":false,"timestamps":false,"pick":"scenes","quality":70}}"#.utf8))
        let c = try #require(sheet.sheet?.configuration)
        #expect(c.columns == 5 && c.rows == 3 && c.tileWidth == 200 && c.gap == 2 && c.margin == 0 && !c.showsHeader)
        #expect(!c.style.showsTimestamps && c.pick == .scenes && sheet.sheet?.quality == 70 && c.effectiveSheetWidth == 5 * 200 + 4 * 2)
        let wide = try BatchRecipe.parse(json: Array(#"{"sheet":{"width":800}}"#.utf8))
        #expect(wide.sheet?.configuration.sheetWidth == 800 && wide.sheet?.configuration.tileWidth == nil)
        let strip = try BatchRecipe.parse(json: Array(#"{"strip":{"pick":"scenes","gap":4,"timestamps":true}}"#.utf8))
        #expect(strip.strip?.pick == .scenes && strip.strip?.gap == 4 && strip.strip?.showsTimestamps == true)
        #expect(strip.strip?.configuration.span == .wholeClip && strip.strip?.configuration.tileSize == .exact(Size(width: 160, height: 90)))
        let plainStrip = try BatchRecipe.parse(json: Array(#"{"strip":{}}"#.utf8))
        #expect(plainStrip.canonical == "strip(8/8,160x90~,q85)", "the default tile box, turned for portrait clips (~)")
        #expect(Set([defaults, sheet, wide, strip, plainStrip].map(\.canonical)).count == 5)
        let bad: [(json: String, names: String)] = [
            (#"{"sheet":{"grid":"30x30"}}"#, "\"sheet\".\"grid\""),
            (#"{"sheet":{"grid":"0x3"}}"#, "\"sheet\".\"grid\""),
            (#"{"sheet":{"tile_width":8}}"#, "\"sheet\".\"tile_width\""),
            (#"{"sheet":{"tile_width":4096,"grid":"10x1"}}"#, "\"sheet\".\"tile_width\""),
            (#"{"sheet":{"width":100,"grid":"10x2"}}"#, "\"sheet\".\"width\""),
            (#"{"sheet":{"width":800,"tile_width":100}}"#, "\"sheet\".\"tile_width\""),
            (#"{"sheet":{"gap":300}}"#, "\"sheet\".\"gap\""),
            (#"{"sheet":{"margin":-1}}"#, "\"sheet\".\"margin\""),
            (#"{"sheet":{"header":"yes"}}"#, "\"sheet\".\"header\""),
            (#"{"sheet":{"pick":"random"}}"#, "\"sheet\".\"pick\""),
            (#"{"sheet":{"quality":101}}"#, "\"sheet\".\"quality\""),
            (#"{"sheet":{"rows":3}}"#, "unknown key \"rows\" in \"sheet\""),
            (#"{"strip":{"pick":"shots"}}"#, "\"strip\".\"pick\""),
            (#"{"strip":{"gap":-2}}"#, "\"strip\".\"gap\""),
            (#"{"strip":{"timestamps":1}}"#, "\"strip\".\"timestamps\""),
            (#"{"strip":{"count":1000,"size":"1000x100"}}"#, "\"strip\""),
        ]
        for (json, names) in bad {
            do {
                _ = try BatchRecipe.parse(json: Array(json.utf8), name: "r.json")
                Issue.record("\(json) was accepted")
            } catch {
                #expect(error.code == .invalidArgument && error.message.contains(names), "\(json): \(error.message)")
            }
        }
    }

    @Test("Failures are classified: bad input permanent, environment transient")
    func classification() {
        #expect(BatchFailure.permanence(of: PreviewLoopError(.corruptData, "x")) == .permanent)
        #expect(BatchFailure.permanence(of: PreviewLoopError(.timedOut, "x")) == .transient)
        let full = PreviewLoopError(.outputNotWritable, "a.jpg: cannot write (No space left on device)")
        #expect(BatchFailure.reason(for: full) == "disk_full")
        #expect(BatchFailure.reason(for: PreviewLoopError(.notMediaFile, "x")) == "not_media_file")
    }

    @Test("The memory gate admits what fits, and one clip alone whatever its size")
    func memoryGate() async throws {
        let gate = MemoryGate(budget: 100)
        let big = gate.acquire(500)              // alone: admitted although over the budget
        let flag = Flag()
        let thread = Thread { _ = gate.acquire(60); flag.value.store(1, ordering: .sequentiallyConsistent) }
        thread.start()
        try await Task.sleep(for: .milliseconds(200))
        #expect(flag.value.load(ordering: .sequentiallyConsistent) == 0)
        gate.release(big)
        for _ in 0..<100 where flag.value.load(ordering: .sequentiallyConsistent) == 0 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(flag.value.load(ordering: .sequentiallyConsistent) == 1)
    }
}
