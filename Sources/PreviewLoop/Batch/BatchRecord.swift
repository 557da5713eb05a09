import FoundationEssentials

/// The result of one clip, as one JSON Lines record in the results file (and `.complete.json` beside
/// its outputs). `status` is `ok` only when every output of the recipe exists and is not empty.
///
/// The single-clip commands' `--json` prints the same record (with `command` set, no `shard` or
/// `fingerprint`).
public struct BatchRecord: Sendable, Hashable, Codable {
    /// Always `clip` (the summary line has `summary`).
    public var type = "clip"
    public var id: String
    /// The single-clip command that made the record (`thumb`, `strip`…); `nil` in a batch.
    public var command: String?
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
    /// For an `s3://` input or an http(s) one read in ranges, the bytes fetched and requests made (`--json`
    /// of thumb, strip, sheet and sprites, and batch records); `nil` otherwise.
    public var remote: RemoteReads?
    /// Milliseconds: opening and probing, each output, the whole clip.
    public var timings: [String: Double]
    /// The shard that made the record, `I/N`; `nil` outside a batch.
    public var shard: String?
    /// When the record was made, seconds since 1970.
    public var finishedAt: Double
    /// A hash of the input, its overrides and the recipe; a completed clip is redone when it changes.
    /// `nil` outside a batch.
    public var fingerprint: String?
    /// The id of an earlier clip of the run whose input has the same bytes: this clip's files are hard
    /// links to that clip's (made once), and its `clip` and choices are that clip's.
    public var duplicateOf: String?

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
        /// Poster or frame at a time (`--at`, a recipe's `at`): the time asked for, in seconds (a
        /// percentage resolved); ``time`` is the frame given, earlier past a truncated file's data.
        /// Hover with `flash_safety` `avoid`: the window's start asked for; ``time`` is where it starts.
        public var timeAsked: Double?
        /// Poster: why that frame (`first good frame`, `best available`…); hover with `flash_safety`
        /// `avoid`: `window asked for` or `moved clear of flashes`.
        public var choice: String?
        /// Poster: candidates skipped before it.
        public var skippedFrames: Int?
        /// Strip, sprites: tiles; hover: frames.
        public var tiles: Int?
        public var frames: Int?
        /// Hover: its duration in seconds; WebVTT: the seconds covered.
        public var duration: Double?
        /// Strip and sheet made by `strip`/`sheet`: each tile's choice, the dropped duplicates, the cut search.
        public var plan: TilePlanReport?
        /// Hover made with a loop point or a seam (and `render`): where the loop ends in the clip, seconds.
        public var loopPoint: Double?
        /// Hover made with a loop point or a seam (and `render`): how the wrap was joined and how visible it is.
        public var seam: SeamReport?
        /// Hover made by `render --flash-safety check`: the photosensitive-flash verdicts of the loop on repeat.
        public var flashes: FlashReport?
        /// Poster and frame: the picture's ThumbHash, standard base64 (``ImagePlaceholder/thumbHash``).
        public var thumbhash: String?
        /// Poster and frame: the picture's BlurHash, 4x3 components (``ImagePlaceholder/blurHash``).
        public var blurhash: String?
        /// Poster and frame: the picture's dominant colour, `#rrggbb` (``ImagePlaceholder/dominantColor``).
        public var dominantColor: String?
        /// Poster and frame: the picture's 64-bit perceptual hash, 16 hex digits (``PerceptualHash``).
        public var phash: String?
        /// Strip, sheet and sprite sheet: each tile's perceptual hash (16 hex digits), in order.
        public var tilePhashes: [String]?
        /// Poster of `thumb --at best --candidates N`: the top N candidates as the search ranked them,
        /// best first (``PosterChoice/ranking``).
        public var candidates: [PosterRanking]?
        /// Poster and frame made with `--fit smartcrop`: the window in the upright source picture's
        /// pixels and what placed it (``VideoFrame/smartCrop``).
        public var smartCrop: SmartCropChoice?

        public init(kind: String, path: String, bytes: Int) {
            self.kind = kind
            self.path = path
            self.bytes = bytes
        }

        /// Sets ``thumbhash``, ``blurhash`` and ``dominantColor`` (`nil` leaves them all unset).
        public var placeholder: ImagePlaceholder? {
            get {
                guard let thumbhash, let blurhash, let dominantColor, let color = RGBAColor(parsing: dominantColor) else { return nil }
                return ImagePlaceholder(thumbHash: thumbhash, blurHash: blurhash, dominantColor: color)
            }
            set {
                thumbhash = newValue?.thumbHash
                blurhash = newValue?.blurHash
                dominantColor = newValue.map { "\($0.dominantColor)" }
            }
        }

        enum CodingKeys: String, CodingKey {
            case kind, path, bytes, width, height, time, choice, tiles, frames, duration, plan, seam, flashes, thumbhash, blurhash
            case phash, candidates
            case skippedFrames = "skipped_frames", loopPoint = "loop_point", timeAsked = "time_asked", dominantColor = "dominant_color"
            case tilePhashes = "tile_phashes", smartCrop = "smart_crop"
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
        /// The dynamic range: `SDR`, `HDR10`, `HDR10+`, `HLG` or `Dolby Vision` (absent in records of older runs).
        public var hdr: String?
        /// Dolby Vision's profile (`5`, `8.1`…) when the stream carries it.
        public var dolbyVision: String?
        /// Why the pictures cannot be shown right (Dolby Vision profile 5), as the commands warn.
        public var warning: String?
        /// Whether the file is cut short (its data ends before the duration it declares); absent when
        /// not checked (``VideoInfo/decodableDuration``) and in records of older runs.
        public var truncated: Bool?
        /// Where the video's data ends, in seconds (``VideoInfo/decodableDuration``); absent when not checked.
        public var decodableDuration: Double?

        public init(_ info: VideoInfo) {
            duration = info.declaredDuration ?? info.duration
            width = info.width
            height = info.height
            displayWidth = info.displaySize.width
            displayHeight = info.displaySize.height
            codec = info.codecName
            rotation = info.rotation
            fps = info.frameRate?.doubleValue
            pixelFormat = info.pixelFormat
            format = info.formatName
            hdr = info.hdrFormat.rawValue
            dolbyVision = info.dolbyVision?.profileName
            warning = info.colorWarning
            if let decodable = info.decodableDuration {
                truncated = info.isTruncated
                decodableDuration = (decodable * 1e6).rounded() / 1e6
            }
        }

        enum CodingKeys: String, CodingKey {
            case duration, width, height, codec, rotation, fps, format, hdr, warning
            case displayWidth = "display_width", displayHeight = "display_height", pixelFormat = "pixel_format"
            case dolbyVision = "dolby_vision", truncated, decodableDuration = "decodable_duration"
        }
    }

    enum CodingKeys: String, CodingKey {
        case type, id, command, input, status, skipped, reason, permanence, message, attempts, outputs, clip, timings, shard, remote
        case finishedAt = "finished_at", fingerprint, duplicateOf = "duplicate_of"
    }

    /// Creates a record.
    public init(id: String, input: String, status: Status, skipped: Bool = false, attempts: Int = 0, outputs: [Output] = [],
                clip: ClipInfo? = nil, timings: [String: Double] = [:], shard: String?, fingerprint: String?) {
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
        JSONValue.line(self)
    }
}

/// How a rendered loop's wrap was made and how visible it is, as a record carries it (``SeamMeasure``,
/// rounded to 4 decimals): `cut` or `crossfade`, the crossfade's seconds, the last→first difference,
/// the median step and their ratio (absent when infinite: a still loop with a jump).
public struct SeamReport: Sendable, Hashable, Codable {
    /// `cut` or `crossfade`.
    public var kind: String
    /// Seconds of crossfade at the seam (0 for a cut).
    public var crossfade: Double
    /// ``SeamMeasure/seamDifference``.
    public var seamDifference: Double
    /// ``SeamMeasure/medianDifference``.
    public var medianDifference: Double
    /// ``SeamMeasure/ratio``, `nil` when infinite.
    public var ratio: Double?

    /// The report of a render.
    public init(_ summary: RenderSummary) {
        func rounded(_ value: Double) -> Double { (value * 1e4).rounded() / 1e4 }
        kind = summary.crossfade > .zero ? "crossfade" : "cut"
        crossfade = rounded(summary.crossfade.seconds)
        seamDifference = rounded(summary.seam.seamDifference)
        medianDifference = rounded(summary.seam.medianDifference)
        ratio = summary.seam.ratio.isFinite ? rounded(summary.seam.ratio) : nil
    }

    enum CodingKeys: String, CodingKey {
        case kind, crossfade, ratio
        case seamDifference = "seam_difference", medianDifference = "median_difference"
    }
}

/// What `strip` and `sheet` chose for their tiles, as a record carries it: each tile's time asked,
/// the frame's time, the reason (`start`, `cut`, `fill`, `even`) and cut score; the near-duplicates
/// dropped; for `--pick scenes` the cut search. Times rounded to microseconds.
public struct TilePlanReport: Sendable, Hashable, Codable {
    /// One tile's choice.
    public struct Tile: Sendable, Hashable, Codable {
        /// The time asked for, in seconds.
        public var time: Double
        /// The time of the frame shown.
        public var frameTime: Double
        /// `start`, `cut`, `fill` or `even`.
        public var reason: String
        /// A cut's score, when the tile is a cut.
        public var score: Double?
        /// For a dropped tile: the kept tile's frame time, and the distance to it.
        public var duplicateOf: Double?
        public var distance: Double?

        enum CodingKeys: String, CodingKey {
            case time, reason, score, distance
            case frameTime = "frame_time", duplicateOf = "duplicate_of"
        }
    }
    /// The cut search of `--pick scenes`.
    public struct Scan: Sendable, Hashable, Codable {
        /// A detected cut: its time, score and evidence (`frames`, or `keyframe`: placed on a keyframe
        /// the encoder started early, its group's packets showing no cut; absent in records written
        /// before it was reported).
        public struct Cut: Sendable, Hashable, Codable {
            public var time: Double
            public var score: Double
            public var evidence: String?
        }
        /// Every cut found.
        public var cuts: [Cut]
        /// Keyframes decoded alone to compare neighbouring groups.
        public var keyframesDecoded: Int
        /// Groups of pictures in the span.
        public var groups: Int
        /// Groups decoded frame by frame.
        public var groupsDecoded: Int
        /// Frames decoded frame by frame.
        public var framesDecoded: Int
        /// Packets whose size made them cut candidates (absent when the packets were not read).
        public var packetCandidates: Int?

        enum CodingKeys: String, CodingKey {
            case cuts, groups
            case keyframesDecoded = "keyframes_decoded", groupsDecoded = "groups_decoded", framesDecoded = "frames_decoded"
            case packetCandidates = "packet_candidates"
        }
    }
    /// `even` or `scenes`.
    public var pick: String
    /// The tiles shown, in order.
    public var tiles: [Tile]
    /// Near-duplicates dropped (with `duplicate_of` and `distance`).
    public var dropped: [Tile]
    /// The cut search, for `scenes`.
    public var scan: Scan?
    /// A `scenes` sheet with fewer distinct shots than places: the grid asked for and the grid drawn
    /// (`4x4`, `4x1`); absent otherwise.
    public var gridAsked: String?
    public var grid: String?

    enum CodingKeys: String, CodingKey {
        case pick, tiles, dropped, scan, grid
        case gridAsked = "grid_asked"
    }

    /// The report of a plan.
    public init(_ plan: TilePlan) {
        func rounded(_ value: Double) -> Double { (value * 1e6).rounded() / 1e6 }
        pick = plan.pick.rawValue
        gridAsked = plan.gridAsked?.description
        grid = plan.grid?.description
        tiles = zip(plan.tiles, plan.frames).map { tile, frame in
            Tile(time: rounded(tile.time), frameTime: rounded(frame.sourceTime), reason: tile.reason.rawValue,
                 score: tile.score.map(rounded))
        }
        dropped = plan.dropped.map { drop in
            Tile(time: rounded(drop.choice.time), frameTime: rounded(drop.frameTime), reason: drop.choice.reason.rawValue,
                 score: drop.choice.score.map(rounded), duplicateOf: rounded(drop.duplicateOf), distance: rounded(drop.distance))
        }
        scan = plan.scan.map { scan in
            Scan(cuts: scan.cuts.map { Scan.Cut(time: rounded($0.time), score: rounded($0.score), evidence: $0.evidence.rawValue) },
                 keyframesDecoded: scan.keyframesDecoded, groups: scan.groups, groupsDecoded: scan.groupsDecoded,
                 framesDecoded: scan.framesDecoded, packetCandidates: scan.packetCandidates)
        }
    }
}

/// How failures are classified for schedulers: permanent (the input is bad; retrying cannot help)
/// or transient (the environment failed: a timeout, the network, a full disk; a retry may succeed).
public enum BatchFailure {
    /// The reason of a clip interrupted by a stop of the batch (SIGTERM, SIGINT, ``BatchRunner/stop()``):
    /// transient, a rerun makes it.
    public static let interrupted = "interrupted"
    /// The reason of a clip whose folder `OUT/<id>` holds something batch did not make, or an input of
    /// the run: permanent, never remembered (a rerun makes the clip once the path is free).
    public static let outputConflict = "output_conflict"

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
        // A store that refuses the credentials or permissions (HTTP 403) refuses them again on a rerun.
        if ObjectOutput.isRefusal(error) { return .permanent }
        switch error.code {
        case .inputNotFound, .notMediaFile, .noVideoStream, .unsupportedCodec, .corruptData, .refusedByPolicy, .tooLarge,
             .invalidArgument, .decodingFailed, .unsafeFlashes:
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

    /// The summary of a run's records.
    ///
    /// - Parameters:
    ///   - shard: the shard's name (`0/1`).
    ///   - records: the run's clip records.
    ///   - clips: the clips of the shard.
    ///   - stoppedBefore: the first clip not started when the run was stopped, if any.
    ///   - stopped: whether the run was stopped (a signal, ``BatchRunner/stop()``), also when every clip
    ///     had started and each in flight was recorded `interrupted`.
    ///   - seconds: how long the run took.
    public init(shard: String, records: [BatchRecord], clips: Int, stoppedBefore: String?, stopped: Bool = false, seconds: Double) {
        self.shard = shard
        self.clips = clips
        ok = records.filter { $0.status == .ok }.count
        failed = records.count - ok
        permanent = records.filter { $0.permanence == .permanent }.count
        transient = records.filter { $0.permanence == .transient }.count
        skipped = records.filter(\.skipped).count
        notDone = clips - records.count
        self.stopped = stopped || stoppedBefore != nil
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

    /// The summary as one line of JSON (keys sorted, no newline).
    public func jsonLine() -> String { JSONValue.line(self) }
}
