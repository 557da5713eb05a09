/// How a picture is fitted into an output frame of a different shape.
///
/// The names follow `AVLayerVideoGravity`; the FFmpeg equivalents are given for each case.
public enum ContentMode: String, Sendable, CaseIterable {
    /// Cover the frame, then crop the overflow equally on both sides (the default).
    ///
    /// Like `.resizeAspectFill`; FFmpeg: `scale=W:H:force_original_aspect_ratio=increase,crop=W:H`.
    case aspectFill = "fill"
    /// Cover the frame as ``aspectFill`` does, with the same crop size, but place the crop on what
    /// matters in the picture (edges, colour, skin tones) instead of the centre.
    ///
    /// A still gets the window chosen on its own frame; a loop or animation keeps the window chosen on
    /// its first frame for every frame, so it does not wander. A picture with nothing that stands out
    /// keeps the centred crop. FFmpeg: `crop=W:H:X:Y,scale=…` with the `X`, `Y` chosen (see
    /// ``VideoFrame/uprightCrop``); the measure is in <doc:SmartCrop>.
    case smartCrop = "smartcrop"
    /// Fit the whole picture inside the frame and letterbox or pillarbox it on black.
    ///
    /// Like `.resizeAspect`; FFmpeg: `scale=…:force_original_aspect_ratio=decrease,pad=W:H:-1:-1:black`.
    case aspectFit = "fit"
    /// Scale to the frame exactly, distorting the picture's aspect ratio.
    ///
    /// Like `.resize`; FFmpeg: `scale=W:H,setsar=1`.
    case stretch = "stretch"
}
