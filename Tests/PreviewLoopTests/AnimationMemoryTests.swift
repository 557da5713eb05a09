import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

@Suite("Animations rendered to memory: the bytes FFmpeg's file output writes")
struct AnimationMemoryTests {
    /// 1 s of the 25 fps fixture from 0.5 s at 160x90.
    static func loop() throws -> LoopPlayer {
        try LoopPlayer(source: .file(TestPaths.fixture("landscape.mp4")),
                       configuration: .init(size: Size(width: 160, height: 90), windowStart: .seconds(0.5), windowLength: .seconds(1)))
    }

    /// A file's bytes.
    static func contents(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test("render(to: .memory) gives the bytes render(to: path) writes (MP4 with faststart, WebP, GIF)",
          arguments: AnimationFormat.allCases)
    func renderMatchesFile(format: AnimationFormat) throws {
        let path = TestPaths.temporaryDirectory() + "/loop." + format.rawValue
        let file = try Self.loop().render(to: path, framesPerSecond: 10, flashSafety: .check)
        let memory = try Self.loop().render(to: .memory, format: format, framesPerSecond: 10, flashSafety: .check)
        let written = try Self.contents(path)
        #expect(file.bytes == nil)
        #expect(memory.path.isEmpty)
        #expect(written.count > 100)
        #expect(memory.bytes == written, "\(memory.bytes?.count ?? -1) bytes in memory, \(written.count) in the file")
        #expect(memory.frameCount == file.frameCount && memory.flashes == file.flashes)
        if format == .mp4 {
            // The faststart pass read the data back from memory: the index comes before the media.
            let copy = path + ".memory.mp4"
            try Data(memory.bytes ?? []).write(to: URL(fileURLWithPath: copy))
            let boxes = try WebOracle.topLevelBoxes(of: copy)
            #expect(boxes.firstIndex(of: "moov").map { $0 < boxes.firstIndex(of: "mdat") ?? 0 } == true, "\(boxes)")
            #expect(try WebOracle.probe(copy, countFrames: true).frameCount == file.frameCount)
        }
    }

    @Test("A card's sequence rendered to memory is the file's bytes", arguments: [AnimationFormat.webp, .mp4, .gif])
    func cardMatchesFile(format: AnimationFormat) throws {
        let card = try PreviewCard(source: .file(TestPaths.fixture("card.mp4")), style: CardStyle(size: Size(width: 96, height: 54)),
                                   windowLength: .seconds(1))
        let path = TestPaths.temporaryDirectory() + "/card." + format.rawValue
        try card.render(to: path, framesPerSecond: 10)
        let memory = try card.render(to: .memory, format: format, framesPerSecond: 10)
        #expect(memory.bytes == (try Self.contents(path)))
        #expect(memory.format == format)
    }

    @Test("A file in memory stops at its byte limit with one clear tooLarge line, and memory needs a format")
    func limits() throws {
        let writer = try AnimationWriter(to: .memory, format: .gif, size: Size(width: 64, height: 36), framesPerSecond: 10)
        writer.maxBytes = 2000
        for shade in 0..<20 { try writer.append(AnimationWriterTests.picture(UInt8(shade * 12))) }
        let error = #expect(throws: PreviewLoopError.self) { try writer.finish() }
        #expect(error?.code == .tooLarge)
        #expect(error.map { !"\($0)".contains("\n") } == true)
        #expect(writer.bytes == nil)

        let mp4 = try AnimationWriter(to: .memory, format: .mp4, size: Size(width: 64, height: 36), framesPerSecond: 10)
        mp4.maxBytes = 600
        let failed = #expect(throws: PreviewLoopError.self) {
            for shade in 0..<40 { try mp4.append(AnimationWriterTests.picture(UInt8(shade * 6))) }
            try mp4.finish()
        }
        #expect(failed?.code == .tooLarge)

        let noFormat = #expect(throws: PreviewLoopError.self) { try Self.loop().render(to: .memory) }
        #expect(noFormat?.code == .invalidArgument)
    }
}
