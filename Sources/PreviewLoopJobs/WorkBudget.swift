import PreviewLoop

/// The work a job may do, computed before anything is decoded (README, "Security and limits").
///
/// - Memory: the bytes of pictures a job holds at once, estimated from its sizes and counts (a GIF holds
///   all its frames), at most `--max-memory` MB (default 1024, up to 65536).
/// - Frames: the pictures a job produces (render and card frames, sprite thumbnails), at most
///   `--max-frames` (default 100,000, up to 10,000,000); writers also count them while running, so
///   frames repeated or replayed from memory cannot exceed it either.
/// - Encoder sizes: FFmpeg's image encoders need (W+128)×(H+128) below 268,435,456 (so at most about
///   16,250×16,250); WebP at most 16383 a side. Not settable.
struct WorkBudget: Equatable, Sendable, OptionGroup {
    /// `--max-memory`, in MB (2^20 bytes).
    @Option(WorkBudget.maxMemory) var maxMemoryMB = WorkBudget.defaultMemoryMB
    /// `--max-frames`.
    @Option(WorkBudget.maxFrames) var maxFrames = WorkBudget.defaultFrames

    static let defaultMemoryMB = 1024
    static let memoryRange = 16...65_536
    static let defaultFrames = 100_000
    static let framesRange = 1...10_000_000

    /// The memory limit in bytes.
    var maxBytes: Double { Double(maxMemoryMB) * 1_048_576 }

    /// FFmpeg's `av_image_check_size`: (W+128)×(H+128) must stay below INT_MAX / 8.
    static let ffmpegAreaLimit = OutputLimits.ffmpegAreaLimit

    /// Why an encoder cannot take a picture of `size` (`nil` when it can): the library's one rule
    /// (``OutputLimits/encoderRefusal(_:webp:ownEncoder:jpeg:)``), which batch recipes use too.
    static func encoderRefusal(_ size: Size, webp: Bool, ownEncoder: Bool = false, jpeg: Bool = false) -> String? {
        OutputLimits.encoderRefusal(size, webp: webp, ownEncoder: ownEncoder, jpeg: jpeg)
    }

    /// Why `format`'s encoder cannot take a still of `size` (`nil` when it can)
    /// (``OutputLimits/encoderRefusal(_:format:)``).
    static func encoderRefusal(_ size: Size, format: ImageFileFormat) -> String? {
        OutputLimits.encoderRefusal(size, format: format)
    }

    /// `nil` when `bytes` fit the memory limit, else the refusal.
    func memoryRefusal(_ bytes: Double, what: String) -> String? {
        guard bytes > maxBytes else { return nil }
        return "\(what) would hold about \(Self.megabytes(bytes)) MB of pictures in memory, more than the limit of "
            + "\(maxMemoryMB) MB (raise it with --max-memory <MB>, at most \(Self.memoryRange.upperBound))"
    }

    /// `nil` when `frames` fit the frame limit, else the refusal.
    func frameRefusal(_ frames: Double, what: String) -> String? {
        guard frames > Double(maxFrames) else { return nil }
        return "\(what) would make \(frames < 1e15 ? String(Int(frames)) : "more than 10^15") frames, more than the limit of "
            + "\(maxFrames) (raise it with --max-frames <n>, at most \(Self.framesRange.upperBound))"
    }

    static func megabytes(_ bytes: Double) -> String {
        bytes < 1e18 ? String(Int((bytes / 1_048_576).rounded(.up))) : "more than 10^12"
    }

    /// Bytes of one RGB picture.
    static func rgb(_ size: Size) -> Double { Double(size.width) * Double(size.height) * 3 }
    /// Bytes of one RGBA picture.
    static func rgba(_ size: Size) -> Double { Double(size.width) * Double(size.height) * 4 }
}

/// A request over the work budget, found once the clip is open but before decoding: reported as one
/// `Error:` line with the usage status (64).
struct WorkLimitError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }

    /// Throws when `refusal` is set: a limit found once the source's size is known (exit 64, like at parse time).
    static func check(_ refusal: WorkBudget.Refusal?) throws(WorkLimitError) {
        if let refusal { throw WorkLimitError(message: refusal.message + ".") }
    }
}

extension WorkBudget {
    /// A request over a limit: the option that sets the limit and why.
    struct Refusal: Equatable, Sendable {
        var option: String
        var message: String
    }
}

extension SizeRequest {
    /// The sizes this request can become that are known before the source is open: the exact size, or
    /// both turns of the default box. A size that follows the source's shape is checked once it is open.
    var knownSizes: [Size] {
        switch self {
        case .exact(let size): [size]
        case .orientedBox(let box): box.width == box.height ? [box] : [box, box.transposed]
        case .width, .height, .source: []
        }
    }
}

extension WorkBudget {
    /// `--max-memory <MB>`.
    static let maxMemory = ValueOption<Int>.integer(
        "max-memory", value: "MB",
        help: "Refuse, before decoding, a job whose pictures would take more memory than this (estimated from "
            + "sizes and counts; a GIF holds all its frames), \(memoryRange.lowerBound) to \(memoryRange.upperBound).",
        default: defaultMemoryMB, in: memoryRange)

    /// `--max-frames <n>`.
    static let maxFrames = ValueOption<Int>.integer(
        "max-frames",
        help: "Refuse, before decoding, a job that would make more frames or thumbnails than this; frames repeated "
            + "or replayed from memory count too. \(framesRange.lowerBound) to \(framesRange.upperBound).",
        default: defaultFrames, in: framesRange)
}
