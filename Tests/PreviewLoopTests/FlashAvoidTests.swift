import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// 6 s of mid grey at 60 fps, 160x90, with a full-screen 10 Hz white strobe from 2 s to 3.5 s.
enum StrobeClip {
    static func make(_ name: String, seconds: Double = 6, from start: Double = 2, to end: Double = 3.5) throws -> String {
        try FlashClips.make(name, "color=0x808080:s=160x90:r=60:d=\(seconds)[b];color=white:s=160x90:r=60:d=\(seconds)[w];"
                                + "[b][w]overlay=enable='gte(t\\,\(start))*lt(t\\,\(end - 0.005))*lt(mod(n\\,6)\\,3)'")
    }

    /// The written file's frames as ffmpeg decodes them, analysed as a player repeats them (four plays).
    static func verdictOnRepeat(_ path: String, framesPerSecond: Int) throws -> FlashReport {
        let frames = try Oracle.frames(of: path, filter: "null", size: Size(width: 96, height: 54))
        var analyzer = FlashAnalyzer()
        for pass in 0..<4 {
            for (index, frame) in frames.enumerated() {
                analyzer.add(frame, at: Double(pass * frames.count + index) / Double(framesPerSecond))
            }
        }
        return analyzer.report()
    }
}

@Suite("render --flash-safety avoid: the nearest window clear of flashes, the clip read once")
struct FlashAvoidTests {
    static func loop(_ input: String, start: Double, length: Double) throws -> LoopPlayer {
        try LoopPlayer(source: .file(input), configuration: .init(
            size: Size(width: 96, height: 54), windowStart: .seconds(start), windowLength: .seconds(length), threads: 1))
    }

    @Test("A strobe inside the window asked for: avoid moves it to the nearest clean start, which then checks clean")
    func movesToNearestSafe() throws {
        let input = try StrobeClip.make("strobe.mp4")
        // The window asked for fails when checked.
        let checkedPath = FlashClips.directory + "/strobe-check.mp4"
        let checked = try Self.loop(input, start: 2, length: 1).render(to: checkedPath, framesPerSecond: 15, flashSafety: .check)
        #expect(checked.flashes?.verdict == .failure)
        #expect(try StrobeClip.verdictOnRepeat(checkedPath, framesPerSecond: 15).verdict == .failure)

        let path = FlashClips.directory + "/strobe-avoid.mp4"
        let summary = try Self.loop(input, start: 2, length: 1).render(to: path, framesPerSecond: 15, flashSafety: .avoid)
        let avoidance = try #require(summary.flashAvoidance)
        // Candidates every 4 frames at 15 fps (a quarter second in whole frames) from 2 s: the nearest whose
        // 1 s window ends by the strobe's start is 2 − 4 × 4/15 s; after the strobe, the first is 1.6 s away.
        let step = 4.0 / 15
        let expected = 2 - step * (1 / step).rounded(.up)
        #expect(avoidance.requestedStart == .seconds(2))
        #expect(abs(avoidance.start.seconds - expected) < 1e-6)
        #expect(avoidance.isMoved)
        #expect(summary.frameCount == 15)
        #expect(summary.flashes?.verdict == .pass)
        // The oracle: the file as ffmpeg decodes it, played four times over.
        #expect(try StrobeClip.verdictOnRepeat(path, framesPerSecond: 15).verdict == .pass)
    }

    @Test("A clean window asked for stays where it is")
    func staysWhenSafe() throws {
        let input = try StrobeClip.make("strobe-stay.mp4")
        let summary = try Self.loop(input, start: 4.5, length: 1).render(to: FlashClips.directory + "/stay.webp",
                                                                         framesPerSecond: 15, flashSafety: .avoid)
        #expect(summary.flashAvoidance?.isMoved == false)
        #expect(summary.flashes?.verdict == .pass)
    }

    @Test("A clip that strobes throughout has no safe window: unsafeFlashes, nothing written")
    func noSafeWindow() throws {
        let input = try StrobeClip.make("strobe-all.mp4", seconds: 4, from: 0, to: 5)
        let path = FlashClips.directory + "/none.mp4"
        #expect {
            try Self.loop(input, start: 1, length: 1).render(to: path, framesPerSecond: 15, flashSafety: .avoid)
        } throws: { error in
            (error as? PreviewLoopError)?.code == .unsafeFlashes
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: FlashClips.directory).filter { $0.hasPrefix("none") }
        #expect(leftovers.isEmpty)
    }

    @Test("A clip shorter than the window is one window: judged whole, written when it is safe, as check writes it")
    func clipShorterThanWindow() throws {
        let input = try FlashClips.make("short.mp4", "testsrc2=s=160x90:r=30:d=0.4")
        let checked = try Self.loop(input, start: 0, length: 3).render(to: FlashClips.directory + "/short-check.mp4",
                                                                       framesPerSecond: 15, flashSafety: .check)
        #expect(checked.flashes?.verdict == .pass)
        let path = FlashClips.directory + "/short-avoid.mp4"
        let summary = try Self.loop(input, start: 0, length: 3).render(to: path, framesPerSecond: 15, flashSafety: .avoid)
        #expect(summary.flashAvoidance?.isMoved == false)
        #expect(summary.flashAvoidance?.windowsChecked == 1)
        #expect(summary.flashes?.verdict == .pass)
        #expect(summary.frameCount == checked.frameCount && summary.frameCount == 6)
        #expect(FileManager.default.fileExists(atPath: path))
        // A window asked for near the end of a longer clip, cut short by it, is judged on the frames there are.
        let clean = try FlashClips.make("clean-2s.mp4", "testsrc2=s=160x90:r=30:d=2")
        let late = try Self.loop(clean, start: 1.5, length: 3).render(to: FlashClips.directory + "/late-avoid.webp",
                                                                      framesPerSecond: 15, flashSafety: .avoid)
        #expect(late.flashAvoidance?.isMoved == false)
        #expect(late.flashes?.verdict == .pass)
    }

    @Test("A short clip that strobes throughout is judged whole too: unsafeFlashes with its verdict, nothing written")
    func shortClipThatStrobes() throws {
        let input = try StrobeClip.make("strobe-short.mp4", seconds: 0.8, from: 0, to: 1)
        let path = FlashClips.directory + "/short-none.mp4"
        #expect {
            try Self.loop(input, start: 0, length: 3).render(to: path, framesPerSecond: 15, flashSafety: .avoid)
        } throws: { error in
            guard let error = error as? PreviewLoopError else { return false }
            // The window asked for was judged: the message gives its verdict.
            return error.code == .unsafeFlashes && error.message.contains("(the window asked for: failure)")
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("The search keeps what it may still choose and stops as soon as the answer is known")
    func searchIsOnline() throws {
        func grey(_ level: UInt8) throws -> FlashSample {
            FlashSample(try RGBImage(width: 16, height: 9, pixels: [UInt8](repeating: level, count: 16 * 9 * 3)))
        }
        // 15 fps, 1 s windows, the requested start at frame 30, candidates every 4 frames, 2 s reach;
        // calm until frame 40, then black and white every other frame.
        var search = SafeWindowSearch(framesPerSecond: 15, windowFrames: 15, requested: 30, stride: 4, reach: 30)
        var frame = 0
        while !search.isDecided && frame < 200 {
            search.add(try grey(frame < 40 ? 128 : frame % 2 == 0 ? 255 : 0))
            frame += 1
        }
        if !search.isDecided { search.finish() }
        // Candidates 2, 6, …, 26, 30, 34…: window 26 (frames 26–40) holds one strobe frame, a rise and, at the
        // seam, a fall a second: one flash, a pass, and the nearest before. Window 30 holds five strobe frames:
        // three flashes a second played on repeat, an extended failure. Candidate 34 is no nearer than 26, so the
        // answer is known once window 30 is judged, at its last frame (44).
        #expect(search.chosen == 26)
        #expect(search.requestedVerdict == .extendedFailure)
        #expect(frame == 45)
        #expect(search.keptFrom == 26)
    }
}
