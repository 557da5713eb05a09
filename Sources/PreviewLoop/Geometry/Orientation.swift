/// How a decoded picture must be turned to be shown upright: one of the eight rotations and mirrorings
/// of a rectangle (the EXIF orientations), as read from a stream's display matrix.
public enum Orientation: String, Sendable, CaseIterable {
    /// Shown as decoded.
    case up
    /// Turned 90° clockwise (FFmpeg `transpose=clock`).
    case rotatedClockwise
    /// Turned 180° (FFmpeg `hflip,vflip`).
    case upsideDown
    /// Turned 90° counter-clockwise (FFmpeg `transpose=cclock`).
    case rotatedCounterClockwise
    /// Mirrored left to right (FFmpeg `hflip`).
    case mirrored
    /// Mirrored top to bottom (FFmpeg `vflip`).
    case flipped
    /// Mirrored across the main diagonal (FFmpeg `transpose=cclock_flip`).
    case transposed
    /// Mirrored across the anti-diagonal (FFmpeg `transpose=clock_flip`).
    case transverse

    /// Whether the displayed picture's width is the decoded picture's height.
    public var swapsAxes: Bool {
        switch self {
        case .rotatedClockwise, .rotatedCounterClockwise, .transposed, .transverse: true
        case .up, .upsideDown, .mirrored, .flipped: false
        }
    }

    /// The clockwise rotation in degrees a viewer sees, ignoring any mirroring (0, 90, 180 or 270).
    public var clockwiseDegrees: Int {
        switch self {
        case .up, .mirrored: 0
        case .rotatedClockwise, .transverse: 90
        case .upsideDown, .flipped: 180
        case .rotatedCounterClockwise, .transposed: 270
        }
    }

    /// Reads an orientation from the nine 16.16/2.30 fixed-point entries of an FFmpeg display matrix,
    /// deciding exactly as FFmpeg 6's `ffmpeg` CLI autorotation does (FFmpeg 5.1's CLI ignores mirroring).
    ///
    /// - Parameter matrix: `AV_PKT_DATA_DISPLAYMATRIX` side data, row-major.
    /// - Parameter counterClockwiseDegrees: `av_display_rotation_get(matrix)`, the matrix's rotation.
    /// - Returns: `nil` for a rotation that is not a multiple of 90° (within 1°).
    public init?(displayMatrix matrix: [Int32], counterClockwiseDegrees: Double) {
        guard matrix.count == 9, counterClockwiseDegrees.isFinite else {
            self = .up
            return
        }
        // The CLI's get_rotation(): theta = -round(rotation), folded into [0, 360).
        var theta = -counterClockwiseDegrees.rounded()
        theta -= 360 * (theta / 360 + 0.9 / 360).rounded(.down)
        if abs(theta - 90) < 1 {
            self = matrix[3] > 0 ? .transposed : .rotatedClockwise
        } else if abs(theta - 180) < 1 {
            switch (matrix[0] < 0, matrix[4] < 0) {
            case (true, true): self = .upsideDown
            case (true, false): self = .mirrored
            case (false, true): self = .flipped
            case (false, false): self = .up
            }
        } else if abs(theta - 270) < 1 {
            self = matrix[3] < 0 ? .transverse : .rotatedCounterClockwise
        } else if abs(theta) < 1 || abs(theta - 360) < 1 {
            self = matrix[4] < 0 ? .flipped : .up
        } else {
            return nil
        }
    }

    /// The rectangle of the decoded picture that becomes `rect` of the upright picture.
    ///
    /// - Parameters:
    ///   - rect: a rectangle of the upright picture (after turning), in its pixels.
    ///   - decodedSize: the decoded picture's size (before turning).
    public func decodedRect(forUpright rect: Rect, decodedSize: Size) -> Rect {
        let w = decodedSize.width, h = decodedSize.height
        switch self {
        case .up: return rect
        case .rotatedClockwise: return Rect(x: rect.y, y: h - rect.x - rect.width, width: rect.height, height: rect.width)
        case .rotatedCounterClockwise: return Rect(x: w - rect.y - rect.height, y: rect.x, width: rect.height, height: rect.width)
        case .upsideDown: return Rect(x: w - rect.x - rect.width, y: h - rect.y - rect.height, width: rect.width, height: rect.height)
        case .mirrored: return Rect(x: w - rect.x - rect.width, y: rect.y, width: rect.width, height: rect.height)
        case .flipped: return Rect(x: rect.x, y: h - rect.y - rect.height, width: rect.width, height: rect.height)
        case .transposed: return Rect(x: rect.y, y: rect.x, width: rect.height, height: rect.width)
        case .transverse: return Rect(x: w - rect.y - rect.height, y: h - rect.x - rect.width, width: rect.height, height: rect.width)
        }
    }
}

extension Orientation {
    /// The orientation that mirrors left to right (if `mirrored`), then turns clockwise by `degrees`
    /// (a multiple of 90; others are taken modulo 360 to the quarter turn below).
    public init(clockwiseDegrees degrees: Int, mirrored: Bool) {
        let quarter = ((degrees % 360 + 360) % 360) / 90
        self = switch (quarter, mirrored) {
        case (0, false): .up
        case (1, false): .rotatedClockwise
        case (2, false): .upsideDown
        case (3, false): .rotatedCounterClockwise
        case (0, true): .mirrored
        case (1, true): .transverse
        case (2, true): .flipped
        default: .transposed
        }
    }

    /// Whether the orientation mirrors the picture (an odd number of flips).
    public var isMirrored: Bool {
        switch self {
        case .mirrored, .flipped, .transposed, .transverse: true
        case .up, .rotatedClockwise, .upsideDown, .rotatedCounterClockwise: false
        }
    }

    /// This orientation, then `next`: the picture turned upright by this one, then turned by `next`.
    ///
    /// Each orientation is a mirror (or none) followed by a clockwise turn; a turn after a mirror is the
    /// opposite turn before it, which is all the arithmetic there is.
    public func followed(by next: Orientation) -> Orientation {
        let turn = next.isMirrored ? next.clockwiseDegrees - clockwiseDegrees : next.clockwiseDegrees + clockwiseDegrees
        return Orientation(clockwiseDegrees: turn, mirrored: isMirrored != next.isMirrored)
    }
}

/// A clockwise quarter turn: 0, 90, 180 or 270 degrees.
public enum QuarterTurn: Int, Sendable, Hashable, CaseIterable {
    case none = 0
    case clockwise = 90
    case half = 180
    case counterClockwise = 270
}

/// A turn and flips applied to the upright picture, as an image API takes them (Mux's `rotate`,
/// `flip_h`, `flip_v`): the turn clockwise after the source's own orientation, the flips after it.
public struct PictureTransform: Sendable, Hashable {
    /// The clockwise turn.
    public var rotation: QuarterTurn
    /// Whether the picture is mirrored left to right, after the turn.
    public var flipsHorizontally: Bool
    /// Whether the picture is mirrored top to bottom, after the turn and the horizontal flip.
    public var flipsVertically: Bool

    /// A transform: the turn, then the flips.
    public init(rotation: QuarterTurn = .none, flipsHorizontally: Bool = false, flipsVertically: Bool = false) {
        self.rotation = rotation
        self.flipsHorizontally = flipsHorizontally
        self.flipsVertically = flipsVertically
    }

    /// Whether it leaves the picture as it is.
    public var isIdentity: Bool { orientation == .up }

    /// The transform as one orientation of the upright picture.
    public var orientation: Orientation {
        var result = Orientation(clockwiseDegrees: rotation.rawValue, mirrored: false)
        if flipsHorizontally { result = result.followed(by: .mirrored) }
        if flipsVertically { result = result.followed(by: .flipped) }
        return result
    }
}
