/// What a clip's best video stream is, as probed: sizes, timing, orientation and colour.
public struct VideoInfo: Sendable, Hashable {
    /// The video's own extent in seconds, from its start to its last frame's end (the video stream's
    /// duration; the container's when the stream does not say); `nil` if unknown. Spans, percentages
    /// and sprites use it, so an audio or subtitle stream that outlasts the picture adds no frozen tail.
    /// For a truncated file it is the ``decodableDuration``: the frames the file still holds.
    public var duration: Double?
    /// The video's duration as the file states it (its header, index or stream), whether or not the
    /// data holds it all; `nil` if unknown. Equal to ``duration`` unless the file is truncated.
    public var declaredDuration: Double?
    /// Where the video's data ends, in seconds from its start, measured without decoding: the end of
    /// the last whole video packet (equal to ``declaredDuration`` for a whole file). `nil` when not
    /// measured: standard input, URLs of containers without an MP4 index, and containers that state
    /// no duration (MPEG-TS, whose duration FFmpeg measures from the data itself).
    public var decodableDuration: Double?
    /// Whether the file is cut short: its data ends before the duration it declares (a download or
    /// copy that stopped early). `false` when not measured.
    public var isTruncated = false
    /// The container's duration in seconds, from the video stream's start (may be longer than
    /// ``duration`` when audio or subtitles outlast the picture); `nil` if unknown.
    public var containerDuration: Double?
    /// The video stream's start time in the container, in seconds (an MPEG-TS often starts near 1.4 s).
    public var startTime: Double
    /// The codec's short name, for example `h264`.
    public var codecName: String
    /// The decoded picture's width in pixels.
    public var width: Int
    /// The decoded picture's height in pixels.
    public var height: Int
    /// The width of one pixel relative to its height (1:1 when the stream does not say).
    public var sampleAspectRatio: Rational
    /// The turn that makes the picture upright, from the display matrix.
    public var orientation: Orientation
    /// Clockwise rotation in degrees a viewer sees: 0, 90, 180 or 270.
    public var rotation: Int
    /// The upright picture's size in square pixels: the width scaled by the sample aspect ratio,
    /// then exchanged with the height for quarter turns.
    public var displaySize: Size
    /// The average frame rate, if known.
    public var frameRate: Rational?

    /// Seconds between frames at ``frameRate``, or 0.04 (25 fps) when the rate is unknown.
    public var frameInterval: Double { frameInterval(orElse: 0.04) }

    /// Seconds between frames at ``frameRate``, or `fallback` when the rate is unknown: the one place
    /// the interval is computed (the decoder, the loop, render and the samplers use it).
    func frameInterval(orElse fallback: Double) -> Double {
        frameRate?.doubleValue.flatMap { $0 > 0 ? 1 / $0 : nil } ?? fallback
    }
    /// The decoded pixel format's name, for example `yuv420p`.
    public var pixelFormat: String
    /// `tv` (limited), `pc` (full) or `unknown`.
    public var colorRange: String
    /// The YCbCr matrix name, for example `bt709`, or `unknown`.
    public var colorSpace: String
    /// The transfer characteristic (FFmpeg's name): `bt709`, `smpte2084` (PQ), `arib-std-b67` (HLG), … or `unknown`.
    public var colorTransfer: String = "unknown"
    /// The colour primaries (FFmpeg's name): `bt709`, `bt2020`, … or `unknown`.
    public var colorPrimaries: String = "unknown"
    /// Bits per sample of the decoded pictures (8, 10, 12), 0 if unknown.
    public var bitDepth: Int = 0
    /// SDR, HDR10, HDR10+, HLG or Dolby Vision.
    public var hdrFormat: HDRFormat = .sdr
    /// The mastering display (SMPTE ST 2086) the stream declares, from the container or its first frame.
    public var masteringDisplay: MasteringDisplay?
    /// The content light levels (MaxCLL, MaxFALL) the stream declares, from the container or its first frame.
    public var contentLightLevel: ContentLightLevel?
    /// The Dolby Vision configuration record, when the stream has one.
    public var dolbyVision: DolbyVisionConfiguration?
    /// The container format's short name(s), for example `mov,mp4,m4a,3gp,3g2,mj2`.
    public var formatName: String
    /// The container's overall bit rate in bits per second, if known.
    public var bitRate: Int?
    /// The number of video streams (cover-art pictures included).
    public var videoStreamCount: Int
    /// The number of audio streams (never decoded).
    public var audioStreamCount: Int
    /// The number of subtitle streams (never decoded).
    public var subtitleStreamCount: Int
    /// Whether the chosen video stream is a single attached picture (cover art) rather than a video.
    public var isStillPicture: Bool
    /// Whether the stream declares interlaced fields, and which is displayed first: `true` top, `false`
    /// bottom, `nil` progressive or not said. ``Deinterlacing/auto`` deinterlaces every frame of a
    /// stream that declares them, flagged or not.
    var declaredTopFieldFirst: Bool?

    /// The display size for a coded size, sample aspect ratio and orientation.
    /// Turns the picture by `transform` after its own orientation: the orientation, rotation and display
    /// size become the transformed picture's.
    mutating func reorient(by transform: PictureTransform) {
        orientation = orientation.followed(by: transform.orientation)
        rotation = orientation.clockwiseDegrees
        displaySize = Self.displaySize(width: width, height: height, sampleAspectRatio: sampleAspectRatio, orientation: orientation)
    }

    static func displaySize(width: Int, height: Int, sampleAspectRatio: Rational, orientation: Orientation) -> Size {
        let sar = sampleAspectRatio.doubleValue ?? 1
        let upright = Size(width: max(1, Int((Double(width) * sar).rounded())), height: height)
        return orientation.swapsAxes ? upright.transposed : upright
    }

    /// Notes the measured end of the data: a truncated file's ``duration`` becomes the decodable one.
    mutating func noteDecodableDuration(_ decodable: Double?) {
        declaredDuration = duration
        guard let decodable, let declared = duration else { return }
        decodableDuration = decodable
        isTruncated = decodable < declared - DataEndCheck.tolerance(frameInterval: frameInterval) / 2
        // Nothing whole to show: the stated extent stays, so a window or a span still resolves.
        if isTruncated && decodable > 0 { duration = decodable }
    }
}
