import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// Small GIFs: static areas keep their palette indices from frame to frame (so FFmpeg's encoder can
/// crop to what changed and mark the rest transparent), checked on indices and on real files.
@Suite("GIF: stable indices and file size")
struct GIFSizeTests {
    /// A 4x1 image from four grey levels.
    static func image(_ levels: [UInt8]) -> RGBImage {
        try! RGBImage(width: levels.count, height: 1, pixels: levels.flatMap { [$0, $0, $0] })
    }

    @Test("Unchanged and noisy pixels keep their index; changed ones take the fresh one")
    func keepsStaticIndices() {
        var stable = StableIndices(tolerance: 6)
        #expect(stable.indices([1, 2, 3, 4], for: Self.image([10, 20, 30, 40])) == [1, 2, 3, 4])
        // Noise within 6 keeps the old index even though the fresh dither differs; a change of 7 does not.
        #expect(stable.indices([9, 9, 9, 9], for: Self.image([16, 14, 30, 47])) == [1, 2, 3, 9])
        #expect(stable.indices([5, 5, 5, 5], for: Self.image([10, 20, 30, 47])) == [1, 2, 3, 9])
    }

    @Test("A slow drift is measured against the colour the index was chosen for, not the last frame")
    func driftIsCaught() {
        var stable = StableIndices(tolerance: 6)
        var level: UInt8 = 100
        var outputs: [UInt8] = []
        for frame in 0..<6 {
            outputs += stable.indices([UInt8(frame)], for: Self.image([level]))
            level += 2
        }
        // 100 chosen at frame 0; 102, 104, 106 stay within 6; 108 (frame 4) is re-chosen; 110 within.
        #expect(outputs == [0, 0, 0, 0, 4, 4])
    }

    @Test("A size change starts afresh")
    func sizeChange() {
        var stable = StableIndices(tolerance: 6)
        _ = stable.indices([1, 1], for: Self.image([5, 5]))
        #expect(stable.indices([7, 7, 7], for: Self.image([5, 5, 5])) == [7, 7, 7])
    }

    @Test("render .gif: at most 1.1× ffmpeg's palettegen/paletteuse recipe, at its PSNR or better")
    func smallerThanTheRecipe() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A clip already at the output size and rate, so both pipelines take the same frames unscaled.
        let clip = directory + "/clip.mp4"
        let made = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-f", "lavfi", "-i",
                                           "testsrc2=size=240x136:rate=10", "-t", "2", "-c:v", "libx264", "-crf", "20",
                                           "-pix_fmt", "yuv420p", clip])
        #expect(made.status == 0, "\(made.stderr)")
        let ours = directory + "/ours.gif", theirs = directory + "/theirs.gif"
        let rendered = try Child.run(TestPaths.cliBinary, ["render", clip, "-o", ours, "--length", "2", "--size", "240x136",
                                                              "--fps", "10"])
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let recipe = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-i", clip, "-t", "2", "-vf",
                                             "fps=10,scale=240:136,split[a][b];[a]palettegen=stats_mode=diff[p];"
                                                 + "[b][p]paletteuse=dither=floyd_steinberg:diff_mode=rectangle", theirs])
        #expect(recipe.status == 0, "\(recipe.stderr)")
        let size = Size(width: 240, height: 136)
        // The reference: the clip decoded to RGB as DESIGN.md's oracle does it (bicubic, full chroma,
        // accurate rounding), not ffmpeg's default conversion.
        let reference = try Oracle.frames(of: clip, filter: "scale=240:136:flags=bicubic+full_chroma_int+accurate_rnd", size: size)
        let ourFrames = try Oracle.frames(of: ours, filter: "null", size: size)
        let theirFrames = try Oracle.frames(of: theirs, filter: "null", size: size)
        #expect(reference.count == 20 && ourFrames.count == 20 && theirFrames.count == 20,
                "\(reference.count) \(ourFrames.count) \(theirFrames.count)")
        let ourPSNR = Compare.psnr(ourFrames.flatMap(\.pixels), reference.flatMap(\.pixels))
        let theirPSNR = Compare.psnr(theirFrames.flatMap(\.pixels), reference.flatMap(\.pixels))
        let ourBytes = try FileManager.default.attributesOfItem(atPath: ours)[.size] as! Int
        let theirBytes = try FileManager.default.attributesOfItem(atPath: theirs)[.size] as! Int
        #expect(Double(ourBytes) <= 1.1 * Double(theirBytes), "\(ourBytes) bytes against \(theirBytes)")
        #expect(ourPSNR >= theirPSNR, "\(ourPSNR) dB against \(theirPSNR) dB")
    }
}
