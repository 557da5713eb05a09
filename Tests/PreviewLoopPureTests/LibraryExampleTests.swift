import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

@Suite("The library's example and its values as print shows them")
struct LibraryExampleTests {
    static let examplePath = "Examples/Client/Sources/LibraryExample/main.swift"

    /// The fenced block right after the line `<!-- path -->` in `text`, without its fences.
    static func block(after marker: String, in text: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: Substring(marker)), start + 1 < lines.count, lines[start + 1] == "```swift",
              let end = lines[(start + 2)...].firstIndex(of: "```") else { return nil }
        return lines[(start + 2)..<end].joined(separator: "\n") + "\n"
    }

    @Test("Docs/library.md shows the compiled example file word for word")
    func docsShowTheCompiledExample() throws {
        let root = TestPaths.packageRoot
        let docs = try String(contentsOf: root.appendingPathComponent("Docs/library.md"), encoding: .utf8)
        let file = try String(contentsOf: root.appendingPathComponent(Self.examplePath), encoding: .utf8)
        let shown = try #require(Self.block(after: "<!-- \(Self.examplePath) -->", in: docs),
                                 "Docs/library.md has no ```swift block after <!-- \(Self.examplePath) -->")
        #expect(shown == file, "Docs/library.md's example differs from \(Self.examplePath); copy one to the other")
    }

    @Test("Images and frames print as one line: their size and bytes, never their pixels")
    func oneLineDescriptions() throws {
        let image = try RGBImage(width: 640, height: 360)
        #expect(String(describing: image) == "RGBImage(640x360, 691200 bytes)")
        #expect(String(describing: try RGBAImage(width: 640, height: 360)) == "RGBAImage(640x360, 921600 bytes)")
        let timings = FrameTimings(decode: .zero, conversion: .zero, wallTime: .zero, lateness: nil)
        let frame = VideoFrame(image: image, presentationTime: .milliseconds(500), sourceTime: 1.5, loopIndex: 0, index: 12,
                               timings: timings, isKeyframe: true)
        #expect(String(describing: frame) == "VideoFrame(640x360 at 1.500 s, loop 0, index 12)")
        let scores = PosterScores(brightness: 0.5, contrast: 0.5, sharpness: 0.5)
        let choice = PosterChoice(frame: frame, reason: .firstGoodFrame, scores: scores, flaw: nil,
                                  rejected: [PosterCandidate(time: 1, scores: scores, reason: .black)], framesDecoded: 40)
        #expect(String(describing: choice)
            == "PosterChoice(VideoFrame(640x360 at 1.500 s, loop 0, index 12), first good frame, 1 rejected, 40 frames decoded)")
        // Inside other values too (print's reflection uses them), and for debugPrint.
        #expect(String(describing: [frame]) == "[VideoFrame(640x360 at 1.500 s, loop 0, index 12)]")
        #expect(String(reflecting: image) == "RGBImage(640x360, 691200 bytes)")
    }
}
