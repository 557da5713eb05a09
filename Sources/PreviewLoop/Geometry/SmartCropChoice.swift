/// Where a smart crop (``ContentMode/smartCrop``) put its window on one frame, and what placed it there.
///
/// In JSON (`thumb --json`'s `smart_crop`): `x`, `y`, `width`, `height`, `chosen_by` and, when the face
/// detector ran, `faces`.
public struct SmartCropChoice: Sendable, Hashable, Codable {
    /// What placed the window.
    public enum Basis: String, Sendable, Hashable, Codable {
        /// Faces were found: the window holds them (faces outweigh everything else in the measure).
        case faces
        /// No face: the interest measure (edges, colour, skin tone) moved the window off the centre.
        case interest
        /// The centred window: no other scored clearly better (a flat picture, or interest spread
        /// evenly), or the crop is the whole picture and cannot move.
        case centre
    }

    /// The window, in the pixels of the upright source picture (after its orientation and any
    /// transform): the frame's ``VideoFrame/uprightCrop``.
    public var window: Rect
    /// What placed it.
    public var basis: Basis
    /// How many faces the detector found on the picture the window was chosen on; `nil` when it did
    /// not run (no detector installed, or the crop could not move).
    public var faces: Int?

    /// Creates a choice.
    public init(window: Rect, basis: Basis, faces: Int? = nil) {
        self.window = window
        self.basis = basis
        self.faces = faces
    }

    enum CodingKeys: String, CodingKey {
        case x, y, width, height, faces
        case basis = "chosen_by"
    }

    /// Reads the flat JSON object.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        window = Rect(x: try container.decode(Int.self, forKey: .x), y: try container.decode(Int.self, forKey: .y),
                      width: try container.decode(Int.self, forKey: .width), height: try container.decode(Int.self, forKey: .height))
        basis = try container.decode(Basis.self, forKey: .basis)
        faces = try container.decodeIfPresent(Int.self, forKey: .faces)
    }

    /// Writes the flat JSON object: the window's four numbers, `chosen_by`, and `faces` when known.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(window.x, forKey: .x)
        try container.encode(window.y, forKey: .y)
        try container.encode(window.width, forKey: .width)
        try container.encode(window.height, forKey: .height)
        try container.encode(basis, forKey: .basis)
        try container.encodeIfPresent(faces, forKey: .faces)
    }
}
