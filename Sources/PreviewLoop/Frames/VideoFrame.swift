/// Where the time went for one delivered frame.
public struct FrameTimings: Sendable, Hashable {
    /// Reading packets and decoding until this frame came out.
    public var decode: Duration
    /// Cropping, scaling and colour conversion to RGB.
    public var conversion: Duration
    /// When the frame was handed over, measured from the loop's start.
    public var wallTime: Duration
    /// How late the hand-over was against its due time (realtime clock only; `nil` offline).
    public var lateness: Duration?
    /// Frames skipped just before this one because they would have been shown more than a frame
    /// interval late (realtime clock only: the machine could not keep up).
    public var droppedBefore: Int

    /// Creates timings.
    public init(decode: Duration, conversion: Duration, wallTime: Duration, lateness: Duration?, droppedBefore: Int = 0) {
        self.decode = decode
        self.conversion = conversion
        self.wallTime = wallTime
        self.lateness = lateness
        self.droppedBefore = droppedBefore
    }
}

/// One delivered frame: upright RGB24 pixels at the requested size, with its place in the loop.
public struct VideoFrame: Sendable {
    /// The picture.
    public var image: RGBImage
    /// The time from the window's start at which the frame is shown (0 for a pass's first frame).
    public var presentationTime: Duration
    /// The frame's presentation time in seconds from the stream's own start.
    public var sourceTime: Double
    /// Which pass of the loop delivered it, from 0.
    public var loopIndex: Int
    /// Its position within the pass, from 0.
    public var index: Int
    /// Decode, conversion and hand-over timings.
    public var timings: FrameTimings
    /// Whether the decoder marked it a keyframe.
    public var isKeyframe: Bool
    /// The part of the upright source picture (after its orientation and any transform, in its own
    /// pixels) that the image shows: the crop of fill and smart crop, the whole picture for fit and
    /// stretch; `nil` for a frame the engine did not convert from a decoded one.
    public var uprightCrop: Rect?
    /// With ``ContentMode/smartCrop``: the window the smart crop chose (``uprightCrop``) and what placed
    /// it; `nil` in the other modes.
    public var smartCrop: SmartCropChoice?

    /// Creates a frame.
    public init(image: RGBImage, presentationTime: Duration, sourceTime: Double, loopIndex: Int, index: Int,
                timings: FrameTimings, isKeyframe: Bool) {
        self.image = image
        self.presentationTime = presentationTime
        self.sourceTime = sourceTime
        self.loopIndex = loopIndex
        self.index = index
        self.timings = timings
        self.isKeyframe = isKeyframe
    }

    /// RGB24 pixels, `width * 3` bytes per row, top row first.
    public var pixels: [UInt8] { image.pixels }
    /// Width in pixels.
    public var width: Int { image.width }
    /// Height in pixels.
    public var height: Int { image.height }
}

extension VideoFrame: CustomStringConvertible {
    /// One line, without the pixels: the size, ``sourceTime`` to the millisecond, ``loopIndex`` and
    /// ``index``, as in `VideoFrame(640x360 at 1.500 s, loop 0, index 12)`.
    public var description: String {
        "VideoFrame(\(width)x\(height) at \(DecimalText.fixed(sourceTime, 3)) s, loop \(loopIndex), index \(index))"
    }
}

extension Duration {
    /// The duration in seconds as a floating-point number.
    package var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }

    /// The duration in milliseconds as a floating-point number.
    var milliseconds: Double { seconds * 1000 }

    /// A duration from floating-point seconds, rounded to the nanosecond; NaN is zero and values
    /// beyond ±292 years (Int64 nanoseconds) are clamped, so hostile timestamps cannot trap.
    static func fromSeconds(_ value: Double) -> Duration {
        guard value.isFinite else { return .zero }
        let nanoseconds = (value * 1e9).rounded()
        let limit = 9.2e18
        return .nanoseconds(Int64(min(max(nanoseconds, -limit), limit)))
    }
}
