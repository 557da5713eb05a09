/// Finding faces with a ``FaceCascade``: every window position of a pyramid of the picture's luma,
/// each window normalised by its own contrast, and the overlapping hits grouped into boxes.
///
/// The picture's BT.601 luma is scaled down by ``scaleFactor`` again and again (bilinear, in fixed
/// point, each level from the full picture) while the cascade's window still fits; on each level the
/// window moves in steps of 2 pixels (1 once a level is half the picture's size or less). A window is
/// scored on an integral image and a squared integral image of its level: a feature's value is the
/// weighted sum of its rectangles divided by the window's standard deviation times its area (both
/// over the window less a 1-pixel border), as the cascade was trained, so lighting and contrast do not
/// matter. A window is a hit when it passes every stage. Hits whose corners lie within a fifth of
/// their size of each other are one group; a group of at least ``minimumHits`` is a face, its box the
/// mean of its hits, and a face box inside another is dropped. The arithmetic runs in one thread in a
/// fixed order (IEEE doubles, no fused operations), so the same picture gives the same boxes.
extension FaceCascade {
    /// Each pyramid level is this much smaller than the one before.
    static let scaleFactor = 1.2
    /// How many overlapping hits make a face: a lone hit is usually texture that looks like one.
    static let minimumHits = 4
    /// The share of a window's pixels that must be skin-toned (``SmartCrop/isSkin(y:cb:cr:)``) for
    /// the cascade to look at it at all: a face seen whole is mostly skin, and the test costs four
    /// look-ups where the cascade costs hundreds, so pictures without skin tones cost next to nothing.
    static let minimumSkinShare = (numerator: 1, denominator: 4)

    /// The faces in `image`, as boxes in its pixels, top to bottom then left to right.
    func faces(in image: RGBImage) -> [Rect] {
        let width = image.width, height = image.height
        guard width >= windowWidth, height >= windowHeight else { return [] }
        var luma = [UInt8](repeating: 0, count: width * height)
        // skin[(y) * (width + 1) + x]: the skin-toned pixels above and left of (x, y).
        let skinStride = width + 1
        var skin = [Int](repeating: 0, count: skinStride * (height + 1))
        image.pixels.withUnsafeBufferPointer { rgb in
            for y in 0..<height {
                var rowSkin = 0
                for x in 0..<width {
                    let index = y * width + x
                    let red = Int(rgb[3 * index]), green = Int(rgb[3 * index + 1]), blue = Int(rgb[3 * index + 2])
                    let value: Int = (77 * red + 150 * green + 29 * blue + 128) >> 8
                    luma[index] = UInt8(value)
                    let cb: Int = 128 + ((-43 * red - 85 * green + 128 * blue + 128) >> 8)
                    let cr: Int = 128 + ((128 * red - 107 * green - 21 * blue + 128) >> 8)
                    if SmartCrop.isSkin(y: value, cb: cb, cr: cr) { rowSkin += 1 }
                    skin[(y + 1) * skinStride + x + 1] = skin[y * skinStride + x + 1] + rowSkin
                }
            }
        }
        let program = Program(self)
        var hits: [Rect] = []
        var scale = 1.0
        while true {
            let levelWidth = Int(Double(width) / scale), levelHeight = Int(Double(height) / scale)
            guard levelWidth >= windowWidth, levelHeight >= windowHeight else { break }
            let level = Self.resized(luma, width: width, height: height, to: levelWidth, levelHeight, scale: scale)
            let step = scale < 2 ? 2 : 1
            let boxWidth = Int((Double(windowWidth) * scale).rounded()), boxHeight = Int((Double(windowHeight) * scale).rounded())
            func box(_ x: Int, _ y: Int) -> Rect {
                let left = min(Int((Double(x) * scale).rounded()), width - boxWidth)
                let top = min(Int((Double(y) * scale).rounded()), height - boxHeight)
                return Rect(x: left, y: top, width: boxWidth, height: boxHeight)
            }
            let found = program.hits(on: level, width: levelWidth, height: levelHeight, step: step) { x, y in
                let window = box(x, y)
                let a = window.y * skinStride + window.x, c = a + window.height * skinStride
                let count = skin[c + window.width] - skin[a + window.width] - skin[c] + skin[a]
                return count * Self.minimumSkinShare.denominator >= window.width * window.height * Self.minimumSkinShare.numerator
            }
            hits += found.map { box($0.0, $0.1) }
            scale *= Self.scaleFactor
        }
        return Self.grouped(hits)
    }

    /// `luma` (`width`×`height`) scaled by 1/`scale` to `newWidth`×`newHeight`, bilinear, weights in
    /// 1/256ths, sample centres aligned.
    static func resized(_ luma: [UInt8], width: Int, height: Int, to newWidth: Int, _ newHeight: Int, scale: Double) -> [UInt8] {
        if newWidth == width && newHeight == height { return luma }
        func taps(_ count: Int, _ limit: Int) -> (index: [Int], weight: [Int]) {
            var index = [Int](repeating: 0, count: count), weight = [Int](repeating: 0, count: count)
            for i in 0..<count {
                let source = max(0, (Double(i) + 0.5) * scale - 0.5)
                let whole = min(Int(source), limit - 1)
                index[i] = whole
                weight[i] = whole >= limit - 1 ? 0 : Int(((source - Double(whole)) * 256).rounded())
            }
            return (index, weight)
        }
        let columns = taps(newWidth, width), rows = taps(newHeight, height)
        var output = [UInt8](repeating: 0, count: newWidth * newHeight)
        luma.withUnsafeBufferPointer { source in
            for y in 0..<newHeight {
                let top = rows.index[y] * width, below = min(rows.index[y] + 1, height - 1) * width
                let fy = rows.weight[y]
                for x in 0..<newWidth {
                    let left = columns.index[x], right = min(left + 1, width - 1), fx = columns.weight[x]
                    let upper = Int(source[top + left]) * (256 - fx) + Int(source[top + right]) * fx
                    let lower = Int(source[below + left]) * (256 - fx) + Int(source[below + right]) * fx
                    output[y * newWidth + x] = UInt8((upper * (256 - fy) + lower * fy + 32768) >> 16)
                }
            }
        }
        return output
    }

    /// One box per group of at least ``minimumHits`` similar hits (the mean of the group), without
    /// boxes that lie inside another, top to bottom then left to right.
    static func grouped(_ hits: [Rect]) -> [Rect] {
        // Union-find over "similar": every corner within a fifth of the smaller box's mean side.
        var parent = Array(hits.indices)
        func root(_ index: Int) -> Int {
            var index = index
            while parent[index] != index { parent[index] = parent[parent[index]]; index = parent[index] }
            return index
        }
        for a in hits.indices {
            for b in (a + 1)..<hits.count {
                let p = hits[a], q = hits[b]
                let delta = 0.2 * Double(min(p.width, q.width) + min(p.height, q.height)) * 0.5
                guard Double(abs(p.x - q.x)) <= delta, Double(abs(p.y - q.y)) <= delta,
                      Double(abs(p.x + p.width - q.x - q.width)) <= delta,
                      Double(abs(p.y + p.height - q.y - q.height)) <= delta else { continue }
                let ra = root(a), rb = root(b)
                if ra != rb { parent[max(ra, rb)] = min(ra, rb) }
            }
        }
        var groups: [Int: (x: Int, y: Int, width: Int, height: Int, count: Int)] = [:]
        for index in hits.indices {
            let hit = hits[index]
            let sum = groups[root(index), default: (0, 0, 0, 0, 0)]
            groups[root(index)] = (sum.x + hit.x, sum.y + hit.y, sum.width + hit.width, sum.height + hit.height, sum.count + 1)
        }
        let boxes = groups.keys.sorted().compactMap { key -> (Rect, Int)? in
            let sum = groups[key]!
            guard sum.count >= minimumHits else { return nil }
            func mean(_ total: Int) -> Int { (2 * total + sum.count) / (2 * sum.count) }
            return (Rect(x: mean(sum.x), y: mean(sum.y), width: mean(sum.width), height: mean(sum.height)), sum.count)
        }
        let kept = boxes.filter { box in
            !boxes.contains { other in
                other.0 != box.0 && other.0.width > box.0.width && box.0.x >= other.0.x && box.0.y >= other.0.y
                    && box.0.x + box.0.width <= other.0.x + other.0.width && box.0.y + box.0.height <= other.0.y + other.0.height
            }
        }
        return kept.map(\.0).sorted { ($0.y, $0.x, $0.width) < ($1.y, $1.x, $1.width) }
    }

    /// The cascade flattened into arrays for the window loop: stages, trees and nodes in order, each
    /// node with its feature's rectangles beside it.
    struct Program {
        let windowWidth: Int, windowHeight: Int
        var stageThreshold: [Double] = [], stageEnd: [Int] = []
        var treeRoot: [Int] = [], treeLeafBase: [Int] = [], leaves: [Double] = []
        var nodeLeft: [Int] = [], nodeRight: [Int] = [], nodeThreshold: [Double] = []
        /// Each node's feature: three rectangles (x, y, width, height; a missing one all 0) and weights.
        var nodeRects: [Int] = [], nodeWeights: [Double] = []

        init(_ cascade: FaceCascade) {
            windowWidth = cascade.windowWidth
            windowHeight = cascade.windowHeight
            for stage in cascade.stages {
                for tree in stage.trees {
                    treeRoot.append(nodeLeft.count)
                    treeLeafBase.append(leaves.count)
                    for node in tree.nodes {
                        nodeLeft.append(node.left); nodeRight.append(node.right); nodeThreshold.append(node.threshold)
                        let rects = cascade.features[node.feature]
                        for k in 0..<3 {
                            let rect = k < rects.count ? rects[k] : WeightedRect(x: 0, y: 0, width: 0, height: 0, weight: 0)
                            nodeRects += [rect.x, rect.y, rect.width, rect.height]
                            nodeWeights.append(rect.weight)
                        }
                    }
                    leaves += tree.leaves
                }
                stageThreshold.append(stage.threshold)
                stageEnd.append(treeRoot.count)
            }
        }

        /// The top-left corners of the windows of `luma` (`width`×`height`) that pass every stage,
        /// trying every `step`-th position, row by row, and only those `admits`.
        func hits(on luma: [UInt8], width: Int, height: Int, step: Int,
                  admits: (Int, Int) -> Bool = { _, _ in true }) -> [(Int, Int)] {
            guard width >= windowWidth, height >= windowHeight else { return [] }
            let stride = width + 1
            var sums = [Int](repeating: 0, count: stride * (height + 1))
            var squares = [Int](repeating: 0, count: stride * (height + 1))
            for y in 0..<height {
                var rowSum = 0, rowSquares = 0
                for x in 0..<width {
                    let value = Int(luma[y * width + x])
                    rowSum += value
                    rowSquares += value * value
                    sums[(y + 1) * stride + x + 1] = sums[y * stride + x + 1] + rowSum
                    squares[(y + 1) * stride + x + 1] = squares[y * stride + x + 1] + rowSquares
                }
            }
            // Each node's rectangles as four corner offsets in this level's integral image.
            let nodeCount = nodeLeft.count
            var corners = [Int](repeating: 0, count: nodeCount * 12)
            for index in 0..<(nodeCount * 3) {
                let x = nodeRects[index * 4], y = nodeRects[index * 4 + 1], w = nodeRects[index * 4 + 2], h = nodeRects[index * 4 + 3]
                let topLeft = y * stride + x, bottomLeft = (y + h) * stride + x
                corners[index * 4] = topLeft; corners[index * 4 + 1] = topLeft + w
                corners[index * 4 + 2] = bottomLeft; corners[index * 4 + 3] = bottomLeft + w
            }
            let normTopLeft = stride + 1, normWidth = windowWidth - 2, normHeight = windowHeight - 2
            let normBottomLeft = normTopLeft + normHeight * stride
            let normArea = max(1, normWidth * normHeight)
            let stageCount = stageThreshold.count
            var found: [(Int, Int)] = []
            sums.withUnsafeBufferPointer { sum in
            squares.withUnsafeBufferPointer { square in
            corners.withUnsafeBufferPointer { corner in
            nodeWeights.withUnsafeBufferPointer { weight in
            nodeLeft.withUnsafeBufferPointer { left in
            nodeRight.withUnsafeBufferPointer { right in
            nodeThreshold.withUnsafeBufferPointer { threshold in
            leaves.withUnsafeBufferPointer { leaf in
            stageThreshold.withUnsafeBufferPointer { stageThreshold in
            stageEnd.withUnsafeBufferPointer { stageEnd in
            treeRoot.withUnsafeBufferPointer { treeRoot in
            treeLeafBase.withUnsafeBufferPointer { treeLeafBase in
                let sum = sum.baseAddress!, corner = corner.baseAddress!, weight = weight.baseAddress!
                for y in Swift.stride(from: 0, through: height - windowHeight, by: step) {
                    for x in Swift.stride(from: 0, through: width - windowWidth, by: step) where admits(x, y) {
                        let base = sum + (y * stride + x)
                        let squareBase = square.baseAddress! + (y * stride + x)
                        let total = base[normBottomLeft + normWidth] - base[normTopLeft + normWidth] - base[normBottomLeft] + base[normTopLeft]
                        let totalSquares = squareBase[normBottomLeft + normWidth] - squareBase[normTopLeft + normWidth]
                            - squareBase[normBottomLeft] + squareBase[normTopLeft]
                        let spread = Double(normArea * totalSquares - total * total)
                        let norm = spread > 0 ? spread.squareRoot() : 1
                        var passed = true
                        var tree = 0
                        for stage in 0..<stageCount {
                            var score = 0.0
                            let end = stageEnd[stage]
                            while tree < end {
                                let rootNode = treeRoot[tree]
                                var node = rootNode
                                while true {
                                    let c = corner + node * 12, w = weight + node * 3
                                    var value = w[0] * Double(base[c[3]] - base[c[1]] - base[c[2]] + base[c[0]])
                                    value += w[1] * Double(base[c[7]] - base[c[5]] - base[c[6]] + base[c[4]])
                                    if w[2] != 0 { value += w[2] * Double(base[c[11]] - base[c[9]] - base[c[10]] + base[c[8]]) }
                                    let child = value < threshold[node] * norm ? left[node] : right[node]
                                    if child <= 0 {
                                        score += leaf[treeLeafBase[tree] - child]
                                        break
                                    }
                                    node = rootNode + child
                                }
                                tree += 1
                            }
                            if score < stageThreshold[stage] { passed = false; break }
                        }
                        if passed { found.append((x, y)) }
                    }
                }
            }}}}}}}}}}}}
            return found
        }
    }
}
