import Foundation
import Testing
import PreviewLoopTestSupport
import PreviewLoop

/// What a client of the library gets without any package-only type: a contact sheet with the
/// library's own drawer and header, a poster from a window and size given as the commands take them,
/// and images written to files whole.
@Suite("Library conveniences", .timeLimit(.minutes(10)))
struct LibraryConveniencesTests {
    @Test("contactSheet(_:) is the sheet drawn with the default drawer, the file's name and its size")
    func contactSheetWithItsOwnParts() async throws {
        let path = TestPaths.fixture("landscape.mp4")
        let configuration = ClipContactSheet.Configuration()
        let made = try await FrameSampler(source: .file(path)).contactSheet(configuration)
        let drawer = try ContactSheet(style: configuration.style, hasHeader: configuration.showsHeader)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let explicit = try await FrameSampler(source: .file(path)).contactSheet(configuration, drawer: drawer,
                                                                                 name: "landscape.mp4", fileSize: size)
        #expect(made.image == explicit.image)
        let other = try await FrameSampler(source: .file(path)).contactSheet(configuration, drawer: drawer,
                                                                              name: "other.mp4", fileSize: size)
        #expect(made.image != other.image, "the header must name the file: the comparison above would then mean nothing")
    }

    @Test("posterFrame(start:length:size:) resolves a percentage and a SizeRequest against the clip, portrait too")
    func posterFromCommandStyleArguments() throws {
        let sampler = try FrameSampler(source: .file(TestPaths.fixture("portrait-phone.mp4")))
        let choice = try sampler.posterFrame(start: .percent(10), size: .width(90))
        #expect(choice.frame.image.size.width == 90 && choice.frame.image.size.height > 90,
                "\(choice.frame.image.size): a portrait clip gives a portrait poster")
        let duration = try #require(sampler.info.duration)
        #expect(choice.frame.sourceTime >= duration * 0.1 - 0.05)
        #expect(throws: PreviewLoopError.self) { try sampler.posterFrame(start: .seconds(0), length: 0, size: .width(90)) }
        #expect(throws: PreviewLoopError.self) { try sampler.posterFrame(start: .percent(140), size: .width(90)) }
    }

    @Test("ImageEncoder.write puts the encoded bytes at the path, and a failed write leaves the old file")
    func writeIsWhole() throws {
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let image = try RGBImage(width: 8, height: 4, pixels: [UInt8](repeating: 200, count: 8 * 4 * 3))
        try ImageEncoder.write(image, as: .png, to: folder + "/a.png")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/a.png"))) == ImageEncoder.encode(image, as: .png))
        // Quality 101 is refused before anything is written: the PNG stays.
        let before = try Data(contentsOf: URL(fileURLWithPath: folder + "/a.png"))
        #expect(throws: PreviewLoopError.self) { try ImageEncoder.write(image, as: .jpeg, quality: 101, to: folder + "/a.png") }
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/a.png")) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["a.png"])
        #expect(throws: PreviewLoopError.self) { try ImageEncoder.write(image, as: .png, to: folder + "/missing/a.png") }
    }
}
