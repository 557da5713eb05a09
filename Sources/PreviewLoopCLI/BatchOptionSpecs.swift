import PreviewLoop

extension OptionSpec {
    /// The `<manifest>` argument's help.
    static let batchManifestHelp = "JSON Lines, one object per clip: {\"id\": \"…\", \"input\": \"path or http(s) URL\"} "
        + "with optional \"start\", \"length\" (poster window, hover start) and \"every\" (sprites); or a plain "
        + "list of paths/URLs, one a line (ids derived: safe base name + hash). Relative paths are taken from "
        + "the manifest's folder; - reads the manifest from standard input. Read whole before any clip starts. "
        + "A folder instead: every video file under it, recursively (by extension; hidden entries skipped), ids from "
        + "the relative paths (trailers/a.mp4 → trailers_a), with --include and --exclude. "
        + "'batch report <OUT or results files…>' merges results instead."
}

extension BatchCommandOptions {
    /// `preview-loop batch`'s options, in help order.
    static let declarations: [any OptionDeclaration] = [
        out, recipe, jobs, force, retryFailed, retries, retryDelay, shard, shardCount, progress, ReportingOptions.quiet,
        timeout, deadline, memoryBudget, threads, InputOptions.deinterlace, TLSOptions.insecure, TLSOptions.caFile,
        include, exclude, json, duplicates, hamming, CommonOptions.help,
    ]

    /// The library's defaults, which the CLI's defaults are.
    private static let libraryDefaults = BatchOptions(outputDirectory: "")

    /// The options that only a run takes (`batch report` refuses them).
    static let runOnly: [any OptionDeclaration] = [
        out, recipe, jobs, retries, retryDelay, shard, shardCount, timeout, deadline, memoryBudget, threads,
        InputOptions.deinterlace, TLSOptions.insecure, TLSOptions.caFile, force, retryFailed, progress, ReportingOptions.quiet,
        include, exclude,
    ]

    /// `--include <glob>`, repeatable: with a folder, only the video files matching one.
    static let include = Option<String?>(
        "include", value: "glob",
        help: "With a folder: only video files whose relative path or name matches this shell glob (*.mp4, "
            + "trailers/*); may be given more than once (a file matching any is taken).",
        default: nil, showing: nil, expecting: "a non-empty glob") { $0.isEmpty ? nil : .some($0) }
    /// `--exclude <glob>`, repeatable: with a folder, files and folders to skip.
    static let exclude = Option<String?>(
        "exclude", value: "glob",
        help: "With a folder: skip files and folders whose relative path or name matches this shell glob "
            + "(*.tmp, drafts); may be given more than once.",
        default: nil, showing: nil, expecting: "a non-empty glob") { $0.isEmpty ? nil : .some($0) }

    static let out = Option<String?>.path(
        "out", short: "o", value: "dir",
        help: "The output directory: OUT/<id>/ per clip (poster.jpg, strip.jpg, contact-sheet.jpg, "
            + "sheet-N.jpg + thumbnails.vtt, hover.mp4 or .webp or .gif), results.jsonl (results.shard-I-of-N.jsonl for a shard).",
        required: true, completing: .directory)
    static let recipe = Option<String?>.path(
        "recipe", value: "file",
        help: "A JSON recipe: {\"poster\": {…}, \"strip\": {…}, \"sheet\": {…}, \"sprites\": {…}, \"hover\": {…}}, each "
            + "with the single-clip command's options (poster \"at\" as thumb --at; strip \"pick\", \"gap\", \"timestamps\"; "
            + "sheet \"grid\", \"width\"/\"tile_width\", \"gap\", \"margin\", \"header\", \"timestamps\", \"pick\"; hover "
            + "\"loop_point\", \"seam\" and \"format\" (mp4, webp, gif) as render). Unknown keys and values out of range are usage errors. See Docs/batch.md.",
        showing: "poster+sprites")
    static let jobs = Option<Int>.integer("jobs", short: "j", help: "Clips at a time, 1 to 256.",
                                          default: BatchOptions.processorCount, in: 1...256, showing: "cores")
    static let force = Flag("force", help: "Redo clips whose outputs are already complete.")
    static let retryFailed = Flag("retry-failed", help: "Retry clips that failed permanently in an earlier run.")
    static let retries = Option<Int>.integer(
        "retries", help: "Extra attempts for a transient failure (timeout, network, disk full), 0 to 100.",
        default: libraryDefaults.retries, in: 0...100)
    static let retryDelay = Option<Double>(
        "retry-delay", value: "seconds", help: "Wait before the first retry, doubled for each further one (at most 60 s).",
        default: libraryDefaults.retryDelay, showing: Format.limit(libraryDefaults.retryDelay),
        expecting: "seconds from 0 to 3600") { text in
        Double(text).flatMap { $0.isFinite && $0 >= 0 && $0 <= 3600 ? $0 : nil }
    }
    static let shard = Option<BatchShard?>(
        "shard", value: "I/N",
        help: "Do shard I (0 to N-1) of N: the clips whose id hashes "
            + "to I, a deterministic, disjoint share. Without it: from SLURM_ARRAY_TASK_ID and "
            + "SLURM_ARRAY_TASK_COUNT, JOB_COMPLETION_INDEX, or AWS_BATCH_JOB_ARRAY_INDEX and "
            + "AWS_BATCH_JOB_ARRAY_SIZE when set, else the whole manifest.",
        default: nil, showing: "0/1", expecting: "I/N with 0 ≤ I < N, for example 3/16") { text in
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]),
              let shard = try? BatchShard(index: index, count: count) else { return nil }
        return .some(shard)
    }
    static let shardCount = Option<Int?>.optionalInteger(
        "shard-count", help: "The shard count for an index taken from the "
            + "environment (Kubernetes gives only JOB_COMPLETION_INDEX; or set PREVIEW_LOOP_SHARD_COUNT).",
        in: 1...100_000)
    /// `--progress`, the reporting group's flag; a batch's lines are JSON objects, one per finished clip.
    static let progress = ReportingOptions.progress
    static let timeout = Option<Double>(
        "timeout", value: "seconds", help: "Allowed for opening each clip and for each read.",
        default: InputOptions.timeout.defaultValue, showing: InputOptions.timeout.spec.defaultValue,
        expecting: InputOptions.timeout.expectation, InputOptions.timeout.convert)
    static let deadline = Option<Double>(
        "deadline", value: "seconds", help: "Allowed for all of one clip's reading; a clip "
            + "past it fails as timed_out (transient).",
        default: libraryDefaults.deadline ?? 600, showing: Format.limit(libraryDefaults.deadline ?? 600),
        expecting: "seconds above 0, at most 86400") { text in
        Double(text).flatMap { $0.isFinite && $0 > 0 && $0 <= 86_400 ? $0 : nil }
    }
    static let memoryBudget = Option<Int?>.optionalInteger(
        "memory-budget", value: "MB", help: "Estimated decoder memory clips in flight may "
            + "hold together; a clip that does not fit waits (default: half of MemAvailable).",
        in: 64...1_048_576)
    static let threads = Option<Int>.integer("threads", help: "Decoding threads per clip, 0 for cores / jobs.",
                                             default: libraryDefaults.threadsPerClip, in: 0...64)
    static let json = Flag("json", help: "batch report: print one JSON object instead of text.")
    /// `--duplicates`: batch report lists the clips that look alike.
    static let duplicates = Flag(
        "duplicates", help: "batch report: list the clips whose posters and tiles are near-identical (re-uploads "
            + "under other names, at other bitrates or sizes), in groups, by the perceptual hashes (phash, "
            + "tile_phashes) their records carry, with the Hamming distances found and the threshold used.")
    /// `--hamming <bits>`: the largest distance `--duplicates` counts as the same picture.
    static let hamming = Option<Int>.integer(
        "hamming", value: "bits",
        help: "batch report --duplicates: the largest Hamming distance, in bits of 64, between two hashes "
            + "of the same picture, \(DuplicateFinder.thresholdRange.lowerBound) to \(DuplicateFinder.thresholdRange.upperBound).",
        default: DuplicateFinder.defaultThreshold, in: DuplicateFinder.thresholdRange)
}
