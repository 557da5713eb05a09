/// How PreviewLoop sanitises a stream's timestamps where they enter (``MediaInput`` and ``VideoDecoder``),
/// so a crafted file cannot make a window, an output or a job stretch across a billion seconds.
///
/// The rule, as the README's "Security and limits" states it:
/// - **Origin**: the stream's start is the container's start for the video stream; when the container
///   gives none, the smallest timestamp among the first video packets (the first frame's time), never
///   the container's zero.
/// - **Declared extent**: a duration above ``maxDuration`` (10,000,000 s, about 115 days), or one with
///   less than ``minBytesPerSecond`` byte of file per second, is corrupt timing — except that a
///   container whose start lies more than ``maxGap`` from zero and whose declared duration counts from
///   zero (an end time) gets its duration measured from its start.
/// - **Frames**: a frame more than ``maxGap`` (600 s) after the previous one, more than ``maxGap``
///   before the start, or more than ``maxGap`` past the declared end is corrupt timing: the job fails
///   with ``PreviewLoopError/Code/corruptData`` instead of covering the gap.
package enum TimingRule {
    /// The largest gap between consecutive frames, and how far outside the declared extent a frame may
    /// lie, in seconds.
    package static let maxGap = 600.0
    /// The longest declared duration accepted, in seconds.
    package static let maxDuration = 10_000_000.0
    /// The fewest bytes of file per declared second (when the size is known).
    package static let minBytesPerSecond = 1.0
    /// Video packets read for the origin when the container gives no start.
    static let originPackets = 16
    /// Packets of any stream read at most for the origin.
    static let originReadLimit = 256

    /// Whether `duration` seconds is implausible for a file of `bytes` bytes (`bytes < 0`: unknown).
    static func isImplausible(duration: Double, bytes: Int64) -> Bool {
        bytes >= 0 && duration > 60 && Double(bytes) / duration < minBytesPerSecond
    }
}
