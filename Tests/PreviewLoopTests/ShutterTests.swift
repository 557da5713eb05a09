import Foundation
import Synchronization
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// The shutter of a running realtime loop: a still of the next presented frame, and recordings that
/// run across the seam between passes.
@Suite("Capture and record")
struct ShutterTests {
    /// Every frame the loop hands over, by (pass, index).
    final class Presented: Sendable {
        let frames = Mutex<[VideoFrame]>([])
        func add(_ frame: VideoFrame) { frames.withLock { $0.append(frame) } }
        func frame(pass: Int, index: Int) -> VideoFrame? {
            frames.withLock { $0.first { $0.loopIndex == pass && $0.index == index } }
        }
        /// Waits (polling, at most 10 s) until `count` more frames than now have been handed over.
        func wait(more count: Int) async throws {
            let target = frames.withLock { $0.count } + count
            for _ in 0..<1000 {
                if frames.withLock({ $0.count >= target }) { return }
                try await Task.sleep(for: .milliseconds(10))
            }
            Issue.record("the loop never handed over \(count) more frames")
        }

        /// Waits (polling, at most 10 s) until a frame of `pass` at or past `index` was handed over.
        func wait(pass: Int, index: Int) async throws {
            for _ in 0..<1000 {
                if frames.withLock({ $0.contains { ($0.loopIndex, $0.index) >= (pass, index) } }) { return }
                try await Task.sleep(for: .milliseconds(10))
            }
            Issue.record("the loop never reached pass \(pass + 1) index \(index + 1)")
        }
    }

    @Test("capture() during pass 2 returns the frame presented at that moment")
    func captureDuringSecondPass() async throws {
        let loop = try await LoopPlayer(source: .file(TestPaths.fixture("short.mp4")), configuration: .init(clock: .realtime))
        let presented = Presented()
        let handle = loop.start(loops: nil, onFrame: { presented.add($0) })
        try await presented.wait(pass: 1, index: 3)       // well inside pass 2
        let before = presented.frames.withLock { $0.count }
        let still = try await handle.capture()
        handle.stop()
        try handle.wait()
        #expect(still.loopIndex >= 1, "captured pass \(still.loopIndex + 1) index \(still.index)")
        // It is one of the frames handed over after the request, the very same picture and moment.
        let all = presented.frames.withLock { $0 }
        let position = all.firstIndex { $0.loopIndex == still.loopIndex && $0.index == still.index && $0.timings.wallTime == still.timings.wallTime }
        #expect(position.map { $0 >= before } == true)
        #expect(position.map { all[$0].pixels == still.pixels } == true)
    }

    @Test("A recording across the seam has the frames of its span, with no gap")
    func recordingAcrossSeam() async throws {
        let loop = try await LoopPlayer(source: .file(TestPaths.fixture("short.mp4")), configuration: .init(clock: .realtime))
        let presented = Presented()
        let handle = loop.start(loops: nil, onFrame: { presented.add($0) })
        let directory = TestPaths.temporaryDirectory()
        try await presented.wait(pass: 0, index: 5)
        try handle.startRecording(to: try ImageDirectorySink(directory: directory))
        try await presented.wait(more: 12)               // more than a pass: across a seam
        try handle.stopRecording()
        handle.stop()
        try handle.wait()
        let index = try String(contentsOfFile: directory + "/frames.csv", encoding: .utf8)
        let rows = index.split(separator: "\n").dropFirst().map { $0.split(separator: ",") }
        let recorded = rows.map { (Int($0[1])! - 1, Int($0[2])! - 1) }
        // The recording is exactly a run of consecutive presented frames (none lost, none added)...
        let all = presented.frames.withLock { $0 }.map { ($0.loopIndex, $0.index, $0.timings.droppedBefore) }
        let start = try #require(all.firstIndex { ($0.0, $0.1) == recorded.first ?? (-1, -1) })
        #expect(recorded.count >= 10, "\(recorded.count) frames recorded")
        let slice = all[start..<min(all.count, start + recorded.count)]
        #expect(slice.map { [$0.0, $0.1] } == recorded.map { [$0.0, $0.1] })
        // ...running across a seam, and where the loop dropped nothing the indices follow on.
        #expect(Set(recorded.map(\.0)).count >= 2, "the recording spans two passes")
        for (a, b) in zip(slice, slice.dropFirst()) where b.2 == 0 {
            let next = a.1 == 9 ? (a.0 + 1, 0) : (a.0, a.1 + 1)     // 10 frames a pass
            #expect((b.0, b.1) == next, "gap between \(a) and \(b)")
        }
        for row in rows {
            #expect(FileManager.default.fileExists(atPath: directory + "/" + row[0]))
        }
    }

    @Test("Capture after the loop has ended fails instead of waiting")
    func captureAfterEnd() async throws {
        let loop = try await LoopPlayer(source: .file(TestPaths.fixture("short.mp4")))
        let handle = loop.start(loops: 1, onFrame: { _ in })
        try handle.wait()
        await #expect(throws: PreviewLoopError.self) { try await handle.capture() }
    }
}
