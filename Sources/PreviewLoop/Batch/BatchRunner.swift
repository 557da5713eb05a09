import FoundationEssentials
import Glibc
import Synchronization

/// How a batch runs.
public struct BatchOptions: Sendable {
    /// Where `<id>/` folders, results files and the batch's own state (`.staging/`, `.failures/`) go.
    public var outputDirectory: String
    /// What to make for each clip.
    public var recipe: BatchRecipe = .standard
    /// Clips processed at the same time.
    public var jobs = BatchOptions.processorCount
    /// Redo clips whose outputs are complete.
    public var force = false
    /// Retry clips that failed permanently in an earlier run.
    public var retryFailed = false
    /// Extra attempts for a transient failure, in this run.
    public var retries = 2
    /// Seconds before the first retry; doubled for each further one (at most 60 s).
    public var retryDelay = 1.0
    /// The share of the manifest this run does.
    public var shard = BatchShard.all
    /// Seconds allowed for opening a clip and for each read.
    public var timeout = SourceOptions.defaultTimeout
    /// Seconds allowed for all of one clip's reading, from its opening; `nil` for no limit.
    public var deadline: Double? = 600
    /// Estimated decoder memory, in bytes, that clips in flight may hold together; a clip that does
    /// not fit waits until others finish (one larger than the whole budget runs alone).
    public var memoryBudget = BatchOptions.defaultMemoryBudget
    /// Decoding threads per clip; 0 picks cores ÷ jobs.
    public var threadsPerClip = 0
    /// Which frames are deinterlaced, for every output of every clip (default ``Deinterlacing/auto``).
    public var deinterlacing = Deinterlacing.auto
    /// Whether https servers must show a trusted certificate for their host
    /// (``SourceOptions/verifiesCertificates``, default `true`).
    public var verifiesCertificates = true
    /// Authorities to trust instead of the system's (``SourceOptions/certificateAuthorities``).
    public var certificateAuthorities: String?

    /// The source options every clip is opened with.
    var sourceOptions: SourceOptions {
        var source = SourceOptions(openTimeout: timeout, readTimeout: timeout, jobTimeout: deadline, deinterlacing: deinterlacing)
        source.verifiesCertificates = verifiesCertificates
        source.certificateAuthorities = certificateAuthorities
        return source
    }

    /// Creates options for an output directory.
    public init(outputDirectory: String) {
        self.outputDirectory = outputDirectory
    }

    /// The processors online.
    public static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Half the memory available when asked (`MemAvailable` in `/proc/meminfo`), at least 256 MiB;
    /// 1 GiB when it cannot be read.
    public static var defaultMemoryBudget: Int {
        guard let bytes = try? BatchFiles.readFile("/proc/meminfo", limit: 1 << 20),
              let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first(where: { $0.hasPrefix("MemAvailable:") }),
              let kibibytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 1 << 30 }
        return max(256 << 20, kibibytes * 1024 / 2)
    }
}

/// Makes a recipe's outputs for each clip of a manifest, with bounded concurrency and a memory
/// budget, resuming where an earlier run stopped.
///
/// - Each clip is opened once (one probe, one decoder) for all its outputs; its files are written in
///   a staging folder, checked (every file present and not empty), marked complete
///   (`.complete.json`, the clip's record) and renamed into `OUT/<id>/` in one step: a killed run
///   leaves a clip's outputs complete or absent.
/// - A clip whose folder is complete for the same input and recipe is skipped (``BatchOptions/force``
///   redoes it). A permanent failure is remembered in `OUT/.failures/<id>.json` and not retried
///   unless ``BatchOptions/retryFailed``; a transient one is retried ``BatchOptions/retries`` times
///   with a doubling delay.
/// - ``stop()`` (or ending the ``results()`` sequence) starts no further clip and interrupts the ones
///   in flight at once (their reads and decoding through FFmpeg's interrupt callback, their encoding
///   at the next second of video), removing their staging folders; each gets a `failed` record with
///   reason `interrupted` (transient: a rerun makes it).
public final class BatchRunner: Sendable {
    /// This shard's clips, in manifest order.
    public let clips: [BatchClip]
    /// The options.
    public let options: BatchOptions
    private let stopped = Atomic<Bool>(false)
    /// The cancellation scopes of the clips in flight, by clip id: ``stop()`` cancels them all.
    private let inFlight = Mutex<[String: CancellationScope]>([:])
    private let gate: MemoryGate
    private let lockDescriptor: Int32
    private let stagingDirectory: String
    /// The run's local inputs, resolved and sorted, found the first time a clip's folder already exists.
    private let resolvedInputs = Mutex<[String]?>(nil)
    /// Clips whose input has the same bytes as an earlier clip's, by id: the earlier clip's id.
    public let duplicates: [String: String]
    /// The clips of this run that have their record (for the duplicates waiting on them).
    private let finished = Mutex<Set<String>>([])

    /// Prepares a run: selects the shard's clips, creates the output directory, locks the shard
    /// (a second run of the same shard on the same directory is refused) and clears its staging folder.
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when the directory cannot be used,
    ///   ``PreviewLoopError/Code/invalidArgument`` for an empty recipe or another run holding the shard.
    public init(manifest: [BatchClip], options: BatchOptions) throws(PreviewLoopError) {
        guard !options.recipe.isEmpty else { throw PreviewLoopError(.invalidArgument, "the recipe makes nothing") }
        guard (1...256).contains(options.jobs) else { throw PreviewLoopError(.invalidArgument, "jobs must be 1 to 256") }
        guard (0...100).contains(options.retries) else { throw PreviewLoopError(.invalidArgument, "retries must be 0 to 100") }
        self.options = options
        clips = options.shard.select(manifest)
        duplicates = Self.duplicates(among: clips)
        gate = MemoryGate(budget: options.memoryBudget)
        let out = options.outputDirectory
        try BatchFiles.makeDirectory(out)
        let shardName = options.shard.count == 1 ? "all" : "shard-\(options.shard.index)-of-\(options.shard.count)"
        let lockPath = out + "/.lock." + shardName
        lockDescriptor = FileSystem.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lockDescriptor >= 0 else {
            throw PreviewLoopError(.outputNotWritable, "\(lockPath): cannot create (\(FileSystem.errorText(errno)))")
        }
        guard flock(lockDescriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(lockDescriptor)
            throw PreviewLoopError(.invalidArgument, "\(out): another batch is running shard \(options.shard) there")
        }
        stagingDirectory = out + "/.staging/" + shardName
        BatchFiles.remove(stagingDirectory)
        try BatchFiles.makeDirectory(stagingDirectory)
        try BatchFiles.makeDirectory(out + "/.failures")
    }

    deinit {
        flock(lockDescriptor, LOCK_UN)
        close(lockDescriptor)
    }

    /// Starts no further clip and interrupts the clips in flight (each recorded as `interrupted`).
    public func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
        let scopes = inFlight.withLock { Array($0.values) }
        for scope in scopes { scope.cancel() }
    }

    /// Whether ``stop()`` was called.
    public var isStopped: Bool { stopped.load(ordering: .sequentiallyConsistent) }

    /// Runs the batch: one record per clip as each finishes, at most ``BatchOptions/jobs`` at a time.
    /// Ending the sequence early (or cancelling the task that iterates it) stops the batch. A clip
    /// interrupted by a stop has a `failed` record with reason `interrupted`; one not started has none.
    public func results() -> AsyncStream<BatchRecord> {
        let (stream, continuation) = AsyncStream<BatchRecord>.makeStream()
        continuation.onTermination = { [self] termination in
            if case .cancelled = termination { stop() }
        }
        // Duplicates last, each once the clip it repeats has its record.
        let order = clips.filter { duplicates[$0.id] == nil } + clips.filter { duplicates[$0.id] != nil }
        let next = Mutex(0)
        let remaining = Mutex(min(options.jobs, clips.count))
        if clips.isEmpty { continuation.finish() }
        for worker in 0..<min(options.jobs, clips.count) {
            do {
                try NamedThread.detach(name: "batch-\(worker)") { [self] in
                    while !isStopped {
                        let index = next.withLock { value -> Int in defer { value += 1 }; return value }
                        guard index < order.count else { break }
                        let clip = order[index]
                        if let original = duplicates[clip.id] {
                            while !isStopped && !finished.withLock({ $0.contains(original) }) { usleep(20_000) }
                        }
                        if let record = process(clip) { continuation.yield(record) }
                        finished.withLock { _ = $0.insert(clip.id) }
                    }
                    if remaining.withLock({ value -> Int in value -= 1; return value }) == 0 { continuation.finish() }
                }
            } catch {
                if remaining.withLock({ value -> Int in value -= 1; return value }) == 0 { continuation.finish() }
            }
        }
        return stream
    }

    /// Clips whose local input holds the same bytes as an earlier clip's (a copy under another name) and
    /// which have the same overrides, by id, with the earlier clip's id. Only files of equal size are
    /// compared, byte for byte.
    static func duplicates(among clips: [BatchClip]) -> [String: String] {
        var candidates: [Int: [BatchClip]] = [:]
        var found: [String: String] = [:]
        for clip in clips {
            guard case .file(let path) = Source(argument: clip.input), let size = BatchFiles.fileSize(path), size > 0 else { continue }
            if let original = candidates[size, default: []].first(where: { earlier in
                guard earlier.overrides == clip.overrides, case .file(let earlierPath) = Source(argument: earlier.input) else { return false }
                return BatchFiles.sameContents(earlierPath, path)
            }) {
                found[clip.id] = original.id
            } else {
                candidates[size, default: []].append(clip)
            }
        }
        return found
    }

    /// The fingerprint of a clip's work: its input, overrides, the recipe and the deinterlacing (named
    /// only when it is not ``Deinterlacing/auto``, so outputs made before it counted stay complete).
    public func fingerprint(of clip: BatchClip) -> String {
        let o = clip.overrides
        let values: [Double?] = [o.start, o.length, o.every]
        let overrides = values.map { $0.map { "\($0)" } ?? "-" }.joined(separator: " ")
        let deinterlacing = options.deinterlacing == .auto ? "" : "\ndeinterlace=\(options.deinterlacing.rawValue)"
        return StableHash.hex(clip.input + "\n" + overrides + "\n" + options.recipe.canonical + deinterlacing)
    }

    /// The clip's completion record when its folder holds every output it lists, at the listed sizes,
    /// for the same fingerprint.
    public func completedRecord(of clip: BatchClip) -> BatchRecord? {
        let out = options.outputDirectory
        guard let bytes = try? BatchFiles.readFile(out + "/" + clip.id + "/.complete.json", limit: 16 << 20),
              let record = try? JSONDecoder().decode(BatchRecord.self, from: Data(bytes)),
              record.status == .ok, record.fingerprint == fingerprint(of: clip), !record.outputs.isEmpty,
              record.outputs.allSatisfy({ output in output.bytes > 0 && BatchFiles.fileSize(out + "/" + output.path) == output.bytes })
        else { return nil }
        return record
    }

    /// Why the clip's folder `OUT/<id>` must not be written, if it must not: something is there that
    /// batch did not make (anything but a folder holding its `.complete.json` — a user's file or
    /// folder, a symbolic link), or an input of this run lies there.
    public func ownershipConflict(for clip: BatchClip) -> String? {
        let destination = options.outputDirectory + "/" + clip.id
        var status = stat()
        guard FileSystem.lstat(destination, &status) == 0 else { return nil }
        let type = status.st_mode & S_IFMT
        guard type == S_IFDIR, BatchFiles.fileSize(destination + "/.complete.json") != nil else {
            let what = type == S_IFDIR ? "a folder batch did not make (no .complete.json)"
                : type == S_IFLNK ? "a symbolic link" : "a file"
            return "\(destination) is \(what): batch leaves it as it is and does not make clip '\(clip.id)'; "
                + "move it away, or give the clip another id or the batch another --out"
        }
        if let input = input(inside: destination) {
            return "\(destination) holds \(input), an input of this run: batch leaves it as it is and does not make clip '\(clip.id)'"
        }
        return nil
    }

    /// An input of the run at or inside `folder` (both resolved), if any.
    private func input(inside folder: String) -> String? {
        guard let resolved = FileSystem.resolvedPath(folder) else { return nil }
        let inputs = resolvedInputs.withLock { cached -> [String] in
            if let cached { return cached }
            let all = clips.compactMap { clip -> String? in
                guard case .file(let path) = Source(argument: clip.input) else { return nil }
                return FileSystem.resolvedPath(path)
            }.sorted()
            cached = all
            return all
        }
        // Sorted: the paths at or under `resolved` follow it directly.
        var low = 0, high = inputs.count
        while low < high {
            let middle = (low + high) / 2
            if inputs[middle] < resolved { low = middle + 1 } else { high = middle }
        }
        guard low < inputs.count else { return nil }
        let found = inputs[low]
        return found == resolved || found.hasPrefix(resolved + "/") ? found : nil
    }

    /// Does one clip: skips it when done (or failed for good), else makes its outputs, retrying
    /// transient failures. Blocks; returns `nil` when the batch was stopped before the clip started, and
    /// a transient `interrupted` failure when a stop interrupted it (nothing of it is left in `OUT`).
    public func process(_ clip: BatchClip) -> BatchRecord? {
        let out = options.outputDirectory
        let fingerprint = fingerprint(of: clip)
        if !options.force, var done = completedRecord(of: clip) {
            done.skipped = true
            done.attempts = 0
            return done
        }
        // Checked on every run and never remembered: once the user moves their file away, the clip is made.
        if let conflict = ownershipConflict(for: clip) {
            var record = BatchRecord(id: clip.id, input: clip.input, status: .failed, attempts: 0,
                                     shard: options.shard.description, fingerprint: fingerprint)
            record.reason = BatchFailure.outputConflict
            record.permanence = .permanent
            record.message = conflict
            return record
        }
        if let originalID = duplicates[clip.id], let original = clips.first(where: { $0.id == originalID }),
           let made = completedRecord(of: original), let record = try? linkDuplicate(clip, of: made, fingerprint: fingerprint) {
            return record
        }
        let failurePath = out + "/.failures/" + clip.id + ".json"
        if !options.retryFailed, let bytes = try? BatchFiles.readFile(failurePath, limit: 16 << 20),
           var failed = try? JSONDecoder().decode(BatchRecord.self, from: Data(bytes)),
           failed.fingerprint == fingerprint, failed.permanence == .permanent {
            failed.skipped = true
            failed.attempts = 0
            return failed
        }
        var attempt = 0
        var context = ClipContext()
        func interrupted() -> BatchRecord {
            var record = BatchRecord(id: clip.id, input: clip.input, status: .failed, attempts: attempt,
                                     clip: context.info.map(BatchRecord.ClipInfo.init), timings: context.timings,
                                     shard: options.shard.description, fingerprint: fingerprint)
            record.reason = BatchFailure.interrupted
            record.permanence = .transient
            record.message = "\(clip.input): interrupted by a stop of the batch (a signal); its partial outputs were removed"
            return record
        }
        while true {
            attempt += 1
            guard !isStopped else { return attempt == 1 ? nil : interrupted() }
            context = ClipContext()
            // The clip's inputs register their interrupters in this scope, so a stop interrupts them at once.
            let scope = CancellationScope()
            inFlight.withLock { $0[clip.id] = scope }
            if isStopped { scope.cancel() }
            defer { inFlight.withLock { _ = $0.removeValue(forKey: clip.id) } }
            do {
                var record = try scope.enter { try make(clip, fingerprint: fingerprint, context: &context) }
                record.attempts = attempt
                FileSystem.unlink(failurePath)
                return record
            } catch {
                let failure = error as? PreviewLoopError ?? PreviewLoopError(.decodingFailed, "\(clip.input): \(error)")
                if isStopped { return interrupted() }
                let permanence = BatchFailure.permanence(of: failure)
                if permanence == .transient && attempt <= options.retries {
                    let delay = min(60, options.retryDelay * Double(1 << min(attempt - 1, 20)))
                    let until = ContinuousClock.now + .seconds(delay)
                    while ContinuousClock.now < until && !isStopped { usleep(50_000) }
                    continue
                }
                var record = BatchRecord(id: clip.id, input: clip.input, status: .failed, attempts: attempt,
                                         clip: context.info.map(BatchRecord.ClipInfo.init), timings: context.timings,
                                         shard: options.shard.description, fingerprint: fingerprint)
                record.reason = BatchFailure.reason(for: failure)
                record.permanence = permanence
                record.message = failure.description
                try? AtomicFile.write(Array(record.jsonLine().utf8), to: failurePath)
                return record
            }
        }
    }

    /// What is known about a clip while it is made, kept for its failure record.
    struct ClipContext {
        var info: VideoInfo?
        var timings: [String: Double] = [:]
    }

    /// Milliseconds since `instant`, to the microsecond, for a record's timings.
    private static func milliseconds(since instant: ContinuousClock.Instant) -> Double {
        let elapsed = (ContinuousClock.now - instant).components
        return (Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15).rounded(toPlaces: 3)
    }

    /// The clip's staging folder, made empty.
    private func emptyStaging(for clip: BatchClip) throws(PreviewLoopError) -> String {
        let staging = stagingDirectory + "/" + clip.id
        BatchFiles.remove(staging)
        try BatchFiles.makeDirectory(staging)
        return staging
    }

    private func make(_ clip: BatchClip, fingerprint: String, context: inout ClipContext) throws -> BatchRecord {
        let clock = ContinuousClock()
        let started = clock.now
        func milliseconds(since instant: ContinuousClock.Instant) -> Double { Self.milliseconds(since: instant) }
        let staging = try emptyStaging(for: clip)
        var isPublished = false
        defer { if !isPublished { BatchFiles.remove(staging) } }

        let source = Source(argument: clip.input)
        if case .standardInput = source { throw PreviewLoopError(.refusedByPolicy, "'-' cannot be a batch input") }
        let threads = options.threadsPerClip > 0 ? options.threadsPerClip : max(1, BatchOptions.processorCount / options.jobs)
        let sampler = try FrameSampler(source: source, threads: min(threads, 16), options: options.sourceOptions)
        let info = sampler.info
        context.info = info
        context.timings["open_ms"] = milliseconds(since: started)

        // Every size for this clip: the default boxes turned for a portrait clip, as the commands do.
        let recipe = try options.recipe.resolved(display: info.displaySize)
        let reservation = gate.acquire(Self.memoryEstimate(info, recipe: recipe, threads: threads))
        defer { gate.release(reservation) }
        var outputs: [BatchRecord.Output] = []
        func checkStop() throws(PreviewLoopError) {
            if isStopped { throw PreviewLoopError(.cancelled, "\(clip.input): the batch was stopped") }
        }
        func output(_ kind: String, _ name: String) -> BatchRecord.Output {
            BatchRecord.Output(kind: kind, path: clip.id + "/" + name, bytes: 0)
        }
        /// A strip's or sheet's entry: its picture's size and the tiles it shows.
        func tiled(_ entry: BatchRecord.Output, image: RGBImage, plan: TilePlan) -> BatchRecord.Output {
            var entry = entry
            entry.width = image.width
            entry.height = image.height
            entry.tiles = plan.frames.count
            entry.time = plan.frames.first?.sourceTime
            entry.plan = TilePlanReport(plan)
            return entry
        }
        let duration = info.duration

        // Where the hover starts: a time (which the manifest's `start` replaces) is known now, so the
        // poster's search can hand it frames; at the poster, once the poster is chosen.
        var hoverStartTime: Double?
        if case .at(let position)? = recipe.hover?.start {
            hoverStartTime = try clip.overrides.start ?? position.resolved(duration: duration, "\(clip.input): the hover's \"start\"")
        }
        // A hover with a loop point or a seam is made by render's own call (below); the others from this decoder.
        var hoverPreview: HoverPreview?
        if let hover = recipe.hover, !hover.isSeamed, let start = hoverStartTime {
            hoverPreview = try HoverPreview(hover, start: start, clip: clip, duration: duration, path: staging + "/" + hover.fileName)
        }
        var posterTime: Double?
        if let poster = recipe.poster {
            try checkStop()
            let began = clock.now
            var entry = output("poster", "poster.jpg")
            entry.width = poster.size.width
            entry.height = poster.size.height
            let picture: RGBImage
            switch poster.at {
            case .at(let position):
                // As `thumb --at <time>`: the frame shown then, exactly, the time kept within the clip.
                let time = StillTime(asked: try position.resolved(duration: duration, "\(clip.input): the poster's \"at\""), info: info)
                let frame = try sampler.frame(at: time.taken, size: poster.size, accuracy: .exact)
                picture = frame.image
                entry.time = frame.sourceTime
                entry.timeAsked = time.asked
                entry.choice = time.choice(accuracy: .exact)
            case .best, .auto:
                let choice: PosterChoice
                if poster.at == .best {
                    // As `thumb --at best`: the most representative good frame of the whole clip.
                    choice = try sampler.bestPosterFrame(size: poster.size)
                } else {
                    choice = try autoPoster(poster, hover: recipe.hover, clip: clip, duration: duration, sampler: sampler,
                                            hoverPreview: hoverPreview)
                }
                picture = choice.frame.image
                entry.time = choice.time
                entry.choice = choice.reason.description + (choice.flaw.map { " (itself \($0))" } ?? "")
                entry.skippedFrames = choice.rejected.count
            }
            try AtomicFile.write(try ImageEncoder.encode(picture, as: .jpeg, quality: poster.quality), to: staging + "/poster.jpg")
            entry.placeholder = ImagePlaceholder(picture)
            posterTime = entry.time
            outputs.append(entry)
            context.timings["poster_ms"] = milliseconds(since: began)
        }
        if let hover = recipe.hover {
            try checkStop()
            let began = clock.now
            // At the poster: the recipe's poster, or (without one) the search `thumb --at auto` makes.
            let start: Double
            if let known = hoverStartTime ?? posterTime {
                start = known
            } else {
                var poster = BatchRecipe.Poster()
                poster.size = poster.sizeRequest.resolved(display: info.displaySize)
                start = try autoPoster(poster, hover: nil, clip: clip, duration: duration, sampler: sampler, hoverPreview: nil).time
            }
            if hover.isSeamed {
                outputs.append(try renderHover(hover, start: start, clip: clip, threads: min(threads, 16), path: staging + "/" + hover.fileName,
                                               entry: output("hover", hover.fileName)))
            } else {
                let preview = try hoverPreview
                    ?? HoverPreview(hover, start: start, clip: clip, duration: duration, path: staging + "/" + hover.fileName)
                outputs.append(try finishHover(preview, hover, clip: clip, sampler: sampler, entry: output("hover", hover.fileName)))
            }
            context.timings["hover_ms"] = milliseconds(since: began)
        }
        if let strip = recipe.strip {
            try checkStop()
            let began = clock.now
            // As `strip --span all` with the same options: the library's contact strip.
            let made = try sampler.contactStrip(strip.configuration)
            try AtomicFile.write(try ImageEncoder.encode(made.image, as: .jpeg, quality: strip.quality), to: staging + "/strip.jpg")
            outputs.append(tiled(output("strip", "strip.jpg"), image: made.image, plan: made.plan))
            context.timings["strip_ms"] = milliseconds(since: began)
        }
        if let sheet = recipe.sheet {
            try checkStop()
            let began = clock.now
            // As `sheet` with the same options: the library's contact sheet, its header naming the input.
            let drawer = try ContactSheet(style: sheet.configuration.style, hasHeader: sheet.configuration.showsHeader)
            let made = try sampler.contactSheet(sheet.configuration, drawer: drawer, name: ContactSheetHeader.displayName(of: clip.input),
                                                fileSize: ContactSheetHeader.fileSize(of: clip.input))
            try AtomicFile.write(try ImageEncoder.encode(made.image, as: .jpeg, quality: sheet.quality), to: staging + "/contact-sheet.jpg")
            outputs.append(tiled(output("sheet", "contact-sheet.jpg"), image: made.image, plan: made.plan))
            context.timings["sheet_ms"] = milliseconds(since: began)
        }
        if let sprites = recipe.sprites {
            try checkStop()
            let began = clock.now
            var sheets: [BatchRecord.Output] = []
            let track = try sampler.thumbnailTrack(
                every: clip.overrides.every ?? sprites.every.seconds(duration: duration, frameInterval: info.frameInterval),
                layout: .init(tileSize: sprites.size, columns: sprites.columns, rows: sprites.rows),
                onSheet: { index, sheet throws(PreviewLoopError) in
                    try checkStop()
                    let name = "sheet-\(index + 1).jpg"
                    try AtomicFile.write(try ImageEncoder.encode(sheet, as: .jpeg, quality: sprites.quality), to: staging + "/" + name)
                    var entry = output("sprite_sheet", name)
                    entry.width = sheet.width
                    entry.height = sheet.height
                    sheets.append(entry)
                })
            let vtt = track.webVTT { "sheet-\($0 + 1).jpg" }
            try AtomicFile.write(Array(vtt.utf8), to: staging + "/thumbnails.vtt")
            var entry = output("webvtt", "thumbnails.vtt")
            entry.tiles = track.cues.count
            entry.duration = track.cues.last?.end
            outputs.append(entry)
            outputs += sheets
            context.timings["sprites_ms"] = milliseconds(since: began)
        }
        try checkStop()
        // Never "ok" with a missing or empty file: every output is measured where it lies.
        for index in outputs.indices {
            let name = String(outputs[index].path.dropFirst(clip.id.count + 1))
            guard let size = BatchFiles.fileSize(staging + "/" + name), size > 0 else {
                throw PreviewLoopError(.outputNotWritable, "\(clip.input): \(name) is missing or empty after writing")
            }
            outputs[index].bytes = size
        }
        context.timings["total_ms"] = milliseconds(since: started)
        let record = BatchRecord(id: clip.id, input: clip.input, status: .ok, outputs: outputs, clip: BatchRecord.ClipInfo(info),
                                 timings: context.timings, shard: options.shard.description, fingerprint: fingerprint)
        try AtomicFile.write(Array(record.jsonLine().utf8), to: staging + "/.complete.json")
        try publish(staging, as: clip)
        isPublished = true
        return record
    }

    /// Puts a clip's finished staging folder in place of `OUT/<id>`: the old folder (incomplete, or
    /// redone with --force) goes aside, the new one takes its place, the old one is removed.
    private func publish(_ staging: String, as clip: BatchClip) throws(PreviewLoopError) {
        let destination = options.outputDirectory + "/" + clip.id
        let old = staging + ".old"
        // Checked again: something may have appeared there while the clip was made.
        if let conflict = ownershipConflict(for: clip) { throw PreviewLoopError(.refusedByPolicy, conflict) }
        if BatchFiles.exists(destination) {
            BatchFiles.remove(old)
            try BatchFiles.rename(destination, old)
        }
        try BatchFiles.rename(staging, destination)
        BatchFiles.remove(old)
    }

    /// A duplicate's folder: hard links to the files `original` (a completed record) lists, and a record
    /// saying whose they are. Throws when a link cannot be made (another file system): the clip is then
    /// made as any other.
    private func linkDuplicate(_ clip: BatchClip, of original: BatchRecord, fingerprint: String) throws(PreviewLoopError) -> BatchRecord {
        let started = ContinuousClock.now
        let out = options.outputDirectory
        let staging = try emptyStaging(for: clip)
        var isPublished = false
        defer { if !isPublished { BatchFiles.remove(staging) } }
        var outputs: [BatchRecord.Output] = []
        for var output in original.outputs {
            let name = String(output.path.dropFirst(original.id.count + 1))
            guard FileSystem.link(out + "/" + output.path, staging + "/" + name) == 0 else {
                throw PreviewLoopError(.outputNotWritable, "\(clip.input): cannot link \(name) (\(FileSystem.errorText(errno)))")
            }
            output.path = clip.id + "/" + name
            outputs.append(output)
        }
        var record = BatchRecord(id: clip.id, input: clip.input, status: .ok, attempts: 1, outputs: outputs, clip: original.clip,
                                 shard: options.shard.description, fingerprint: fingerprint)
        record.duplicateOf = original.id
        record.timings = ["total_ms": Self.milliseconds(since: started)]
        try AtomicFile.write(Array(record.jsonLine().utf8), to: staging + "/.complete.json")
        try publish(staging, as: clip)
        isPublished = true
        return record
    }

    /// The poster as `thumb --at auto`: the first good frame of the window. When the hover preview
    /// starts where the search does, its first frames come from the search's decoding.
    private func autoPoster(_ poster: BatchRecipe.Poster, hover: BatchRecipe.Hover?, clip: BatchClip, duration: Double?,
                            sampler: FrameSampler, hoverPreview: HoverPreview?) throws(PreviewLoopError) -> PosterChoice {
        var start = clip.overrides.start ?? poster.start
        var end = start + (clip.overrides.length ?? poster.length)
        if let duration {
            guard start < duration else {
                throw PreviewLoopError(.invalidArgument, "\(clip.input): the poster window starts at \(start) s, at or past the end (\(duration) s)")
            }
            end = min(end, duration)
        }
        start = max(0, start)
        if let hover, let preview = hoverPreview, max(0, preview.start) == start {
            // Timed in poster_ms; the rest of the hover in hover_ms.
            let shared = try sampler.posterFrame(in: start..<end, size: poster.size, sharing: preview.times,
                                                 convertedTo: hover.size) { (frame: VideoFrame) throws(PreviewLoopError) in
                try preview.append(frame)
            }
            return shared.poster
        }
        return try sampler.posterFrame(in: start..<end, size: poster.size)
    }

    /// The hover preview: the exact frame shown at each instant `start + k / fps` of the window, from
    /// the clip's one decoder, encoded as a looping H.264 MP4. Frames the poster's search already
    /// handed over (``HoverPreview/written``) are not decoded again.
    private func finishHover(_ preview: HoverPreview, _ hover: BatchRecipe.Hover, clip: BatchClip, sampler: FrameSampler,
                             entry: BatchRecord.Output) throws -> BatchRecord.Output {
        let fps = Double(hover.framesPerSecond)
        let wanted = preview.times.count
        var next = preview.written
        decoding: while next < wanted {
            if isStopped { throw PreviewLoopError(.cancelled, "\(clip.input): the batch was stopped") }
            // A second of instants at a time: one scaler for all of them, forward decoding reused.
            let times = Array(preview.times[next..<min(wanted, next + hover.framesPerSecond)])
            do throws(PreviewLoopError) {
                for frame in try sampler.frames(at: times, size: hover.size, accuracy: .exact, interval: 0) {
                    try preview.append(frame)
                }
            } catch {
                guard error.code == .corruptData && preview.written + times.count > 1 else { throw error }
                // The container's duration ran past the video's last frame: the preview ends there.
                for time in times {
                    guard let frame = try? sampler.frame(at: time, size: hover.size, accuracy: .exact) else {
                        guard preview.written > 0 else { throw error }
                        preview.lastDuration = 1 / fps
                        break decoding
                    }
                    try preview.append(frame)
                }
            }
            next += times.count
        }
        // As render ends a pass: where the clip's last frame stops showing, when that comes before the
        // window's end — the container's duration may say a little more or less than the video holds.
        let interval = sampler.info.frameInterval(orElse: preview.lastStep ?? 1 / fps)
        if var last = preview.lastSourceTime, preview.written > 0,
           sampler.info.duration.map({ preview.start + hover.length > $0 - 2 * interval }) ?? true {
            // The last frame render decodes: the one shown just before the window's end (or the clip's).
            if let frame = try? sampler.frame(at: preview.start + hover.length - 1e-6, size: hover.size, accuracy: .exact) {
                last = max(last, frame.sourceTime)
            }
            let length = min(hover.length, last + interval - preview.start)
            while Double(preview.written) / fps < length - 1e-9 {
                let time = preview.start + Double(preview.written) / fps
                guard let frame = try? sampler.frame(at: time, size: hover.size, accuracy: .exact) else { break }
                try preview.append(frame)
            }
            let shown = Double(preview.written - 1) / fps
            if shown < length { preview.lastDuration = min(1 / fps, length - shown) }
        }
        try preview.writer.finish(lastFrameDuration: .seconds(preview.lastDuration))
        var result = entry
        result.width = hover.size.width
        result.height = hover.size.height
        result.time = preview.start
        result.frames = preview.written
        result.duration = (Double(preview.written - 1) / fps + preview.lastDuration).rounded(toPlaces: 6)
        return result
    }

    /// A hover with a loop point or a seam: made by the call `render --loop-point … --seam …` makes
    /// (``LoopPlayer`` on the clip, opened again, and its ``LoopPlayer/render(to:format:framesPerSecond:quality:encoderThreads:maxFrames:loopPoint:seam:flashSafety:progress:)``
    /// with render's defaults), so the file is the one `render` writes with the same options. The frames
    /// held to find the seam are bounded by ``DecodedRecipe/seamedHoverBytes``.
    private func renderHover(_ hover: BatchRecipe.Hover, start: Double, clip: BatchClip, threads: Int, path: String,
                             entry: BatchRecord.Output) throws(PreviewLoopError) -> BatchRecord.Output {
        let player = try LoopPlayer(source: Source(argument: clip.input), configuration: .init(
            size: hover.size, windowStart: .seconds(start), windowLength: .seconds(hover.length),
            windowEnd: hover.loopPoint?.windowEnd, threads: threads, sourceOptions: options.sourceOptions))
        let summary = try player.render(to: path, format: hover.format, framesPerSecond: hover.framesPerSecond, quality: hover.quality,
                                        maxFrames: max(1, DecodedRecipe.seamedHoverBytes / max(1, hover.size.area * 3)),
                                        loopPoint: hover.loopPoint?.loopPoint ?? .length, seam: hover.seam)
        if isStopped { throw PreviewLoopError(.cancelled, "\(clip.input): the batch was stopped") }
        var result = entry
        result.width = summary.size.width
        result.height = summary.size.height
        result.time = player.windowStart.seconds
        result.frames = summary.frameCount
        result.duration = summary.duration.seconds.rounded(toPlaces: 6)
        // The out point: the loop's one play ends there (the frame after its last would be shown then).
        result.loopPoint = (player.windowStart.seconds + summary.duration.seconds).rounded(toPlaces: 6)
        result.seam = SeamReport(summary)
        return result
    }

    /// Bytes a clip may hold while decoding: the decoder's reference and threading frames at the
    /// coded size (4:2:0, two bytes a sample above 8 bits), plus the sheets and encoder of the recipe.
    public static func memoryEstimate(_ info: VideoInfo, recipe: BatchRecipe, threads: Int) -> Int {
        let bytesPerSample = info.pixelFormat.contains("10") || info.pixelFormat.contains("12") ? 2 : 1
        let frame = info.width * info.height * 3 / 2 * bytesPerSample
        var total = frame * (16 + 2 * threads) + (16 << 20)
        if let sprites = recipe.sprites { total += sprites.size.area * sprites.columns * sprites.rows * 3 }
        if let strip = recipe.strip { total += strip.size.area * strip.count * 3 * 2 }
        if let sheet = recipe.sheet, let tileWidth = sheet.configuration.effectiveTileWidth {
            // The tiles at the clip's aspect, and the sheet that holds them again.
            let tiles = sheet.configuration.columns * sheet.configuration.rows
            let tileHeight = ContactSheetLayout.tileHeight(tileWidth: tileWidth, displaySize: info.displaySize)
            total += tileWidth * tileHeight * tiles * 3 * 2
        }
        if let hover = recipe.hover {
            total += hover.size.area * 3 * 40 + (32 << 20)
            // A GIF holds every frame until its palette is made.
            if hover.format == .gif { total += Int((hover.length * Double(hover.framesPerSecond)).rounded(.up)) * hover.size.area * 3 }
            // A seamed hover holds its window's frames (bounded by the recipe) and a second decoder.
            if hover.isSeamed {
                var seconds = hover.length * (hover.loopPoint == .auto ? 1 + LoopPoint.searchFraction : 1)
                if case .crossfade(let fade) = hover.seam { seconds += fade.seconds }
                let held = Int(min(Double(DecodedRecipe.seamedHoverBytes), (seconds * Double(hover.framesPerSecond)).rounded(.up) * Double(hover.size.area * 3)))
                total += held + frame * (16 + 2 * threads)
            }
        }
        return total
    }
}

/// Admits work by estimated memory: a reservation waits until it fits beside those held, except that
/// one alone is always admitted (so a clip over the whole budget still runs, by itself).
package final class MemoryGate: @unchecked Sendable {
    private let budget: Int
    private var held = 0
    private var holders = 0
    private let lock = ConditionLock()

    package init(budget: Int) { self.budget = max(1, budget) }

    package func acquire(_ bytes: Int) -> Int {
        lock.lock()
        while holders > 0 && held + bytes > budget { lock.wait() }
        held += bytes
        holders += 1
        lock.unlock()
        return bytes
    }

    package func release(_ bytes: Int) {
        lock.lock()
        held -= bytes
        holders -= 1
        lock.broadcast()
        lock.unlock()
    }
}

extension Double {
    func rounded(toPlaces places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}

/// A hover preview in the making: its instants, its open writer and the frames written so far.
private final class HoverPreview {
    let start: Double
    /// `start + k / fps` for each frame of the preview.
    let times: [Double]
    let writer: AnimationWriter
    private(set) var written = 0
    /// How long the last frame is shown (the window may end between two instants).
    var lastDuration: Double

    init(_ hover: BatchRecipe.Hover, start: Double, clip: BatchClip, duration: Double?, path: String) throws(PreviewLoopError) {
        self.start = start
        var length = hover.length
        if let duration {
            guard start < duration else {
                throw PreviewLoopError(.invalidArgument, "\(clip.input): the hover window starts at \(start) s, at or past the end (\(duration) s)")
            }
            length = min(length, duration - start)
        }
        let fps = Double(hover.framesPerSecond)
        let wanted = max(1, Int((length * fps - 1e-6).rounded(.up)))
        times = (0..<wanted).map { start + Double($0) / fps }
        lastDuration = length - Double(wanted - 1) / fps
        writer = try AnimationWriter(path: path, format: hover.format, size: hover.size,
                                     framesPerSecond: hover.framesPerSecond, quality: hover.quality)
    }

    /// The source time of the latest frame written, and the step from the frame before it.
    private(set) var lastSourceTime: Double?
    private(set) var lastStep: Double?

    func append(_ frame: VideoFrame) throws(PreviewLoopError) {
        try writer.append(frame.image)
        written += 1
        if let last = lastSourceTime, frame.sourceTime > last { lastStep = frame.sourceTime - last }
        lastSourceTime = max(lastSourceTime ?? frame.sourceTime, frame.sourceTime)
    }
}
