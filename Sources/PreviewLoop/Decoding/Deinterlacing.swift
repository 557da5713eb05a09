/// Whether decoded pictures are deinterlaced before scaling, for every output (stills, strips, sheets,
/// sprites, loops, renders, cards, batch recipes, walls).
///
/// The deinterlacer is motion-adaptive: it keeps the field shown first (top unless the frame says bottom
/// first) and, sample by sample, keeps the other field's own lines where nothing moves (full vertical
/// detail) and rebuilds them from the kept lines above and below (edge-directed) where something does
/// (no combing). Motion is judged from the stream's previous frame when it was decoded just before
/// (consecutive decoding: loops, renders, stills decoded forward from a keyframe), else from the frame
/// alone (a keyframe sample, the first frame after a seek or a loop's wrap); no frame is delayed.
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
