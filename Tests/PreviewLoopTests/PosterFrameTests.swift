import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

// The poster frame in three layers: the rules and the search on synthetic scores (pure, in
// PreviewLoopPureTests/PosterRulesTests.swift), the library on fixtures made for it (frames checked against ffmpeg's decode), and `thumb --at auto` end to end.
// Where each fixture's leader, fade, slate or blur ends comes from Fixtures/make-fixtures.sh, and the
// verifier checks it on ffmpeg's own measurements.

/// Reads a binary PPM the CLI wrote.
private func readPPM(_ path: String) throws -> RGBImage {
    try PPM.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
}

@Suite("Poster frame on fixtures", .timeLimit(.minutes(10)))
struct PosterFrameTests {
    static let size = Size(width: 160, height: 90)
    static let upright = Size(width: 320, height: 240)

    struct Case: CustomTestStringConvertible, Sendable {
        var fixture: String
        /// The first frame of the picture proper, from the fixture script.
        var cut: Double
        /// What every skipped frame must be rejected as.
        var reasons: Set<PosterRejection>
        /// A reason that must appear.
        var mainReason: PosterRejection
        /// Whether the leader's frames have a flaw of their own (black, flat), so the search steps over it
        /// from keyframe to keyframe: the fixtures' keyframes are a second apart (ffprobe says where).
        var stepsByKeyframe: Bool
        var testDescription: String { fixture }
    }

    static let cases: [Case] = [
        Case(fixture: "black-start.mp4", cut: 1.0, reasons: [.black], mainReason: .black, stepsByKeyframe: true),
        // Frame 0 of a fade from black is black itself, so the fade is stepped over too.
        Case(fixture: "fade-in.mp4", cut: 1.0, reasons: [.black], mainReason: .black, stepsByKeyframe: true),
        Case(fixture: "slate.mp4", cut: 1.0, reasons: [.flat], mainReason: .flat, stepsByKeyframe: true),
        Case(fixture: "blur-start.mp4", cut: 0.8, reasons: [.blurred], mainReason: .blurred, stepsByKeyframe: false),
        Case(fixture: "dark.mp4", cut: 0.6, reasons: [.black], mainReason: .black, stepsByKeyframe: true),
    ]

    /// Checks that `frame` is ffmpeg's frame at its reported time: the closest of all the clip's frames,
    /// at 35 dB or better.
    static func expectRealFrame(_ frame: VideoFrame, fixture: String, upright: Size = upright,
                                sourceLocation: SourceLocation = #_sourceLocation) throws {
        let reference = try Oracle.reference(fixture, upright: upright, size: frame.image.size)
        let index = Oracle.displayedIndex(at: frame.sourceTime, times: reference.times)
        #expect(abs(reference.times[index] - frame.sourceTime) < 1e-3, "no ffmpeg frame at \(frame.sourceTime) s",
                sourceLocation: sourceLocation)
        let best = Compare.bestMatch(frame.image, among: reference.images)
        #expect(best.psnr >= 35, "PSNR \(best.psnr) dB", sourceLocation: sourceLocation)
        #expect(best.index == index || reference.images[best.index] == reference.images[index],
                "closest ffmpeg frame \(best.index) at \(reference.times[best.index]) s, wanted \(index)",
                sourceLocation: sourceLocation)
    }

    @Test("The poster is the first good frame after the leader, fade, slate or blur", arguments: cases)
    func firstGoodFrame(_ item: Case) throws {
        let sampler = try FrameSampler(source: .file(TestPaths.fixture(item.fixture)))
        let choice = try sampler.posterFrame(in: 0..<15, size: Self.size)
        #expect(choice.reason == .firstGoodFrame && choice.flaw == nil)
        // After the bad part, and no later than the first candidate after it — or, over a leader whose
        // frames are bad on their own, the first keyframe after it (ffprobe's), each keyframe before
        // it judged.
        #expect(choice.time >= item.cut - 1e-6, "chose \(choice.time) s, inside the part that ends at \(item.cut) s")
        #expect(choice.rejected.first?.time == 0, "the window's first frame was not judged")
        #expect(choice.rejected.allSatisfy { $0.time < item.cut }, "rejected good frames: \(choice.rejected.map(\.time))")
        if item.stepsByKeyframe {
            let keyframes = try Oracle.keyframeTimes(of: TestPaths.fixture(item.fixture))
            let expected = try #require(keyframes.first { $0 >= item.cut - 1e-6 })
            #expect(abs(choice.time - expected) < 1e-6, "chose \(choice.time) s, not the keyframe at \(expected) s")
            #expect(choice.rejected.map(\.time) == keyframes.filter { $0 < item.cut }, "\(choice.rejected.map(\.time))")
        } else {
            #expect(choice.time < item.cut + PosterRules.candidateStep + 1e-6, "chose \(choice.time) s, not the first good frame")
            #expect(choice.rejected.count >= Int(item.cut / PosterRules.candidateStep), "too few candidates: \(choice.rejected.count)")
        }
        #expect(Set(choice.rejected.map(\.reason)).isSubset(of: item.reasons), "\(choice.rejected.map(\.reason))")
        #expect(choice.rejected.contains { $0.reason == item.mainReason })
        #expect(choice.frame.image.size == Self.size && choice.frame.sourceTime == choice.time)
        #expect(abs(choice.frame.presentationTime.seconds - choice.time) < 1e-6)
        try Self.expectRealFrame(choice.frame, fixture: item.fixture)
    }

    @Test("A poster decoded again after the search (as after a fade, or when nothing passes) is the frame judged",
          arguments: cases.map { ($0.fixture, 0..<15.0) } + [("black-start.mp4", 0..<0.9), ("landscape.mp4", 1.5..<4)])
    func decodedAgain(_ fixture: String, window: Range<Double>) throws {
        let path = TestPaths.fixture(fixture)
        let kept = try FrameSampler(source: .file(path)).posterFrame(in: window, size: Self.size)
        let again = try FrameSampler(source: .file(path)).posterFrame(in: window, size: Self.size, mode: .aspectFill,
                                                                      retention: .none)
        #expect(again.time == kept.time && again.reason == kept.reason && again.scores == kept.scores)
        #expect(again.frame.image == kept.frame.image)
        #expect(again.rejected == kept.rejected)
        #expect(again.framesDecoded > kept.framesDecoded, "\(again.framesDecoded) vs \(kept.framesDecoded)")
    }

    @Test("A clip that starts well: the window's first frame, nothing skipped, about a second decoded")
    func goodStart() throws {
        let sampler = try FrameSampler(source: .file(TestPaths.fixture("landscape.mp4")))
        let choice = try sampler.posterFrame(in: 0..<15, size: Self.size)
        #expect(choice.time == 0 && choice.reason == .firstGoodFrame && choice.rejected.isEmpty)
        // 25 fps: one second of look-ahead is 26 frames; a few more at most for decoder latency.
        #expect(choice.framesDecoded <= 30, "decoded \(choice.framesDecoded) frames")
        try Self.expectRealFrame(choice.frame, fixture: "landscape.mp4", upright: Size(width: 400, height: 300))
    }

    @Test("A window starting mid-clip begins at the frame displayed then; the sampler keeps answering after")
    func windowInside() throws {
        let sampler = try FrameSampler(source: .file(TestPaths.fixture("landscape.mp4")))
        let choice = try sampler.posterFrame(in: 1.5..<4, size: Self.size)
        #expect(abs(choice.time - 1.48) < 1e-6 && choice.rejected.isEmpty)
        #expect(choice.frame.presentationTime == .zero)
        try Self.expectRealFrame(choice.frame, fixture: "landscape.mp4", upright: Size(width: 400, height: 300))
        #expect(abs(try sampler.frame(at: 2.9, size: Self.size).sourceTime - 2.88) < 1e-6)
        #expect(abs(try sampler.frame(at: 0.5, size: Self.size).sourceTime - 0.48) < 1e-6)
        #expect(abs(try sampler.posterFrame(in: 3..<4, size: Self.size).time - 3.0) < 1e-6)
    }

    @Test("A window that starts mid-fade: each candidate is judged against the next second, the fade is skipped")
    func midFade() throws {
        // fade-in.mp4 fades from black over its first second (Fixtures/make-fixtures.sh); at 0.3 s the
        // picture is not black on its own, so no keyframe step: the candidates are judged as they come.
        let choice = try FrameSampler(source: .file(TestPaths.fixture("fade-in.mp4"))).posterFrame(in: 0.3..<15, size: Self.size)
        #expect(choice.reason == .firstGoodFrame)
        // The last candidate of a fade may be up to 10 % short of the settled picture (PosterRules.fadeContrastRatio).
        #expect(choice.time >= 0.9 - 1e-6 && choice.time < 1 + PosterRules.candidateStep + 1e-6, "chose \(choice.time) s")
        #expect(!choice.rejected.isEmpty && choice.rejected.allSatisfy { $0.reason == .fading }, "\(choice.rejected.map(\.reason))")
        try Self.expectRealFrame(choice.frame, fixture: "fade-in.mp4")
    }

    @Test("Fitting or stretching the picture judges the whole of it and finds the same frame",
          arguments: [ContentMode.aspectFit, .stretch])
    func contentModes(_ mode: ContentMode) throws {
        let sampler = try FrameSampler(source: .file(TestPaths.fixture("fade-in.mp4")))
        let filled = try sampler.posterFrame(in: 0..<15, size: Self.size)
        let other = try sampler.posterFrame(in: 0..<15, size: Self.size, mode: mode)
        #expect(other.time == filled.time && other.reason == .firstGoodFrame)
        #expect(other.rejected.map(\.reason) == filled.rejected.map(\.reason))
    }

    @Test("A portrait clip starts well too")
    func rotated() throws {
        let choice = try FrameSampler(source: .file(TestPaths.fixture("rotated90.mp4"))).posterFrame(in: 0..<15, size: Self.size)
        #expect(choice.time == 0 && choice.rejected.isEmpty)
        try Self.expectRealFrame(choice.frame, fixture: "rotated90.mp4", upright: Size(width: 240, height: 320))
    }

    @Test("Dark throughout: a dim picture, not an error and not the black before it")
    func darkThroughout() throws {
        let choice = try FrameSampler(source: .file(TestPaths.fixture("dark.mp4"))).posterFrame(in: 0..<15, size: Self.size)
        let means = Compare.channelMeans(choice.frame.image)
        #expect(max(means.0, means.1, means.2) < 40, "not a dark picture: \(means)")
        #expect(max(means.0, means.1, means.2) > 5, "a black frame: \(means)")
        #expect(choice.scores.brightness <= PosterRules.blackBrightness, "brightness \(choice.scores.brightness)")
        #expect(choice.time >= 0.6 - 1e-6)
    }

    @Test("A window with nothing good returns its best frame, never an error",
          arguments: [("black-start.mp4", PosterRejection.black), ("slate.mp4", .flat)])
    func nothingGood(_ fixture: String, flaw: PosterRejection) throws {
        let sampler = try FrameSampler(source: .file(TestPaths.fixture(fixture)))
        let choice = try sampler.posterFrame(in: 0..<0.9, size: Self.size)
        #expect(choice.reason == .bestAvailable && choice.flaw == flaw)
        #expect(choice.time < 0.9)
        #expect(choice.rejected.count == Int((0.9 / PosterRules.candidateStep).rounded(.up)) - 1)
        try Self.expectRealFrame(choice.frame, fixture: fixture)
        let only = try sampler.posterFrame(in: 0..<0.05, size: Self.size)
        #expect(only.reason == .onlyFrame && only.flaw == flaw && only.time == 0 && only.rejected.isEmpty)
    }

    @Test("An empty window, one past the end and a zero size are invalidArgument")
    func invalidWindows() throws {
        let sampler = try FrameSampler(source: .file(TestPaths.fixture("black-start.mp4")))
        #expect(errorCode { _ = try sampler.posterFrame(in: 3..<5, size: Self.size) } == .invalidArgument)
        #expect(errorCode { _ = try sampler.posterFrame(in: 2.6..<3, size: Self.size) } == .invalidArgument)
        #expect(errorCode { _ = try sampler.posterFrame(in: 1..<1, size: Self.size) } == .invalidArgument)
        #expect(errorCode { _ = try sampler.posterFrame(in: 0..<1, size: Size(width: 0, height: 90)) } == .invalidArgument)
        // The sampler still works afterwards.
        #expect(try sampler.posterFrame(in: 0..<15, size: Self.size).time >= 1.0 - 1e-6)
    }
}

@Suite("Poster frame: thumb --at auto", .timeLimit(.minutes(10)))
struct PosterCLITests {
    @Test("--at auto is the default; --start and --length set its window; explicit times keep their meaning")
    func parsing() throws {
        guard case .command(let defaults as ThumbCommand) = try CommandLineParser.parse(["thumb", "c.mp4", "-o", "a.ppm"]) else {
            Issue.record("not a thumb command")
            return
        }
        #expect(defaults.time == .auto && defaults.start == .seconds(0) && defaults.length == .seconds(15))
        guard case .command(let window as ThumbCommand) = try CommandLineParser.parse(["thumb", "c.mp4", "-o", "a.ppm", "--at", "auto",
                                                                     "--start", "1:00", "--length", "10%"]) else {
            Issue.record("not a thumb command")
            return
        }
        #expect(window.time == .auto && window.start == .seconds(60) && window.length == .percent(10))
        guard case .command(let explicit as ThumbCommand) = try CommandLineParser.parse(["thumb", "c.mp4", "-o", "a.ppm", "--at", "50%",
                                                                       "--accuracy", "keyframe"]) else {
            Issue.record("not a thumb command")
            return
        }
        #expect(explicit.time == .at(.percent(50)) && explicit.accuracy == .keyframe)
        #expect(usageError(["thumb", "c.mp4", "-o", "a.ppm", "--accuracy", "keyframe"])?.kind == .conflictingOptions("accuracy", "at"))
        #expect(usageError(["thumb", "c.mp4", "-o", "a.ppm", "--at", "auto", "--accuracy", "exact"])?.kind
                == .conflictingOptions("accuracy", "at"))
        #expect(usageError(["thumb", "c.mp4", "-o", "a.ppm", "--at", "2", "--start", "1"])?.kind == .conflictingOptions("start", "at"))
        #expect(usageError(["thumb", "c.mp4", "-o", "a.ppm", "--at", "2", "--length", "1"])?.kind == .conflictingOptions("length", "at"))
        #expect(usageError(["thumb", "c.mp4", "-o", "a.ppm", "--at", "Auto"])?.kind == .invalidValue(option: "at", value: "Auto"))
        #expect(usageError(["thumb", "c.mp4", "-o", "a.ppm", "--length", "0"])?.kind == .invalidValue(option: "length", value: "0"))
    }

    @Test("thumb without --at writes the poster and says why, in one line")
    func defaultIsAuto() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/poster.ppm"
        let result = try Child.cli(["thumb", TestPaths.fixture("black-start.mp4"), "-o", output, "--size", "160x90"])
        #expect(result.status == 0, "\(result.stderr)")
        let line = String(decoding: result.stdout, as: UTF8.self)
        #expect(line.hasPrefix("wrote \(output) (160x90, frame at ") && line.hasSuffix(")\n") && line.split(separator: "\n").count == 1,
                "\(line)")
        #expect(line.contains("first good frame") && line.contains("black ×"), "\(line)")
        let time = line.split(separator: " ").firstIndex(of: "at").flatMap { Double(line.split(separator: " ")[$0 + 1]) }
        let chosen = try #require(time, "no time in \(line)")
        #expect(chosen >= 1.0 && chosen < 1.0 + PosterRules.candidateStep, "\(line)")
        var frame = try FrameSampler(source: .file(TestPaths.fixture("black-start.mp4"))).frame(at: chosen, size: PosterFrameTests.size)
        frame.image = try readPPM(output)
        try PosterFrameTests.expectRealFrame(frame, fixture: "black-start.mp4")
        // An explicit time keeps the plain line.
        let explicit = try Child.cli(["thumb", TestPaths.fixture("black-start.mp4"), "-o", output, "--at", "50%"])
        #expect(explicit.status == 0 && !String(decoding: explicit.stdout, as: UTF8.self).contains("good"), "\(explicit.stderr)")
    }

    @Test("--at auto with --accuracy is a usage error: exit 64, nothing written")
    func accuracyWithAuto() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Child.cli(["thumb", TestPaths.fixture("landscape.mp4"), "-o", directory + "/x.ppm",
                                    "--at", "auto", "--accuracy", "keyframe"])
        #expect(result.status == 64)
        #expect(result.errorLines.first?.hasPrefix("Error: ") == true && result.errorLines.first?.contains("--accuracy") == true,
                "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).isEmpty)
    }

    @Test("--start past the end: one Error line naming the input, exit 1, no file")
    func startPastEnd() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = TestPaths.fixture("black-start.mp4")
        let result = try Child.cli(["thumb", input, "-o", directory + "/x.ppm", "--start", "10"])
        expectCLIFailure(result, input: input, outputDirectory: directory)
        #expect(result.stderr.contains("past the end"), "\(result.stderr)")
    }

    @Test("From a pipe (read forward, frames kept) the poster is the file's, byte for byte",
          arguments: [("blur-start.mp4", "blurred"), ("title-card.mp4", "title card")])
    func standardInput(_ fixture: String, reason: String) throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = TestPaths.fixture(fixture)
        let piped = try Child.cli(["thumb", "-", "-o", directory + "/piped.ppm"],
                                  input: .piped(try Data(contentsOf: URL(fileURLWithPath: path))), killAfter: 30)
        let direct = try Child.cli(["thumb", path, "-o", directory + "/file.ppm"], killAfter: 30)
        #expect(piped.status == 0 && direct.status == 0, "\(piped.stderr) \(direct.stderr)")
        func why(_ result: ChildResult) -> Substring { String(decoding: result.stdout, as: UTF8.self).drop { $0 != "(" } }
        #expect(why(piped) == why(direct) && why(direct).contains(reason), "\(why(piped)) vs \(why(direct))")
        #expect(FileManager.default.contentsEqual(atPath: directory + "/piped.ppm", andPath: directory + "/file.ppm"))
    }
}

@Suite("Poster frame: sharing its decoding with a preview")
struct PosterSharingTests {
    /// The frames the poster's search hands over are the frames `frames(at:)` gives for the same
    /// instants (which other tests check against ffmpeg), and the rest are left to it.
    @Test("The shared frames equal frames(at:) at the same instants, on a clip with a dark leader and on steady footage",
          arguments: ["black-start.mp4", "landscape.mp4", "fade-in.mp4"])
    func sharedFramesMatch(_ name: String) throws {
        let path = TestPaths.fixture(name)
        let instants = (0..<45).map { Double($0) / 15 }
        let size = Size(width: 96, height: 54)
        let shared = try FrameSampler(source: .file(path), threads: 1)
        var taken: [VideoFrame] = []
        let result = try shared.posterFrame(in: 0..<15, size: Size(width: 64, height: 36), sharing: instants, convertedTo: size) {
            (frame: VideoFrame) throws(PreviewLoopError) in taken.append(frame)
        }
        #expect(result.served == taken.count)
        #expect(result.served > 0, "the search decodes at least a second, so it serves the first instants")
        #expect(taken.map(\.index) == Array(0..<result.served))
        // The rest come from the same sampler, decoding on from where the search stopped.
        let rest = try shared.frames(at: Array(instants[result.served...]), size: size, accuracy: .exact, interval: 0)
        let alone = try FrameSampler(source: .file(path), threads: 1)
        let expected = try alone.frames(at: instants, size: size, accuracy: .exact, interval: 0)
        let all = taken + rest
        #expect(all.count == expected.count)
        for (got, want) in zip(all, expected) {
            #expect(got.sourceTime == want.sourceTime)
            #expect(got.image.pixels == want.image.pixels, "frame at \(want.sourceTime) s")
        }
        // And the poster is the one the plain search picks.
        let plain = try FrameSampler(source: .file(path), threads: 1).posterFrame(in: 0..<15, size: Size(width: 64, height: 36))
        #expect(result.poster.frame.sourceTime == plain.frame.sourceTime)
        #expect(result.poster.frame.image.pixels == plain.frame.image.pixels)
    }
}
