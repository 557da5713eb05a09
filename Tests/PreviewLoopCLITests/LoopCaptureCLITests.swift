import Foundation
import PreviewLoop
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// `loop --capture-at` and `--record` on the built binary, and their parsing.
@Suite("CLI: loop capture and record")
struct LoopCaptureCLITests {
    @Test("Stills at wall times and a recorded span across the seam, in realtime")
    func captureAndRecord() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Child.run(TestPaths.cliBinary, ["loop", TestPaths.fixture("short.mp4"), "--realtime", "--loops", "3",
                                                           "--capture-at", "0.5,0.1", "--record", "0.3-0.6",
                                                           "--capture-dir", directory, "--frames", directory + "/all"])
        #expect(result.status == 0, "\(result.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(names.filter { $0.hasPrefix("capture-") } == ["capture-01.ppm", "capture-02.ppm"])
        // Each still is one of the frames the loop presented (the --frames copy of the same frame).
        let all = try FileManager.default.contentsOfDirectory(atPath: directory + "/all").map { directory + "/all/" + $0 }
        let presented = Set(try all.map { try Data(contentsOf: URL(fileURLWithPath: $0)) })
        for still in ["capture-01.ppm", "capture-02.ppm"] {
            #expect(presented.contains(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + still))))
        }
        // 0.3 s to 0.6 s of a 0.4 s, 25 fps loop: about 7 frames, running across the seam without a gap.
        let recorded = names.filter { $0.hasPrefix("record-") }.map { name -> (Int, Int) in
            let parts = name.dropFirst("record-".count).dropLast(".ppm".count).split(separator: "-")
            return (Int(parts[0])!, Int(parts[1])!)
        }
        #expect((5...9).contains(recorded.count), "\(recorded)")
        #expect(Set(recorded.map(\.0)) == [1, 2], "\(recorded)")
        for (a, b) in zip(recorded, recorded.dropFirst()) {
            #expect(b == (a.1 == 10 ? (a.0 + 1, 1) : (a.0, a.1 + 1)), "gap between \(a) and \(b)")
        }
    }

    @Test func parsing() throws {
        guard case .command(let options as LoopCommand) = try CommandLineParser.parse(["loop", "a.mp4", "--capture-at", "3,1.5,00:02",
                                                                     "--record", "1-00:02.5", "--frames", "f"]) else {
            Issue.record("not a loop command")
            return
        }
        #expect(options.captureTimes == [1.5, 2, 3])
        #expect(options.recordSpan == 1..<2.5)
        #expect(options.captureDirectory == nil && options.framesDirectory == "f")     // captures go to --frames
        for bad in [["--capture-at", "10%"], ["--capture-at", "1,,2"], ["--record", "5-2"], ["--record", "3"],
                    ["--capture-at", "1"]] {
            #expect(throws: UsageError.self) { try CommandLineParser.parse(["loop", "a.mp4"] + bad) }
        }
    }
}
