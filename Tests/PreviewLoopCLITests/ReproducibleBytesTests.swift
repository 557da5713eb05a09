import Foundation
import Glibc
import Testing
import PreviewLoopTestSupport

/// Same input, same options, same build: same bytes, whatever the machine is doing. Every writing
/// command runs three times on a loaded machine (two CPU-bound processes beside it, unless the machine
/// is already that busy: the rest of the suite, or CI's own load), the second and third with fresh
/// memory filled with a byte (`MALLOC_PERTURB_`), which catches a read of memory nothing wrote (x264's
/// AVX-512 macroblock tree, hence `mbtree=0`); and once more pinned to one CPU (`taskset -c 0`): an
/// encoder that sizes its thread pool from the CPUs it may use (x264's automatic count) writes other
/// bytes there, so that run catches a machine-dependent setting on any machine.
@Suite("Reproducible bytes under load, CPU affinity and job count", .serialized, .timeLimit(.minutes(10)), .tags(.slow))
struct ReproducibleBytesTests {
    /// Two `sha256sum /dev/zero` processes, killed when the test ends; none when the machine is already
    /// loaded (a one-minute load average of at least two runnable tasks per CPU), so the suite adds no load
    /// of its own to a busy machine.
    private final class CPUHogs {
        private var processes: [Process] = []
        init(_ count: Int = 2) throws {
            guard !Self.isLoaded else { return }
            for _ in 0..<count {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
                process.arguments = ["/dev/zero"]
                process.standardOutput = FileHandle.nullDevice
                try process.run()
                processes.append(process)
            }
        }
        func stop() {
            for process in processes { kill(process.processIdentifier, SIGKILL) }
            for process in processes { process.waitUntilExit() }
            processes = []
        }
        deinit { stop() }

        /// Whether `/proc/loadavg`'s one-minute figure is at least twice the CPUs this process may use.
        static var isLoaded: Bool {
            guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
                  let first = text.split(separator: " ").first, let load = Double(first) else { return false }
            return load >= Double(2 * ProcessInfo.processInfo.activeProcessorCount)
        }
    }

    /// One command writing `output` (a file, or a folder whose files are all compared).
    struct Job: CustomTestStringConvertible, Sendable {
        let name: String
        let arguments: @Sendable (String) -> [String]
        var testDescription: String { name }
    }

    static let landscape = TestPaths.fixture("landscape.mp4")
    static let card = TestPaths.fixture("card.mp4")
    static let rotated = TestPaths.fixture("rotated90.mp4")

    static let jobs: [Job] = [
        Job(name: "thumb .jpg") { ["thumb", landscape, "-o", $0 + "/out.jpg", "--size", "320x180"] },
        Job(name: "thumb .webp at best") { ["thumb", rotated, "-o", $0 + "/out.webp", "--at", "best"] },
        Job(name: "strip .png") { ["strip", landscape, "-o", $0 + "/out.png", "--count", "6", "--columns", "3"] },
        Job(name: "sheet .jpg") { ["sheet", landscape, "-o", $0 + "/out.jpg", "--grid", "3x2", "--width", "480"] },
        Job(name: "sprites") { ["sprites", card, "-o", $0 + "/sprites", "--every", "1"] },
        Job(name: "render .mp4") { ["render", card, "-o", $0 + "/out.mp4", "--length", "2", "--size", "480x270"] },
        Job(name: "render .webp") { ["render", rotated, "-o", $0 + "/out.webp", "--length", "1"] },
        Job(name: "render .gif") { ["render", landscape, "-o", $0 + "/out.gif", "--length", "1", "--size", "160x90"] },
        Job(name: "card .mp4") { ["card", card, "-o", $0 + "/out.mp4", "--size", "320x180"] },
        Job(name: "card .webp") { ["card", card, "-o", $0 + "/out.webp", "--size", "320x180"] },
    ]

    /// Every file the job wrote under `directory`, by relative path.
    static func files(in directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let manager = FileManager.default
        guard let walker = manager.enumerator(atPath: directory) else { return files }
        for case let name as String in walker {
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return files
    }

    /// Runs the job; `pinned` under `taskset -c 0`; `perturb` with glibc's `MALLOC_PERTURB_` set, so
    /// that memory handed out fresh holds that byte, not whatever its last user left: an encoder
    /// reading memory it never wrote then writes other bytes.
    static func run(_ job: Job, pinned: Bool, perturb: Int? = nil) throws -> [String: Data] {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = job.arguments(directory)
        let result = pinned ? try Child.run("/usr/bin/taskset", ["-c", "0", TestPaths.cliBinary] + arguments)
            : try perturb.map { try Child.run("/usr/bin/env", ["MALLOC_PERTURB_=\($0)", TestPaths.cliBinary] + arguments) }
                ?? Child.run(TestPaths.cliBinary, arguments)
        #expect(result.status == 0, "\(job.name): \(result.stderr)")
        let files = try files(in: directory)
        #expect(!files.isEmpty, "\(job.name) wrote nothing")
        return files
    }

    @Test("Every writing command gives the same bytes three times under load and once pinned to one CPU", arguments: jobs)
    func sameBytes(_ job: Job) throws {
        let hogs = try CPUHogs()
        defer { hogs.stop() }
        let first = try Self.run(job, pinned: false)
        for byte in [1, 170] {
            #expect(try Self.run(job, pinned: false, perturb: byte) == first,
                    "\(job.name) differs between runs under load (the second with MALLOC_PERTURB_=\(byte))")
        }
        #expect(try Self.run(job, pinned: true) == first, "\(job.name) differs when pinned to one CPU")
    }

    @Test("A --jobs 2 batch over mixed fixtures gives the same bytes three times under load; its hover is render's")
    func batchSameBytes() throws {
        let hogs = try CPUHogs()
        defer { hogs.stop() }
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let recipe = directory + "/recipe.json"
        try #"{"poster":{},"sprites":{"every":1},"strip":{},"hover":{"length":2}}"#.write(toFile: recipe, atomically: true, encoding: .utf8)
        let fixtures = ["landscape.mp4", "rotated90.mp4", "card.mp4", "vp9.webm", "offset.ts", "title-card.mp4"]
        let manifest = directory + "/clips.jsonl"
        try fixtures.enumerated().map { "{\"id\":\"c\($0.offset)\",\"input\":\"\(TestPaths.fixture($0.element))\"}" }
            .joined(separator: "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        var runs: [[String: Data]] = []
        for run in 0..<3 {
            let out = directory + "/OUT\(run)"
            let result = try Child.run(TestPaths.cliBinary, ["batch", manifest, "-o", out, "--recipe", recipe, "--jobs", "2", "--quiet"])
            #expect(result.status == 0, "\(result.stderr)")
            runs.append(try Self.files(in: out).filter { !$0.key.hasPrefix(".") && !$0.key.hasSuffix(".jsonl") && !$0.key.hasSuffix("/.complete.json") })
        }
        #expect(runs[0].count >= fixtures.count * 4)
        for run in runs.dropFirst() {
            #expect(run.keys.sorted() == runs[0].keys.sorted())
            for (name, bytes) in runs[0] { #expect(run[name] == bytes, "\(name) differs between batch runs") }
        }
        // The hover is the file `render --start poster` writes with the same options (batch's hover starts
        // at the poster by default; title-card.mp4's is 2 s in). The recipe's default size: the
        // orientation-aware one render also picks for these clips is not assumed; the size is read back).
        // vp9.webm is shorter than the window and its container says 0.994 s while its last frame shows
        // until 1.000 s: the pass ends where render ends it. offset.ts starts at 11.4 s (MPEG-TS).
        for (index, fixture) in fixtures.enumerated() {
            let hover = try #require(runs[0]["c\(index)/hover.mp4"])
            let size = try Child.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                                                          "-of", "csv=p=0:s=x", directory + "/OUT0/c\(index)/hover.mp4"]).stdoutText
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let rendered = directory + "/render-\(index).mp4"
            let result = try Child.run(TestPaths.cliBinary, ["render", TestPaths.fixture(fixture), "-o", rendered, "--start", "poster",
                                                                "--length", "2", "--size", size])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: rendered)) == hover, "\(fixture): batch's hover differs from render's")
        }
    }
}
