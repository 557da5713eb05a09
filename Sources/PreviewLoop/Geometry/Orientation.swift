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
