import Glibc

/// How a batch runs.
public struct BatchOptions: Sendable {
    /// Where `<id>/` folders, results files and the batch's own state (`.staging/`, `.failures/`) go.
    public var outputDirectory: String
    /// `s3://BUCKET/PREFIX/` when the outputs go to a bucket: ``outputDirectory`` is then the local
    /// working folder each clip is made in before it is uploaded.
    package var objectPrefix: String?
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
