/// The loop-end type's former name, for the cases it had (``LoopEnd/length`` and ``LoopEnd/auto``).
@available(*, deprecated, renamed: "LoopEnd")
public typealias LoopPoint = LoopEnd

/// How the last frame of a rendered loop joins its first.
public enum LoopSeam: Sendable, Hashable {
    /// A plain cut: the last frame is followed by the first.
    case cut
    /// The pictures after the out point are blended over the first `duration` of the loop, fading from
    /// them into the loop's own frames, so that the last frame (the one before the out point) is followed
    /// by its natural successor and the fade then carries on into the in point's motion. The first frame
    /// shown is then the out point's picture. At most half the loop; the default is half a second.
    case crossfade(Duration = .milliseconds(500))
}

/// How visible a loop's wrap is: the difference between its last and first frame next to the
/// differences between consecutive frames inside it.
///
/// A difference is the mean absolute difference of luma (BT.709 weights, 0–255) between two small
/// pictures: each frame box-averaged down by a whole factor to at most 64 pixels wide and high. A
/// seamless loop of steady motion has a ``ratio`` near 1 (the wrap looks like any other step), a jump
/// well above 1; near 0 the wrap repeats a picture (a pause).
public struct SeamMeasure: Sendable, Hashable {
    /// The difference between the last frame and the first.
    public var seamDifference: Double
    /// The median difference between consecutive frames inside the loop (0 for a single frame).
    public var medianDifference: Double
    /// `seamDifference / medianDifference` (1 when both are 0, `.infinity` when only the median is 0).
    public var ratio: Double {
        medianDifference > 0 ? seamDifference / medianDifference : (seamDifference > 0 ? .infinity : 1)
    }

    /// Creates a measure.
    public init(seamDifference: Double, medianDifference: Double) {
        self.seamDifference = seamDifference
        self.medianDifference = medianDifference
    }
}

/// A frame's luma (BT.709 weights, `LumaWeights.bt709`) box-averaged down by a whole factor to at most 64 pixels a side: what seams are
/// measured and out points are searched on.
struct SeamThumbnail: Sendable, Hashable {
    /// The longest side a thumbnail keeps.
    static let maxSide = 64
    let width: Int
    let height: Int
    /// Luma, 0–255 (fractional: block averages), row by row.
    let luma: [Float]

    init(_ image: RGBImage) {
        let factor = max(1, (max(image.width, image.height) + Self.maxSide - 1) / Self.maxSide)
        (width, height, luma) = LumaPlane(image, weights: .bt709).boxAveraged(by: factor)
    }

    /// The mean absolute difference of luma, 0–255.
    func difference(to other: SeamThumbnail) -> Double {
        precondition(width == other.width && height == other.height, "thumbnails of different sizes")
        var total: Double = 0
        for index in luma.indices { total += Double(abs(luma[index] - other.luma[index])) }
        return total / Double(luma.count)
    }
}

/// The plan for a seamed loop, worked out from the constant-rate frames decoded past the window.
/// Pure: frame indices only.
struct LoopSeamPlan: Equatable {
    /// Output frames in the loop (the out point, in frames from the in point).
    var frameCount: Int
    /// Frames the crossfade covers (0 for a cut).
    var crossfadeFrames: Int

    /// Chooses the out point among `thumbnails` (all frames available, from the in point), aiming at
    /// `target` frames, with a crossfade of `crossfade` frames wanted (clamped to half the loop and to
    /// what was decoded).
    static func plan(thumbnails: [SeamThumbnail], target: Int, loopPoint: LoopEnd, crossfade: Int) -> LoopSeamPlan {
        let available = thumbnails.count
        let target = max(1, target)
        // The clip may end before the window plus the crossfade: keep the fade within what was decoded.
        var fade = max(0, crossfade)
        if available < target + fade { fade = min(fade, available / 3) }
        var count = min(target, available - fade)
        if loopPoint == .auto {
            let low = max(2, Int((Double(target) * (1 - LoopEnd.searchFraction)).rounded(.up)))
            let high = min(Int((Double(target) * (1 + LoopEnd.searchFraction)).rounded(.down)), available - max(fade, 1))
            if low <= high {
                // The frame after the last should look like the first.
                count = (low...high).min { a, b in
                    let (da, db) = (thumbnails[a].difference(to: thumbnails[0]), thumbnails[b].difference(to: thumbnails[0]))
                    return da != db ? da < db : abs(a - target) < abs(b - target)
                }!
            }
        }
        count = max(1, count)
        return LoopSeamPlan(frameCount: count, crossfadeFrames: min(fade, count / 2))
    }

    /// Output frame `index` of the loop: frame `index` itself, or inside the crossfade a blend of it
    /// (weight `index / crossfadeFrames`) with the frame `frameCount` later (the rest).
    func frame(_ index: Int, of frames: [RGBImage]) -> RGBImage {
        guard index < crossfadeFrames else { return frames[index] }
        return Self.blend(frames[index], weight: index, frames[index + frameCount], weight: crossfadeFrames - index)
    }

    /// `(a × wa + b × wb) / (wa + wb)`, rounded, per byte.
    static func blend(_ a: RGBImage, weight wa: Int, _ b: RGBImage, weight wb: Int) -> RGBImage {
        let total = wa + wb
        var result = a
        result.pixels.withUnsafeMutableBufferPointer { out in
            b.pixels.withUnsafeBufferPointer { other in
                for index in out.indices {
                    out[index] = UInt8((Int(out[index]) * wa + Int(other[index]) * wb + total / 2) / total)
                }
            }
        }
        return result
    }
}

/// Where a rendered loop ends (its out point), measured from the window's start: at the window's length,
/// searched near it (``auto``), or at a time in the clip, which replaces the window's length (`render
/// --loop-point`, a batch hover's `"loop_point"`).
public enum LoopEnd: Sendable, Hashable, CustomStringConvertible {
    /// At the window's length (the default).
    case length
    /// Searched within ±25 % of the window's length (``searchFraction``): the output frame whose
    /// picture best matches the first one (smallest ``SeamMeasure`` difference) becomes the frame after
    /// the last, so the loop wraps where the picture is most alike. Ties go to the one nearest the length.
    case auto
    /// A time in the clip (seconds from the stream's start or a percentage of the duration), after the
    /// window's start: the window ends there (``LoopPlayer/Configuration/windowEnd``).
    case at(TimePosition)

    /// How far, as a fraction of the window's length, ``auto`` searches on each side of it (0.25).
    public static let searchFraction = 0.25

    /// Parses `auto` or a time as ``TimePosition/init(parsing:)`` reads it (`12.5`, `mm:ss`,
    /// `hh:mm:ss.ms`, `10%`).
    public init?(parsing text: String) {
        if text == "auto" {
            self = .auto
        } else if let time = TimePosition(parsing: text) {
            self = .at(time)
        } else {
            return nil
        }
    }

    /// The loop end ``LoopPlayer/render(to:format:framesPerSecond:quality:encoderThreads:maxFrames:loopPoint:seam:flashSafety:progress:)-(String,_,_,_,_,_,_,_,_,_)``
    /// takes: ``auto``, or ``length`` for the others (a time has become the window's end, ``windowEnd``).
    public var loopPoint: LoopEnd { self == .auto ? .auto : .length }

    /// The window's end for ``LoopPlayer/Configuration/windowEnd``: the time, or `nil` for ``length`` and ``auto``.
    public var windowEnd: TimePosition? {
        if case .at(let time) = self { time } else { nil }
    }

    /// `length`, `auto`, `12.5` (seconds) or `10%`.
    public var description: String {
        switch self {
        case .length: "length"
        case .auto: "auto"
        case .at(let time): time.description
        }
    }
}

extension LoopSeam: CustomStringConvertible {
    /// Parses `cut`, `crossfade` (half a second) or `crossfade=T`, `T` in seconds above 0 (whether it is
    /// shorter than the loop is checked by the render).
    public init?(parsing text: String) {
        if text == "cut" {
            self = .cut
        } else if text == "crossfade" {
            self = .crossfade()
        } else if text.hasPrefix("crossfade="), let seconds = Double(text.dropFirst("crossfade=".count)),
                  seconds.isFinite, seconds > 0, seconds <= 1e9 {
            self = .crossfade(.seconds(seconds))
        } else {
            return nil
        }
    }

    /// `cut` or `crossfade=0.5`.
    public var description: String {
        switch self {
        case .cut: "cut"
        case .crossfade(let duration): "crossfade=\(duration.seconds)"
        }
    }
}
