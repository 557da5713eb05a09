import Foundation
import Testing
import PreviewLoopTestSupport
import PreviewLoop

/// This process's resident set size in bytes (`VmRSS` in `/proc/self/status`).
private func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Int(line.split(whereSeparator: \.isWhitespace)[1]) else { return -1 }
    return kilobytes * 1024
}

/// Memory soaks: the same open → sample one still → close cycle a thousand times in one process, with
/// the resident set measured every 100 iterations. A leak of even one frame buffer or format context
/// per cycle (≥ 100 kB) would show as ≥ 90 MB of growth; the bound is 10 MB between iteration 100
/// (allocator and caches warmed up) and 1,000.
///
/// Skipped unless `PREVIEW_LOOP_SOAK=1` (about a minute in release): run `Scripts/soak.sh`.
@Suite("Memory soak", .serialized, .enabled(if: ProcessInfo.processInfo.environment["PREVIEW_LOOP_SOAK"] == "1", "set PREVIEW_LOOP_SOAK=1 (Scripts/soak.sh)"))
struct SoakTests {
    static let iterations = 1_000
    let size = Size(width: 320, height: 180)

    /// Runs `cycle` `iterations` times, printing VmRSS every 100; returns the growth from 100 to the end.
    private func soak(_ name: String, _ cycle: (Int) throws -> Void) rethrows -> Int {
        var atHundred = 0
        for iteration in 1...Self.iterations {
            try cycle(iteration)
            if iteration % 100 == 0 {
                let rss = residentBytes()
                if iteration == 100 { atHundred = rss }
                print("soak \(name): iteration \(iteration), VmRSS \(String(format: "%.1f", Double(rss) / 1_048_576)) MB")
            }
        }
        let growth = residentBytes() - atHundred
        print("soak \(name): growth from 100 to \(Self.iterations): \(String(format: "%.2f", Double(growth) / 1_048_576)) MB")
        return growth
    }

    @Test("1,000 × (open a file, take an exact still, close): RSS grows < 10 MB")
    func samplerFromFile() throws {
        let path = TestPaths.fixture("landscape.mp4")
        let growth = try soak("file") { iteration in
            let sampler = try FrameSampler(source: .file(path))
            let frame = try sampler.frame(at: Double(iteration % 40) / 10, size: size)
            #expect(frame.image.size == size)
        }
        #expect(growth < 10 << 20, "grew \(growth) bytes")
    }

    @Test("1,000 × (open bytes in memory, take a keyframe still, close): RSS grows < 10 MB")
    func samplerFromMemory() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixture("vp9.webm")))
        let growth = try soak("memory") { _ in
            let sampler = try FrameSampler(source: .data(bytes))
            _ = try sampler.frame(at: 0.5, size: size, accuracy: .keyframe)
        }
        #expect(growth < 10 << 20, "grew \(growth) bytes")
    }

    @Test("1,000 × (open, play a 0.4 s window twice, close): RSS grows < 10 MB")
    func loopPasses() throws {
        let path = TestPaths.fixture("short.mp4")
        let configuration = LoopPlayer.Configuration(size: size, windowLength: 0.4)
        let growth = try soak("loop") { _ in
            var frames = 0
            try LoopPlayer(source: .file(path), configuration: configuration).run(loops: 2) { _ in frames += 1 }
            #expect(frames == 20)
        }
        #expect(growth < 10 << 20, "grew \(growth) bytes")
    }

    @Test("1,000 × a refused input (random bytes, then a missing file): RSS grows < 10 MB")
    func refusals() throws {
        let noise = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        let growth = soak("errors") { iteration in
            let source: Source = iteration % 2 == 0 ? .data(noise) : .file("/nonexistent/clip.mp4")
            #expect(throws: PreviewLoopError.self) { try FrameSampler(source: source) }
        }
        #expect(growth < 10 << 20, "grew \(growth) bytes")
    }
}
