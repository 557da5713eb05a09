import Glibc
import PreviewLoop
import PreviewLoopJobs
import PreviewLoopRemote
import Synchronization

/// Rendered responses kept in a bucket (`--cache s3://BUCKET/PREFIX/`), shared by every server pointed at
/// the same prefix: the tier after memory and disk.
///
/// An entry is the object `PREFIX<validator>.<extension>` (the disk cache's entry name) holding the disk
/// cache's entry format (``EntryHead``, then the body), written once with `If-None-Match: *` in one `PUT`
/// (the first writer wins; a reader sees a whole entry or none). The validator holds the source's
/// version, the route, the normalised query and the engine's version, so an entry is never replaced.
///
/// The store never holds up a request for long and never fails one: a lookup runs on one of a few
/// threads of its own (``LookupPool``; none idle: the tier is skipped), stops at ``timeout`` (the
/// request then renders), and after ``breakerThreshold`` failures in a row the store is left alone for
/// ``breakerPause`` before one lookup probes it again. Uploads wait in a bounded queue for one thread;
/// when it is full an upload is skipped. Nothing here evicts: the bucket's lifecycle rules do.
///
/// Invariant: `failures`, `pausedUntil`, `isProbing`, `isReachable`, `lastProbe`, `uploads`,
/// `uploadBytes` and `isStopping` are touched only under `lock`.
final class SharedCache: @unchecked Sendable {
    let location: SharedCacheLocation
    /// Seconds a lookup may take.
    let timeout: Double
    /// Failures in a row that pause lookups, and for how long.
    static let breakerThreshold = 5
    static let breakerPause: Duration = .seconds(10)
    /// Threads that run lookups.
    static let lookupThreads = 4
    /// Uploads that may wait, and their bytes together.
    static let uploadQueueLimit = 64
    static let uploadQueueBytes = 64 << 20
    /// The largest entry kept (head and body).
    static let maximumEntryBytes = 32 << 20

    private let lookupStore: ObjectStore
    private let uploadStore: ObjectStore
    private let metrics: ServerMetrics
    private let pool: LookupPool
    private let lock = ConditionLock()
    private var failures = 0
    private var pausedUntil: ContinuousClock.Instant?
    private var isProbing = false
    private var isReachable = false
    private var lastProbe: ContinuousClock.Instant?
    private var uploads: [(key: String, bytes: [UInt8])] = []
    private var uploadBytes = 0
    private var isStopping = false
    /// The lookup deadline of each thread running one: the store's transfers stop there.
    private let deadlines = ThreadDeadlines()

    /// Reads the AWS settings as `--root s3://` does and checks the bucket once (a listing of one key
    /// under the prefix); a failure is told on standard error and in ``reachable``, never a failed start.
    init(location: SharedCacheLocation, timeout: Double, tls: TLSOptions, metrics: ServerMetrics) throws(ServerStartError) {
        self.location = location
        self.timeout = timeout
        self.metrics = metrics
        let configuration = AWSConfiguration.resolve(environment: ObjectRoot.environment()) { path in
            (try? BatchFiles.readRegularFile(path, limit: 1 << 20)).map { String(decoding: $0, as: UTF8.self) }
        }
        let deadlines = self.deadlines
        lookupStore = ObjectStore(configuration: configuration,
                                  limits: HTTPTransfer.Limits(connectTimeout: timeout, stallTimeout: timeout,
                                                              verifiesCertificates: tls.verifies, certificateAuthorities: tls.caFile),
                                  retries: 0) { deadlines.isPast() }
        uploadStore = ObjectStore(configuration: configuration,
                                  limits: HTTPTransfer.Limits(connectTimeout: 5, stallTimeout: 10,
                                                              verifiesCertificates: tls.verifies, certificateAuthorities: tls.caFile),
                                  retries: 1)
        pool = LookupPool(threads: Self.lookupThreads)
        do {
            try NamedThread.detach(name: "serve-upload") { [self] in uploadLoop() }
        } catch {
            throw ServerStartError(message: "\(ServeCommand.cache.spec.longSpelling) \(location): \(Format.oneLine(error.message))")
        }
        if let problem = probe() {
            Self.line(2, "Warning: serve: \(ServeCommand.cache.spec.longSpelling) \(location): \(Format.oneLine(problem)); "
                + "requests are rendered until it can be reached")
        }
    }

    /// Whether the store answered the last time it was asked.
    var reachable: Bool { lock.withLock { isReachable } }

    /// Stops the lookup and upload threads (uploads still waiting are dropped).
    func stop() {
        lock.withLock {
            isStopping = true
            uploads.removeAll()
            uploadBytes = 0
            lock.broadcast()
        }
        pool.stop()
    }

    /// The object of an entry name (``DiskCache/entryName(tag:route:)``).
    func object(_ name: String) -> S3Object { S3Object(bucket: location.bucket, key: location.prefix + name) }

    // MARK: Lookups

    /// Looks `name` up on a lookup thread and calls `found` there with the entry, or `nil` for a miss,
    /// a failure or a lookup past its time limit. Returns `false` (and calls nothing) when the tier is
    /// skipped: every lookup thread busy, or the store paused after failures.
    func lookUp(_ name: String, found: @escaping @Sendable (CachedBody?) -> Void, contentType: String) -> Bool {
        guard admit() else {
            metrics.sharedCacheSkipped(reason: "paused")
            return false
        }
        let submitted = pool.submit { [self] in
            found(fetch(name, contentType: contentType))
        }
        if !submitted {
            lock.withLock { isProbing = false }
            metrics.sharedCacheSkipped(reason: "busy")
        }
        return submitted
    }

    /// Whether a lookup may ask the store now: yes unless paused; after the pause one lookup (the probe)
    /// at a time until it succeeds.
    private func admit() -> Bool {
        lock.withLock {
            guard failures >= Self.breakerThreshold else { return true }
            if let pausedUntil, ContinuousClock.now < pausedUntil { return false }
            guard !isProbing else { return false }
            isProbing = true
            return true
        }
    }

    /// The entry `name` from the store (on the calling thread, within ``timeout``).
    private func fetch(_ name: String, contentType: String) -> CachedBody? {
        let start = ContinuousClock.now
        deadlines.set(start + .milliseconds(Int64(timeout * 1000)))
        defer { deadlines.set(nil) }
        let result: Result<[UInt8], RemoteFailure>
        do {
            result = .success(try lookupStore.get(object(name), limit: Self.maximumEntryBytes))
        } catch {
            result = .failure(error)
        }
        let (seconds, attoseconds) = (ContinuousClock.now - start).components
        metrics.sharedCacheLookup(seconds: Double(seconds) + Double(attoseconds) * 1e-18)
        switch result {
        case .success(let bytes):
            succeeded()
            guard let head = EntryHead.parse(bytes), head.length < bytes.count else {
                // Not an entry: a miss (rendered, and the upload finds the key taken).
                metrics.sharedCacheError(kind: "malformed")
                return nil
            }
            metrics.sharedCacheHit()
            return CachedBody(body: Array(bytes[head.length...]), contentType: contentType, headers: head.headers)
        case .failure(let failure) where failure.kind == .notFound && failure.storeCode != "NoSuchBucket":
            succeeded()
            metrics.sharedCacheMiss()
            return nil
        case .failure(let failure):
            failed(failure)
            return nil
        }
    }

    private func succeeded() {
        lock.withLock {
            failures = 0
            pausedUntil = nil
            isProbing = false
            isReachable = true
        }
        metrics.sharedCacheReachable(true)
    }

    private func failed(_ failure: RemoteFailure) {
        metrics.sharedCacheError(kind: Self.kindName(failure))
        lock.withLock {
            failures += 1
            isProbing = false
            isReachable = false
            if failures >= Self.breakerThreshold { pausedUntil = ContinuousClock.now + Self.breakerPause }
        }
        metrics.sharedCacheReachable(false)
    }

    /// The `kind` label of a failure in `/metrics`.
    static func kindName(_ failure: RemoteFailure) -> String {
        switch failure.kind {
        case .notFound: "not_found"
        case .refused: "refused"
        case .transport: "transport"
        case .stopped: "timeout"
        case .changed: "changed"
        case .alreadyExists: "exists"
        case .local: "local"
        }
    }

    /// Asks the store for one key under the prefix (on the calling thread): `nil` when it answered,
    /// else why not.
    @discardableResult
    private func probe() -> String? {
        deadlines.set(ContinuousClock.now + .milliseconds(Int64(max(timeout, 2) * 1000)))
        defer { deadlines.set(nil) }
        lock.withLock { lastProbe = ContinuousClock.now }
        do {
            _ = try lookupStore.list(bucket: location.bucket, prefix: location.prefix, pageSize: 1, limit: 1)
            succeeded()
            return nil
        } catch {
            failed(error)
            return error.kind == .stopped ? "the store did not answer in time" : error.reason
        }
    }

    /// With `--require-shared-cache`, for `/readyz`: whether the store answered last time; when not, a
    /// probe is started (at most one a second, on a lookup thread) so readiness comes back with the store.
    func checkReadiness() -> Bool {
        let (isReady, isDue): (Bool, Bool) = lock.withLock {
            let isDue = lastProbe.map { ContinuousClock.now - $0 >= .seconds(1) } ?? true
            if !isReachable && isDue { lastProbe = ContinuousClock.now }
            return (isReachable, !isReachable && isDue)
        }
        if isDue { _ = pool.submit { [self] in probe() } }
        return isReady
    }

    // MARK: Uploads

    /// Queues `entry` for upload as `name` (skipped, and counted, when the queue is full, the store is
    /// paused, or the entry cannot be written).
    func upload(_ entry: CachedBody, as name: String) {
        guard !entry.body.isEmpty, let head = EntryHead.bytes(entry.headers), head.count + entry.body.count <= Self.maximumEntryBytes else {
            return
        }
        let bytes = head + entry.body
        let queued: Bool = lock.withLock {
            let paused = failures >= Self.breakerThreshold && pausedUntil.map { ContinuousClock.now < $0 } == true
            guard !isStopping, !paused, uploads.count < Self.uploadQueueLimit,
                  uploadBytes + bytes.count <= Self.uploadQueueBytes else { return false }
            uploads.append((location.prefix + name, bytes))
            uploadBytes += bytes.count
            lock.signal()
            return true
        }
        if !queued { metrics.sharedCacheUpload(outcome: "skipped") }
    }

    private func uploadLoop() {
        while true {
            let next: (key: String, bytes: [UInt8])? = lock.withLock {
                while uploads.isEmpty && !isStopping { lock.wait() }
                guard !isStopping else { return nil }
                let next = uploads.removeFirst()
                uploadBytes -= next.bytes.count
                return next
            }
            guard let next else { return }
            do {
                try uploadStore.put(next.bytes, at: S3Object(bucket: location.bucket, key: next.key), ifAbsent: true,
                                    contentType: "application/octet-stream")
                succeeded()
                metrics.sharedCacheUpload(outcome: "stored")
            } catch where error.kind == .alreadyExists {
                // Another server stored it first: entries are never replaced.
                succeeded()
                metrics.sharedCacheUpload(outcome: "exists")
            } catch {
                failed(error)
                metrics.sharedCacheUpload(outcome: "failed")
            }
        }
    }

    private static func line(_ descriptor: Int32, _ text: String) {
        let bytes = Array((text + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}

/// The deadline of each thread waiting for the store: what the store's `shouldStop` reads on the thread
/// running the transfer.
final class ThreadDeadlines: Sendable {
    private let deadlines = Mutex<[UInt: ContinuousClock.Instant]>([:])

    /// Sets (or with `nil` clears) the calling thread's deadline.
    func set(_ deadline: ContinuousClock.Instant?) {
        let thread = UInt(pthread_self())
        deadlines.withLock { $0[thread] = deadline }
    }

    /// Whether the calling thread's deadline has passed (never, without one).
    func isPast() -> Bool {
        let thread = UInt(pthread_self())
        guard let deadline = deadlines.withLock({ $0[thread] }) else { return false }
        return ContinuousClock.now >= deadline
    }
}

/// A fixed set of threads that run jobs, each job only when a thread is idle for it: ``submit(_:)``
/// never queues behind busy threads, it says no.
///
/// Invariant: `idle`, `jobs` and `isStopping` are touched only under `lock`; `jobs.count <= idle`.
final class LookupPool: @unchecked Sendable {
    private let lock = ConditionLock()
    private var idle = 0
    private var jobs: [@Sendable () -> Void] = []
    private var isStopping = false

    init(threads: Int) {
        for _ in 0..<threads {
            try? NamedThread.detach(name: "serve-lookup") { [self] in run() }
        }
    }

    /// Runs `job` on an idle thread; `false` when none is idle.
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        lock.withLock {
            guard !isStopping, jobs.count < idle else { return false }
            jobs.append(job)
            lock.signal()
            return true
        }
    }

    /// Lets the threads end once their jobs are done.
    func stop() {
        lock.withLock {
            isStopping = true
            lock.broadcast()
        }
    }

    private func run() {
        while true {
            let job: (@Sendable () -> Void)? = lock.withLock {
                idle += 1
                while jobs.isEmpty && !isStopping { lock.wait() }
                idle -= 1
                return jobs.isEmpty ? nil : jobs.removeFirst()
            }
            guard let job else { return }
            job()
        }
    }
}
