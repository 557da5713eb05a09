import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// AVIF stills (libaom through libavcodec, in libavformat's `avif` container), read back by libavif's
/// own `avifdec` — another decoder (dav1d) and another container parser than the ones that wrote them —
/// and compared with the ffmpeg CLI's frame at the same time and size.
@Suite("AVIF stills: decoded by avifdec, against the ffmpeg CLI's frame", .timeLimit(.minutes(10)))
struct AVIFEncodingTests {
    static let size = EncodingTests.size
    static let time = 1.48

    /// The ffmpeg CLI's frame of the landscape fixture shown at ``time``, aspect-filled to ``size``.
    static func reference() throws -> RGBImage {
        let reference = try Oracle.reference("landscape.mp4", upright: Size(width: 400, height: 300), size: size)
        return reference.images[Oracle.displayedIndex(at: time, times: reference.times)]
    }

    @Test("AVIF decodes to the ffmpeg CLI's frame at 45 dB or more, within 1 dB of WebP's and JPEG's, with the right colours and CICP")
    func matchesFFmpegFrame() throws {
        let image = try EncodingTests.engineFrame(at: Self.time)
        let reference = try Self.reference()
        let avif = try EncodingTests.write(try ImageEncoder.encode(image, as: .avif), "still.avif")
        let webp = try EncodingTests.write(try ImageEncoder.encode(image, as: .webp), "still.webp")
        let jpeg = try EncodingTests.write(try ImageEncoder.encode(image, as: .jpeg), "still.jpg")
        let (decoded, info) = try WebOracle.avifFrame(of: avif, size: Self.size)
        let avifPSNR = Compare.psnr(decoded, reference)
        // Each format through its own project's decoder, as a browser would: WebP through libwebp's dwebp.
        let webpPSNR = Compare.psnr(try WebOracle.dwebpFrame(of: webp, size: Self.size), reference)
        let jpegPSNR = Compare.psnr(try WebOracle.firstFrame(of: jpeg, size: Self.size), reference)
        // Measured: AVIF 48.9 dB (11.9 KB), JPEG 40.8 dB (13.3 KB), WebP 32.6 dB (5.9 KB), all at quality 85.
        #expect(avifPSNR >= 45, "AVIF PSNR \(avifPSNR) dB")
        #expect(avifPSNR >= max(webpPSNR, jpegPSNR) - 1, "AVIF \(avifPSNR) dB, WebP \(webpPSNR) dB, JPEG \(jpegPSNR) dB")
        expectSameColours(decoded, reference)
        // 8-bit 4:4:4, full range, BT.709 primaries, transfer and matrix (CICP 1/1/1).
        #expect(info["Resolution"] == "\(Self.size)" && info["Bit Depth"] == "8" && info["Format"] == "YUV444", "\(info)")
        #expect(info["Range"] == "Full" && info["Color Primaries"] == "1" && info["Transfer Char."] == "1"
                    && info["Matrix Coeffs."] == "1", "\(info)")
        #expect(info["Alpha"] == "Absent")
    }

    @Test("The same picture gives the same bytes; quality trades size for fidelity")
    func reproducibleAndOrdered() throws {
        let image = try EncodingTests.engineFrame(at: Self.time)
        #expect(try ImageEncoder.encode(image, as: .avif, quality: 60) == ImageEncoder.encode(image, as: .avif, quality: 60))
        let reference = try Self.reference()
        var previous: (bytes: Int, psnr: Double)?
        for quality in [10, 50, 95] {
            let bytes = try ImageEncoder.encode(image, as: .avif, quality: quality)
            let psnr = Compare.psnr(try WebOracle.avifFrame(of: try EncodingTests.write(bytes, "q\(quality).avif"), size: Self.size).image, reference)
            if let previous {
                #expect(bytes.count > previous.bytes && psnr > previous.psnr, "quality \(quality): \(bytes.count) B, \(psnr) dB")
            }
            previous = (bytes.count, psnr)
        }
    }

    @Test("Quality maps onto libaom's constant-quality level 63…0")
    func quantizer() {
        #expect(ImageFileFormat.avifQuantizer(quality: 0) == 63)
        #expect(ImageFileFormat.avifQuantizer(quality: 100) == 0)
        #expect(ImageFileFormat.avifQuantizer(quality: 85) == 9)
        let scale = (0...100).map { ImageFileFormat.avifQuantizer(quality: $0) }
        #expect(zip(scale, scale.dropFirst()).allSatisfy { $0 >= $1 })
    }

    @Test("Pictures past AV1 level 6.3 are refused before encoding, naming the limit")
    func tooLarge() throws {
        for size in [Size(width: 16385, height: 1), Size(width: 1, height: 8705)] {
            let image = try RGBImage(width: size.width, height: size.height)
            let error = #expect(throws: PreviewLoopError.self) { try ImageEncoder.encode(image, as: .avif) }
            #expect(error?.code == .invalidArgument && error?.message.contains("16384x8704") == true, "\(String(describing: error))")
        }
        #expect(OutputLimits.avifRefusal(Size(width: 6000, height: 6000)) != nil, "36 megapixels")
        #expect(OutputLimits.avifRefusal(Size(width: 16384, height: 2176)) == nil)
        #expect(OutputLimits.encoderRefusal(Size(width: 9000, height: 9000), format: .avif) != nil)
        #expect(OutputLimits.encoderRefusal(Size(width: 9000, height: 9000), format: .jpeg) == nil)
    }
}
