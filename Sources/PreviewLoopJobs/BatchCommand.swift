import Dispatch
import FoundationEssentials
import Glibc
import PreviewLoop
import Synchronization

/// `preview-loop batch` as a job: its options (declared once, for every front end), checks and work
/// (`batch report` and `batch export-page` are commands of their own: ``BatchReportCommand``,
/// ``BatchExportPageCommand``).
struct BatchCommand: Equatable, Sendable {
    /// The manifest or folder as given (`-` for standard input).
    var manifest = ""
    /// `-o` as typed, which becomes ``outputDirectory`` (a manifest's run needs it).
    @Option(BatchCommand.out, folded: true) var outOption: String? = nil
    /// `-o`, `--out`: the output directory; empty when not given (a folder's run then uses
    /// ``BatchFolder/defaultOutputDirectory(for:)``, a manifest's run is refused).
    var outputDirectory = ""
    /// `--recipe FILE`.
    @Option(BatchCommand.recipe) var recipePath: String? = nil
    /// `-j`, `--jobs`.
    @Option(BatchCommand.jobs) var jobs = BatchCommand.jobs.defaultValue
    @Flag(BatchCommand.force) var force = false
    @Flag(BatchCommand.retryFailed) var retryFailed = false
    @Option(BatchCommand.retries) var retries = BatchCommand.retries.defaultValue
    @Option(BatchCommand.retryDelay) var retryDelay = BatchCommand.retryDelay.defaultValue
    /// `--shard I/N`, if given.
    @Option(BatchCommand.shard) var shard: BatchShard? = nil
    /// `--shard-count N`: the count for an index from the environment.
    @Option(BatchCommand.shardCount) var shardCount: Int? = nil
    /// `--progress` (the reporting group's flag): JSON progress lines on standard error, one per finished clip.
    @Flag(ReportingOptions.progress) var isMachineProgress = false
    /// `--quiet`.
    @Flag(ReportingOptions.quiet) var isQuiet = false
    @Option(BatchCommand.timeout) var timeout = BatchCommand.timeout.defaultValue
    @Option(BatchCommand.deadline) var deadline = BatchCommand.deadline.defaultValue
    /// `--memory-budget MB`, if given.
    @Option(BatchCommand.memoryBudget) var memoryBudgetMB: Int? = nil
    /// `--threads`, 0 for cores ÷ jobs.
    @Option(BatchCommand.threads) var threads = BatchCommand.threads.defaultValue
    /// `--deinterlace`: which frames every clip's outputs deinterlace.
    @Option(InputOptions.deinterlace) var deinterlacing = InputOptions.deinterlace.defaultValue
    /// `--insecure`.
    @Flag(TLSOptions.insecure) var isInsecure = false
    /// `--ca-file`.
    @Option(TLSOptions.caFile) var caFile: String? = nil
    /// `--include` and `--exclude` as typed (the last of each), which become ``include`` and ``exclude``.
    @Option(BatchCommand.include, folded: true) var includeOption: String? = nil
    @Option(BatchCommand.exclude, folded: true) var excludeOption: String? = nil
    /// `--include`, `--exclude`: globs for a folder's files.
    var include: [String] = []
    var exclude: [String] = []

    /// `--progress` (JSON progress lines on standard error) and `--quiet`.
    var reporting: ReportingOptions {
        var reporting = ReportingOptions()
        reporting.forcesProgress = isMachineProgress
        reporting.isQuiet = isQuiet
        return reporting
    }
    /// `--memory-budget`, in bytes.
    var memoryBudget: Int? { memoryBudgetMB.map { $0 << 20 } }
    /// `--insecure`, `--ca-file`.
    var tls: TLSOptions {
        var tls = TLSOptions()
        tls.isInsecure = isInsecure
        tls.authoritiesFile = caFile
        return tls
    }
}

extension BatchCommand: ParsableCommand, ReportsProgress {
    /// `preview-loop batch`: its name, summary and arguments.
    static let configuration = CommandConfiguration(
        name: "batch",
        abstract: "Make posters, strips, sprites and hover previews for a whole manifest of clips, resumable "
            + "and sharded, with one JSON Lines result per clip; 'batch report' merges results files, 'batch export-page' "
            + "writes a static feed page.",
        arguments: [PositionalArgument(name: "manifest", abstract: "JSON Lines, one object per clip: {\"id\": \"…\", \"input\": \"path or http(s) URL\"} "
                    + "with optional \"start\", \"length\" (poster window, hover start) and \"every\" (sprites); or a plain "
                    + "list of paths/URLs, one a line (ids derived: safe base name + hash). Relative paths are taken from "
                    + "the manifest's folder; - reads the manifest from standard input. Read whole before any clip starts. "
                    + "A folder instead: every video file under it, recursively (by extension; hidden entries skipped), ids from "
                    + "the relative paths (trailers/a.mp4 → trailers_a), with --include and --exclude.")],
        // Each typed right after `batch`, with its own options, help and completions.
        subcommands: [BatchReportCommand.self, BatchExportPageCommand.self])

    var input: String { "batch" }

    func run(in context: CommandContext) -> Int32 {
        // Only a folder has a default output folder; whether the argument is one is known only now.
        if outputDirectory.isEmpty, manifest == "-" || !FileSystem.fileExists(manifest).isDirectory {
            let error = UsageError(.missingOption("out"), subcommand: Self.subcommand, "Missing '--out <dir>': where the outputs and "
                + "results go (a folder batch has a default, DIR\(BatchFolder.defaultOutputSuffix) beside the folder; a manifest has none).")
            Console.writeError(context.usageReport(error) + "\n")
            return ExitStatus.usage
        }
        return CommandFailure.reporting(for: "batch") { try BatchRun(options: self).run() }
    }
}

extension BatchCommand {
    /// Takes the manifest, the output directory and the globs.
    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        let positionals = arguments.positionals
        guard let manifest = positionals.first else {
            throw UsageError(.missingInput, subcommand: Self.subcommand, "Missing the manifest (a JSON Lines file or a list of paths; - for standard input).")
        }
        if positionals.count > 1 {
            let order = Self.subcommand.child(named: manifest).map { "; 'batch \($0.name)' comes right after 'batch'" } ?? ""
            throw UsageError(.unexpectedArgument(positionals[1]), subcommand: Self.subcommand,
                             "Unexpected argument '\(positionals[1])': batch takes one manifest\(order).")
        }
        self.manifest = manifest
        outputDirectory = try arguments.value(Self.out) ?? ""
        include = try arguments.all(Self.include)
        exclude = try arguments.all(Self.exclude)
    }

    /// Whether the run's values, each valid on its own, go together.
    func validate() throws(UsageError) {
        if shard != nil && shardCount != nil {
            throw UsageError(.conflictingOptions("shard", "shard-count"), subcommand: Self.subcommand,
                             "'--shard I/N' already gives the count; '--shard-count' is for an index from the environment.")
        }
        try reporting.validate(for: Self.subcommand)
        try tls.validate(for: Self.subcommand)
    }
}

/// One run of `preview-loop batch` on the command line: a manifest's clips → each clip's outputs in `OUT/<id>/`, one JSON Lines
/// record per clip in `OUT/results*.jsonl`, and an exit status schedulers act on.
struct BatchRun {
    var options: BatchCommand

    /// `EX_DATAERR`: some clips failed permanently.
    static let permanentFailures: Int32 = 65
    /// `EX_TEMPFAIL`: some clips failed transiently or were not reached; retry the task.
    static let transientFailures: Int32 = 75

    func run() throws -> Int32 {
        try runBatch(manifestPath: options.manifest)
    }

    private func runBatch(manifestPath: String) throws -> Int32 {
        // The manifest is read first and whole; then standard input is closed to everything else, so
        // nothing later (a decoder, a library) can swallow a caller's input by accident.
        // The recipe first: a key it does not know or a value out of range is a usage error (exit 64)
        // before anything is read or made.
        var recipe = BatchRecipe.standard
        if let recipePath = options.recipePath {
            let json = try BatchFiles.readFile(recipePath, limit: 1 << 20)
            do {
                recipe = try BatchRecipe.parse(json: json, name: recipePath)
            } catch {
                throw WorkLimitError(message: error.description)
            }
        }
        let manifest: [BatchClip]
        var outputDirectory = options.outputDirectory
        var status = stat()
        if manifestPath != "-", FileSystem.stat(manifestPath, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            // A folder: its video files, found now and whole, like a manifest read before any clip starts.
            let scan = try BatchFolder.scan(manifestPath, include: options.include, exclude: options.exclude)
            guard !scan.clips.isEmpty else {
                throw WorkLimitError(message: "batch: \(manifestPath): no video files (\(scan.skippedSummary))")
            }
            manifest = scan.clips
            let isDefaultOutput = outputDirectory.isEmpty
            if isDefaultOutput { outputDirectory = try BatchFolder.defaultOutputDirectory(for: manifestPath) }
            if !options.reporting.isQuiet {
                Console.writeError("batch: \(manifestPath): \(scan.clips.count) video\(scan.clips.count == 1 ? "" : "s"); \(scan.skippedSummary)"
                    + (isDefaultOutput ? "; outputs in \(outputDirectory) (no --out given)" : "") + "\n")
            }
        } else {
            if let glob = (options.include + options.exclude).first {
                throw WorkLimitError(message: "batch: '\(glob)': --include and --exclude apply to a folder, not to a manifest")
            }
            manifest = try BatchManifest.read(path: manifestPath)
        }
        guard !outputDirectory.isEmpty else {
            throw WorkLimitError(message: "batch: Missing '--out <dir>': a manifest has no default output folder")
        }
        let null = FileSystem.open("/dev/null", O_RDONLY | O_CLOEXEC)
        if null >= 0 { dup2(null, STDIN_FILENO); close(null) }

        var shard = BatchShard.all
        var isSharded = true
        if let given = options.shard {
            shard = given
        } else if let fromEnvironment = try BatchShard.fromEnvironment(ProcessInfo.processInfo.environment,
                                                                       countHint: options.shardCount) {
            shard = fromEnvironment.shard
        } else {
            isSharded = false
        }
        if !isSharded, options.shardCount != nil {
            throw PreviewLoopError(.invalidArgument, "--shard-count needs an index from SLURM_ARRAY_TASK_ID, "
                + "JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX, or use --shard I/N")
        }
        // To a bucket: each clip is made in a local working folder (removed at the end, and on a signal),
        // then uploaded; the results file is kept as an object beside the clips' folders.
        var workFolder: ObjectStaging?
        var objectPrefix: String?
        var localDirectory = outputDirectory
        if ObjectOutput.isObject(outputDirectory) {
            objectPrefix = try ObjectOutput.prefixURL(outputDirectory)
            let folder = try ObjectStaging()
            workFolder = folder
            localDirectory = folder.folder + "/out"
        }
        var batchOptions = BatchOptions(outputDirectory: localDirectory)
        batchOptions.objectPrefix = objectPrefix
        batchOptions.recipe = recipe
        batchOptions.jobs = options.jobs
        batchOptions.force = options.force
        batchOptions.retryFailed = options.retryFailed
        batchOptions.retries = options.retries
        batchOptions.retryDelay = options.retryDelay
        batchOptions.shard = shard
        batchOptions.timeout = options.timeout
        batchOptions.deadline = options.deadline
        if let budget = options.memoryBudget { batchOptions.memoryBudget = budget }
        batchOptions.threadsPerClip = options.threads
        batchOptions.deinterlacing = options.deinterlacing
        batchOptions.verifiesCertificates = options.tls.verifies
        batchOptions.certificateAuthorities = options.tls.caFile
        let runner = try BatchRunner(manifest: manifest, options: batchOptions)
        let localResults = localDirectory + "/" + shard.resultsFileName
        let resultsPath = objectPrefix.map { $0 + shard.resultsFileName } ?? localResults
        if let objectPrefix, let earlier = try ObjectOutput.get(objectPrefix + shard.resultsFileName, limit: 1 << 30) {
            // The earlier runs' results, appended to as a local results file is.
            try AtomicFile.write(earlier, to: localResults)
        }
        let results = try BatchLineWriter(path: localResults)

        let signalled = Mutex<Int32?>(nil)
        let watcher = SignalWatcher { number in
            let isFirst = signalled.withLock { value -> Bool in defer { if value == nil { value = number } }; return value == nil }
            runner.stop()
            if isFirst {
                Console.writeError("\nbatch: stopping (signal \(number)): no new clip starts; clips in flight are interrupted, "
                    + "their partial outputs removed\n")
            }
        }
        defer { watcher.cancel() }

        let progress = BatchProgress(total: runner.clips.count, isTerminal: options.reporting.progressStyle == .terminal,
                                     isMachine: options.isMachineProgress)
        let started = ContinuousClock.now
        let collected = Mutex<[BatchRecord]>([])
        let writeFailure = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let stream = runner.results()
        Task {
            for await record in stream {
                // As the single-clip commands do: pictures that will show wrong colours (Dolby Vision profile 5).
                if !record.skipped, let warning = record.clip?.warning { Console.writeError("Warning: \(record.id): \(warning)\n") }
                // A path batch will not touch is the user's to fix: said at once, not only in the results.
                if record.reason == BatchFailure.outputConflict, let message = record.message {
                    Console.writeError("Error: \(Format.oneLine(message))\n")
                }
                do { try results.append(record.jsonLine()) } catch {
                    writeFailure.withLock { $0 = $0 ?? "\(error)" }
                }
                let all = collected.withLock { records -> [BatchRecord] in records.append(record); return records }
                progress.update(all)
            }
            done.signal()
        }
        done.wait()
        progress.finish()
        let records = collected.withLock { $0 }
        let recorded = Set(records.map(\.id))
        let stoppedBefore = runner.isStopped ? runner.clips.first(where: { !recorded.contains($0.id) })?.id : nil
        let elapsed = ContinuousClock.now - started
        let summary = BatchSummary(shard: shard.description, records: records, clips: runner.clips.count,
                                   stoppedBefore: stoppedBefore, stopped: runner.isStopped,
                                   seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        // The shard's lock (`OUT/.lock.<shard>`, released when the runner goes) is held until the summary
        // closes the results file: a run waiting on it never reads a results file without its summary.
        withExtendedLifetime(runner) {
            do { try results.append(summary.jsonLine()) } catch { writeFailure.withLock { $0 = $0 ?? "\(error)" } }
            if objectPrefix != nil {
                do { try ObjectOutput.upload(file: localResults, to: resultsPath) } catch { writeFailure.withLock { $0 = $0 ?? "\(error)" } }
            }
        }
        withExtendedLifetime(workFolder) {}
        Console.writeSummary(Self.summaryLine(summary, shard: isSharded ? shard : nil, outputDirectory: outputDirectory,
                                              resultsPath: resultsPath) + "\n")
        if let failure = writeFailure.withLock({ $0 }) {
            Console.writeError("Error: the results file could not be written: \(Format.oneLine(failure))\n")
            return Self.transientFailures
        }
        return summary.exitStatus
    }

    /// `batch: 10 clips: 8 ok, 2 failed (2 permanent, 0 transient: corrupt_data 1, input_not_found 1), 3 left as they
    /// were in 4.2 s; outputs in OUT, results in OUT/results.jsonl`; `batch shard 3/16: …` when the run is a
    /// shard (`shard` given: `--shard` or a scheduler's array index, even of a count of 1).
    static func summaryLine(_ summary: BatchSummary, shard: BatchShard?, outputDirectory: String, resultsPath: String) -> String {
        var line = "batch\(shard.map { " shard \($0)" } ?? ""): \(summary.clips) clip\(summary.clips == 1 ? "" : "s"): \(summary.ok) ok"
        line += ", \(summary.failed) failed"
        if summary.failed > 0 {
            line += " (\(summary.permanent) permanent, \(summary.transient) transient: "
                + summary.failuresByReason.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
        }
        if summary.skipped > 0 { line += ", \(summary.skipped) left as they were" }
        if summary.stopped {
            let interrupted = summary.failuresByReason[BatchFailure.interrupted] ?? 0
            line += summary.stoppedBefore.map { "; stopped before \($0), \(summary.notDone) not done" } ?? "; stopped"
            if interrupted > 0 { line += ", \(interrupted) interrupted" }
        }
        line += " in \(Format.fixed(summary.seconds, 1)) s; outputs in \(outputDirectory), results in \(resultsPath)"
        return line
    }
}

/// Progress on standard error: a line rewritten in place on a terminal (done, failed, rate, ETA),
/// and/or one JSON object a line with `--progress`.
final class BatchProgress: Sendable {
    let total: Int
    let isTerminal: Bool
    let isMachine: Bool
    let started = ContinuousClock.now

    init(total: Int, isTerminal: Bool, isMachine: Bool) {
        self.total = total
        self.isTerminal = isTerminal
        self.isMachine = isMachine
    }

    func update(_ records: [BatchRecord]) {
        let done = records.count, failed = records.filter { $0.status == .failed }.count
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let worked = records.filter { !$0.skipped }.count
        let rate = seconds > 0 ? Double(worked) / seconds : 0
        let eta = rate > 0 ? Double(total - done) / rate : nil
        if isMachine {
            var line = "{\"type\":\"progress\",\"done\":\(done),\"total\":\(total),\"failed\":\(failed),"
                + "\"elapsed\":\(Format.fixed(seconds, 3)),\"rate\":\(Format.fixed(rate, 3))"
            if let eta { line += ",\"eta\":\(Format.fixed(eta, 1))" }
            line += ",\"id\":\"\(records.last?.id ?? "")\"}\n"
            Console.writeError(line)
        } else if isTerminal {
            let etaText = eta.map { " ETA \(Int($0) / 60):\(String(format2: Int($0) % 60))" } ?? ""
            let percent = total > 0 ? "\(done * 100 / total)% " : ""
            Console.writeError("\rbatch: \(percent)\(done)/\(total) done, \(failed) failed, \(Format.fixed(rate, 2)) clips/s\(etaText)   ")
        }
    }

    func finish() {
        if isTerminal && !isMachine && total > 0 { Console.writeError("\n") }
    }
}

extension String {
    /// Two digits, zero-padded.
    init(format2 value: Int) { self = value < 10 ? "0\(value)" : "\(value)" }
}

    
extension BatchCommand {
    /// The library's defaults, which the CLI's defaults are.
    private static let libraryDefaults = BatchOptions(outputDirectory: "")

    /// `--include <glob>`, repeatable: with a folder, only the video files matching one.
    static let include = ValueOption<String?>(
        "include", value: "glob",
        help: "With a folder: only video files whose relative path or name matches this shell glob (*.mp4, "
            + "trailers/*); may be given more than once (a file matching any is taken).",
        default: nil, showing: nil, expecting: "a non-empty glob") { $0.isEmpty ? nil : .some($0) }
    /// `--exclude <glob>`, repeatable: with a folder, files and folders to skip.
    static let exclude = ValueOption<String?>(
        "exclude", value: "glob",
        help: "With a folder: skip files and folders whose relative path or name matches this shell glob "
            + "(*.tmp, drafts); may be given more than once.",
        default: nil, showing: nil, expecting: "a non-empty glob") { $0.isEmpty ? nil : .some($0) }

    static let out = ValueOption<String?>.path(
        "out", short: "o", value: "dir",
        help: "The output directory: OUT/<id>/ per clip (poster.jpg or .webp, .avif, .png, strip.jpg, contact-sheet.jpg, "
            + "sprites-N.jpg + thumbnails.vtt, hover.mp4 or .webp or .gif), results.jsonl (results.shard-I-of-N.jsonl for a shard). "
            + "Required with a manifest. With a folder DIR it defaults to DIR\(BatchFolder.defaultOutputSuffix) beside it "
            + "(never inside, where a rerun would take the hover videos as inputs), used only while empty or made by batch. "
            + "s3://BUCKET/PREFIX/ uploads each clip's folder there (its record last) and keeps results.jsonl as an object.",
        showing: nil, completing: .directory)
    static let recipe = ValueOption<String?>.path(
        "recipe", value: "file",
        help: "A JSON recipe: {\"poster\": {…}, \"strip\": {…}, \"sheet\": {…}, \"sprites\": {…}, \"hover\": {…}}, each "
            + "section the single-clip command that makes it, its keys that command's options, each value as the option takes it: "
            + BatchRecipeSection.reference + ". Unknown keys and values the command refuses are usage errors. See Docs/batch.md.",
        showing: "poster+sprites+hover")
    static let jobs = ValueOption<Int>.integer("jobs", short: "j", help: "Clips at a time, 1 to 256.",
                                          default: BatchOptions.processorCount, in: 1...256, showing: "cores")
    static let force = FlagOption("force", help: "Redo clips whose outputs are already complete.")
    static let retryFailed = FlagOption("retry-failed", help: "Retry clips that failed permanently in an earlier run.")
    static let retries = ValueOption<Int>.integer(
        "retries", help: "Extra attempts for a transient failure (timeout, network, disk full), 0 to 100.",
        default: libraryDefaults.retries, in: 0...100)
    static let retryDelay = ValueOption<Double>(
        "retry-delay", value: "seconds", help: "Wait before the first retry, doubled for each further one (at most 60 s).",
        default: libraryDefaults.retryDelay, showing: Format.limit(libraryDefaults.retryDelay),
        expecting: "seconds from 0 to 3600") { text in
        Double(text).flatMap { $0.isFinite && $0 >= 0 && $0 <= 3600 ? $0 : nil }
    }
    static let shard = ValueOption<BatchShard?>(
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
    static let shardCount = ValueOption<Int?>.optionalInteger(
        "shard-count", help: "The shard count for an index taken from the "
            + "environment (Kubernetes gives only JOB_COMPLETION_INDEX; or set PREVIEW_LOOP_SHARD_COUNT).",
        in: ValueRanges.shardCount)
    static let timeout = ValueOption<Double>(
        "timeout", value: "seconds", help: "Allowed for opening each clip and for each read.",
        default: InputOptions.timeout.defaultValue, showing: InputOptions.timeout.spec.defaultValue,
        expecting: InputOptions.timeout.expectation, InputOptions.timeout.convert)
    static let deadline = ValueOption<Double>(
        "deadline", value: "seconds", help: "Allowed for all of one clip's reading; a clip "
            + "past it fails as timed_out (transient).",
        default: libraryDefaults.deadline ?? 600, showing: Format.limit(libraryDefaults.deadline ?? 600),
        expecting: "seconds above 0, at most 86400") { text in
        Double(text).flatMap { $0.isFinite && $0 > 0 && $0 <= 86_400 ? $0 : nil }
    }
    static let memoryBudget = ValueOption<Int?>.optionalInteger(
        "memory-budget", value: "MB", help: "Estimated decoder memory clips in flight may "
            + "hold together; a clip that does not fit waits (default: half of MemAvailable).",
        in: 64...1_048_576)
    static let threads = ValueOption<Int>.integer("threads", help: "Decoding threads per clip, 0 for cores / jobs.",
                                             default: libraryDefaults.threadsPerClip, in: 0...64)
}
