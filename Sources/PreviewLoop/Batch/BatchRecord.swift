import FoundationEssentials

/// The result of one clip, as one JSON Lines record in the results file (and `.complete.json` beside
/// its outputs). `status` is `ok` only when every output of the recipe exists and is not empty.
public struct BatchRecord: Sendable, Hashable, Codable {
    /// Always `clip` (the summary line has `summary`).
    public var type = "clip"
    public var id: String
    public var input: String
    /// `ok` or `failed`.
    public var status: Status
    /// Whether this run found the clip already done (or already failed for good) and left it alone.
    public var skipped: Bool
    /// For a failure: a stable reason code (``BatchFailure/reason(for:)``).
    public var reason: String?
    /// For a failure: `permanent` (bad input; retried only with `--retry-failed`) or `transient`
    /// (timeout, network, disk full; retried).
    public var permanence: Permanence?
    /// For a failure: the one-line error.
    public var message: String?
    /// Attempts this run made (0 when skipped).
    public var attempts: Int
    /// The files made, paths relative to the output directory.
    public var outputs: [Output]
    /// What the clip is, when it could be opened.
    public var clip: ClipInfo?
    /// Milliseconds: opening and probing, each output, the whole clip.
    public var timings: [String: Double]
    /// The shard that made the record, `I/N`.
    public var shard: String
    /// When the record was made, seconds since 1970.
    public var finishedAt: Double
    /// A hash of the input, its overrides and the recipe; a completed clip is redone when it changes.
    public var fingerprint: String

    public enum Status: String, Sendable, Hashable, Codable { case ok, failed }
    public enum Permanence: String, Sendable, Hashable, Codable { case permanent, transient }

    /// One file written for a clip, and what was chosen for it.
    public struct Output: Sendable, Hashable, Codable {
        /// `poster`, `strip`, `sprite_sheet`, `webvtt` or `hover`.
        public var kind: String
        /// The path relative to the output directory (`clip-1/poster.jpg`).
        public var path: String
        /// Its size in bytes, checked after writing.
        public var bytes: Int
        public var width: Int?
        public var height: Int?
        /// Poster: the frame's time; strip: the first tile's time.
        public var time: Double?
        /// Poster: why that frame (`first good frame`, `best available`…).
        public var choice: String?
        /// Poster: candidates skipped before it.
        public var skippedFrames: Int?
        /// Strip, sprites: tiles; hover: frames.
        public var tiles: Int?
        public var frames: Int?
        /// Hover: its duration in seconds; WebVTT: the seconds covered.
        public var duration: Double?

        public init(kind: String, path: String, bytes: Int) {
            self.kind = kind
            self.path = path
            self.bytes = bytes
        }

        enum CodingKeys: String, CodingKey {
            case kind, path, bytes, width, height, time, choice, tiles, frames, duration
            case skippedFrames = "skipped_frames"
        }
    }

    /// What the probe found.
    public struct ClipInfo: Sendable, Hashable, Codable {
        public var duration: Double?
        public var width: Int
        public var height: Int
        public var displayWidth: Int
        public var displayHeight: Int
        public var codec: String
        public var rotation: Int
        public var fps: Double?
        public var pixelFormat: String
        public var format: String

        public init(_ info: VideoInfo) {
            duration = info.duration
            width = info.width
            height = info.height
            displayWidth = info.displaySize.width
            displayHeight = info.displaySize.height
            codec = info.codecName
            rotation = info.rotation
            fps = info.frameRate?.doubleValue
            pixelFormat = info.pixelFormat
            format = info.formatName
        }

        enum CodingKeys: String, CodingKey {
            case duration, width, height, codec, rotation, fps, format
            case displayWidth = "display_width", displayHeight = "display_height", pixelFormat = "pixel_format"
        }
    }

    enum CodingKeys: String, CodingKey {
        case type, id, input, status, skipped, reason, permanence, message, attempts, outputs, clip, timings, shard
        case finishedAt = "finished_at", fingerprint
    }

    /// Creates a record.
    public init(id: String, input: String, status: Status, skipped: Bool = false, attempts: Int = 0, outputs: [Output] = [],
                clip: ClipInfo? = nil, timings: [String: Double] = [:], shard: String, fingerprint: String) {
        self.id = id
        self.input = input
        self.status = status
        self.skipped = skipped
        self.attempts = attempts
        self.outputs = outputs
        self.clip = clip
        self.timings = timings
        self.shard = shard
        self.finishedAt = Date().timeIntervalSince1970
        self.fingerprint = fingerprint
    }

    /// The record as one line of JSON (keys sorted, no newline).
    public func jsonLine() -> String {
        BatchJSON.line(self)
    }
}

/// How failures are classified for schedulers: permanent (the input is bad; retrying cannot help)
/// or transient (the environment failed: a timeout, the network, a full disk; a retry may succeed).
public enum BatchFailure {
    /// The stable reason code of an error: the ``PreviewLoopError/Code`` in snake case
    /// (`corrupt_data`, `not_media_file`, `timed_out`…), `disk_full` for an output that failed for
    /// lack of space.
    public static func reason(for error: PreviewLoopError) -> String {
        if isDiskFull(error) { return "disk_full" }
        var text = ""
        for character in error.code.rawValue {
            if character.isUppercase { text += "_" + character.lowercased() } else { text.append(character) }
        }
        return text
    }

    /// Whether retrying may help.
    public static func permanence(of error: PreviewLoopError) -> BatchRecord.Permanence {
        if isDiskFull(error) { return .transient }
        switch error.code {
        case .inputNotFound, .notMediaFile, .noVideoStream, .unsupportedCodec, .corruptData, .refusedByPolicy, .tooLarge,
             .invalidArgument, .decodingFailed:
            return .permanent
        case .inputNotReadable, .timedOut, .cancelled, .outputNotWritable, .encodingFailed:
            // Reading a network input, or writing when space or permissions run out: the environment,
            // not the clip. An encoder that fails on a write (ENOSPC in the muxer) is reported as encodingFailed.
            return .transient
        }
    }

    static func isDiskFull(_ error: PreviewLoopError) -> Bool {
        let text = error.description
        return text.contains("No space left on device") || text.contains("Disk quota exceeded") || error.ffmpegCode == -28
            || error.ffmpegCode == -122
    }
}

/// The summary line that ends a results file.
public struct BatchSummary: Sendable, Hashable, Codable {
    public var type = "summary"
    public var shard: String
    /// Clips in this shard of the manifest.
    public var clips: Int
    public var ok: Int
    public var failed: Int
    public var permanent: Int
    public var transient: Int
    /// Clips found done or failed for good and left alone.
    public var skipped: Int
    /// Clips not reached because the run was stopped (SIGTERM, cancellation).
    public var notDone: Int
    /// Whether the run was stopped before it went through every clip.
    public var stopped: Bool
    /// The first clip (in manifest order) not done when the run stopped.
    public var stoppedBefore: String?
    public var failuresByReason: [String: Int]
    public var seconds: Double

    enum CodingKeys: String, CodingKey {
        case type, shard, clips, ok, failed, permanent, transient, skipped, stopped, seconds
        case notDone = "not_done", stoppedBefore = "stopped_before", failuresByReason = "failures_by_reason"
    }

    public init(shard: String, records: [BatchRecord], clips: Int, stoppedBefore: String?, seconds: Double) {
        self.shard = shard
        self.clips = clips
        ok = records.filter { $0.status == .ok }.count
        failed = records.count - ok
        permanent = records.filter { $0.permanence == .permanent }.count
        transient = records.filter { $0.permanence == .transient }.count
        skipped = records.filter(\.skipped).count
        notDone = clips - records.count
        stopped = stoppedBefore != nil
        self.stoppedBefore = stoppedBefore
        failuresByReason = Dictionary(grouping: records.compactMap(\.reason), by: { $0 }).mapValues(\.count)
        self.seconds = seconds
    }

    /// The exit status schedulers act on: 75 (`EX_TEMPFAIL`, retry the task) when a clip failed
    /// transiently or clips were left undone, else 65 (`EX_DATAERR`) when one failed permanently, else 0.
    public var exitStatus: Int32 {
        if transient > 0 || notDone > 0 { return 75 }
        if permanent > 0 { return 65 }
        return 0
    }

    public func jsonLine() -> String { BatchJSON.line(self) }
}

enum BatchJSON {
    static func line(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
