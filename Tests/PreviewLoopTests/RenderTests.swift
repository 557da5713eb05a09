import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

extension WebOracle {
    /// The top-level box types of an MP4 file, in order.
    static func topLevelBoxes(of path: String) throws -> [String] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var boxes: [String] = [], offset = 0
        while offset + 8 <= bytes.count {
            var size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            boxes.append(String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self))
            if size == 1, offset + 16 <= bytes.count {
                size = bytes[offset + 8..<offset + 16].reduce(0) { $0 << 8 | Int($1) }
            } else if size == 0 {
                size = bytes.count - offset
            }
            guard size >= 8 else { break }
            offset += size
        }
        return boxes
    }

    /// Frame `index` of a video file decoded by the ffmpeg CLI (a good YCbCr → RGB conversion, see
    /// ``firstFrame(of:size:plain:)``).
    static func frame(_ index: Int, of path: String, size: Size) throws -> RGBImage {
        let result = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-i", path, "-vf", "select=eq(n\\,\(index))",
                                            "-frames:v", "1", "-sws_flags", "bicubic+full_chroma_int+accurate_rnd",
                                            "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        guard result.status == 0, result.stdout.count == size.area * 3 else {
            throw OracleError(message: "ffmpeg gave \(result.stdout.count) bytes for frame \(index) of \(path): \(result.stderr)")
        }
        return try RGBImage(width: size.width, height: size.height, pixels: [UInt8](result.stdout))
    }

    /// What libwebp's own `webpmux -info` says of an animated WebP: frame count, loop count and the
    /// frames' durations in milliseconds.
    static func webpAnimation(_ path: String) throws -> (frames: Int, loopCount: Int, durations: [Int], canvas: String) {
        let result = try Child.run("/usr/bin/webpmux", ["-info", path])
        guard result.status == 0 else { throw OracleError(message: "webpmux failed on \(path): \(result.stderr)") }
        var frames = 0, loop = -1, durations: [Int] = [], canvas = ""
        for line in result.stdoutText.split(separator: "\n") {
            if line.hasPrefix("Canvas size:") { canvas = line.split(separator: ":")[1].replacingOccurrences(of: " ", with: "") }
            if line.hasPrefix("Number of frames:") { frames = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0 }
            if let range = line.range(of: "Loop Count : ") { loop = Int(line[range.upperBound...].trimmingCharacters(in: .whitespaces)) ?? -1 }
            let fields = line.split(separator: " ")
            if fields.count >= 7, fields[0].hasSuffix(":"), Int(fields[0].dropLast()) != nil, let duration = Int(fields[6]) {
                durations.append(duration)
            }
        }
        return (frames, loop, durations, canvas)
    }

    /// Frame `number` (from 1) of an animated WebP, extracted by `webpmux` and decoded by `dwebp`.
    static func webpFrame(_ number: Int, of path: String, size: Size) throws -> RGBImage {
        let directory = TestPaths.temporaryDirectory()
        let still = directory + "/frame.webp", ppm = directory + "/frame.ppm"
        let extracted = try Child.run("/usr/bin/webpmux", ["-get", "frame", String(number), path, "-o", still])
        let decoded = try Child.run("/usr/bin/dwebp", ["-quiet", still, "-ppm", "-o", ppm])
        guard extracted.status == 0, decoded.status == 0 else {
            throw OracleError(message: "libwebp tools failed: \(extracted.stderr) \(decoded.stderr)")
        }
        return try firstFrame(of: ppm, size: size)
    }

    /// The loop count in a GIF's NETSCAPE2.0 application extension (0 = forever), if it has one.
    static func gifLoopCount(_ path: String) throws -> Int? {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let marker = Array("NETSCAPE2.0".utf8)
        guard let start = (0..<(bytes.count - marker.count - 4)).first(where: { Array(bytes[$0..<$0 + marker.count]) == marker }) else {
            return nil
        }
        let block = start + marker.count    // sub-block: size 3, id 1, loop count little-endian
        return Int(bytes[block + 2]) | Int(bytes[block + 3]) << 8
    }
}

@Suite("render: hover-preview loops as MP4, animated WebP and GIF, checked with real decoders", .tags(.slow))
struct RenderTests {
    static let size = Size(width: 480, height: 270)
    static let fixture = "landscape.mp4"

    /// The loop the renders play: 3 s of the 25 fps fixture from 0.5 s.
    static func loop(size: Size = size, start: Double = 0.5, length: Double = 3) throws -> LoopPlayer {
        try LoopPlayer(source: .file(TestPaths.fixture(fixture)),
                        configuration: .init(size: size, windowStart: .seconds(start), windowLength: .seconds(length)))
    }

    /// The engine's frames of one pass and their presentation times.
    static func pass(size: Size = size, start: Double = 0.5, length: Double = 3) throws -> [VideoFrame] {
        var frames: [VideoFrame] = []
        try loop(size: size, start: start, length: length).run(loops: 1) { frames.append($0) }
        return frames
    }

    /// Which pass frame is displayed at output instant `k` (the last presented at or before k / fps),
    /// worked out here independently of the renderer.
    static func expectedSource(_ k: Int, fps: Int, in frames: [VideoFrame]) -> Int {
        let instant = Double(k) / Double(fps)
        return frames.lastIndex { $0.presentationTime.seconds <= instant + 1e-6 } ?? 0
    }

    @Test("MP4: H.264 yuv420p, 45 frames at 15 fps over 3 s, no audio, moov before mdat, frames match")
    func mp4() throws {
        let path = TestPaths.temporaryDirectory() + "/preview.mp4"
        let summary = try Self.loop().render(to: path)
        #expect(summary.frameCount == 45 && summary.format == .mp4)
        let report = try WebOracle.probe(path, countFrames: true)
        #expect(report.codec == "h264" && report.pixelFormat == "yuv420p")
        #expect(report.width == 480 && report.height == 270)
        #expect(abs((report.frameCount ?? 0) - 45) <= 1, "frames: \(String(describing: report.frameCount))")
        #expect(abs((report.frameRate ?? 0) - 15) < 0.01 && abs((report.averageFrameRate ?? 0) - 15) < 0.1)
        #expect(abs((report.duration ?? 0) - 3) < 0.02, "duration \(String(describing: report.duration))")
        #expect(report.streamTypes == ["video"])
        let boxes = try WebOracle.topLevelBoxes(of: path)
        let moov = try #require(boxes.firstIndex(of: "moov")), mdat = try #require(boxes.firstIndex(of: "mdat"))
        #expect(moov < mdat, "boxes: \(boxes)")
        // testsrc2's saturated colour edges under the 4:2:0 that H.264 MP4 must use cap the RGB PSNR: a
        // 4:2:0 round trip with no compression at all reads 37.4 dB on this frame (lanczos chroma
        // filtering; 36.4 with bicubic). Measured with lanczos: the default quality 75 (CRF 23) 32.7–34.4 dB
        // RGB and 43.7 dB luma over frames 0, 22 and 44; quality 100 (CRF 14) 35.4–36.1 dB RGB.
        try expectFramesMatch(path, decode: { try WebOracle.frame($0, of: path, size: Self.size) }, minimumPSNR: 32,
                              minimumLumaPSNR: 40)
        let best = TestPaths.temporaryDirectory() + "/best.mp4"
        try Self.loop().render(to: best, quality: 100)
        try expectFramesMatch(best, decode: { try WebOracle.frame($0, of: best, size: Self.size) }, minimumPSNR: 35)
    }

    @Test("Animated WebP: loops forever, 45 frames of ~67 ms, frames match (decoded by libwebp's tools)")
    func webp() throws {
        let path = TestPaths.temporaryDirectory() + "/preview.webp"
        try Self.loop().render(to: path)
        let animation = try WebOracle.webpAnimation(path)
        #expect(animation.loopCount == 0)
        #expect(animation.canvas == "480x270")
        #expect(abs(animation.frames - 45) <= 1, "frames: \(animation.frames)")
        #expect(abs(animation.durations.reduce(0, +) - 3000) <= 70, "durations \(animation.durations)")
        #expect(animation.durations.allSatisfy { (66...67).contains($0) }, "durations \(animation.durations)")
        // Only the first frame is a whole picture (later ones are blended sub-rectangles). libwebp's own
        // decoder with its standard 4:2:0 conversion tops out near 33 dB on testsrc2 (cwebp -q 100 then
        // dwebp: 33.1 dB); measured 32.2 dB at the default quality 75.
        let first = try WebOracle.webpFrame(1, of: path, size: Self.size)
        let pass = try Self.pass()
        let psnr = Compare.psnr(first, pass[0].image), luma = Compare.lumaPSNR(first, pass[0].image)
        #expect(psnr >= 31.5, "WebP first frame PSNR \(psnr) dB")
        // Luma, which 4:2:0 keeps whole, is far above the bar: measured 42.3 dB.
        #expect(luma >= 40, "WebP first frame luma PSNR \(luma) dB")
        // Quality 100 is lossless: every whole frame is the engine's exactly.
        let lossless = TestPaths.temporaryDirectory() + "/lossless.webp"
        try Self.loop().render(to: lossless, quality: 100)
        #expect(try WebOracle.webpFrame(1, of: lossless, size: Self.size) == pass[0].image)
        expectSameColours(first, pass[0].image)
    }

    @Test("GIF: loops forever, 45 frames at 15 fps over 3 s, one palette per clip, frames match at ≥ 35 dB")
    func gif() throws {
        let path = TestPaths.temporaryDirectory() + "/preview.gif"
        try Self.loop().render(to: path)
        let report = try WebOracle.probe(path, countFrames: true)
        #expect(report.codec == "gif" && report.width == 480 && report.height == 270)
        #expect(abs((report.frameCount ?? 0) - 45) <= 1, "frames: \(String(describing: report.frameCount))")
        #expect(abs((report.duration ?? 0) - 3) < 0.05, "duration \(String(describing: report.duration))")
        #expect(report.streamTypes == ["video"])
        #expect(try WebOracle.gifLoopCount(path) == 0)
        // Measured 36.3–37.2 dB: testsrc2 has few distinct colours, which a clip palette holds well.
        try expectFramesMatch(path, decode: { try WebOracle.frame($0, of: path, size: Self.size) }, minimumPSNR: 35)
    }

    /// Output frames 0, a middle one and the last match the engine frame displayed at their instants,
    /// and that frame is the closest of the pass (the frame choice is right, not only the picture).
    func expectFramesMatch(_ path: String, decode: (Int) throws -> RGBImage, minimumPSNR: Double,
                           minimumLumaPSNR: Double = 0, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let pass = try Self.pass()
        for k in [0, 22, 44] {
            let decoded = try decode(k)
            let expected = Self.expectedSource(k, fps: 15, in: pass)
            let psnr = Compare.psnr(decoded, pass[expected].image)
            #expect(psnr >= minimumPSNR, "\(path) frame \(k): \(psnr) dB", sourceLocation: sourceLocation)
            let luma = Compare.lumaPSNR(decoded, pass[expected].image)
            #expect(luma >= minimumLumaPSNR, "\(path) frame \(k): luma \(luma) dB", sourceLocation: sourceLocation)
            let best = Compare.best(decoded, among: pass.map(\.image))
            #expect(best.index == expected, "\(path) frame \(k) looks like source \(best.index), expected \(expected)",
                    sourceLocation: sourceLocation)
            if k == 0 { expectSameColours(decoded, pass[0].image, sourceLocation: sourceLocation) }
        }
    }

    @Test("A clip shorter than the window: the file lasts as long as the clip")
    func shortClip() throws {
        let path = TestPaths.temporaryDirectory() + "/short.mp4"
        let loop = try LoopPlayer(source: .file(TestPaths.fixture("short.mp4")),
                                   configuration: .init(size: Size(width: 320, height: 180), windowLength: .seconds(3)))
        let summary = try loop.render(to: path, framesPerSecond: 10)
        #expect(summary.frameCount == 4)     // 0.4 s at 10 fps
        let report = try WebOracle.probe(path, countFrames: true)
        #expect(report.frameCount == 4)
        #expect(abs((report.duration ?? 0) - 0.4) < 0.02, "duration \(String(describing: report.duration))")
    }

    @Test("Failures leave nothing: odd MP4 size, missing directory, unknown extension")
    func failuresLeaveNothing() throws {
        let directory = TestPaths.temporaryDirectory()
        let odd = #expect(throws: PreviewLoopError.self) {
            try Self.loop(size: Size(width: 481, height: 270)).render(to: directory + "/odd.mp4")
        }
        #expect(odd?.code == .invalidArgument)
        let missing = #expect(throws: PreviewLoopError.self) { try Self.loop().render(to: directory + "/no/such/dir/x.gif") }
        #expect(missing?.code == .outputNotWritable)
        let unknown = #expect(throws: PreviewLoopError.self) { try Self.loop().render(to: directory + "/x.avi") }
        #expect(unknown?.code == .invalidArgument)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        // Odd sizes are fine for WebP and GIF, and a success leaves only the file.
        try Self.loop(size: Size(width: 81, height: 45), length: 0.5).render(to: directory + "/odd.gif")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["odd.gif"])
    }
}

@Suite("AnimationWriter")
struct AnimationWriterTests {
    static func picture(_ shade: UInt8) -> RGBImage {
        var image = try! RGBImage(width: 64, height: 36)
        for index in stride(from: 0, to: image.pixels.count, by: 3) {
            image.pixels[index] = shade
            image.pixels[index + 1] = UInt8(index / 3 % 64 * 4)
            image.pixels[index + 2] = 255 - shade
        }
        return image
    }

    @Test("The last frame lasts what finish says; MP4 and GIF durations follow", arguments: [AnimationFormat.mp4, .gif])
    func lastFrameDuration(format: AnimationFormat) throws {
        let path = TestPaths.temporaryDirectory() + "/short." + format.rawValue
        let writer = try AnimationWriter(path: path, format: format, size: Size(width: 64, height: 36), framesPerSecond: 10)
        for shade in [0, 120, 240] as [UInt8] { try writer.append(Self.picture(shade)) }
        #expect(!FileManager.default.fileExists(atPath: path), "nothing is visible before finish")
        try writer.finish(lastFrameDuration: .milliseconds(50))
        let report = try WebOracle.probe(path, countFrames: true)
        #expect(report.frameCount == 3)
        #expect(abs((report.duration ?? 0) - 0.25) < 0.011, "duration \(String(describing: report.duration))")
        let again = #expect(throws: PreviewLoopError.self) { try writer.finish() }
        #expect(again?.code == .invalidArgument)
    }

    @Test("A writer released without finish leaves nothing behind")
    func abandoned() throws {
        let directory = TestPaths.temporaryDirectory()
        do {
            let writer = try AnimationWriter(path: directory + "/gone.mp4", format: .mp4, size: Size(width: 64, height: 36),
                                             framesPerSecond: 15)
            try writer.append(Self.picture(10))
            try writer.append(Self.picture(20))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }
}
