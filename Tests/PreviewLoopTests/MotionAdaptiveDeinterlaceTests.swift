import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
import PreviewLoopFFmpeg

/// A 480x240 grey picture at 50 progressive frames a second: on the left a still detailed half (a grid
/// of one-pixel horizontal lines every 3 rows over a still of `testsrc2`, with its noise squares), on
/// the right `testsrc2`'s still panned 6 px a frame. Grey, so the RGB outputs compare as luma alone.
private let sourceGraph = "testsrc2=s=480x240:r=50:d=1,select=eq(n\\,0),loop=loop=-1:size=1,setpts=N/50/TB,split[a][b];"
    + "[a]crop=240:240:240:0,split[s1][s2];[s1]crop=240:96:0:0,drawgrid=w=iw:h=3:t=1:c=white[g];[s2]crop=240:144:0:96[t];"
    + "[g][t]vstack[still];[b]crop=240:240:'6*n':0[moving];[still][moving]hstack,format=gray,format=yuv420p"

/// The progressive source, lossless (24 frames at 50 fps): the truth at each field's instant.
private let progressiveClip: String = makeClip("motion-source.mp4", graph: sourceGraph, frames: 24, interlaced: false)
/// The same frames woven top field first into 12 frames at 25 fps (frame n: top field from source frame
/// 2n, bottom from 2n + 1), coded losslessly as interlaced H.264.
private let interlacedClip: String = makeClip("motion-interlaced.mp4", graph: sourceGraph + ",tinterlace=mode=interleave_top,setfield=tff",
                                              frames: 12, interlaced: true)

private func makeClip(_ name: String, graph: String, frames: Int, interlaced: Bool) -> String {
    let path = TestPaths.temporaryDirectory() + "/" + name
    let coding = interlaced ? ["-flags", "+ilme+ildct", "-top", "1"] : []
    let result = try? Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", graph, "-frames:v", "\(frames)",
                                          "-c:v", "libx264", "-qp", "0"] + coding + ["-pix_fmt", "yuv420p", path])
    precondition(result?.status == 0, "ffmpeg could not make \(name): \(result?.stderr ?? "")")
    return path
}

private let clipSize = Size(width: 480, height: 240)
private let stillColumns = 0..<240, movingColumns = 240..<480

/// Luma PSNR of `a` against `b` over `columns` (all rows).
private func psnr(_ a: RGBImage, _ b: RGBImage, _ columns: Range<Int>) -> Double {
    var sum = 0.0
    for row in 0..<a.height {
        for column in columns {
            let index = (row * a.width + column) * 3
            func luma(_ image: RGBImage) -> Double {
                0.2126 * Double(image.pixels[index]) + 0.7152 * Double(image.pixels[index + 1]) + 0.0722 * Double(image.pixels[index + 2])
            }
            sum += (luma(a) - luma(b)) * (luma(a) - luma(b))
        }
    }
    let mse = sum / Double(a.height * columns.count)
    return mse == 0 ? 99 : min(99, 10 * log10(255 * 255 / mse))
}

/// `image`'s `columns` as a picture of their own.
private func crop(_ image: RGBImage, _ columns: Range<Int>) -> RGBImage {
    var pixels: [UInt8] = []
    for row in 0..<image.height {
        let start = (row * image.width + columns.lowerBound) * 3
        pixels += image.pixels[start..<start + columns.count * 3]
    }
    return RGBImage(uncheckedWidth: columns.count, height: image.height, pixels: pixels)
}

@Suite("Motion-adaptive deinterlacing: still detail kept, moving areas free of combing, no stale evidence", .tags(.slow))
struct MotionAdaptiveDeinterlaceTests {
    /// Every frame of the interlaced clip through one scaler, in order (temporal evidence from frame 1 on),
    /// and each through a fresh scaler without a predecessor (the frame alone); the scaler's counters.
    private func ours() throws -> (temporal: [RGBImage], single: [RGBImage], deinterlacer: FieldDeinterlacer) {
        let decoder = try VideoDecoder(source: .file(interlacedClip), options: SourceOptions(), threads: 1)
        let scaler = FrameScaler(outputSize: clipSize, mode: .aspectFill, for: decoder)
        var temporal: [RGBImage] = [], single: [RGBImage] = []
        while let timed = try decoder.nextFrame() {
            temporal.append(try scaler.image(from: timed.frame, sampleAspectRatio: decoder.info.sampleAspectRatio))
            timed.frame.predecessor = nil
            let alone = FrameScaler(outputSize: clipSize, mode: .aspectFill, for: decoder)
            single.append(try alone.image(from: timed.frame, sampleAspectRatio: decoder.info.sampleAspectRatio))
            #expect(alone.deinterlacer?.temporalCount == 0)
        }
        return (temporal, single, try #require(scaler.deinterlacer))
    }

    @Test("Against the progressive source: still area far above bob, moving area uncombed; ffmpeg's bwdif and yadif reported")
    func quality() throws {
        let (temporal, single, deinterlacer) = try ours()
        #expect(temporal.count == 12 && single.count == 12)
        #expect(deinterlacer.deinterlacedCount == 12 && deinterlacer.temporalCount == 11)
        // The truth: source frame 2n, the instant of frame n's top (kept) field.
        let truth = try Oracle.frames(of: progressiveClip, filter: "select=not(mod(n\\,2))", size: clipSize)
        #expect(truth.count == 12)
        // ffmpeg's pictures of the interlaced clip: as decoded (woven), libpostproc's linear interpolation
        // (the previous, intra-field algorithm here), bwdif and yadif (one frame per frame, top field first).
        var references: [(String, [RGBImage])] = []
        for (name, filter) in [("off (woven)", "null"), ("bob (pp=li)", "pp=li"), ("bwdif", "bwdif=mode=send_frame:parity=tff"),
                               ("yadif", "yadif=mode=send_frame:parity=tff")] {
            let frames = try Oracle.frames(of: interlacedClip, filter: filter, size: clipSize)
            #expect(frames.count == 12, "\(name)")
            references.append((name, frames))
        }
        let methods = [references[0], references[1], ("ours, frame alone", single), ("ours, with previous frame", temporal),
                       references[2], references[3]]
        // Frames 1 to 10: each has a previous frame, and bwdif and yadif a next one.
        var table: [String: (still: Double, moving: Double, combing: Double)] = [:]
        var lines = ["| picture | still area PSNR | moving area PSNR | moving area combing |", "|---|---:|---:|---:|"]
        for (name, frames) in methods {
            var still = 0.0, moving = 0.0, combing = 0.0
            for n in 1...10 {
                still += psnr(frames[n], truth[n], stillColumns) / 10
                moving += psnr(frames[n], truth[n], movingColumns) / 10
                combing += Combing.score(crop(frames[n], movingColumns)) / 10
            }
            table[name] = (still, moving, combing)
            lines.append("| \(name) | \(DecimalText.fixed(still, 2)) dB | \(DecimalText.fixed(moving, 2)) dB | \(DecimalText.fixed(combing, 3)) |")
        }
        let sourceCombing = (1...10).map { Combing.score(crop(truth[$0], movingColumns)) }.reduce(0, +) / 10
        lines.append("| progressive source | | | \(DecimalText.fixed(sourceCombing, 3)) |")
        print(lines.joined(separator: "\n"))
        let off = try #require(table["off (woven)"]), bob = try #require(table["bob (pp=li)"])
        let alone = try #require(table["ours, frame alone"]), withPrevious = try #require(table["ours, with previous frame"])
        // Still detail: far above the intra-field bob, the previous frame's evidence above the frame alone.
        #expect(alone.still > bob.still + 10, "\(alone.still) against bob \(bob.still)")
        #expect(withPrevious.still > bob.still + 20 && withPrevious.still >= alone.still, "\(withPrevious.still) against bob \(bob.still)")
        // Moving area: combed as decoded, not deinterlaced; not much below bob's interpolation.
        #expect(off.combing > 2, "\(off.combing)")
        #expect(alone.combing < 1 && withPrevious.combing < 1, "\(alone.combing), \(withPrevious.combing)")
        #expect(alone.moving > bob.moving - 3 && withPrevious.moving > bob.moving - 3, "\(alone.moving), \(withPrevious.moving) against bob \(bob.moving)")
        #expect(alone.moving > off.moving + 6 && withPrevious.moving > off.moving + 6)
    }

    @Test("No stale evidence: after a seek or a skipped frame the frame alone decides; consecutive frames use their predecessor")
    func evidenceIsNeverStale() throws {
        let decoder = try VideoDecoder(source: .file(interlacedClip), options: SourceOptions(), threads: 1)
        let sar = decoder.info.sampleAspectRatio
        let scaler = FrameScaler(outputSize: clipSize, mode: .aspectFill, for: decoder)
        let deinterlacer = try #require(scaler.deinterlacer)
        var firstPass: [RGBImage] = []
        while let timed = try decoder.nextFrame() {
            #expect((timed.frame.predecessor != nil) == !firstPass.isEmpty, "frame \(firstPass.count)")
            firstPass.append(try scaler.image(from: timed.frame, sampleAspectRatio: sar))
        }
        #expect(firstPass.count == 12 && deinterlacer.temporalCount == 11)
        // Back to the start (a loop's wrap): the last frame is not frame 0's predecessor.
        try decoder.seek(to: 0)
        let again = try #require(try decoder.nextFrame())
        #expect(again.frame.predecessor == nil)
        #expect(try scaler.image(from: again.frame, sampleAspectRatio: sar) == firstPass[0])
        #expect(deinterlacer.temporalCount == 11 && deinterlacer.deinterlacedCount == 13)
        // Frames 1 and 2 decoded, only 2 converted: the decoder's predecessor (frame 1) is used, the
        // same picture as in the first pass.
        _ = try decoder.nextFrame()
        let third = try #require(try decoder.nextFrame())
        #expect(try scaler.image(from: third.frame, sampleAspectRatio: sar) == firstPass[2])
        #expect(deinterlacer.temporalCount == 12)
        // Without the decoder's predecessor, the scaler's own last frame (frame 2) is not frame 4's:
        // frame 4 is taken alone, as a fresh scaler takes it.
        _ = try decoder.nextFrame()
        let fifth = try #require(try decoder.nextFrame())
        fifth.frame.predecessor = nil
        let image = try scaler.image(from: fifth.frame, sampleAspectRatio: sar)
        #expect(deinterlacer.temporalCount == 12)
        let fresh = FrameScaler(outputSize: clipSize, mode: .aspectFill, for: decoder)
        #expect(try fresh.image(from: fifth.frame, sampleAspectRatio: sar) == image)
        #expect(image != firstPass[4])
        // But it is frame 5's: consecutive conversions use it.
        let sixth = try #require(try decoder.nextFrame())
        sixth.frame.predecessor = nil
        #expect(try scaler.image(from: sixth.frame, sampleAspectRatio: sar) == firstPass[5])
        #expect(deinterlacer.temporalCount == 13)
    }

    @Test("Stills decoded forward from a keyframe get their predecessor (the same picture as the loop's); a keyframe sample is taken alone")
    func stillsUseTheDecodedPredecessor() throws {
        var looped: [VideoFrame] = []
        try LoopPlayer(source: .file(interlacedClip), configuration: .init(size: clipSize)).run(loops: 1) { looped.append($0) }
        #expect(looped.count == 12)
        let sampler = try FrameSampler(source: .file(interlacedClip))
        let exact = try sampler.frame(at: 0.2, size: clipSize)
        #expect(exact.sourceTime == looped[5].sourceTime)
        #expect(exact.image == looped[5].image)
        let keyframe = try sampler.frame(at: 0, size: clipSize, accuracy: .keyframe)
        #expect(keyframe.image == looped[0].image)
    }

    @Test("Progressive input never reaches the deinterlacer's evidence: no predecessors are kept")
    func progressiveKeepsNothing() throws {
        let decoder = try VideoDecoder(source: .file(TestPaths.fixture("landscape.mp4")), options: SourceOptions(), threads: 1)
        var frames = 0
        while frames < 5, let timed = try decoder.nextFrame() {
            #expect(timed.frame.predecessor == nil)
            frames += 1
        }
        #expect(frames == 5)
    }
}
