import Foundation
import Synchronization
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// The preview wall: many loops, one frame-cache budget, one bounded decode pool.
///
/// Serialized: the tests count the wall's threads by name, which another wall running at the same
/// time would disturb. Clips are the 4 s, 100-frame `landscape.mp4` (400x300, 25 fps) at small sizes.
@Suite("PreviewWall", .serialized, .tags(.slow))
struct WallTests {
    static let clip = TestPaths.fixture("landscape.mp4")
    static let size = Size(width: 64, height: 48)
    static let frameBytes = 64 * 48 * 3
    static let windowBytes = 100 * frameBytes

    /// A frame as the tests keep it.
    struct Seen: Sendable {
        var pass: Int, index: Int, pixels: [UInt8]
    }

    static func offline(_ size: Size = WallTests.size) -> LoopPlayer.Configuration {
        .init(size: size, windowLength: .seconds(15), clock: .offline)
    }

    /// Threads of this process whose name starts with "Wall " (the pool's workers and presenter).
    static func wallThreads() -> Int {
        WallRun.threadCount(namedWith: "Wall ")
    }

    /// Waits (polling) until `condition` holds; false after 60 s.
    static func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0..<18000 {          // 3 minutes: the whole suite runs in parallel on 2 cores
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }

    @Test("The budget evicts the least recently used other cache, refuses what cannot fit, never exceeds its limit")
    func budgetAccounting() throws {
        let budget = FrameCacheBudget(limit: 10 * 300)
        let image = try RGBImage(width: 10, height: 10)          // 300 bytes
        let a = LoopFrameStore(), b = LoopFrameStore(), c = LoopFrameStore()
        for _ in 0..<4 { #expect(budget.append(image, to: a, mayEvict: true)) }
        for _ in 0..<4 { #expect(budget.append(image, to: b, mayEvict: true)) }
        _ = a.image(at: 0)                                   // a is now used more recently than b
        #expect(budget.bytesInUse == 2400)
        for _ in 0..<2 { #expect(budget.append(image, to: c, mayEvict: true)) }
        #expect(budget.bytesInUse == 3000)
        // Full: c's next frame evicts b (least recently used), not a.
        #expect(budget.append(image, to: c, mayEvict: true))
        #expect(b.bytes == 0 && b.evictionCount == 1 && a.bytes == 1200 && c.bytes == 900)
        #expect(budget.bytesInUse == 2100 && budget.evictions == 1)
        // An evicted store refuses frames until its loop starts caching again.
        #expect(!budget.append(image, to: b, mayEvict: false))
        // Without eviction nothing over the limit is taken.
        for _ in 0..<3 { #expect(budget.append(image, to: c, mayEvict: false)) }
        #expect(!budget.append(image, to: c, mayEvict: false))
        // More than all other caches together can free: refused, nothing evicted.
        let big = try RGBImage(width: 40, height: 40)            // 4800 bytes
        #expect(!budget.append(big, to: c, mayEvict: true))
        #expect(a.bytes == 1200 && budget.evictions == 1)
        #expect(budget.peakBytes <= budget.limit && budget.bytesInUse == 3000)
        budget.release(a); budget.release(c)
        #expect(budget.bytesInUse == 0)
    }

    @Test("Five loops on a budget for two and a half windows: the budget is never exceeded, evicted loops decode again, same frames")
    func sharedBudgetNeverExceeded() throws {
        let limit = Self.windowBytes * 5 / 2
        let wall = try PreviewWall(configuration: .init(cacheBudget: limit, workers: 2))
        // Per loop: each first-pass frame's pixels hash, and the frames of later passes that differ.
        let firstPass = Mutex([[Int: Int]](repeating: [:], count: 5))
        let mismatches = Mutex(0)
        let counts = Mutex([Int](repeating: 0, count: 5))
        let handles = try (0..<5).map { number in
            try wall.add(source: .file(Self.clip), configuration: Self.offline(), loops: nil, onFrame: { frame in
                var hasher = Hasher()
                hasher.combine(frame.pixels)
                let hash = hasher.finalize()
                if frame.loopIndex == 0 {
                    firstPass.withLock { $0[number][frame.index] = hash }
                } else if firstPass.withLock({ $0[number][frame.index] }) != hash {
                    mismatches.withLock { $0 += 1 }
                }
                counts.withLock { $0[number] += 1 }
            })
        }
        // All five run at once until each has played three passes.
        #expect(Self.eventually { counts.withLock { $0 }.allSatisfy { $0 >= 300 } })
        let running = wall.statistics
        for handle in handles { handle.stop() }
        for handle in handles { try handle.wait() }
        #expect(mismatches.withLock { $0 } == 0)
        #expect(running.activeLoops == 5)
        // Five windows never fit at once: caches were evicted and those loops decoded again.
        #expect(running.cacheEvictions > 0)
        #expect(running.total.framesDecoded > 500)
        let statistics = wall.statistics
        #expect(statistics.cachePeakBytes <= limit && statistics.cachePeakBytes > 0)
        #expect(statistics.total.framesDropped == 0)
        #expect(statistics.total.framesPresented == counts.withLock { $0 }.reduce(0, +))
        #expect(statistics.activeLoops == 0 && statistics.total.cacheBytes == 0)
    }

    @Test("Offline loops share the workers round-robin: a loop added later is not starved by endless earlier ones")
    func offlineLoopsShareWorkersFairly() throws {
        // No cache: every pass decodes, so every frame needs a worker; one worker for three endless loops.
        let wall = try PreviewWall(configuration: .init(cacheBudget: 0, workers: 1))
        let counts = Mutex([Int](repeating: 0, count: 3))
        let handles = try (0..<3).map { number in
            try wall.add(source: .file(Self.clip), configuration: Self.offline(), loops: nil, onFrame: { _ in
                counts.withLock { $0[number] += 1 }
            })
        }
        #expect(Self.eventually { counts.withLock { $0 }.reduce(0, +) >= 600 })
        for handle in handles { handle.stop() }
        for handle in handles { try handle.wait() }
        let final = counts.withLock { $0 }
        // Round-robin gives each a third; add order would give the last loop almost nothing.
        let total = final.reduce(0, +)
        #expect(final.allSatisfy { $0 * 4 >= total }, "frames per loop: \(final)")
    }

    @Test("A loop whose cache is evicted mid-replay decodes again and delivers the first pass's frames byte for byte; they match ffmpeg")
    func evictionReplaysIdenticalFrames() throws {
        // Room for one window and four frames: the second loop's fifth cached frame evicts the first loop.
        let wall = try PreviewWall(configuration: .init(cacheBudget: Self.windowBytes + 4 * Self.frameBytes, workers: 2))
        let seen = Mutex<[Seen]>([])
        let second = Mutex<WallLoopHandle?>(nil)
        let firstHandle = Mutex<WallLoopHandle?>(nil)
        let failure = Mutex<String?>(nil)
        let handle = try wall.add(source: .file(Self.clip), configuration: Self.offline(), loops: 3, onFrame: { frame in
            seen.withLock { $0.append(Seen(pass: frame.loopIndex, index: frame.index, pixels: frame.pixels)) }
            guard frame.loopIndex == 1 && frame.index == 10 else { return }
            // Mid-replay: start a second loop and hold presentation until its first pass evicted us
            // (its worker runs ahead of presentation by up to 8 frames, enough to need the room).
            do {
                second.withLock { $0 = try? wall.add(source: .file(Self.clip), configuration: Self.offline(), loops: 2, onFrame: { _ in }) }
                let evicted = WallTests.eventually { (firstHandle.withLock { $0 }?.statistics.cacheEvictions ?? 0) >= 1 }
                if !evicted { failure.withLock { $0 = "the first loop's cache was never evicted" } }
            }
        })
        firstHandle.withLock { $0 = handle }
        try handle.wait()
        try #require(second.withLock { $0 } != nil)
        try second.withLock { $0 }!.wait()
        #expect(failure.withLock { $0 } == nil)

        let frames = seen.withLock { $0 }
        let passes = (0..<3).map { pass in frames.filter { $0.pass == pass } }
        #expect(passes.map(\.count) == [100, 100, 100])
        for pass in 1..<3 {
            for (replayed, original) in zip(passes[pass], passes[0]) {
                #expect(replayed.index == original.index)
                #expect(replayed.pixels == original.pixels, "pass \(pass + 1) frame \(replayed.index + 1) differs from the first pass")
            }
        }
        let statistics = handle.statistics
        #expect(statistics.cacheEvictions >= 1)
        // First pass decoded, part of the second replayed, the rest and the third decoded again.
        #expect(statistics.framesReplayed > 0 && statistics.framesReplayed < 100)
        #expect(statistics.framesDecoded + statistics.framesReplayed == 300)
        #expect(wall.statistics.cachePeakBytes <= Self.windowBytes + 4 * Self.frameBytes)

        // The first pass is ffmpeg's picture (so the identical later passes are too).
        let reference = try Oracle.frames(of: Self.clip, filter: Oracle.aspectFillFilter(uprightWidth: 400, uprightHeight: 300,
                                                                                         sampleAspect: 1, output: Self.size),
                                          size: Self.size)
        try #require(reference.count == 100)
        for seen in passes[0] where seen.index % 9 == 0 {
            let image = try RGBImage(width: Self.size.width, height: Self.size.height, pixels: seen.pixels)
            let best = Compare.best(image, among: reference)
            #expect(best.index == seen.index && best.psnr >= 30, "frame \(seen.index): closest ffmpeg frame \(best.index) at \(best.psnr) dB")
        }
    }

    @Test("Stopping loops frees their cache, decoders and workers; the wall's threads are its workers and one presenter")
    func cancellingFreesEverything() throws {
        var wall: PreviewWall? = try PreviewWall(configuration: .init(workers: 2))
        #expect(Self.eventually { Self.wallThreads() == 3 })   // each thread names itself as it starts
        let configuration = LoopPlayer.Configuration(size: Self.size, clock: .realtime)
        let completions = Mutex(0)
        let handles = try (0..<4).map { _ in
            try wall!.add(source: .file(Self.clip), configuration: configuration, loops: nil, onFrame: { _ in },
                          onCompletion: { error in if error == nil { completions.withLock { $0 += 1 } } })
        }
        let decoders = handles.map { WeakDecoder(value: $0.loop.openedDecoder) }
        #expect(decoders.allSatisfy { $0.value != nil })
        #expect(Self.eventually { handles.allSatisfy { $0.statistics.cacheBytes > 0 && $0.statistics.framesPresented > 2 } })
        #expect(wall!.budget.bytesInUse > 0)
        #expect(Self.eventually { Self.wallThreads() == 3 })   // each thread names itself as it starts

        for handle in handles { handle.stop() }
        for handle in handles { try handle.wait() }
        #expect(completions.withLock { $0 } == 4)
        #expect(wall!.budget.bytesInUse == 0)
        #expect(wall!.statistics.activeLoops == 0)
        #expect(handles.allSatisfy { $0.statistics.cacheBytes == 0 })
        #expect(decoders.allSatisfy { $0.value == nil }, "a stopped loop's decoder is still alive")

        // The workers are free: a new loop runs to its end.
        let count = Mutex(0)
        let next = try wall!.add(source: .file(Self.clip), configuration: Self.offline(), loops: 2,
                                 onFrame: { _ in count.withLock { $0 += 1 } })
        try next.wait()
        #expect(count.withLock { $0 } == 200)
        wall = nil
        #expect(Self.eventually { Self.wallThreads() == 0 })   // joined threads leave /proc a moment after
    }

    @Test("100 loops started and stopped: never more than workers + 1 wall threads, none left, no decoder alive")
    func hundredLoopsLeaveNothing() throws {
        var wall: PreviewWall? = try PreviewWall(configuration: .init(workers: 2))
        let configuration = LoopPlayer.Configuration(size: Size(width: 32, height: 24), clock: .realtime)
        var decoders: [WeakDecoder] = []
        var handles: [WallLoopHandle] = []
        for _ in 0..<100 {
            let handle = try wall!.add(source: .file(Self.clip), configuration: configuration, loops: nil, onFrame: { _ in })
            decoders.append(WeakDecoder(value: handle.loop.openedDecoder))
            handles.append(handle)
        }
        #expect(wall!.statistics.activeLoops == 100)
        #expect(Self.eventually { Self.wallThreads() == 3 })   // each thread names itself as it starts
        for handle in handles { handle.stop() }
        for handle in handles { try handle.wait() }
        handles = []
        #expect(wall!.statistics.activeLoops == 0 && wall!.budget.bytesInUse == 0)
        wall = nil
        #expect(Self.eventually { Self.wallThreads() == 0 })   // joined threads leave /proc a moment after
        #expect(decoders.allSatisfy { $0.value == nil })
    }

    @Test("The CLI: 100 loops in a separate process end with no wall thread and no live FFmpeg object")
    func hundredLoopsInProcessCounts() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let inputs = Array(repeating: Self.clip, count: 100)
        let result = try Child.run("/usr/bin/env", ["PREVIEW_LOOP_DEBUG_COUNTS=1", TestPaths.cliBinary, "wall"] + inputs
                                     + ["--realtime", "--seconds", "1", "--size", "32x24", "--workers", "2", "--log", directory + "/logs"])
        #expect(result.status == 0, "\(result.stderr)")
        let debug = result.stderr.split(separator: "\n").first { $0.hasPrefix("debug: ") }.map(String.init) ?? ""
        #expect(debug.contains("wall threads peak 3, after 0"), "\(debug)")
        #expect(debug.contains("live FFmpeg objects before 0, after 0"), "\(debug)")
        let logs = try FileManager.default.contentsOfDirectory(atPath: directory + "/logs").filter { $0.hasSuffix(".csv") }
        // Inputs still opening when --seconds ran out are reported as not started; every loop that ran has its log.
        #expect(logs.count > 0 && result.stderr.contains("wall: \(logs.count) loops logged"), "\(result.stderr)")
        #expect(result.stdoutText.hasPrefix("frames:"))
    }

    @Test("A reduced frame rate presents every other frame and counts the rest apart from drops")
    func reducedFrameRate() throws {
        let budget = FrameCacheBudget(limit: 1 << 24)
        let loop = try WallLoop(id: 0, source: .file(Self.clip), configuration: Self.offline(), loops: 2,
                                frameRateDivisor: 2, budget: budget)
        var indices: [[Int]] = [[], []]
        while case .frame(let item) = try loop.step(clockStart: nil) { indices[item.pass].append(item.index) }
        #expect(indices[0] == Array(stride(from: 0, to: 100, by: 2)))
        #expect(indices[1] == indices[0])                     // replayed from the cache
        let statistics = loop.counters.withLock { $0.statistics }
        #expect(statistics.framesSkippedByRate == 50 && statistics.framesReplayed == 50 && statistics.framesDropped == 0)
        loop.close()
        #expect(budget.bytesInUse == 0)
    }

    @Test("Capacity is unknown before any decode cost is measured; admission can refuse a loop that does not fit")
    func capacityAndAdmission() throws {
        let wall = try PreviewWall(configuration: .init(workers: 1, targetUtilization: 0.000_001))
        let request = WallLoopRequest(sourceSize: Size(width: 400, height: 300), frameRate: 25)
        #expect(wall.capacity(for: request).additionalLoops == nil)
        let realtime = LoopPlayer.Configuration(size: Self.size, clock: .realtime)
        // Calibrated on its own first frames, the loop needs far more than a millionth of a worker.
        #expect {
            try wall.add(source: .file(Self.clip), configuration: realtime, loops: 1, admission: .refuseWhenBusy, onFrame: { _ in })
        } throws: { ($0 as? PreviewLoopError)?.code == .refusedByPolicy }
        let capacity = wall.capacity(for: request)
        #expect(capacity.additionalLoops == 0 && capacity.costPerFrame.map { $0 > .zero } == true)
        // The default admits anyway.
        let handle = try wall.add(source: .file(Self.clip), configuration: Self.offline(), loops: 1, onFrame: { _ in })
        try handle.wait()
        #expect(handle.statistics.framesPresented == 100)
        let roomy = try PreviewWall(configuration: .init(workers: 2))
        let first = try roomy.add(source: .file(Self.clip), configuration: Self.offline(), loops: 1, onFrame: { _ in })
        try first.wait()
        #expect((roomy.capacity(for: request).additionalLoops ?? 0) > 0)
    }

    @Test("An unreadable input fails at add, naming it; the wall and its other loops go on")
    func badInputIsolated() throws {
        let wall = try PreviewWall(configuration: .init(workers: 2))
        let good = try wall.add(source: .file(Self.clip), configuration: Self.offline(), loops: 2, onFrame: { _ in })
        #expect {
            try wall.add(source: .file("/nonexistent/clip.mp4"), configuration: Self.offline(), onFrame: { _ in })
        } throws: { ($0 as? PreviewLoopError)?.code == .inputNotFound }
        #expect {
            try wall.add(source: .file(TestPaths.fixture("not-video.txt")), configuration: Self.offline(), onFrame: { _ in })
        } throws: { $0 is PreviewLoopError }
        try good.wait()
        #expect(good.statistics.framesPresented == 200)
    }

    @Test("wall's command line: inputs, limits and conflicts are checked before any work", arguments: [
        (["wall", "--log", "d"], "inputs"),
        (["wall", "a.mp4"], "--log"),
        (["wall", "a.mp4", "--log", "d", "--loops", "2", "--seconds", "3"], "--seconds"),
        (["wall", "a.mp4", "--log", "d", "--loops", "0"], "--loops"),
        (["wall", "a.mp4", "--log", "d", "--workers", "65"], "--workers"),
        (["wall", "a.mp4", "--log", "d", "--start", "10%"], "--start"),
        (["wall", "a.mp4", "--log", "d", "--admission", "maybe"], "--admission"),
        (["wall"] + Array(repeating: "a.mp4", count: 257) + ["--log", "d"], "256"),
    ])
    func commandLineRefusals(_ arguments: [String], _ mention: String) {
        do {
            _ = try CommandLineParser.parse(arguments)
            Issue.record("\(arguments.prefix(6)) was accepted")
        } catch {
            #expect(error.report.contains(mention), "\(error.report)")
        }
    }

    @Test("The CLI writes one log per loop and the summary; a bad input gets one Error line and exit 1, the others their logs")
    func commandLineRun() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logs = directory + "/logs"
        let result = try Child.run(TestPaths.cliBinary, ["wall", Self.clip, "/nonexistent/x.mp4", TestPaths.fixture("offset.ts"),
                                                           "--loops", "2", "--size", "64x48", "--log", logs])
        #expect(result.status == 1)
        let errors = result.stderr.split(separator: "\n").filter { $0.hasPrefix("Error: ") }
        #expect(errors.count == 1 && errors.first?.contains("/nonexistent/x.mp4") == true, "\(result.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: logs).sorted()
        #expect(files == ["001-landscape.mp4.csv", "003-offset.ts.csv", "summary.txt"])
        let log = try String(contentsOfFile: logs + "/001-landscape.mp4.csv", encoding: .utf8)
        let summary = try TimingSummary(csv: log)
        #expect(summary.frames == 200 && summary.passes == 2)
        let other = try TimingSummary(csv: String(contentsOfFile: logs + "/003-offset.ts.csv", encoding: .utf8))
        #expect(other.frames == 150)
        #expect(result.stdoutText.hasPrefix("frames:        350\npasses:        2\n"), "\(result.stdoutText)")
        #expect(try String(contentsOfFile: logs + "/summary.txt", encoding: .utf8) == result.stdoutText)

        // --log naming a file: refused before any loop starts, the file untouched.
        let file = directory + "/file"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: file))
        let refused = try Child.run(TestPaths.cliBinary, ["wall", Self.clip, "--log", file])
        #expect(refused.status == 1 && refused.stderr.hasPrefix("Error: ") && refused.stderr.split(separator: "\n").count == 1,
                "\(refused.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep")
    }
}

/// A weak reference to a loop's decoder, to prove it was freed.
struct WeakDecoder {
    weak var value: VideoDecoder?
}
