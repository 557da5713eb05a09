/// How the card opens its video: a circle growing from the centre, or (Reduce Motion) a cross-fade.
public enum CardReveal: String, Hashable, Sendable, CaseIterable {
    /// A disc centred on the frame grows from 5 % of the frame's diagonal to all of it.
    case circle
    /// The video fades in over the poster in the same time (the Reduce Motion variant).
    case fade
}

/// What a preview card looks like and how its sequence is timed: poster with play button, reveal,
/// the playing video, and optionally the fade back to the poster.
///
/// Sizes are in output pixels. The defaults are the app card this imitates at 1×: 16:9, 22-point
/// corners, a 0.6 s reveal with ease-in-out timing.
public struct CardStyle: Hashable, Sendable {
    /// The aspect ratio used when none, or an unusable one, is given: 16:9.
    public static let defaultAspectRatio = 16.0 / 9.0

    /// The card's size in pixels (default 480x270).
    public var size: Size
    /// The radius of the rounded corners in pixels (default 22; 0 for square corners).
    public var cornerRadius: Double
    /// What lies outside the rounded corners: `nil` (the default) for transparency where the output
    /// format has it (PNG, WebP, GIF) and ``opaqueBackground(for:)`` elsewhere (black in an MP4, white
    /// in a still); a colour to use it everywhere.
    public var background: RGBAColor?
    /// Whether the poster shows the play button (default true).
    public var showsPlayButton: Bool
    /// The play button's look.
    public var playButton: PlayButton
    /// The reveal transition (default `.circle`).
    public var reveal: CardReveal
    /// The reveal's duration in seconds (default 0.6).
    public var revealDuration: Double
    /// The reveal's timing curve (default ease-in-out).
    public var easing: Easing
    /// How long the poster shows before the reveal starts, in seconds (default 1).
    public var posterHold: Double
    /// How long the video plays after the reveal completes, in seconds (default 3).
    public var playLength: Double
    /// Whether the sequence ends by fading back to the poster (default false), as the close button
    /// does; a file that loops then joins its end to its start without a jump.
    public var closes: Bool
    /// The fade back's duration in seconds (default 0.35), when ``closes``.
    public var closeDuration: Double

    /// Creates a style; every parameter has the documented default.
    public init(size: Size = Size(width: 480, height: 270), cornerRadius: Double = 22, background: RGBAColor? = nil,
                showsPlayButton: Bool = true, playButton: PlayButton = PlayButton(), reveal: CardReveal = .circle,
                revealDuration: Double = 0.6, easing: Easing = .easeInOut, posterHold: Double = 1,
                playLength: Double = 3, closes: Bool = false, closeDuration: Double = 0.35) {
        self.size = size
        self.cornerRadius = cornerRadius
        self.background = background
        self.showsPlayButton = showsPlayButton
        self.playButton = playButton
        self.reveal = reveal
        self.revealDuration = revealDuration
        self.easing = easing
        self.posterHold = posterHold
        self.playLength = playLength
        self.closes = closes
        self.closeDuration = closeDuration
    }

    /// What fills the corners of a picture without transparency: ``background`` when set; else black
    /// in a video (`format` `.mp4`: H.264 has no alpha, and a video mostly plays on a dark page or
    /// player), and white in anything else flattened (a `nil` format: a JPEG or PPM still).
    public func opaqueBackground(for format: AnimationFormat?) -> RGBAColor {
        background ?? (format == .mp4 ? .black : .white)
    }

    /// `ratio` when it is finite and positive, else ``defaultAspectRatio`` (16:9).
    public static func usableAspectRatio(_ ratio: Double) -> Double {
        ratio.isFinite && ratio > 0 ? ratio : defaultAspectRatio
    }

    /// The size `width` pixels wide with the given aspect ratio (width ÷ height; an unusable ratio
    /// falls back to 16:9), its height rounded to the nearest pixel, at least 1, and to an even number
    /// when `even` (H.264 in 4:2:0 needs one).
    public static func size(width: Int, aspectRatio: Double, even: Bool = false) -> Size {
        let ratio = usableAspectRatio(aspectRatio)
        // In Double first: a ratio near zero must not trap the conversion.
        var height = Int(max(1, min(16384, (Double(width) / ratio).rounded())))
        if even { height = max(2, (height + 1) & ~1) }
        return Size(width: width, height: min(height, 16384))
    }

    /// Checks the style's numbers.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` naming the first value that is negative,
    ///   not finite, or (for the size and the reveal) not positive.
    public func validate() throws(PreviewLoopError) {
        guard size.width > 0, size.height > 0 else { throw PreviewLoopError(.invalidArgument, "the card size \(size) must be positive") }
        let checks: [(name: String, value: Double, unit: String, mustBePositive: Bool)] = [
            ("corner radius", cornerRadius, "pixels", false), ("reveal duration", revealDuration, "seconds", true),
            ("poster hold", posterHold, "seconds", false), ("play length", playLength, "seconds", false),
            ("close duration", closeDuration, "seconds", false),
        ]
        for check in checks where !check.value.isFinite || check.value < 0 || (check.mustBePositive && check.value == 0) {
            let bound = check.mustBePositive ? "above 0" : "0 or more"
            throw PreviewLoopError(.invalidArgument, "the card's \(check.name) must be \(bound) \(check.unit), not \(check.value)")
        }
    }
}
