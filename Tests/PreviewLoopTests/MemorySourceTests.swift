import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// A clip handed over as bytes in memory reads as the same clip from its file.
@Suite("Sources in memory")
struct MemorySourceTests {
    @Test("Stills and the poster from .data are the file's, pixel for pixel; junk bytes are refused", arguments: ["landscape.mp4", "vp9.webm"])
    func sameAsFile(_ fixture: String) throws {
        let path = TestPaths.fixture(fixture)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let size = Size(width: 160, height: 90)
        let fromFile = try FrameSampler(source: .file(path)), fromMemory = try FrameSampler(source: .data(bytes))
        #expect(fromMemory.info.duration == fromFile.info.duration)
        for time in [0.0, 1.3, 0.4] {
            let a = try fromFile.frame(at: time, size: size), b = try fromMemory.frame(at: time, size: size)
            #expect(a.sourceTime == b.sourceTime && a.image.pixels == b.image.pixels, "at \(time) s")
        }
        let posterA = try FrameSampler(source: .file(path)).posterFrame(in: 0..<5, size: size)
        let posterB = try FrameSampler(source: .data(bytes)).posterFrame(in: 0..<5, size: size)
        #expect(posterA.time == posterB.time && posterA.frame.image.pixels == posterB.frame.image.pixels)
        #expect(throws: PreviewLoopError.self) { _ = try FrameSampler(source: .data(Data(bytes.prefix(64)))).frame(at: 0, size: size) }
    }
}
