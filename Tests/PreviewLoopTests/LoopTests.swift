import Foundation
import Synchronization
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
import PreviewLoopFFmpeg

/// The loop engine on real fixtures: window, wrap, passes, start offsets, muting, stopping.
@Suite("Loop engine")
struct LoopTests {
    func collect(_ fixture: String, _ configuration: LoopPlayer.Configuration = .init(), loops: Int) throws -> [VideoFrame] {
        let loop = try LoopPlayer(source: .file(TestPaths.fixture(fixture)), configuration: configuration)
        var frames: [VideoFrame] = []
        try loop.run(loops: loops) { frames.append($0) }
        return frames
    }

    @Test("A clip shorter than the window wraps at its real end; passes are identical")
    func wrapsAtRealEnd() throws {
        let frames = try collect("landscape.mp4", loops: 2)
        let times = try Oracle.frameTimes(of: TestPaths.fixture("landscape.mp4"))
        #expect(frames.count == 2 * times.count)
        let first = frames.filter { $0.loopIndex == 0 }, second = frames.filter { $0.loopIndex == 1 }
        #expect(first.count == times.count && second.count == times.count)
        #expect(first.map(\.index) == Array(0..<times.count))
        #expect(second.first?.presentationTime == .zero)
        for (a, b) in zip(first, second) {
            #expect(a.presentationTime == b.presentationTime)
            let identical = a.pixels == b.pixels
            #expect(identical, "pass 2 frame \(b.index) differs from pass 1")
        }
        // Presentation times are the stream's own, strictly increasing within a pass.
        for (frame, expected) in zip(first, times) { #expect(abs(frame.presentationTime.seconds - expected) < 1e-6) }
    }

    @Test("Without the frame cache every pass is decoded again and delivers the same frames")
    func withoutFrameCache() throws {
        let cached = try collect("landscape.mp4", loops: 2)
        let decoded = try collect("landscape.mp4", .init(frameCacheLimit: 0), loops: 2)
        #expect(decoded.count == cached.count)
        let identical = zip(cached, decoded).allSatisfy { $0.pixels == $1.pixels && $0.presentationTime == $1.presentationTime }
        #expect(identical)
        // Cached passes report no decode work; decoded ones do.
        #expect(cached.filter { $0.loopIndex == 1 }.allSatisfy { $0.timings.decode == .zero })
        #expect(decoded.filter { $0.loopIndex == 1 }.contains { $0.timings.decode > .zero })
    }

    @Test("A window in the middle starts with the frame displayed at its start and ends before its end")
    func windowInTheMiddle() throws {
        let configuration = LoopPlayer.Configuration(windowStart: 1.02, windowLength: 1)
        let frames = try collect("landscape.mp4", configuration, loops: 2)
        let times = try Oracle.frameTimes(of: TestPaths.fixture("landscape.mp4"))
        let expected = times.filter { $0 < 2.02 - 1e-9 && $0 > 1.02 - 0.04 - 1e-9 }
        let pass = frames.filter { $0.loopIndex == 0 }
        #expect(pass.count == expected.count)
        #expect(pass.first.map { abs($0.sourceTime - 1.0) < 1e-6 } == true, "first frame is the one shown at 1.02 s")
        #expect(pass.first?.presentationTime == .zero)
        #expect(pass.last.map { $0.sourceTime < 2.02 } == true)
        #expect(frames.filter { $0.loopIndex == 1 }.map(\.sourceTime) == pass.map(\.sourceTime))
    }

    @Test("A 0.4 s clip with a 15 s window loops every 0.4 s")
    func shortClip() throws {
        let frames = try collect("short.mp4", loops: 3)
        #expect(frames.count == 30)
        #expect(frames.map(\.loopIndex) == Array(repeating: 0, count: 10) + Array(repeating: 1, count: 10) + Array(repeating: 2, count: 10))
        let identical = frames[10].pixels == frames[0].pixels && frames[29].pixels == frames[9].pixels
        #expect(identical)
    }

    @Test("A stream that starts at 11.4 s loops from its own start")
    func nonZeroStart() throws {
        let loop = try LoopPlayer(source: .file(TestPaths.fixture("offset.ts")))
        #expect(abs(loop.info.startTime - 11.4) < 0.01)
        var frames: [VideoFrame] = []
        try loop.run(loops: 2) { frames.append($0) }
        #expect(frames.count == 150)
        #expect(frames[0].presentationTime == .zero && frames[75].presentationTime == .zero)
        #expect(abs(frames[74].presentationTime.seconds - 2.96) < 1e-3)
        let identical = frames[0].pixels == frames[75].pixels
        #expect(identical)
    }

    @Test("Audio is discarded at the demuxer and no audio decoder is ever opened")
    func muted() throws {
        let before = CodecContext.openedDecoders.withLock { $0 }
        let decoder = try VideoDecoder(source: .file(TestPaths.fixture("landscape.mp4")), threads: 2)
        #expect(decoder.info.audioStreamCount == 1)
        var count = 0
        while try decoder.nextFrame() != nil { count += 1 }
        #expect(count == 100)
        // The file holds ~190 audio packets; only those FFmpeg buffered while probing reach us, and
        // they are dropped unread.
        #expect(decoder.packetsOfOtherStreams <= 4)
        let after = CodecContext.openedDecoders.withLock { $0 }
        #expect(after["audio", default: 0] == 0 && before["audio", default: 0] == 0)
        #expect(after["video", default: 0] > before["video", default: 0])
    }

    @Test("The callback API stops promptly on stop()")
    func callbackStops() throws {
        let loop = try LoopPlayer(source: .file(TestPaths.fixture("landscape.mp4")))
        let count = Mutex(0)
        let handleBox = Mutex<LoopPlayer.Handle?>(nil)
        let handle = loop.start(loops: nil, onFrame: { _ in
            let n = count.withLock { $0 += 1; return $0 }
            if n == 5 { handleBox.withLock { $0?.stop() } }
        })
        handleBox.withLock { $0 = handle }
        if count.withLock({ $0 }) >= 5 { handle.stop() }
        try handle.wait()
        #expect(count.withLock { $0 } < 20)
    }

    @Test("Cancelling the consuming task stops an endless loop and throws .cancelled")
    func asyncCancellation() async throws {
        let loop = try await LoopPlayer(source: .file(TestPaths.fixture("short.mp4")))
        let task = Task { () -> (Int, PreviewLoopError.Code?) in
            var seen = 0
            do {
                for try await _ in loop.frames(loops: nil) {
                    seen += 1
                    if seen == 25 { withUnsafeCurrentTask { $0?.cancel() } }
                }
                return (seen, nil)
            } catch let error as PreviewLoopError {
                return (seen, error.code)
            } catch {
                return (seen, nil)
            }
        }
        let (seen, code) = await task.value
        // Cancelled after 25 frames of an endless loop: the next step throws, buffered frames are dropped.
        #expect(seen == 25)
        #expect(code == .cancelled)
    }

    @Test("Breaking out of the sequence ends it; the sequence delivers in order")
    func asyncBreak() async throws {
        let loop = try await LoopPlayer(source: .file(TestPaths.fixture("landscape.mp4")))
        var indices: [Int] = []
        for try await frame in loop.frames(loops: 2) {
            indices.append(frame.index)
            if indices.count == 7 { break }
        }
        #expect(indices == Array(0..<7))
        var all = 0
        for try await _ in loop.frames(loops: 1) { all += 1 }
        #expect(all == 100)
    }

    @Test("The realtime clock paces frames to their due times")
    func realtime() throws {
        let configuration = LoopPlayer.Configuration(clock: .realtime)
        let start = ContinuousClock.now
        let frames = try collect("short.mp4", configuration, loops: 2)
        let elapsed = ContinuousClock.now - start
        #expect(frames.count == 20)
        // Pass 2's first frame is due one pass length (0.4 s) after the start: never early.
        #expect(frames[10].timings.wallTime >= .milliseconds(395))
        #expect(elapsed >= .milliseconds(750))
        #expect(frames.allSatisfy { $0.timings.lateness != nil })
    }

    @Test("Aspect-fit letterboxes on black and stretch fills")
    func contentModes() throws {
        // 400x300 into 320x100: fit gives a 133x100 picture centred with black bars left and right.
        let fit = try collect("landscape.mp4", .init(size: Size(width: 320, height: 100), contentMode: .aspectFit, windowLength: 0.1), loops: 1)[0]
        #expect(fit.image[0, 50] == (0, 0, 0) && fit.image[319, 50] == (0, 0, 0))
        #expect(fit.image[160, 50] != (0, 0, 0))
        let stretch = try collect("landscape.mp4", .init(size: Size(width: 320, height: 100), contentMode: .stretch, windowLength: 0.1), loops: 1)[0]
        #expect(stretch.width == 320 && stretch.height == 100)
    }
}
