import Synchronization

/// How many FFmpeg owner objects (``FormatContext``, ``CodecContext``, ``DecodedFrame``, ``Packet``)
/// are alive in the process: a debug counter that lets tests prove stopped loops leave none behind.
enum LiveFFmpegObjects {
    static let count = Atomic<Int>(0)

    /// An owner took its C object (called once all its stored properties are set, so `deinit` balances it).
    static func opened() { count.add(1, ordering: .relaxed) }
    /// An owner freed its C object.
    static func closed() { count.subtract(1, ordering: .relaxed) }
}
