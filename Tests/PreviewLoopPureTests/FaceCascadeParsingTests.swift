import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// The cascade reader and the window test on small cascades written here, in OpenCV's cascade XML
/// layout, and the grouping of hits into face boxes.
@Suite("Smart crop: reading a Haar cascade and testing windows")
struct FaceCascadeParsingTests {
    /// A cascade of `stages` in a `width`×`height` window with `features` (each a list of
    /// `x y w h weight` strings), as OpenCV writes one.
    static func xml(width: Int = 4, height: Int = 4, stages: String, features: [[String]], extra: String = "") -> [UInt8] {
        let featureText = features.map { rects in
            "<_><rects>" + rects.map { "<_>\n  \($0)</_>" }.joined() + "</rects>\(extra)</_>"
        }.joined(separator: "\n")
        return Array("""
        <?xml version="1.0"?>
        <!-- a comment with <tags> inside -->
        <opencv_storage>
        <cascade type_id="opencv-cascade-classifier"><stageType>BOOST</stageType>
          <featureType>HAAR</featureType>
          <height>\(height)</height>
          <width>\(width)</width>
          <stageParams><maxWeakCount>1</maxWeakCount></stageParams>
          <featureParams><maxCatCount>0</maxCatCount></featureParams>
          <stageNum>1</stageNum>
          <stages>\(stages)</stages>
          <features>\(featureText)</features></cascade>
        </opencv_storage>
        """.utf8)
    }

    /// One stage of one stump on feature 0: leaf −1 below `threshold`, +1 at or above; the stage passes at 0.
    static func stump(threshold: String = "0.", feature: Int = 0) -> String {
        """
        <_>
          <maxWeakCount>1</maxWeakCount>
          <stageThreshold>0.</stageThreshold>
          <weakClassifiers>
            <_>
              <internalNodes>
                0 -1 \(feature) \(threshold)</internalNodes>
              <leafValues>
                -1. 1.</leafValues></_></weakClassifiers></_>
        """
    }

    /// Right half minus left half of a 4x4 window.
    static let rightBrighter = ["0 0 2 4 -1.", "2 0 2 4 1."]

    @Test("A small cascade is read as written")
    func reads() throws {
        let cascade = try FaceCascade(xml: Self.xml(stages: Self.stump(threshold: "-2.5e-01"), features: [Self.rightBrighter]))
        #expect(cascade.windowWidth == 4 && cascade.windowHeight == 4)
        #expect(cascade.stages == [FaceCascade.Stage(threshold: 0, trees: [
            FaceCascade.Tree(nodes: [FaceCascade.Node(left: 0, right: -1, feature: 0, threshold: -0.25)], leaves: [-1, 1]),
        ])])
        #expect(cascade.features == [[FaceCascade.WeightedRect(x: 0, y: 0, width: 2, height: 4, weight: -1),
                                      FaceCascade.WeightedRect(x: 2, y: 0, width: 2, height: 4, weight: 1)]])
    }

    @Test("Numbers are read as OpenCV writes them", arguments: [
        ("-3.1511999666690826e-02", -3.1511999666690826e-02), ("3.", 3), ("-1", -1), ("0", 0), ("2.5E+3", 2500),
        ("0.000123", 0.000123), ("12345678901234567890123", 1.2345678901234567e22), ("1e-30", 1e-30),
    ])
    func numbers(_ text: String, _ value: Double) throws {
        let read = try #require(CascadeXMLReader.number(ArraySlice(Array(text.utf8))))
        #expect(abs(read - value) <= abs(value).ulp, "\(text): \(read)")
        for bad in ["zero", "1e", "--1", "1.2.3", "", ".", "1x"] {
            #expect(CascadeXMLReader.number(ArraySlice(Array(bad.utf8))) == nil, "\(bad)")
        }
    }

    @Test("Malformed or unsupported cascades are refused with a reason", arguments: [
        "tilted", "missing feature", "rect outside", "not a number", "no stages", "truncated", "old format", "empty",
    ])
    func refuses(_ name: String) {
        let xml: [UInt8] = switch name {
        case "tilted": Self.xml(stages: Self.stump(), features: [Self.rightBrighter], extra: "<tilted>1</tilted>")
        case "missing feature": Self.xml(stages: Self.stump(feature: 3), features: [Self.rightBrighter])
        case "rect outside": Self.xml(stages: Self.stump(), features: [["0 0 5 4 -1.", "2 0 2 4 1."]])
        case "not a number": Self.xml(stages: Self.stump(threshold: "zero"), features: [Self.rightBrighter])
        case "no stages": Self.xml(stages: "", features: [Self.rightBrighter])
        case "truncated": Array(Self.xml(stages: Self.stump(), features: [Self.rightBrighter]).prefix(400))
        case "old format": Array("<opencv_storage><haarcascade type_id=\"opencv-haar-classifier\"></haarcascade></opencv_storage>".utf8)
        default: []
        }
        #expect(throws: FaceCascade.FormatError.self, "\(name)") { try FaceCascade(xml: xml) }
    }

    @Test("A window passes exactly when its features, normalised by its contrast, pass every stage")
    func windowTest() throws {
        // The stump: (right sum − left sum) < 0.5 × norm goes to leaf −1, else +1, where norm is the
        // inner 2x2's area times its standard deviation.
        let cascade = try FaceCascade(xml: Self.xml(stages: Self.stump(threshold: "0.5"), features: [Self.rightBrighter]))
        var generator = SeededGenerator(state: 7)
        let width = 13, height = 9
        let luma = (0..<(width * height)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let hits = FaceCascade.Program(cascade).hits(on: luma, width: width, height: height, step: 1)
        var expected: [(Int, Int)] = []
        for y in 0...(height - 4) {
            for x in 0...(width - 4) {
                func value(_ dx: Int, _ dy: Int) -> Int { Int(luma[(y + dy) * width + x + dx]) }
                let left = (0..<4).reduce(0) { $0 + value(0, $1) + value(1, $1) }
                let right = (0..<4).reduce(0) { $0 + value(2, $1) + value(3, $1) }
                let inner = [value(1, 1), value(2, 1), value(1, 2), value(2, 2)]
                let sum = inner.reduce(0, +), squares = inner.reduce(0) { $0 + $1 * $1 }
                let spread = Double(4 * squares - sum * sum)
                let norm = spread > 0 ? spread.squareRoot() : 1
                if Double(right - left) >= 0.5 * norm { expected.append((x, y)) }
            }
        }
        #expect(!expected.isEmpty && expected.count < (width - 3) * (height - 3))
        #expect(hits.map { "\($0.0),\($0.1)" } == expected.map { "\($0.0),\($0.1)" })
    }

    @Test("Hits group into faces: four similar hits are one box, three are none, a box inside another goes")
    func grouping() {
        let near = [Rect(x: 100, y: 50, width: 40, height: 40), Rect(x: 102, y: 51, width: 40, height: 40),
                    Rect(x: 98, y: 49, width: 44, height: 44), Rect(x: 101, y: 52, width: 40, height: 40)]
        #expect(FaceCascade.grouped(near) == [Rect(x: 100, y: 51, width: 41, height: 41)])
        #expect(FaceCascade.grouped(Array(near.prefix(3))).isEmpty)
        let inner = (0..<4).map { Rect(x: 110 + $0, y: 60, width: 12, height: 12) }
        let apart = (0..<4).map { Rect(x: 10, y: 10 + $0, width: 24, height: 24) }
        #expect(FaceCascade.grouped(inner + near + apart) == [Rect(x: 10, y: 12, width: 24, height: 24), Rect(x: 100, y: 51, width: 41, height: 41)])
        #expect(FaceCascade.grouped([]).isEmpty)
    }

    @Test("A face box outweighs everything else in the smart crop's map")
    func faceOutweighs() throws {
        // A busy, saturated right half and a flat grey face box on the left: the window goes left.
        let width = 240, height = 120
        var pixels = [UInt8](repeating: 128, count: width * height * 3)
        for y in 0..<height {
            for x in 120..<width where (x / 2 + y / 2) % 2 == 0 {
                pixels[(y * width + x) * 3] = 250; pixels[(y * width + x) * 3 + 2] = 10
            }
        }
        let image = try RGBImage(width: width, height: height, pixels: pixels)
        let face = Rect(x: 10, y: 40, width: 30, height: 30)
        let without = try #require(SmartCrop.origin(for: Size(width: 100, height: 120), upright: image.size, choosingOn: image))
        #expect(without.x > face.x, "\(without)")
        let with = try #require(SmartCrop.origin(for: Size(width: 100, height: 120), upright: image.size, choosingOn: image,
                                                  faces: { _ in [face] }))
        #expect(with.x <= face.x && with.x + 100 >= face.x + face.width, "\(with)")
    }
}
