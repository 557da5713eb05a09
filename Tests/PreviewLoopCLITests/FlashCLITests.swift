import Foundation
import Testing
import PreviewLoopTestSupport

/// Makes a lossless H.264 clip from a lavfi graph in `directory`.
private func clip(_ name: String, _ graph: String, in directory: String) throws -> String {
    let path = directory + "/" + name
    let result = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", graph,
                                         "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", path])
    #expect(result.status == 0, "\(result.stderr)")
    return path
}

@Suite("CLI: probe --flashes and render --flash-safety")
struct FlashCLITests {
    @Test("probe --flashes --json: a top-level flashes object with the verdict, one entry a second and the spans")
    func probeJSON() throws {
        let directory = TestPaths.temporaryDirectory()
        let path = try clip("flash.mp4", "color=black:s=160x90:r=60:d=2[b];color=white:s=160x90:r=60:d=2[w];"
                                + "[b][w]overlay=enable='lt(mod(n\\,15)\\,7.5)'", in: directory)
        let result = try Child.cli(["probe", "--flashes", "--json", path])
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(object["codec"] as? String == "h264")
        let flashes = try #require(object["flashes"] as? [String: Any])
        #expect(Set(flashes.keys) == ["verdict", "seconds", "spans"])
        #expect(flashes["verdict"] as? String == "failure")
        let seconds = try #require(flashes["seconds"] as? [[String: Any]])
        #expect(seconds.count == 2)
        #expect(Set(seconds[1].keys) == ["second", "luminance_flashes", "red_flashes", "area", "verdict"])
        #expect(seconds[1]["second"] as? Int == 1 && seconds[1]["luminance_flashes"] as? Int == 4
                    && seconds[1]["red_flashes"] as? Int == 0 && seconds[1]["area"] as? Double == 1
                    && seconds[1]["verdict"] as? String == "failure")
        let spans = try #require(flashes["spans"] as? [[String: Any]])
        #expect(spans.count == 1 && spans[0]["start"] as? Double == 0 && spans[0]["end"] as? Double == 2
                    && spans[0]["verdict"] as? String == "failure")
        let text = try Child.cli(["probe", "--flashes", path])
        #expect(text.status == 0)
        #expect(text.stdoutText.contains("flashes:      failure (WCAG 2.3.1; 120 frames analysed at 96x54)"))
        #expect(text.stdoutText.contains("risky spans:  0.000–2.000 s failure"))
        #expect(text.stdoutText.contains("     1          4    0  1.000  failure"))
        // Without --flashes, no frame is analysed and --tonemap has nothing to apply to.
        #expect(try Child.cli(["probe", "--json", path]).stdoutText.contains("flashes") == false)
        #expect(try Child.cli(["probe", "--tonemap", "clip", path]).status == 64)
    }

    @Test("render warns on one line about a loop that flashes through its seam, writes it and exits 0")
    func renderSeam() throws {
        let directory = TestPaths.temporaryDirectory()
        let path = try clip("cut.mp4", "color=white:s=160x90:r=30:d=1[a];color=black:s=160x90:r=30:d=1[b];[a][b]concat=n=2:v=1",
                            in: directory)
        let arguments = ["render", path, "--start", "0.85", "--length", "0.3", "-s", "96x54"]
        let checked = try Child.cli(arguments + ["-o", directory + "/a.mp4"])
        #expect(checked.status == 0)
        #expect(checked.errorLines.count == 1)
        let expected = "Warning: \(directory)/a.mp4 flashes: failure (WCAG 2.3.1) at 1.0–6.3 s of the loop "
            + "played on repeat (its seam included); written anyway"
        #expect(checked.errorLines.first.map(String.init) == expected)
        #expect(FileManager.default.fileExists(atPath: directory + "/a.mp4"))
        let json = try Child.cli(arguments + ["-o", directory + "/b.mp4", "--json"])
        #expect(json.status == 0)
        let record = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        let output = try #require((record["outputs"] as? [[String: Any]])?.first)
        let flashes = try #require(output["flashes"] as? [String: Any])
        #expect(flashes["verdict"] as? String == "failure")
        let off = try Child.cli(arguments + ["-o", directory + "/c.mp4", "--flash-safety", "off", "--json"])
        #expect(off.status == 0 && off.errorLines.isEmpty)
        let offOutput = try #require(((try JSONSerialization.jsonObject(with: off.stdout) as? [String: Any])?["outputs"] as? [[String: Any]])?.first)
        #expect(offOutput["flashes"] == nil)
        // avoid: the nearest 0.3 s loop within one shot, 4 frames (at 15 fps) before the start asked for.
        let avoided = try Child.cli(arguments + ["-o", directory + "/d.mp4", "--flash-safety", "avoid"])
        #expect(avoided.status == 0)
        #expect(avoided.errorLines.first?.hasPrefix("moved the loop window from 0.850 s to 0.583 s") == true)
        #expect(try Child.cli(arguments + ["-o", directory + "/e.mp4", "--flash-safety", "sometimes"]).status == 64)
    }
}
