import FoundationEssentials
import Glibc
import Synchronization

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
    private let shardLock: BatchShardLock
    private let publisher: BatchPublisher
    /// Clips whose input has the same bytes as an earlier clip's, by id: the earlier clip's id.
    public let duplicates: [String: String]
    /// The clips of this run that have their record (for the duplicates waiting on them).
    private let finished = Mutex<Set<String>>([])
    /// The bucket the outputs go to (``BatchOptions/objectPrefix``), with what was there at the start.
    private let objects: BatchObjectOutput?

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
        if let prefix = options.objectPrefix {
            objects = try BatchObjectOutput(prefix: prefix)
            // A duplicate's hard links need the original's files, which a bucket's run does not keep.
            duplicates = [:]
        } else {
            objects = nil
            duplicates = Self.duplicates(among: clips)
        }
        gate = MemoryGate(budget: options.memoryBudget)
        try BatchFiles.makeDirectory(options.outputDirectory)
        shardLock = try BatchShardLock(outputDirectory: options.outputDirectory, shard: options.shard)
        publisher = try BatchPublisher(outputDirectory: options.outputDirectory, shardName: shardLock.shardName,
                                       inputs: clips.map(\.input))
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
        publisher.ownershipConflict(for: clip.id)
    }

    /// Does one clip: skips it when done (or failed for good), else makes its outputs, retrying
    /// transient failures. Blocks; returns `nil` when the batch was stopped before the clip started, and
    /// a transient `interrupted` failure when a stop interrupted it (nothing of it is left in `OUT`).
    public func process(_ clip: BatchClip) -> BatchRecord? {
        let out = options.outputDirectory
        let fingerprint = fingerprint(of: clip)
        if !options.force, var done = objects.map({ $0.completedRecord(id: clip.id, fingerprint: fingerprint) }) ?? completedRecord(of: clip) {
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
        if !options.retryFailed, var failed = objects.map({ $0.permanentFailure(id: clip.id, fingerprint: fingerprint) })
            ?? (try? BatchFiles.readFile(failurePath, limit: 16 << 20)).flatMap({ try? JSONDecoder().decode(BatchRecord.self, from: Data($0)) }),
           failed.fingerprint == fingerprint, failed.permanence == .permanent {
            failed.skipped = true
            failed.attempts = 0
            return failed
        }
        var attempt = 0
        var context = BatchClipContext()
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
            context = BatchClipContext()
            // The clip's inputs register their interrupters in this scope, so a stop interrupts them at once.
            let scope = CancellationScope()
            inFlight.withLock { $0[clip.id] = scope }
            if isStopped { scope.cancel() }
            defer { inFlight.withLock { _ = $0.removeValue(forKey: clip.id) } }
            do {
                var record = try scope.enter { try make(clip, fingerprint: fingerprint, context: context) }
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
                if permanence == .permanent { objects?.keepFailure(record) }
                return record
            }
        }
    }

    /// Makes the clip's outputs in its staging folder and puts them in place with their record.
    private func make(_ clip: BatchClip, fingerprint: String, context: BatchClipContext) throws -> BatchRecord {
        let started = ContinuousClock.now
        let record = try publisher.publish(clip.id) { staging in
            let threads = options.threadsPerClip > 0 ? options.threadsPerClip : max(1, BatchOptions.processorCount / options.jobs)
            let job = try BatchClipJob(clip: clip, staging: staging, recipe: options.recipe, threads: threads,
                                       sourceOptions: options.sourceOptions, context: context) { [self] in isStopped }
            let reservation = gate.acquire(Self.memoryEstimate(job.info, recipe: job.recipe, threads: threads))
            defer { gate.release(reservation) }
            let outputs = try job.run()
            context.timings["total_ms"] = BatchClipJob.milliseconds(since: started)
            var record = BatchRecord(id: clip.id, input: clip.input, status: .ok, outputs: outputs, clip: BatchRecord.ClipInfo(job.info),
                                     timings: context.timings, shard: options.shard.description, fingerprint: fingerprint)
            // What a remote input's reads cost (s3://, or http(s) read in ranges), as --json records say it.
            record.remote = job.sampler.remoteReads
            try AtomicFile.write(Array(record.jsonLine().utf8), to: staging + "/.complete.json")
            // To a bucket: uploaded (record last) before the local folder is committed.
            try objects?.upload(record, from: staging)
            return record
        }
        // The local copy of an uploaded clip is not kept.
        if objects != nil { BatchFiles.remove(options.outputDirectory + "/" + clip.id) }
        return record
    }

    /// A duplicate's folder: hard links to the files `original` (a completed record) lists, and a record
    /// saying whose they are. Throws when a link cannot be made (another file system): the clip is then
    /// made as any other.
    private func linkDuplicate(_ clip: BatchClip, of original: BatchRecord, fingerprint: String) throws -> BatchRecord {
        let started = ContinuousClock.now
        let out = options.outputDirectory
        return try publisher.publish(clip.id) { staging in
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
            record.timings = ["total_ms": BatchClipJob.milliseconds(since: started)]
            try AtomicFile.write(Array(record.jsonLine().utf8), to: staging + "/.complete.json")
            return record
        }
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
                var seconds = hover.length * (hover.loopPoint == .auto ? 1 + LoopEnd.searchFraction : 1)
                if case .crossfade(let fade) = hover.seam { seconds += fade.seconds }
                let held = Int(min(Double(BatchRecipe.seamedHoverBytes), (seconds * Double(hover.framesPerSecond)).rounded(.up) * Double(hover.size.area * 3)))
                total += held + frame * (16 + 2 * threads)
            }
        }
        return total
    }
}

extension Double {
    func rounded(toPlaces places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}

