import PreviewLoop

extension OptionSpec {
    /// The `<manifest>` argument's help.
    static let batchManifestHelp = "JSON Lines, one object per clip: {\"id\": \"…\", \"input\": \"path or http(s) URL\"} "
        + "with optional \"start\", \"length\" (poster window, hover start) and \"every\" (sprites); or a plain "
        + "list of paths/URLs, one a line (ids derived: safe base name + hash). Relative paths are taken from "
        + "the manifest's folder; - reads the manifest from standard input. Read whole before any clip starts. "
        + "'batch report <OUT or results files…>' merges results instead."

    /// `preview-loop batch`'s options, in help order.
    static let batchOptions: [OptionSpec] = [
        OptionSpec(name: "out", shortName: "o", valueName: "dir",
                   abstract: "The output directory: OUT/<id>/ per clip (poster.jpg, strip.jpg, sheet-N.jpg + "
                       + "thumbnails.vtt, hover.mp4), results.jsonl (results.shard-I-of-N.jsonl for a shard).",
                   isRequired: true),
        OptionSpec(name: "recipe", valueName: "file",
                   abstract: "A JSON recipe: {\"poster\": {…}, \"strip\": {…}, \"sprites\": {…}, \"hover\": {…}} "
                       + "(see Docs/batch.md).",
                   defaultValue: "poster+sprites"),
        OptionSpec(name: "jobs", shortName: "j", valueName: "n", abstract: "Clips at a time, 1 to 256.",
                   defaultValue: "cores"),
        OptionSpec(name: "force", abstract: "Redo clips whose outputs are already complete."),
        OptionSpec(name: "retry-failed", abstract: "Retry clips that failed permanently in an earlier run."),
        OptionSpec(name: "retries", valueName: "n", abstract: "Extra attempts for a transient failure (timeout, "
                   + "network, disk full), 0 to 100.", defaultValue: "2"),
        OptionSpec(name: "retry-delay", valueName: "seconds", abstract: "Wait before the first retry, doubled for "
                   + "each further one (at most 60 s).", defaultValue: "1"),
        OptionSpec(name: "shard", valueName: "I/N", abstract: "Do shard I (0 to N-1) of N: the clips whose id hashes "
                   + "to I, a deterministic, disjoint share. Without it: from SLURM_ARRAY_TASK_ID and "
                   + "SLURM_ARRAY_TASK_COUNT, JOB_COMPLETION_INDEX, or AWS_BATCH_JOB_ARRAY_INDEX and "
                   + "AWS_BATCH_JOB_ARRAY_SIZE when set, else the whole manifest.",
                   defaultValue: "0/1"),
        OptionSpec(name: "shard-count", valueName: "n", abstract: "The shard count for an index taken from the "
                   + "environment (Kubernetes gives only JOB_COMPLETION_INDEX; or set PREVIEW_LOOP_SHARD_COUNT)."),
        OptionSpec(name: "progress", abstract: "Write one JSON progress line per finished clip on standard error "
                   + "(a terminal gets a status line without it)."),
        OptionSpec(name: "timeout", valueName: "seconds", abstract: "Allowed for opening each clip and for each read.",
                   defaultValue: "30"),
        OptionSpec(name: "deadline", valueName: "seconds", abstract: "Allowed for all of one clip's reading; a clip "
                   + "past it fails as timed_out (transient).", defaultValue: "600"),
        OptionSpec(name: "memory-budget", valueName: "MB", abstract: "Estimated decoder memory clips in flight may "
                   + "hold together; a clip that does not fit waits (default: half of MemAvailable)."),
        OptionSpec(name: "threads", valueName: "n", abstract: "Decoding threads per clip, 0 for cores / jobs.",
                   defaultValue: "0"),
        OptionSpec(name: "json", abstract: "batch report: print one JSON object instead of text."),
        .help,
    ]
}
