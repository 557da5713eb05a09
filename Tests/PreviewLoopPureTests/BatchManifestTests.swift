import Foundation
@testable import PreviewLoop
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
