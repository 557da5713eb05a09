import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// HDR input: colour metadata as probed, tone mapping against SDR originals and the exact-inverse
/// ceiling (the `zscale` chain run backwards), highlight roll-off, and SDR input left alone.
@Suite("HDR", .tags(.slow))
struct HDRTests {
    // MARK: Metadata

    @Test("probe reads HDR10 mastering display and light levels that x265 wrote as SEI")
    func hdr10Metadata() throws {
        let info = try MediaProbe.probe(.file(TestPaths.fixture("hdr10.mp4")))
        #expect(info.colorTransfer == "smpte2084")
        #expect(info.colorPrimaries == "bt2020")
        #expect(info.colorSpace == "bt2020nc")
        #expect(info.bitDepth == 10)
        #expect(info.hdrFormat == .hdr10)
        #expect(info.contentLightLevel == ContentLightLevel(maxContentLightLevel: 1000, maxFrameAverageLightLevel: 400))
        let display = try #require(info.masteringDisplay)
        #expect(display.maxLuminance == 1000)
        #expect(abs((display.minLuminance ?? 0) - 0.0001) < 1e-9)
        #expect(display.primaries.count == 6 && abs(display.primaries[0] - 0.68) < 1e-4 && abs(display.primaries[3] - 0.69) < 1e-4)
        #expect(display.whitePoint.count == 2 && abs(display.whitePoint[0] - 0.3127) < 1e-4)
        #expect(info.declaredPeakLuminance == 1000)
        #expect(info.dolbyVision == nil && info.colorWarning == nil)
    }

    @Test("probe tags HLG, and SDR stays SDR")
    func hlgAndSDRTagging() throws {
        let hlg = try MediaProbe.probe(.file(TestPaths.fixture("hlg.mp4")))
        #expect(hlg.colorTransfer == "arib-std-b67" && hlg.hdrFormat == .hlg && hlg.isHDR)
        #expect(hlg.masteringDisplay == nil && hlg.contentLightLevel == nil)
        let sdr = try MediaProbe.probe(.file(TestPaths.fixture("bt709.mp4")))
        #expect(sdr.colorTransfer == "bt709" && sdr.colorPrimaries == "bt709" && sdr.hdrFormat == .sdr && !sdr.isHDR)
        #expect(sdr.bitDepth == 8)
    }

    @Test("A Dolby Vision profile 5 record is recognised as having no compatible base layer")
    func dolbyVisionProfile5() throws {
        let info = try MediaProbe.probe(.file(TestPaths.fixture("dolby-vision-p5.mp4")))
        let record = try #require(info.dolbyVision)
        #expect(record.profile == 5 && record.level == 1 && record.compatibilityID == 0)
        #expect(record.hasBaseLayer && record.hasRPU && !record.hasEnhancementLayer)
        #expect(record.baseLayer == nil)
        #expect(info.hdrFormat == .dolbyVision)
        #expect(info.colorWarning?.contains("profile 5") == true)
    }

    @Test("Dolby Vision base layers by compatibility ID")
    func dolbyVisionBaseLayers() {
        func record(_ profile: Int, _ id: Int) -> DolbyVisionConfiguration {
            DolbyVisionConfiguration(profile: profile, level: 6, compatibilityID: id, hasBaseLayer: true,
                                     hasEnhancementLayer: false, hasRPU: true)
        }
        #expect(record(8, 1).baseLayer == .hdr10 && record(8, 1).profileName == "8.1")
        #expect(record(8, 4).baseLayer == .hlg && record(8, 4).summary.contains("HLG base layer"))
        #expect(record(9, 2).baseLayer == .sdr)
        #expect(record(5, 0).baseLayer == nil && record(5, 0).summary.contains("cannot be reconstructed"))
    }

    // MARK: Round trip

    struct RoundTrip: CustomTestStringConvertible, Sendable {
        var content: String
        var transfer: String
        var testDescription: String { "\(content) \(transfer == "smpte2084" ? "PQ" : "HLG")" }
    }

    static let roundTrips: [RoundTrip] = ["testsrc2", "smptehdbars", "gradients"].flatMap { content in
        ["smpte2084", "arib-std-b67"].map { RoundTrip(content: content, transfer: $0) }
    }

    /// Checks one picture against the original and the ceiling: within 3 dB of the ceiling's PSNR,
    /// mean saturation within 10 %, channel means within 6 levels.
    static func expectClose(_ picture: RGBImage, original: RGBImage, ceiling: RGBImage, _ label: String) {
        let ours = Compare.psnr(picture, original), best = Compare.psnr(ceiling, original)
        #expect(ours >= best - 3, "\(label): \(ours) dB against the ceiling's \(best) dB")
        let saturation = HDRClips.meanSaturation(picture), wanted = HDRClips.meanSaturation(original)
        #expect(abs(saturation - wanted) <= 0.1 * wanted, "\(label): saturation \(saturation), original \(wanted), ceiling \(HDRClips.meanSaturation(ceiling))")
        let a = Compare.channelMeans(picture), b = Compare.channelMeans(original)
        #expect(abs(a.0 - b.0) <= 6 && abs(a.1 - b.1) <= 6 && abs(a.2 - b.2) <= 6, "\(label): means \(a) vs \(b), ceiling \(Compare.channelMeans(ceiling))")
    }

    @Test("PQ and HLG made from SDR come back close to the original, stills and loop frames", arguments: roundTrips)
    func roundTrip(_ item: RoundTrip) throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = try HDRClips.roundTripClip(item.content, transfer: item.transfer, in: directory)
        let originals = try HDRClips.originals(item.content)
        let ceilings = try Oracle.frames(of: path, filter: HDRClips.ceilingFilter(item.transfer), size: HDRClips.size)
        #expect(originals.count == HDRClips.frameCount && ceilings.count == HDRClips.frameCount)

        let sampler = try FrameSampler(source: .file(path))
        for index in [1, 6] {
            let frame = try sampler.frame(at: (Double(index) + 0.5) / 25, size: HDRClips.size)
            Self.expectClose(frame.image, original: originals[index], ceiling: ceilings[index], "still \(index)")
        }
        let loop = try LoopPlayer(source: .file(path), configuration: .init(size: HDRClips.size, windowLength: 0.4))
        var count = 0
        try loop.run(loops: 1) { frame in
            let index = Int((frame.sourceTime * 25).rounded())
            Self.expectClose(frame.image, original: originals[index], ceiling: ceilings[index], "loop frame \(index)")
            count += 1
        }
        #expect(count == 10)
    }

    @Test("Without tone mapping the same PQ frame is washed out (what the round trip guards against)")
    func untonemappedIsWashedOut() throws {
        let original = try HDRClips.originals("smptehdbars")[3]
        let options = SourceOptions(toneMapping: .none)
        let sampler = try FrameSampler(source: .file(TestPaths.fixture("hdr10.mp4")), options: options)
        _ = sampler
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = try HDRClips.roundTripClip("smptehdbars", transfer: "smpte2084", in: directory)
        let flat = try FrameSampler(source: .file(path), options: options).frame(at: 3.5 / 25, size: HDRClips.size).image
        let mapped = try FrameSampler(source: .file(path)).frame(at: 3.5 / 25, size: HDRClips.size).image
        #expect(HDRClips.meanSaturation(flat) < 0.6 * HDRClips.meanSaturation(original))
        #expect(Compare.psnr(mapped, original) > Compare.psnr(flat, original) + 6)
    }

    // MARK: Highlights

    /// The middle row's red channel of a ramp clip's first frame, as the engine maps it.
    static func rampLevels(_ path: String, width: Int) throws -> [Int] {
        let image = try FrameSampler(source: .file(path)).frame(at: 0, size: Size(width: width, height: 64)).image
        let row = 32 * image.bytesPerRow
        return (0..<width).map { Int(image.pixels[row + 3 * $0]) }
    }

    @Test("A 0 to 1000 cd/m² PQ ramp rolls off: increasing to its peak, at least 48 levels above reference white")
    func rampRollsOff() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let width = 640
        let levels = try Self.rampLevels(try HDRClips.rampClip(peak: 1000, maxCLL: 1000, in: directory), width: width)
        // Never decreasing (a lossless ramp; 4:2:0 grey has no chroma to disturb it).
        for x in 1..<width { #expect(levels[x] >= levels[x - 1], "level falls at \(x): \(levels[x - 1]) → \(levels[x])") }
        // Reference white (203 cd/m²) sits at x = 203/1000 of the width.
        let white = Int((203.0 / 1000 * Double(width - 1)).rounded(.up))
        let above = Set(levels[white...])
        #expect(above.count >= 48, "\(above.count) levels above reference white (at level \(levels[white]))")
        // The peak is reached only in the last few per cent (where the curve's slope falls below one level
        // over the last pixels): nothing clips flat before it.
        let top = levels.max()!
        #expect(levels.firstIndex(of: top)! >= width * 95 / 100, "peak level \(top) first reached at \(levels.firstIndex(of: top)!)")
        #expect(top >= 250)
    }

    @Test("4000 cd/m² content declaring MaxCLL 4000 uses that peak; declaring 1000 it clips above 1000")
    func declaredPeakIsUsed() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let width = 640
        let honest = try Self.rampLevels(try HDRClips.rampClip(peak: 4000, maxCLL: 4000, in: directory), width: width)
        let top = honest.max()!
        #expect(honest.firstIndex(of: top)! >= width * 90 / 100, "with MaxCLL 4000 the top level comes at \(honest.firstIndex(of: top)!)")
        // The part between 1000 and 4000 cd/m² still climbs.
        let thousand = width / 4
        #expect(honest[width - 1] - honest[thousand] >= 10)
        let short = try Self.rampLevels(try HDRClips.rampClip(peak: 4000, maxCLL: 1000, in: directory), width: width)
        #expect(short[thousand + 8] == short[width - 1], "declared 1000: everything above 1000 cd/m² is SDR white")
    }

    // MARK: SDR untouched

    @Test("SDR input is bit-identical with tone mapping on or off", arguments: ["bt709.mp4", "landscape.mp4", "fullrange.mp4", "vp9.webm"])
    func sdrUntouched(_ fixture: String) throws {
        let path = TestPaths.fixture(fixture)
        let size = Size(width: 200, height: 120)
        let auto = try FrameSampler(source: .file(path)).frames(at: [0.1, 0.5], size: size, interval: 0)
        let none = try FrameSampler(source: .file(path), options: SourceOptions(toneMapping: .none))
            .frames(at: [0.1, 0.5], size: size, interval: 0)
        #expect(auto.map(\.image) == none.map(\.image))
    }

    // MARK: CLI

    @Test("CLI: --tonemap on every frame-producing command, probe's colour lines, the profile 5 warning")
    func commandLine() throws {
        for command in ["thumb", "strip", "sprites", "loop", "render", "card"] {
            let output = command == "loop" ? [] : ["-o", command == "sprites" ? "dir" : command == "render" ? "x.mp4" : "x.png"]
            #expect(usageError([command, "in.mp4", "--tonemap", "hable"] + output) != nil, "\(command) accepts an unknown curve")
            #expect(usageError([command, "in.mp4", "--tonemap", "clip"] + output) == nil, "\(command) refuses --tonemap clip")
        }
        #expect(usageError(["probe", "in.mp4", "--tonemap", "auto"]) != nil)
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let probe = try Child.run(TestPaths.cliBinary, ["probe", "--json", TestPaths.fixture("hdr10.mp4")])
        #expect(probe.status == 0)
        #expect(probe.stdoutText.contains(#""hdr": "HDR10""#) && probe.stdoutText.contains(#""color_transfer": "smpte2084""#))
        #expect(probe.stdoutText.contains(#""content_light_level": {"max_cll": 1000, "max_fall": 400}"#))
        let thumb = try Child.run(TestPaths.cliBinary, ["thumb", TestPaths.fixture("dolby-vision-p5.mp4"), "--at", "0.2",
                                                          "-o", directory + "/dv.png"])
        #expect(thumb.status == 0)
        #expect(thumb.stderr.hasPrefix("Warning: Dolby Vision profile 5"))
        let loop = try Child.run(TestPaths.cliBinary, ["loop", TestPaths.fixture("dolby-vision-p5.mp4"), "--length", "0.2",
                                                         "--size", "32x18"])
        #expect(loop.status == 0 && loop.stderr.hasPrefix("Warning: Dolby Vision profile 5"))
        let render = try Child.run(TestPaths.cliBinary, ["render", TestPaths.fixture("dolby-vision-p5.mp4"), "--length", "0.2",
                                                           "--size", "32x18", "-o", directory + "/dv.gif"])
        #expect(render.status == 0 && render.stderr.hasPrefix("Warning: Dolby Vision profile 5"))
        let card = try Child.run(TestPaths.cliBinary, ["card", TestPaths.fixture("dolby-vision-p5.mp4"), "--at", "0",
                                                         "--size", "64x36", "-o", directory + "/dv-card.png"])
        #expect(card.status == 0 && card.stderr.contains("Warning: Dolby Vision profile 5"))
        let text = try Child.run(TestPaths.cliBinary, ["probe", TestPaths.fixture("dolby-vision-p5.mp4")])
        #expect(text.stdoutText.contains("dynamic range: Dolby Vision profile 5, level 1, no compatible base layer"))
        #expect(text.stderr.contains("Warning: Dolby Vision profile 5"))
    }

    // MARK: Curve

    @Test("The roll-off: identity at or below reference white; reference white at 80 % of the code range at 1000 cd/m²")
    func shoulderShape() {
        let flat = ToneCurve.Shoulder(peak: 1)
        #expect(flat.linear(of: 0.5) == 0.5 && flat.linear(of: 1) == 1)
        let nominal = ToneCurve.Shoulder(peak: 1000 / 203)
        #expect(abs(nominal.code(of: 1) - 0.8) < 1e-6)
        #expect(abs(nominal.code(of: nominal.peakCode) - 1) < 1e-9)
        #expect(nominal.linear(of: 0.05) == 0.05 || abs(nominal.linear(of: 0.05) - 0.05) < 1e-9)
        var previous = -1.0
        for step in 0...1000 {
            let value = nominal.code(of: nominal.peakCode * Double(step) / 1000)
            #expect(value > previous)
            previous = value
        }
        #expect(abs(ToneCurve.nitsToPQ(203) - 0.5806) < 1e-3 && abs(ToneCurve.pqToNits(ToneCurve.nitsToPQ(1000)) - 1000) < 1e-6)
        #expect(abs(ToneCurve.hlgToScene(0.5) - 1.0 / 12) < 1e-12)
    }
}
