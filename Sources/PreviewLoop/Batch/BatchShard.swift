/// A deterministic share of a manifest: clip `id` belongs to shard `fnv1a64(id) mod count`.
///
/// Because membership depends on the id alone, shards are disjoint and together complete for any
/// count, and stay the same when the manifest is re-read, re-ordered or grows (a new clip never moves
/// an old one to another shard).
public struct BatchShard: Sendable, Hashable, CustomStringConvertible {
    /// This shard, from 0.
    public var index: Int
    /// How many shards share the manifest.
    public var count: Int

    /// The whole manifest.
    public static let all = BatchShard(uncheckedIndex: 0, count: 1)

    /// Creates shard `index` of `count`.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` unless `0 ≤ index < count ≤ 100000`.
    public init(index: Int, count: Int) throws(PreviewLoopError) {
        guard ValueRanges.shardCount.contains(count), (0..<count).contains(index) else {
            throw PreviewLoopError(.invalidArgument, "shard \(index)/\(count): the index must be 0 to count − 1, the count \(ValueRanges.shardCount.inWords)")
        }
        self.index = index
        self.count = count
    }

    private init(uncheckedIndex: Int, count: Int) {
        index = uncheckedIndex
        self.count = count
    }

    /// Whether the clip with this id is in this shard.
    public func contains(id: String) -> Bool {
        count == 1 || Int(StableHash.fnv1a64(id) % UInt64(count)) == index
    }

    /// This shard's clips, in manifest order.
    public func select(_ clips: [BatchClip]) -> [BatchClip] {
        clips.filter { contains(id: $0.id) }
    }

    /// `I/N`.
    public var description: String { "\(index)/\(count)" }

    /// The results file's name: `results.jsonl` for the whole manifest, `results.shard-I-of-N.jsonl`
    /// for a shard, so that shards never write the same file.
    public var resultsFileName: String {
        count == 1 ? "results.jsonl" : "results.shard-\(index)-of-\(count).jsonl"
    }

    /// The shard named by a scheduler's environment, if any: Slurm job arrays
    /// (`SLURM_ARRAY_TASK_ID` − `SLURM_ARRAY_TASK_MIN`, of `SLURM_ARRAY_TASK_COUNT`), Kubernetes Indexed
    /// Jobs (`JOB_COMPLETION_INDEX`, of `countHint` or `PREVIEW_LOOP_SHARD_COUNT`), AWS Batch array jobs
    /// (`AWS_BATCH_JOB_ARRAY_INDEX` of `AWS_BATCH_JOB_ARRAY_SIZE`).
    ///
    /// - Returns: the shard and the variables it came from, or `nil` when none is set.
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for a set but unusable environment (an index
    ///   without a count, a value that is not a number).
    public static func fromEnvironment(_ environment: [String: String], countHint: Int? = nil) throws(PreviewLoopError)
        -> (shard: BatchShard, source: String)? {
        func number(_ name: String) throws(PreviewLoopError) -> Int? {
            guard let text = environment[name] else { return nil }
            guard let value = Int(text.trimmedSpaces) else {
                throw PreviewLoopError(.invalidArgument, "\(name)=\(text) is not a whole number")
            }
            return value
        }
        if let id = try number("SLURM_ARRAY_TASK_ID") {
            let minimum = try number("SLURM_ARRAY_TASK_MIN") ?? 0
            let slurmCount = try number("SLURM_ARRAY_TASK_COUNT")
            guard let count = countHint ?? slurmCount else {
                throw PreviewLoopError(.invalidArgument, "SLURM_ARRAY_TASK_ID is set but not SLURM_ARRAY_TASK_COUNT; give --shard-count")
            }
            // Arrays with steps (--array=0-15:4) do not map onto 0..<count: refuse them rather than skip clips.
            if let step = try number("SLURM_ARRAY_TASK_STEP"), step != 1 {
                throw PreviewLoopError(.invalidArgument, "SLURM_ARRAY_TASK_STEP=\(step): use a contiguous array (--array=0-N)")
            }
            return (try BatchShard(index: id - minimum, count: count), "SLURM_ARRAY_TASK_ID")
        }
        if let index = try number("JOB_COMPLETION_INDEX") {
            let envCount = try number("PREVIEW_LOOP_SHARD_COUNT")
            guard let count = countHint ?? envCount else {
                throw PreviewLoopError(.invalidArgument,
                                       "JOB_COMPLETION_INDEX is set but the shard count is not: give --shard-count or PREVIEW_LOOP_SHARD_COUNT")
            }
            return (try BatchShard(index: index, count: count), "JOB_COMPLETION_INDEX")
        }
        if let index = try number("AWS_BATCH_JOB_ARRAY_INDEX") {
            let awsCount = try number("AWS_BATCH_JOB_ARRAY_SIZE")
            guard let count = countHint ?? awsCount else {
                throw PreviewLoopError(.invalidArgument, "AWS_BATCH_JOB_ARRAY_INDEX is set but not AWS_BATCH_JOB_ARRAY_SIZE; give --shard-count")
            }
            return (try BatchShard(index: index, count: count), "AWS_BATCH_JOB_ARRAY_INDEX")
        }
        return nil
    }
}
