import Glibc

/// The lock that keeps two runs of one shard off one output folder: an exclusive `flock` on
/// `OUT/.lock.<shard>`, held from creation until the lock is released (deinit), and released by the
/// kernel if the process dies.
final class BatchShardLock: Sendable {
    /// The shard's name in the folder's bookkeeping: `all`, or `shard-<index>-of-<count>`.
    let shardName: String
    private let descriptor: Int32

    /// Takes the shard's lock in `outputDirectory` (which exists).
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when the lock file cannot be made,
    ///   ``PreviewLoopError/Code/invalidArgument`` when another run holds the shard.
    init(outputDirectory out: String, shard: BatchShard) throws(PreviewLoopError) {
        shardName = shard.count == 1 ? "all" : "shard-\(shard.index)-of-\(shard.count)"
        let lockPath = out + "/.lock." + shardName
        descriptor = FileSystem.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw PreviewLoopError(.outputNotWritable, "\(lockPath): cannot create (\(FileSystem.errorText(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw PreviewLoopError(.invalidArgument, "\(out): another batch is running shard \(shard) there")
        }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
