/// A boosted cascade of Haar-like features (Viola and Jones, 2001) read from OpenCV's cascade XML:
/// the face detector of the smart crop, with the trained frontal-face cascade Debian's `opencv-data`
/// ships. Only the file is used; no OpenCV code is linked or copied.
///
/// The file format ("new" cascade format, `<cascade type_id="opencv-cascade-classifier">`):
/// `stageType` BOOST, `featureType` HAAR, the detection window's `width` and `height`, then `stages`,
/// each a `stageThreshold` and `weakClassifiers`, each classifier a small decision tree written as
/// `internalNodes` (four numbers a node: left child, right child, feature index, threshold; a child
/// `≤ 0` is the leaf `−child`) and `leafValues`; then `features`, each two or three `rects` of
/// `x y width height weight` inside the window. Tilted (45°) features are not read: a cascade that
/// has any is refused, and the frontal-face cascades have none.
struct FaceCascade: Sendable {
    /// One rectangle of a feature, in window pixels, and its weight.
    struct WeightedRect: Sendable, Equatable {
        var x: Int, y: Int, width: Int, height: Int, weight: Double
    }

    /// A decision-tree node: the feature compared, the threshold it is compared with (in units of
    /// the window's standard deviation), and where each side leads (`> 0` a node, `≤ 0` a leaf).
    struct Node: Sendable, Equatable {
        var left: Int, right: Int, feature: Int, threshold: Double
    }

    /// One weak classifier: its tree (root first) and its leaves' values.
    struct Tree: Sendable, Equatable {
        var nodes: [Node]
        var leaves: [Double]
    }

    /// One stage: a window passes when its trees' leaves add up to at least `threshold`.
    struct Stage: Sendable, Equatable {
        var threshold: Double
        var trees: [Tree]
    }

    /// The detection window's size in pixels (24x24 for the frontal-face cascades).
    let windowWidth: Int, windowHeight: Int
    let stages: [Stage]
    /// Each feature's rectangles.
    let features: [[WeightedRect]]

    /// Where Debian's `opencv-data` installs the trained frontal-face cascade.
    static let debianFrontalFacePath = "/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml"

    /// The frontal-face cascade, read once on first use; `nil` when the file is not installed or
    /// cannot be read as a cascade (the smart crop then goes without faces).
    static let frontalFace: FaceCascade? = {
        guard let bytes = FileSystem.contents(of: debianFrontalFacePath) else { return nil }
        return try? FaceCascade(xml: bytes)
    }()

    /// Starts reading ``frontalFace`` on another thread, once per process, so that the file is read
    /// while the first frame decodes; the first face search waits for it if it is not done.
    static func readAhead() { _ = readingAhead }

    private static let readingAhead: Void = {
        Task.detached(priority: .userInitiated) { _ = frontalFace }
    }()

    /// Why a cascade file was refused.
    struct FormatError: Error, Equatable, CustomStringConvertible {
        var description: String
    }

    /// Reads a cascade from the bytes of its XML file.
    init(xml: [UInt8]) throws(FormatError) {
        let reader = try CascadeXMLReader(xml)
        guard reader.stageType == "BOOST", reader.featureType == "HAAR" else {
            throw FormatError(description: "not a boosted Haar cascade (stageType \(reader.stageType ?? "none"), featureType \(reader.featureType ?? "none"))")
        }
        guard let width = reader.width, let height = reader.height, (1...256).contains(width), (1...256).contains(height) else {
            throw FormatError(description: "no window size, or one outside 1 to 256")
        }
        guard !reader.stages.isEmpty else { throw FormatError(description: "no stages") }
        for (index, feature) in reader.features.enumerated() {
            guard (1...3).contains(feature.count) else {
                throw FormatError(description: "feature \(index) has \(feature.count) rectangles, not 1 to 3")
            }
            for rect in feature where rect.x < 0 || rect.y < 0 || rect.width <= 0 || rect.height <= 0
                || rect.x + rect.width > width || rect.y + rect.height > height || !rect.weight.isFinite {
                throw FormatError(description: "feature \(index) has a rectangle outside the \(width)x\(height) window")
            }
        }
        for (stageIndex, stage) in reader.stages.enumerated() {
            guard stage.threshold.isFinite, !stage.trees.isEmpty else {
                throw FormatError(description: "stage \(stageIndex) has no classifiers or no threshold")
            }
            for tree in stage.trees {
                guard !tree.nodes.isEmpty, !tree.leaves.isEmpty, tree.leaves.allSatisfy(\.isFinite) else {
                    throw FormatError(description: "stage \(stageIndex) has an empty classifier")
                }
                for (index, node) in tree.nodes.enumerated() {
                    // A child that is a node must lie further down the list, so every walk ends.
                    for child in [node.left, node.right] {
                        guard child <= 0 ? -child < tree.leaves.count : (child > index && child < tree.nodes.count) else {
                            throw FormatError(description: "stage \(stageIndex) has a classifier whose tree points outside it")
                        }
                    }
                    guard node.feature >= 0, node.feature < reader.features.count, node.threshold.isFinite else {
                        throw FormatError(description: "stage \(stageIndex) uses feature \(node.feature) of \(reader.features.count)")
                    }
                }
            }
        }
        windowWidth = width
        windowHeight = height
        stages = reader.stages
        features = reader.features
    }
}

/// A purpose-built reader of the cascade XML: it walks the tags in order and keeps the elements the
/// cascade needs by their names and their parents' names, ignoring everything else (comments, the
/// XML declaration, parameters the evaluator does not use). Attributes are skipped; entities do not
/// occur in these files.
struct CascadeXMLReader {
    var stageType: String?, featureType: String?
    var width: Int?, height: Int?
    var stages: [FaceCascade.Stage] = []
    var features: [[FaceCascade.WeightedRect]] = []

    init(_ bytes: [UInt8]) throws(FaceCascade.FormatError) {
        var path: [String] = []
        var text: ArraySlice<UInt8> = []
        var pendingNodes: [FaceCascade.Node]?
        var rects: [FaceCascade.WeightedRect] = []
        var sawCascade = false
        var index = 0
        let count = bytes.count
        while index < count {
            guard bytes[index] == UInt8(ascii: "<") else {
                // Text up to the next tag.
                let start = index
                while index < count && bytes[index] != UInt8(ascii: "<") { index += 1 }
                text = bytes[start..<index]
                continue
            }
            if index + 1 < count && bytes[index + 1] == UInt8(ascii: "!") && Self.hasPrefix(bytes, at: index, "<!--") {
                guard let end = Self.find(bytes, "-->", from: index + 4) else { throw Self.error("an unclosed comment") }
                index = end + 3
                continue
            }
            var close = index + 1
            while close < count && bytes[close] != UInt8(ascii: ">") { close += 1 }
            guard close < count else { throw Self.error("an unclosed tag") }
            let tag = bytes[(index + 1)..<close]
            index = close + 1
            guard let first = tag.first else { throw Self.error("an empty tag") }
            if first == UInt8(ascii: "?") || first == UInt8(ascii: "!") { continue }
            if first == UInt8(ascii: "/") {
                let name = String(decoding: tag.dropFirst(), as: UTF8.self)
                guard path.last == name else { throw Self.error("</\(name)> closes <\(path.last ?? "nothing")>") }
                path.removeLast()
                let parent = path.last ?? ""
                switch (name, parent) {
                case ("stageType", "cascade"): stageType = Self.trimmed(text)
                case ("featureType", "cascade"): featureType = Self.trimmed(text)
                case ("width", "cascade"): width = Int(Self.trimmed(text))
                case ("height", "cascade"): height = Int(Self.trimmed(text))
                case ("stageThreshold", "_"):
                    guard let value = try Self.numbers(text).first else { throw Self.error("an empty stageThreshold") }
                    stages.append(FaceCascade.Stage(threshold: value, trees: []))
                case ("internalNodes", "_"):
                    let values = try Self.numbers(text)
                    guard !values.isEmpty, values.count % 4 == 0 else { throw Self.error("internalNodes not in fours") }
                    var nodes: [FaceCascade.Node] = []
                    for at in stride(from: 0, to: values.count, by: 4) {
                        guard let left = Int(exactly: values[at]), let right = Int(exactly: values[at + 1]),
                              let feature = Int(exactly: values[at + 2]) else { throw Self.error("a node index that is not whole") }
                        nodes.append(FaceCascade.Node(left: left, right: right, feature: feature, threshold: values[at + 3]))
                    }
                    pendingNodes = nodes
                case ("leafValues", "_"):
                    guard let nodes = pendingNodes, !stages.isEmpty else { throw Self.error("leafValues without internalNodes or stage") }
                    stages[stages.count - 1].trees.append(FaceCascade.Tree(nodes: nodes, leaves: try Self.numbers(text)))
                    pendingNodes = nil
                case ("_", "rects"):
                    let values = try Self.numbers(text)
                    guard values.count == 5, let x = Int(exactly: values[0]), let y = Int(exactly: values[1]),
                          let w = Int(exactly: values[2]), let h = Int(exactly: values[3]) else {
                        throw Self.error("a rectangle that is not x y width height weight")
                    }
                    rects.append(FaceCascade.WeightedRect(x: x, y: y, width: w, height: h, weight: values[4]))
                case ("rects", "_"):
                    features.append(rects)
                    rects = []
                case ("tilted", "_"):
                    if Self.trimmed(text) != "0" { throw Self.error("tilted features are not supported") }
                case ("cascade", _): sawCascade = true
                default: break
                }
                text = []
                continue
            }
            // An opening tag: its name ends at a space, or at `/` for an empty element.
            let nameEnd = tag.firstIndex { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\n") } ?? tag.endIndex
            let name = String(decoding: tag[tag.startIndex..<nameEnd], as: UTF8.self)
            if tag.last == UInt8(ascii: "/") { continue }
            if name == "cascade" && !Self.find(tag, "opencv-cascade-classifier") { throw Self.error("not the new cascade format") }
            path.append(name)
            text = []
        }
        guard sawCascade, path.isEmpty else { throw Self.error("no complete <cascade> element") }
    }

    static func error(_ what: String) -> FaceCascade.FormatError { FaceCascade.FormatError(description: "cascade XML: " + what) }

    static func trimmed(_ text: ArraySlice<UInt8>) -> String {
        String(decoding: text, as: UTF8.self).split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The whitespace-separated decimal numbers of `text`.
    static func numbers(_ text: ArraySlice<UInt8>) throws(FaceCascade.FormatError) -> [Double] {
        var values: [Double] = []
        var index = text.startIndex
        while index < text.endIndex {
            while index < text.endIndex && Self.isSpace(text[index]) { index += 1 }
            let start = index
            while index < text.endIndex && !Self.isSpace(text[index]) { index += 1 }
            guard start < index else { break }
            guard let value = number(text[start..<index]) else {
                throw error("\"\(String(decoding: text[start..<index], as: UTF8.self))\" is not a number")
            }
            values.append(value)
        }
        return values
    }

    /// A decimal number as OpenCV writes them (`-3.1511999666690826e-02`, `3.`, `-1`): its first 19
    /// significant digits as a whole number, times or divided by an exact power of ten. Within one
    /// unit in the last place of the nearest double, and the same on every machine.
    static func number(_ text: ArraySlice<UInt8>) -> Double? {
        var index = text.startIndex
        var negative = false
        if index < text.endIndex, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
            negative = text[index] == UInt8(ascii: "-")
            index += 1
        }
        var mantissa: UInt64 = 0, digits = 0, exponent = 0, sawDigit = false, sawPoint = false
        while index < text.endIndex {
            let byte = text[index]
            if byte == UInt8(ascii: ".") && !sawPoint {
                sawPoint = true
            } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                sawDigit = true
                if digits < 19 {
                    if mantissa != 0 || byte != UInt8(ascii: "0") { digits += 1 }
                    mantissa = mantissa * 10 + UInt64(byte - UInt8(ascii: "0"))
                    if sawPoint { exponent -= 1 }
                } else if !sawPoint {
                    exponent += 1
                }
            } else {
                break
            }
            index += 1
        }
        guard sawDigit else { return nil }
        if index < text.endIndex, text[index] == UInt8(ascii: "e") || text[index] == UInt8(ascii: "E") {
            index += 1
            var exponentNegative = false
            if index < text.endIndex, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
                exponentNegative = text[index] == UInt8(ascii: "-")
                index += 1
            }
            var written = 0, sawExponentDigit = false
            while index < text.endIndex, text[index] >= UInt8(ascii: "0"), text[index] <= UInt8(ascii: "9") {
                written = min(written * 10 + Int(text[index] - UInt8(ascii: "0")), 10_000)
                sawExponentDigit = true
                index += 1
            }
            guard sawExponentDigit else { return nil }
            exponent += exponentNegative ? -written : written
        }
        guard index == text.endIndex else { return nil }
        var value = Double(mantissa)
        // Powers of ten up to 10^22 are exact doubles; larger ones go in steps.
        while exponent > 0 { let step = min(exponent, 22); value *= Self.powerOfTen(step); exponent -= step }
        while exponent < 0 { let step = min(-exponent, 22); value /= Self.powerOfTen(step); exponent += step }
        return negative ? -value : value
    }

    /// 10^`exponent` for 0...22, exactly.
    static func powerOfTen(_ exponent: Int) -> Double {
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    static func hasPrefix(_ bytes: [UInt8], at index: Int, _ prefix: String) -> Bool {
        let prefix = Array(prefix.utf8)
        return index + prefix.count <= bytes.count && bytes[index..<(index + prefix.count)].elementsEqual(prefix)
    }

    static func find(_ bytes: [UInt8], _ needle: String, from start: Int) -> Int? {
        let needle = Array(needle.utf8)
        var index = start
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0] && bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    static func find(_ bytes: ArraySlice<UInt8>, _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard bytes.count >= needle.count else { return false }
        return (bytes.startIndex...(bytes.endIndex - needle.count)).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
