import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// Clips with alpha made with the ffmpeg CLI: one colour (with its opacity) over 64x64, 10 fps, 0.5 s.
enum AlphaClips {
    static let directory = TestPaths.temporaryDirectory()

    /// A way of storing a picture with alpha: the container, the pixel format the clip is made in and
    /// the encoder's options.
    struct Codec: CustomTestStringConvertible, Sendable {
        var name: String
        var fileExtension: String
        var pixelFormat: String
        var encoder: [String]
        var testDescription: String { name }
    }

    static let codecs = [
        Codec(name: "PNG in MOV", fileExtension: "mov", pixelFormat: "rgba", encoder: ["-c:v", "png"]),
        Codec(name: "QuickTime RLE", fileExtension: "mov", pixelFormat: "argb", encoder: ["-c:v", "qtrle"]),
        Codec(name: "VP9 with alpha in WebM", fileExtension: "webm", pixelFormat: "yuva420p",
              encoder: ["-c:v", "libvpx-vp9", "-pix_fmt", "yuva420p"]),
        Codec(name: "VP8 with alpha in WebM", fileExtension: "webm", pixelFormat: "yuva420p",
              encoder: ["-c:v", "libvpx", "-pix_fmt", "yuva420p", "-auto-alt-ref", "0"]),
    ]

    /// A colour with its opacity (`color` source syntax) and what it gives flattened on black.
    struct Colour: CustomTestStringConvertible, Sendable {
        var source: String
        var flattened: (red: Double, green: Double, blue: Double)
        var testDescription: String { source }
    }

    static let colours = [
        // Transparent white: the colour planes say white, the alpha says nothing shows.
        Colour(source: "white@0.0", flattened: (0, 0, 0)),
        // lavfi's alpha for @0.5 is 127: each channel × 127 / 255.
        Colour(source: "0x3366CC@0.5", flattened: (25.4, 50.8, 101.6)),
    ]

    static func make(_ codec: Codec, _ colour: Colour, extra: [String] = [], suffix: String = "") throws -> String {
        let name = "\(codec.name)-\(colour.source)\(suffix)".filter { $0.isLetter || $0.isNumber }
        let path = directory + "/\(name).\(codec.fileExtension)"
        let result = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi",
                                               "-i", "color=\(colour.source):s=64x64:r=10:d=0.5,format=\(codec.pixelFormat)"]
                                        + codec.encoder + extra + [path])
        guard result.status == 0 else { throw OracleError(message: "ffmpeg could not make \(name): \(result.stderr)") }
        return path
    }
}

@Suite("Pictures with alpha are flattened on black, whatever their codec", .timeLimit(.minutes(10)))
struct AlphaFlatteningTests {
    static func expect(_ image: RGBImage, _ colour: AlphaClips.Colour, _ what: String,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        let (red, green, blue) = Compare.channelMeans(image)
        let wanted = colour.flattened
        #expect(abs(red - wanted.red) <= 3 && abs(green - wanted.green) <= 3 && abs(blue - wanted.blue) <= 3,
                "\(what): mean RGB \(red), \(green), \(blue); wanted \(wanted.red), \(wanted.green), \(wanted.blue)",
                sourceLocation: sourceLocation)
    }

    @Test("The WebM track's alpha_mode is what picks libvpx's decoder", arguments: AlphaClips.codecs.filter { $0.fileExtension == "webm" })
    func tagged(_ codec: AlphaClips.Codec) throws {
        let path = try AlphaClips.make(codec, AlphaClips.colours[0])
        let result = try Child.tool("ffprobe", ["-v", "error", "-show_entries", "stream_tags=alpha_mode", "-of", "csv=p=0", path])
        #expect(result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
    }

    @Test("Stills (the poster) and loop frames show the colour flattened on black",
          arguments: AlphaClips.codecs, AlphaClips.colours)
    func flattened(_ codec: AlphaClips.Codec, _ colour: AlphaClips.Colour) throws {
        let path = try AlphaClips.make(codec, colour)
        let sampler = try FrameSampler(source: .file(path), threads: 1)
        let size = Size(width: 32, height: 32)
        Self.expect(try sampler.frame(at: 0.2, size: size).image, colour, "still")
        Self.expect(try sampler.posterFrame(in: 0..<0.5, size: size).frame.image, colour, "poster")
        Self.expect(try sampler.frame(at: 0, size: size, accuracy: .keyframe).image, colour, "keyframe still")
        let loop = try LoopPlayer(source: .file(path), configuration: .init(size: size, windowStart: .zero, windowLength: .seconds(0.5),
                                                                           threads: 1))
        var frames = 0
        try loop.run(loops: 1) { frame in
            frames += 1
            Self.expect(frame.image, colour, "loop frame \(frames)")
        }
        #expect(frames == 5)
    }

    @Test("HDR with alpha is tone mapped, then flattened the same way: the opaque clip's colour × alpha")
    func toneMapped() throws {
        let pq = ["-color_trc", "smpte2084", "-color_primaries", "bt2020", "-colorspace", "bt2020nc"]
        let vp9 = AlphaClips.codecs[2]
        let halfColour = AlphaClips.colours[1]
        let translucent = try AlphaClips.make(vp9, halfColour, extra: pq, suffix: "pq")
        let opaque = try AlphaClips.make(vp9, AlphaClips.Colour(source: "0x3366CC", flattened: (0, 0, 0)), extra: pq, suffix: "pq")
        let size = Size(width: 32, height: 32)
        let mapped = try FrameSampler(source: .file(opaque), threads: 1).frame(at: 0.2, size: size).image
        let (red, green, blue) = Compare.channelMeans(mapped)
        // Tone mapping changed the colour, so the expectation comes from the opaque clip.
        #expect(abs(red - 0x33) + abs(green - 0x66) + abs(blue - 0xCC) > 20)
        let alpha = 127.0 / 255
        Self.expect(try FrameSampler(source: .file(translucent), threads: 1).frame(at: 0.2, size: size).image,
                    AlphaClips.Colour(source: halfColour.source, flattened: (red * alpha, green * alpha, blue * alpha)), "tone-mapped still")
    }
}
