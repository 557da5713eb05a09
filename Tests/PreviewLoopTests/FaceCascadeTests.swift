import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// The face detector of the smart crop on Debian's trained cascade (`opencv-data`, installed by
/// `make deps`), against OpenCV's own detector and the file's own counts, and the smart crop's window
/// on a frame with a real face in it.
@Suite("Smart crop: faces from OpenCV's frontal-face cascade", .timeLimit(.minutes(10)))
struct FaceCascadeTests {
    /// `Fixtures/astronaut.jpg` (256x256), decoded by the ffmpeg CLI.
    static func astronaut() throws -> RGBImage {
        let size = Size(width: 256, height: 256)
        return try #require(try Oracle.frames(of: TestPaths.fixture("astronaut.jpg"), filter: "format=rgb24", size: size).first)
    }

    /// The face box in `astronaut.jpg`, from OpenCV 4.12's detector (pip's opencv-python-headless,
    /// never in CI) with the same cascade file, run once:
    ///   python3 -c "import cv2; g = cv2.cvtColor(cv2.imread('Fixtures/astronaut.jpg'), cv2.COLOR_BGR2GRAY);
    ///     print(cv2.CascadeClassifier('/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml')
    ///     .detectMultiScale(g, 1.1, 3))"
    /// printed [[87 31 52 52]] (x y width height); on the original 512x512 PNG, [[177 66 95 95]].
    static let referenceFace = Rect(x: 87, y: 31, width: 52, height: 52)

    /// Intersection over union of two boxes.
    static func overlap(_ a: Rect, _ b: Rect) -> Double {
        let width = max(0, min(a.x + a.width, b.x + b.width) - max(a.x, b.x))
        let height = max(0, min(a.y + a.height, b.y + b.height) - max(a.y, b.y))
        let intersection = Double(width * height)
        return intersection / (Double(a.width * a.height + b.width * b.height) - intersection)
    }

    @Test("Debian's frontal-face cascade is read whole: its stage count, window and classifier count")
    func readsDebianCascade() throws {
        let path = FaceCascade.debianFrontalFacePath
        let text = try #require(try? String(contentsOfFile: path, encoding: .utf8), "\(path) is missing: run `make deps` (opencv-data)")
        let cascade = try #require(FaceCascade.frontalFace)
        // The file's own counts, by plain text search.
        let stageNum = try #require(text.firstRange(of: "<stageNum>").map { Int(text[$0.upperBound...].prefix { $0.isNumber }) ?? -1 })
        #expect(cascade.stages.count == stageNum)
        #expect(cascade.windowWidth == 24 && cascade.windowHeight == 24)
        #expect(cascade.stages.reduce(0) { $0 + $1.trees.count } == text.components(separatedBy: "<internalNodes>").count - 1)
        #expect(cascade.features.count == text.components(separatedBy: "<rects>").count - 1)
        // Numbers are read to within a unit in the last place.
        #expect(abs(cascade.stages[0].threshold - -5.0425500869750977) <= 1e-15)
    }

    @Test("The astronaut's face is found where OpenCV finds it, and nothing else")
    func findsAstronautFace() throws {
        let cascade = try #require(FaceCascade.frontalFace, "run `make deps` (opencv-data)")
        let faces = cascade.faces(in: try Self.astronaut())
        #expect(faces.count == 1, "\(faces)")
        let face = try #require(faces.first)
        #expect(Self.overlap(face, Self.referenceFace) >= 0.7, "found \(face), OpenCV \(Self.referenceFace)")
        // The same picture gives the same boxes.
        #expect(cascade.faces(in: try Self.astronaut()) == faces)
    }

    @Test("Flat and test-pattern pictures have no faces")
    func noFalseFaces() throws {
        let cascade = try #require(FaceCascade.frontalFace, "run `make deps` (opencv-data)")
        let size = Size(width: 256, height: 144)
        let made = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-f", "lavfi", "-i", "testsrc2=s=\(size.width)x\(size.height)",
                                             "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        let pattern = try RGBImage(width: size.width, height: size.height, pixels: [UInt8](made.stdout))
        #expect(cascade.faces(in: pattern).isEmpty)
        let flat = try RGBImage(width: 256, height: 144, pixels: [UInt8](repeating: 128, count: 256 * 144 * 3))
        #expect(cascade.faces(in: flat).isEmpty)
        // Smaller than the window: nothing to search.
        #expect(cascade.faces(in: try RGBImage(width: 20, height: 300)).isEmpty)
    }

    @Test("The smart crop's window holds an off-centre face that a busy pattern beside it would otherwise outscore")
    func windowHoldsFace() throws {
        _ = try #require(FaceCascade.frontalFace, "run `make deps` (opencv-data)")
        let path = try FaceFrames.make()
        let output = Size(width: 180, height: 320)
        let frame = try FrameSampler(source: .file(path)).frame(at: 0, size: output, mode: .smartCrop, accuracy: .exact)
        let window = try #require(frame.uprightCrop)
        #expect(window.height == 360 && (202...203).contains(window.width), "\(window)")
        #expect(SmartCropClips.coverage(of: FaceFrames.face, by: window) == 1, "window \(window), face \(FaceFrames.face)")
        #expect(frame.smartCrop == SmartCropChoice(window: window, basis: .faces, faces: 1), "\(String(describing: frame.smartCrop))")
        // The pixels are the ffmpeg CLI's crop of that window.
        let reference = try Oracle.frames(of: path, filter: SmartCropClips.cropFilter(window, output: output), size: output)
        #expect(Compare.psnr(frame.image, reference[0]) >= 35)
    }
}

/// A 640x360 frame made with the ffmpeg CLI: `testsrc2` (colourful, sharp) on the left 280 columns,
/// `Fixtures/astronaut.jpg` scaled to 360x360 on the right.
enum FaceFrames {
    /// The face in the frame: ``FaceCascadeTests/referenceFace`` scaled by 360/256 and moved 280 right.
    static let face = Rect(x: 280 + 122, y: 44, width: 73, height: 73)

    static func make() throws -> String {
        let path = TestPaths.temporaryDirectory() + "/face-\(UUID().uuidString).mp4"
        let result = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y",
                                               "-f", "lavfi", "-i", "testsrc2=s=280x360:r=10:d=0.2",
                                               "-loop", "1", "-framerate", "10", "-t", "0.2", "-i", TestPaths.fixture("astronaut.jpg"),
                                               "-filter_complex", "[1]scale=360:360:flags=bicubic[face];[0][face]hstack,format=yuv444p",
                                               "-c:v", "libx264", "-crf", "16", path])
        guard result.status == 0 else { throw OracleError(message: "ffmpeg could not make the face frame: \(result.stderr)") }
        return path
    }
}
