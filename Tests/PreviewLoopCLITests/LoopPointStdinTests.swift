import Foundation
import Testing
import PreviewLoopTestSupport

/// `render --loop-point` with percentages from standard input: the library resolves them, once, from
/// the input it opened, so a pipe gives the same window as the file (the CLI used to probe first and
/// then find the pipe already read).
@Suite("render --loop-point from standard input")
struct LoopPointStdinTests {
    /// The frames in `path`, counted by ffprobe.
    private func frameCount(_ path: String) throws -> Int {
        let result = try Child.tool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path])
        return Int(result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    @Test("Percentages in --loop-point and --start give the file's window from a pipe", arguments: [
        (["--loop-point", "40%"], 1.6),
        (["--start", "10%", "--loop-point", "2"], 1.6),
        (["--start", "25%", "--loop-point", "75%"], 2.0),
    ])
    func percentagesFromPipe(arguments: [String], seconds: Double) throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = TestPaths.fixture("landscape.mp4")  // 4.000 s
        let clip = try Data(contentsOf: URL(fileURLWithPath: path))
        let common = ["-s", "160x90", "--fps", "10"] + arguments
        let piped = try Child.cli(["render", "-", "-o", directory + "/pipe.mp4"] + common, input: .piped(clip))
        let file = try Child.cli(["render", path, "-o", directory + "/file.mp4"] + common)
        #expect(piped.status == 0, "\(arguments): \(piped.stderr)")
        #expect(file.status == 0, "\(arguments): \(file.stderr)")
        // The same summary (frames, length, start), the output's name aside.
        #expect(piped.stdoutText.replacingOccurrences(of: "pipe.mp4", with: "file.mp4") == file.stdoutText)
        #expect(try frameCount(directory + "/pipe.mp4") == Int((seconds * 10).rounded()), "\(piped.stdoutText)")
        #expect(try frameCount(directory + "/file.mp4") == Int((seconds * 10).rounded()))
    }

    @Test("An end resolved before the start is one clear error and writes nothing")
    func endBeforeStart() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixture("landscape.mp4")))
        // Known only once the clip is open (3 s against 50 % of 4 s), and known before (both percentages).
        for arguments in [["--start", "3", "--loop-point", "50%"], ["--start", "75%", "--loop-point", "50%"]] {
            let output = directory + "/p.mp4"
            let result = try Child.cli(["render", "-", "-o", output] + arguments, input: .piped(clip))
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.errorLines.count == 1 && result.stderr.contains("must come after"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }
}
