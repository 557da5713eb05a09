/// Composes the pictures of a card: poster and play button, the reveal (a growing disc or a
/// cross-fade), the playing video, the fade back, all cut to the rounded frame.
///
/// Pure: given a phase and the pictures, always the same result. The corner mask is computed once.
public struct CardCompositor: Sendable {
    /// The style composed.
    public let style: CardStyle
    /// The rounded frame's coverage; `nil` for square corners.
    private let corners: CoverageMask?

    /// A compositor for `style`.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for a style ``CardStyle/validate()`` refuses.
    public init(style: CardStyle) throws(PreviewLoopError) {
        try style.validate()
        self.style = style
        corners = style.cornerRadius > 0
            ? try CoverageMask(CardGeometry.outline(size: style.size, cornerRadius: style.cornerRadius), size: style.size)
            : nil
    }

    /// The card at `phase`, with transparent corners.
    ///
    /// - Parameters:
    ///   - phase: where the sequence is (a ``CardTimeline`` gives it for a time): the poster alone, the
    ///     reveal's or the fade's progress over the video, or the video playing.
    ///   - poster: the poster frame, of the style's size.
    ///   - video: the video frame shown at the phase's video time, of the style's size; needed by
    ///     every phase but `.poster` (the poster stands in when it is missing).
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` when a picture is not of the style's size.
    public func picture(at phase: CardPhase, poster: RGBImage, video: RGBImage?) throws(PreviewLoopError) -> RGBAImage {
        guard poster.size == style.size, (video?.size ?? style.size) == style.size else {
            throw PreviewLoopError(.invalidArgument, "the card's pictures must be \(style.size), not \(poster.size)"
                + (video.map { " and \($0.size)" } ?? ""))
        }
        let posterLayer = RGBAImage(poster)
        let videoLayer = video.map(RGBAImage.init) ?? posterLayer
        var picture: RGBAImage
        var button: (scale: Double, opacity: Double)?
        switch phase {
        case .poster:
            picture = posterLayer
            button = (1, 1)
        case .revealing(let progress, _):
            switch style.reveal {
            case .circle:
                let disc = try CoverageMask(CardGeometry.revealDisc(progress: progress, size: style.size), size: style.size)
                picture = try posterLayer.blended(with: videoLayer, through: disc)
                // The button grows by half and fades out as the disc opens.
                button = (1 + 0.5 * progress, 1 - progress)
            case .fade:
                picture = try posterLayer.blended(with: videoLayer, amount: progress)
                // Reduce Motion: nothing moves, the button only fades.
                button = (1, 1 - progress)
            }
        case .playing:
            picture = videoLayer
        case .closing(let progress, _):
            picture = try videoLayer.blended(with: posterLayer, amount: progress)
            button = (1, progress)
        }
        if style.showsPlayButton, let button, button.opacity > 0 {
            // Its colours are chosen once for the poster (not the blend under it), so they hold still
            // while the button grows and fades.
            let center = CardGeometry.center(of: style.size), diameter = PlayButton.diameter(for: style.size)
            style.playButton.adapted(to: poster, center: center, diameter: diameter)
                .draw(on: &picture, center: center, diameter: diameter * button.scale, opacity: button.opacity)
        }
        if let corners { try picture.apply(corners) }
        return picture
    }

    /// `picture` made opaque for a format without transparency: flattened on the style's
    /// ``CardStyle/opaqueBackground(for:)`` — its background, or when it has none black for `.mp4` and
    /// white for a still (`nil`, the default).
    public func flattened(_ picture: RGBAImage, for format: AnimationFormat? = nil) -> RGBImage {
        picture.flattened(on: style.opaqueBackground(for: format))
    }

    /// `picture` for a format with transparency: unchanged without a background colour, else seen
    /// over it.
    public func withBackground(_ picture: RGBAImage) -> RGBAImage {
        guard let background = style.background else { return picture }
        if background.isOpaque { return RGBAImage(picture.flattened(on: background)) }
        var result = RGBAImage(uncheckedWidth: picture.width, height: picture.height, color: background)
        result.draw(picture, atX: 0, y: 0)
        return result
    }
}
