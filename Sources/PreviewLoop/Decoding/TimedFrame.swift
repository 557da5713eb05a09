internal import PreviewLoopFFmpeg

/// A decoded picture with its time: seconds from the stream's start and how long it is shown.
struct TimedFrame {
    let frame: DecodedFrame
    /// Seconds from the stream's start (presentation time).
    let time: Double
    /// How long the frame is displayed, in seconds (from the packet, or one frame interval).
    let duration: Double
    let isKeyframe: Bool
    /// Time spent reading and decoding to produce this frame.
    let decodeTime: Duration
}
