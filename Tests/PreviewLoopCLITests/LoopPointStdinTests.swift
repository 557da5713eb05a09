import Foundation
import Testing
import PreviewLoopTestSupport

/// `render --loop-point` from standard input: a time in seconds works; a percentage (which the CLI
/// resolves before the render opens the clip) is refused with its cause, not "not a media file".
@Suite("render --loop-point from standard input")
struct LoopPointStdinTests {
    @Test("A percentage is one clear error and writes nothing; seconds work")
    func percentageRefused() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixture("landscape.mp4")))
        for arguments in [["--loop-point", "40%"], ["--start", "10%", "--loop-point", "2"]] {
            let output = directory + "/p.mp4"
            let result = try Child.cli(["render", "-", "-o", output] + arguments, input: .piped(clip))
            let lines = result.stderr.split(separator: "\n")
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(lines.count == 1 && result.stderr.contains("standard input can be read only once"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
        let output = directory + "/s.mp4"
        let worked = try Child.cli(["render", "-", "-o", output, "--loop-point", "1.5", "-s", "160x90"], input: .piped(clip))
        #expect(worked.status == 0, "\(worked.stderr)")
        #expect((try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0 > 0)
    }
}
