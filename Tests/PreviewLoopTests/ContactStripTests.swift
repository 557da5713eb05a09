import Foundation
import PreviewLoop
import Testing
import PreviewLoopTestSupport

/// `FrameSampler.contactStrip(_:)`: the library call the CLI's `strip` is a thin layer over.
@Suite("Contact strip: the library call")
struct ContactStripTests {
    static let clip = TestPaths.fixture("landscape.mp4")

    @Test("Exact tiles at the slices' middles, laid out with gaps, and what was chosen reported")
    func tilesTimesAndLayout() throws {
        let sampler = try FrameSampler(source: .file(Self.clip))
        let configuration = ContactStrip.Configuration(count: 4, columns: 3, tileSize: .exact(Size(width: 64, height: 36)),
                                                       span: .window(start: .percent(25), length: 2), accuracy: .exact, gap: 2)
        let strip = try sampler.contactStrip(configuration)
        // landscape.mp4 lasts 4 s: 25 % is 1 s; slices of 0.5 s, middles 1.25, 1.75, 2.25, 2.75 (25 fps: exact frames).
        #expect(abs(strip.span.lowerBound - 1) < 1e-6 && abs(strip.span.upperBound - 3) < 1e-6)
        #expect(strip.tileTimes.map { ($0 * 1000).rounded() } == [1240, 1720, 2240, 2720])
        #expect(strip.plan.tiles.map { ($0.time * 1000).rounded() } == [1250, 1750, 2250, 2750])
        #expect(strip.columns == 3 && strip.rows == 2 && strip.tileSize == Size(width: 64, height: 36))
        #expect(strip.image.size == Size(width: 3 * 64 + 2 * 2, height: 2 * 36 + 2))
        // Each tile holds its frame (a fresh sampler's), at its place; the gaps are the style's black.
        let frames = try FrameSampler(source: .file(Self.clip)).frames(at: strip.plan.tiles.map(\.time), size: strip.tileSize,
                                                                        accuracy: .exact, interval: 0.5)
        for (index, frame) in frames.enumerated() {
            let x0 = (index % 3) * 66, y0 = (index / 3) * 38
            for (x, y) in [(0, 0), (63, 0), (31, 17), (0, 35), (63, 35)] {
                #expect(strip.image[x0 + x, y0 + y] == frame.image[x, y], "tile \(index) at \(x),\(y)")
            }
        }
        #expect(strip.image[64, 10] == (0, 0, 0) && strip.image[10, 36] == (0, 0, 0))
    }

    @Test("The CLI's strip writes the library's picture, byte for byte")
    func cliIsAThinLayer() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Child.run(TestPaths.cliBinary, ["strip", Self.clip, "-o", directory + "/s.ppm", "--count", "5",
                                                           "--columns", "2", "--gap", "3", "--timestamps", "--start", "10%"])
        #expect(result.status == 0, "\(result.stderr)")
        var style = ContactStrip.Configuration.defaultStyle
        style.showsTimestamps = true
        let strip = try FrameSampler(source: .file(Self.clip)).contactStrip(
            .init(count: 5, columns: 2, span: .window(start: .percent(10), length: 15), gap: 3, style: style))
        let written = try Data(contentsOf: URL(fileURLWithPath: directory + "/s.ppm"))
        #expect([UInt8](written) == PPM.encode(strip.image))
        #expect(result.stdoutText.contains("5 frames in 2x3 tiles of 160x90, 0.400–4.000 s"), "\(result.stdoutText)")
    }

    static func syncStrip(_ configuration: ContactStrip.Configuration) throws -> ContactStrip {
        try FrameSampler(source: .file(clip)).contactStrip(configuration)
    }

    @Test("The async form gives the same strip")
    func asyncForm() async throws {
        let configuration = ContactStrip.Configuration(count: 3, span: .wholeClip)
        let sync = try Self.syncStrip(configuration)
        let sampler = try await FrameSampler(source: .file(Self.clip))
        let async = try await sampler.contactStrip(configuration)
        #expect(async.image == sync.image && async.tileTimes == sync.tileTimes && abs(async.span.upperBound - 4) < 1e-6)
    }

    @Test("Unusable requests throw invalidArgument (the configuration before the input is opened) or tooLarge")
    func refusals() throws {
        let sampler = try FrameSampler(source: .file(Self.clip))
        for bad in [ContactStrip.Configuration(count: 0), .init(count: 1001), .init(columns: 0), .init(gap: -1), .init(gap: 257),
                    .init(span: .window(start: .percent(101), length: 1)), .init(span: .window(start: .seconds(-1), length: 1)),
                    .init(span: .window(start: .seconds(.nan), length: 1))] {
            #expect(errorCode { _ = try sampler.contactStrip(bad) } == .invalidArgument, "\(bad)")
        }
        // Past the end, an empty window.
        #expect(errorCode { _ = try sampler.contactStrip(.init(span: .window(start: 4, length: 1))) } == .invalidArgument)
        #expect(errorCode { _ = try sampler.contactStrip(.init(span: .window(start: 1, length: .percent(0)))) } == .invalidArgument)
        // 1000 tiles of 160x90 in one row: 160,000 pixels wide.
        #expect(errorCode { _ = try sampler.contactStrip(.init(count: 1000)) } == .tooLarge)
    }
}
