/// Whether decoded pictures are deinterlaced before scaling, for every output (stills, strips, sheets,
/// sprites, loops, renders, cards, batch recipes, walls).
///
/// The deinterlacer is intra-field: it keeps the field shown first (top unless the frame says bottom
/// first) and rebuilds the other field's lines as the average of the kept lines above and below. No
/// combing on motion and no state between frames (seeks and keyframe sampling need none); still areas
/// lose half their vertical detail.
public enum Deinterlacing: String, Sendable, Hashable, CaseIterable {
    /// Frames the decoder flags as interlaced (set from the stream's coding: H.264 field or MBAFF
    /// pictures, MPEG-2 frames without `progressive_frame`) are deinterlaced, and every frame of a stream
    /// that declares a field order (Matroska's FieldOrder, a codec's or container's field-order field)
    /// though its frames are not flagged; when neither says so, the pictures decide (the combing score of
    /// the first 3 frames' luma, a majority above 1.2 meaning interlaced). Others are untouched (the
    /// default): progressive input comes out bit-identical to ``off``.
    case auto
    /// Every frame is deinterlaced, flagged or not (top field first unless the frame says otherwise).
    case on
    /// No frame is deinterlaced.
    case off
}
