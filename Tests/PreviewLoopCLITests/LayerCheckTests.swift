import Foundation
import Testing
import PreviewLoopTestSupport

/// `Scripts/check-layers.sh` on small made-up trees: it passes a clean one and names each folder-layer
/// violation — a use of a higher folder, and a use between two folders of the same layer.
@Suite("The layer check")
struct LayerCheckTests {
    /// Runs the check over a tree holding `files` (paths under Sources/PreviewLoop → contents).
    static func check(_ files: [String: String]) throws -> ChildResult {
        let root = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        for (path, text) in files {
            let full = root + "/Sources/PreviewLoop/" + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: full, atomically: true, encoding: .utf8)
        }
        let script = TestPaths.packageRoot.appendingPathComponent("Scripts/check-layers.sh").path
        return try Child.run("/bin/bash", [script, root])
    }

    @Test("Lower folders may be used; a higher folder or another folder of the same layer may not")
    func folderLayers() throws {
        let base: [String: String] = [
            "Frames/VideoFrame.swift": "public struct VideoFrame {}\n",
            "Loop/LoopPlayer.swift": "public final class LoopPlayer { let frame: VideoFrame? = nil }\n",
            "Sampling/FrameSampler.swift": "public final class FrameSampler { let frame: VideoFrame? = nil }\n",
        ]
        let clean = try Self.check(base)
        #expect(clean.status == 0, "\(clean.stdoutText)")
        var sameLayer = base
        sameLayer["Sampling/FrameSampler.swift"] = "public final class FrameSampler { let player: LoopPlayer? = nil }\n"
        let sideways = try Self.check(sameLayer)
        #expect(sideways.status == 1 && sideways.stdoutText.contains("uses LoopPlayer from Loop/ (layer 4, a folder of the same layer)"),
                "\(sideways.stdoutText)")
        var upward = base
        upward["Frames/VideoFrame.swift"] = "public struct VideoFrame { let sampler: FrameSampler? = nil }\n"
        let higher = try Self.check(upward)
        #expect(higher.status == 1 && higher.stdoutText.contains("uses FrameSampler from Sampling/ (layer 4, a higher layer)"),
                "\(higher.stdoutText)")
    }
}
