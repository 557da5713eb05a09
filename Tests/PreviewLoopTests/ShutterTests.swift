import Foundation
import Synchronization
import Testing
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
    }

    @Test("capture() during pass 2 returns the frame presented at that moment")
    func captureDuringSecondPass() async throws {
        let loop = try PreviewLoop(source: .file(TestPaths.fixture("short.mp4")), configuration: .init(clock: .realtime))
        let presented = Presented()
        let handle = loop.start(loops: 3, onFrame: { presented.add($0) })
        try await Task.sleep(for: .milliseconds(560))     // pass 2 runs from 0.4 s to 0.8 s
        let asked = ContinuousClock.now
        let still = try await handle.capture()
        let answered = ContinuousClock.now
        try handle.wait()
        #expect(still.loopIndex == 1, "captured pass \(still.loopIndex + 1) index \(still.index)")
        let same = presented.frame(pass: still.loopIndex, index: still.index)
        #expect(same?.pixels == still.pixels)
        #expect(same?.timings.wallTime == still.timings.wallTime)
        // The next frame is due within one frame interval (40 ms) of asking.
        #expect(asked.duration(to: answered) < .milliseconds(200))
    }

    @Test("A recording across the seam has the frames of its span, with no gap")
    func recordingAcrossSeam() async throws {
        let loop = try PreviewLoop(source: .file(TestPaths.fixture("short.mp4")), configuration: .init(clock: .realtime))
        let handle = loop.start(loops: 3, onFrame: { _ in })
        let directory = TestPaths.temporaryDirectory()
        try await Task.sleep(for: .milliseconds(250))
        try handle.startRecording(to: try ImageDirectorySink(directory: directory))
        try await Task.sleep(for: .milliseconds(400))   // 0.25 s → 0.65 s: across the seam at 0.4 s
        try handle.stopRecording()
        try handle.wait()
        let index = try String(contentsOfFile: directory + "/frames.csv", encoding: .utf8)
        let rows = index.split(separator: "\n").dropFirst().map { $0.split(separator: ",") }
        // 0.4 s at 25 fps is 10 frames; sleeping is imprecise, so allow a few either way.
        #expect((7...13).contains(rows.count), "\(rows.count) frames recorded")
        let order = rows.map { (Int($0[1])!, Int($0[2])!) }
        #expect(Set(order.map(\.0)).count == 2, "the recording spans two passes: \(order)")
        for (a, b) in zip(order, order.dropFirst()) {
            let next = a.1 == 10 ? (a.0 + 1, 1) : (a.0, a.1 + 1)     // 10 frames a pass
            #expect(b == next, "gap between \(a) and \(b)")
        }
        for row in rows {
            let file = directory + "/" + row[0]
            #expect(FileManager.default.fileExists(atPath: file))
        }
    }

    @Test("Capture after the loop has ended fails instead of waiting")
    func captureAfterEnd() async throws {
        let loop = try PreviewLoop(source: .file(TestPaths.fixture("short.mp4")))
        let handle = loop.start(loops: 1, onFrame: { _ in })
        try handle.wait()
        await #expect(throws: PreviewLoopError.self) { try await handle.capture() }
    }
}
