/// Where a crop window of a fixed size goes on a picture so that it keeps what matters, rather than
/// the centre: the `smartcrop` fit (``ContentMode/smartCrop``).
///
/// Each pixel of a small upright picture gets an interest score from three measures, all in integers:
/// edge energy (the Sobel gradient of the luma, above a noise floor), colourfulness (the spread of
/// the red, green and blue values, above a floor that grey and compression noise stay under) and a
/// skin-tone rule (a box in the BT.601 Cb/Cr plane). A window's score is the sum over it, with its
/// outer eighth on each side counting half, so what matters sits inside the window rather than on
/// its edge; every position is scored from one summed-area table, in time proportional to the
/// picture's pixels. Windows within 1/64 of the best score count as equal and the one nearest the
/// centre wins, so a flat picture, or one whose interest is spread evenly, keeps the centre crop.
///
/// Faces, when a detector is installed (``FaceCascade/frontalFace``), outweigh all the rest: the
/// pixels of each face box share twice the score of the whole picture without faces, plus one each,
/// so a window that holds a face beats every window that holds none.
struct SmartCrop {
    /// The analysis picture's width and height.
    let width: Int, height: Int
    /// Each pixel's interest, row by row.
    let scores: [Int]

    /// The longest side of the picture the window is chosen on: enough to find an object a tenth of
    /// the frame wide, little enough to cost far less than the frame's own conversion.
    static let analysisSide = 256
    /// Luma steps below this (the L1 Sobel magnitude, 4 per level of a sharp step) are noise.
    static let edgeFloor = 48
    /// Colour spreads (max − min of R, G, B) at or below this are grey.
    static let saturationFloor = 32
    /// What one skin-toned pixel adds: as much as a strong edge.
    static let skinScore = 255
    /// Windows scoring within `best / tieDivisor` of the best are equally good.
    static let tieDivisor = 64

    /// Scores every pixel of `image`, with the boxes of the faces found in it (in its pixels).
    init(_ image: RGBImage, faces: [Rect] = []) {
        width = image.width
        height = image.height
        let pixels = image.pixels
        var luma = [Int](repeating: 0, count: width * height)
        var colour = [Int](repeating: 0, count: width * height)
        for index in 0..<(width * height) {
            let r = Int(pixels[index * 3]), g = Int(pixels[index * 3 + 1]), b = Int(pixels[index * 3 + 2])
            // BT.601 full range, 8-bit fixed point.
            let y = (77 * r + 150 * g + 29 * b + 128) >> 8
            luma[index] = y
            let cb = 128 + ((-43 * r - 85 * g + 128 * b + 128) >> 8)
            let cr = 128 + ((128 * r - 107 * g - 21 * b + 128) >> 8)
            let spread = max(r, g, b) - min(r, g, b)
            var score = max(0, spread - Self.saturationFloor)
            if Self.isSkin(y: y, cb: cb, cr: cr) { score += Self.skinScore }
            colour[index] = score
        }
        var scores = colour
        let w = width, h = height
        for y in 0..<h {
            let above = max(0, y - 1) * w, row = y * w, below = min(h - 1, y + 1) * w
            for x in 0..<w {
                let left = max(0, x - 1), right = min(w - 1, x + 1)
                let gx = (luma[above + right] + 2 * luma[row + right] + luma[below + right])
                    - (luma[above + left] + 2 * luma[row + left] + luma[below + left])
                let gy = (luma[below + left] + 2 * luma[below + x] + luma[below + right])
                    - (luma[above + left] + 2 * luma[above + x] + luma[above + right])
                scores[row + x] += max(0, abs(gx) + abs(gy) - Self.edgeFloor) / 8
            }
        }
        // Each face: twice the picture's score, spread over its box, and at least 1 a pixel.
        let rest = scores.reduce(0, +)
        for face in faces {
            let left = max(0, face.x), top = max(0, face.y)
            let right = min(w, face.x + face.width), bottom = min(h, face.y + face.height)
            guard left < right, top < bottom else { continue }
            let share = 2 * rest / ((right - left) * (bottom - top)) + 1
            for y in top..<bottom { for x in left..<right { scores[y * w + x] += share } }
        }
        self.scores = scores
    }

    /// The skin-tone box of Chai and Ngan (1999) in the Cb/Cr plane, for pixels that are not near black.
    static func isSkin(y: Int, cb: Int, cr: Int) -> Bool {
        y >= 40 && (77...127).contains(cb) && (133...173).contains(cr)
    }

    /// The best place for a window of `window` size (each side clamped to 1 through the picture's):
    /// its top-left corner, and on which axes it is the centred window (or as near it as whole pixels
    /// allow).
    func bestOrigin(for window: Size) -> (x: Int, y: Int, centredX: Bool, centredY: Bool) {
        let ww = min(max(1, window.width), width), wh = min(max(1, window.height), height)
        // table[(y) * (width + 1) + x]: the sum of scores above and left of (x, y).
        let stride = width + 1
        var table = [Int](repeating: 0, count: stride * (height + 1))
        for y in 0..<height {
            var rowSum = 0
            for x in 0..<width {
                rowSum += scores[y * width + x]
                table[(y + 1) * stride + x + 1] = table[y * stride + x + 1] + rowSum
            }
        }
        func sum(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Int {
            table[(y + h) * stride + x + w] - table[y * stride + x + w] - table[(y + h) * stride + x] + table[y * stride + x]
        }
        // The band along the window's edges counts half: the whole window plus its inside, doubled.
        let bandX = ww / 8, bandY = wh / 8
        let slackX = width - ww, slackY = height - wh
        var windowScores = [Int](repeating: 0, count: (slackX + 1) * (slackY + 1))
        var best = Int.min
        for y in 0...slackY {
            for x in 0...slackX {
                let score = sum(x, y, ww, wh) + sum(x + bandX, y + bandY, ww - 2 * bandX, wh - 2 * bandY)
                windowScores[y * (slackX + 1) + x] = score
                best = max(best, score)
            }
        }
        let good = best - best / Self.tieDivisor
        // Among the good windows, the nearest the centre (doubled distances stay whole), then the
        // topmost, then the leftmost: the scan order.
        var chosen = (x: slackX / 2, y: slackY / 2), chosenDistance = Int.max
        for y in 0...slackY {
            for x in 0...slackX where windowScores[y * (slackX + 1) + x] >= good {
                let distance = abs(2 * x - slackX) + abs(2 * y - slackY)
                if distance < chosenDistance {
                    chosen = (x, y)
                    chosenDistance = distance
                }
            }
        }
        return (chosen.x, chosen.y, abs(2 * chosen.x - slackX) <= 1, abs(2 * chosen.y - slackY) <= 1)
    }

    /// The analysis picture's size for an upright picture of `display` size in square units: the same
    /// shape, its longest side at most ``analysisSide``, never enlarged.
    static func analysisSize(display width: Double, _ height: Double) -> Size {
        let scale = min(1, Double(analysisSide) / max(width, height, 1))
        return Size(width: max(1, Int((width * scale).rounded())), height: max(1, Int((height * scale).rounded())))
    }

    /// Where a crop of `crop` size goes in an upright picture of `upright` size, chosen on `image` (the
    /// whole upright picture, smaller): the crop's top-left corner in upright pixels, or `nil` when the
    /// centred crop is the choice. On an axis where the choice is the centre, the corner is exactly the
    /// centred crop's, not its rounding through the analysis picture. `faces` finds the faces in
    /// `image` (``FaceCascade/frontalFace`` when it is installed); it runs only when the crop can move.
    static func origin(for crop: Size, upright: Size, choosingOn image: RGBImage,
                       faces: (RGBImage) -> [Rect] = { _ in [] }) -> (x: Int, y: Int)? {
        placement(for: crop, upright: upright, choosingOn: image, faces: faces).origin
    }

    /// ``origin(for:upright:choosingOn:faces:)`` with how many faces were found: `nil` when none were
    /// looked for (`faces` gives `nil` when no detector is installed; it is not called when the crop
    /// cannot move).
    static func placement(for crop: Size, upright: Size, choosingOn image: RGBImage,
                          faces: (RGBImage) -> [Rect]?) -> (origin: (x: Int, y: Int)?, faces: Int?) {
        let slackX = upright.width - crop.width, slackY = upright.height - crop.height
        guard slackX > 0 || slackY > 0 else { return (nil, nil) }
        let found = faces(image)
        let map = SmartCrop(image, faces: found ?? [])
        // The window in analysis pixels: the crop scaled, rounded to the nearest.
        let window = Size(width: (crop.width * image.width * 2 + upright.width) / (upright.width * 2),
                          height: (crop.height * image.height * 2 + upright.height) / (upright.height * 2))
        let best = map.bestOrigin(for: window)
        guard !(best.centredX && best.centredY) else { return (nil, found?.count) }
        // Back to upright pixels, rounded to the nearest, kept inside the picture.
        let x = best.centredX ? slackX / 2 : (best.x * upright.width * 2 + image.width) / (image.width * 2)
        let y = best.centredY ? slackY / 2 : (best.y * upright.height * 2 + image.height) / (image.height * 2)
        return ((min(max(0, x), slackX), min(max(0, y), slackY)), found?.count)
    }
}
