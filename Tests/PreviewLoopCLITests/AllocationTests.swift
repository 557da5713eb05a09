import Foundation
import Testing
import PreviewLoopTestSupport

/// Allocation discipline on the per-frame path, measured on the release binary: the number of heap
/// allocations per delivered frame must not grow with the number of frames.
@Suite("Allocations per frame")
struct AllocationTests {
    /// The release CLI, built by `make test` before the suite runs.
    static let releaseBinary = TestPaths.packageRoot.appendingPathComponent(".build/release/preview-loop").path

    /// Builds the counting shim from `Scripts/alloc-count.c` with the system C compiler.
    static func buildShim() throws -> String {
        let output = TestPaths.temporaryDirectory() + "/alloc-count.so"
        let source = TestPaths.packageRoot.appendingPathComponent("Scripts/alloc-count.c").path
        let result = try Child.run("/usr/bin/cc", ["-shared", "-fPIC", "-O2", source, "-o", output])
        guard result.status == 0 else { throw OracleError(message: "cc failed: \(result.stderr)") }
        return output
    }

    /// Heap allocations of one offline loop pass of `seconds` over the fixture (no frame cache: one pass).
    static func allocations(shim: String, seconds: Int) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: releaseBinary)
        process.arguments = ["loop", TestPaths.fixture("landscape.mp4"), "--length", "\(seconds)", "--loops", "1"]
        process.environment = ProcessInfo.processInfo.environment.merging(["LD_PRELOAD": shim]) { $1 }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        let line = text.split(separator: "\n").last { $0.hasPrefix("ALLOCATIONS ") }
        return Int(line?.dropFirst("ALLOCATIONS ".count) ?? "") ?? -1
    }

    @Test("Allocations per frame stay flat from 25 to 100 frames")
    func flatPerFrame() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.releaseBinary),
                     "build the release binary first (make test does): swift build -c release")
        let shim = try Self.buildShim()
        // FFmpeg's decoder threads allocate a little more or less as they are scheduled (±150 a run on
        // a busy machine): the fewest of three runs is the count without scheduling noise.
        func fewest(_ seconds: Int) throws -> Int {
            try (0..<3).map { _ in try Self.allocations(shim: shim, seconds: seconds) }.min()!
        }
        let (a, b, c) = (try fewest(1), try fewest(2), try fewest(4))
        #expect(a > 0 && b > a && c > b)
        let early = Double(b - a) / 25, late = Double(c - b) / 50      // 25 → 50 → 100 frames
        #expect(late <= early * 1.25 + 4, "per-frame allocations grew: \(early) then \(late)")
        // A fixed budget too, so a per-frame leak of a few objects shows: FFmpeg's own packet and
        // buffer bookkeeping accounts for most of it.
        #expect(late < 150, "\(late) allocations per frame")
    }
}
