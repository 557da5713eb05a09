import Glibc
import PreviewLoop
import PreviewLoopJobs
import PreviewLoopRemote
import Synchronization

/// `--root s3://BUCKET/PREFIX/`: the videos served are the objects under a prefix of a bucket. A request
/// path names the key `PREFIX` + the path (the same path rules as for a folder); the object's `HEAD`
/// (entity tag, size, Last-Modified, remembered for `--source-check-interval`) makes the response's
/// validator, and the render reads that version only (`If-Match` on every range).
final class ObjectRoot: Sendable {
    let bucket: String
    /// Empty, or ends with `/`.
    let prefix: String
    let store: ObjectStore
    let tls: TLSOptions
    let checkInterval: Double
    /// The most objects the feed's listing reads (ListObjectsV2 pages of 1000): keys past it are not listed.
    static let listingLimit = 10_000
    private let known = Mutex<[String: (source: ResolvedSource, at: ContinuousClock.Instant)]>([:])
    private let listed = Mutex<(at: ContinuousClock.Instant, objects: [ObjectStore.ObjectInfo])?>(nil)

    /// `s3://BUCKET/PREFIX/` split, or `nil` when `text` is not one (no bucket, an empty or `.`/`..` component).
    static func parse(_ text: String) -> (bucket: String, prefix: String)? {
        guard text.lowercased().hasPrefix("s3://") else { return nil }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        var prefix = String(rest.dropFirst(bucket.count + 1))
        guard !bucket.isEmpty, !bucket.contains(where: { $0.isWhitespace || $0 == "@" || $0 == ":" }) else { return nil }
        if !prefix.isEmpty && !prefix.hasSuffix("/") { prefix += "/" }
        for component in prefix.split(separator: "/", omittingEmptySubsequences: false).dropLast() {
            guard !component.isEmpty, component != ".", component != ".." else { return nil }
        }
        return (bucket, prefix)
    }

    /// Reads the AWS settings from the environment and checks at once that the bucket can be listed
    /// under the prefix (the store reachable, the credentials accepted): otherwise why, in one line.
    init(root text: String, tls: TLSOptions, checkInterval: Double, timeout: Double) throws(ServerStartError) {
        let spelling = "\(ServeCommand.root.spec.longSpelling) \(Format.oneLine(text))"
        guard let (bucket, prefix) = Self.parse(text) else {
            throw ServerStartError(message: "\(spelling): an object root is named s3://BUCKET/ or s3://BUCKET/PREFIX/")
        }
        self.bucket = bucket
        self.prefix = prefix
        self.tls = tls
        self.checkInterval = checkInterval
        let configuration = AWSConfiguration.resolve(environment: Self.environment()) { path in
            (try? BatchFiles.readRegularFile(path, limit: 1 << 20)).map { String(decoding: $0, as: UTF8.self) }
        }
        store = ObjectStore(configuration: configuration,
                            limits: HTTPTransfer.Limits(connectTimeout: timeout, stallTimeout: timeout,
                                                        verifiesCertificates: tls.verifies, certificateAuthorities: tls.caFile))
        do {
            _ = try store.list(bucket: bucket, prefix: prefix, pageSize: 1, limit: 1)
        } catch {
            throw ServerStartError(message: "\(spelling): \(Format.oneLine(error.reason))")
        }
    }

    /// This process's environment.
    static func environment() -> [String: String] {
        var values: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                values[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return values
    }

    /// `s3://BUCKET/PREFIX/` as the feed's title and messages name it.
    var description: String { "s3://\(bucket)/\(prefix)" }

    /// The object a request path's components name: its `HEAD` (or one asked less than the check
    /// interval ago), as a source whose version is its key below the prefix, entity tag, size and time.
    func resolve(_ components: [String]) -> Result<ResolvedSource, PreviewRequestError> {
        let relative = components.joined(separator: "/")
        let object = S3Object(bucket: bucket, key: prefix + relative)
        // A live playlist's edge moves on every segment: what is known of it lasts its cache time at most.
        if checkInterval > 0, let entry = known.withLock({ $0[object.key] }),
           ContinuousClock.now - entry.at < .milliseconds(Int64(min(checkInterval, Double(entry.source.liveMaxAge ?? Int.max)) * 1000)) {
            return .success(entry.source)
        }
        do {
            guard let info = try store.head(object) else {
                return .failure(PreviewRequestError(status: 404, detail: "No such source."))
            }
            var source = source(relative: relative, info: info)
            if LivePlaylists.isPlaylistPath(object.key), info.size <= LivePlaylists.limit,
               let text = try? store.get(object, limit: LivePlaylists.limit, ifMatch: info.etag) {
                // A live playlist's answers name its newest segment and are cached briefly.
                source = LivePlaylists.marked(source, playlist: text)
            }
            if checkInterval > 0 {
                known.withLock { known in
                    if known.count >= RemoteSources.remembered { known.removeAll(keepingCapacity: true) }
                    known[object.key] = (source, ContinuousClock.now)
                }
            }
            return .success(source)
        } catch {
            return .failure(Self.problem(error, object: object))
        }
    }

    /// An object as a source: read through its `s3://` URL (the key percent-encoded, so any key reads
    /// back exactly), pinned to its entity tag.
    func source(relative: String, info: ObjectStore.ObjectInfo) -> ResolvedSource {
        let key = prefix + relative
        let etag = info.etag ?? ""
        let time = info.lastModified ?? ""
        var source = ResolvedSource(path: "s3://\(bucket)/" + SignatureV4.encode(key, keepingSlashes: true),
                                    identity: "s3\n\(bucket)\n\(key)\n\(etag)\n\(info.size)\n\(time)",
                                    version: "s3\n\(relative)\n\(etag)\n\(info.size)\n\(time)")
        source.objectEntityTag = etag
        return source
    }

    /// Forgets the remembered `HEAD` of a key, so the next request asks the store again.
    func forget(key: String) {
        known.withLock { _ = $0.removeValue(forKey: key) }
    }

    /// The video objects under the prefix, as feed entries with their sources (no `HEAD` each: the
    /// listing gives every object's entity tag, size and time), in key order, at most
    /// ``FeedPage/maxCards``, from at most ``listingLimit`` objects listed (read again at most every
    /// ``FeedListing/rescanInterval``).
    func videos() -> Result<[(entry: FeedManifest.Entry, source: ResolvedSource)], PreviewRequestError> {
        let now = ContinuousClock.now
        var objects: [ObjectStore.ObjectInfo]
        if let recent = listed.withLock({ $0 }), now - recent.at < FeedListing.rescanInterval {
            objects = recent.objects
        } else {
            do {
                objects = try store.list(bucket: bucket, prefix: prefix, limit: Self.listingLimit)
            } catch {
                return .failure(Self.problem(error, object: S3Object(bucket: bucket, key: prefix)))
            }
            listed.withLock { $0 = (now, objects) }
        }
        let videos = objects.lazy.compactMap { info -> (entry: FeedManifest.Entry, source: ResolvedSource)? in
            guard info.key.hasPrefix(self.prefix) else { return nil }
            let relative = String(info.key.dropFirst(self.prefix.count))
            let name = relative.split(separator: "/").last.map(String.init) ?? ""
            guard let dot = name.lastIndex(of: "."),
                  BatchFolder.videoExtensions.contains(name[name.index(after: dot)...].lowercased()),
                  relative.split(separator: "/", omittingEmptySubsequences: false)
                      .allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.contains("\\") }),
                  FeedPage.unservableReason(relative) == nil else { return nil }
            return (FeedManifest.Entry(path: relative), self.source(relative: relative, info: info))
        }
        return .success(Array(videos.prefix(FeedPage.maxCards)))
    }

    /// Renders `job` from the object `source` names, reading only the version it was resolved at (a
    /// live playlist: the version there is when the render reads it, its segments objects under the
    /// prefix). A render the store refuses because the object changed (or went) since is 503 (ask
    /// again: the new version gets a new validator); an object it names that is missing while it is
    /// unchanged (a playlist's segment) is 404; any other store failure is 502 naming the object and
    /// the store's reason.
    func render(_ job: PreviewJob, siblings: [PreviewJob], source: ResolvedSource, scratch: String) throws(PreviewRequestError) -> RenderedBody {
        do {
            return try job.render(scratch: scratch, pinnedEntityTag: source.isLive ? nil : source.objectEntityTag,
                                  objectKeyPrefix: prefix, tls: tls, siblings: siblings)
        } catch {
            let object = S3Object(source.path) ?? S3Object(bucket: bucket, key: prefix)
            guard let failure = error as? PreviewLoopError, failure.code == .inputNotReadable || failure.code == .inputNotFound else {
                throw PreviewRequests.problem(forRenderError: error, source: object.description)
            }
            forget(key: object.key)
            // Asked again: gone or another entity tag means it changed; a store that cannot say is the failure's.
            var changed = false
            do { changed = try store.head(object)?.etag != source.objectEntityTag } catch {}
            if changed {
                throw PreviewRequestError(status: 503, detail: "\(object) changed while it was read; retry.")
            }
            if failure.code == .inputNotFound {
                throw PreviewRequests.problem(forRenderError: error, source: source.path)
            }
            throw PreviewRequestError(status: 502, detail: Format.oneLine(failure.message))
        }
    }

    /// The problem for a store's failure, naming the bucket and key and the store's code, never a secret.
    static func problem(_ failure: RemoteFailure, object: S3Object) -> PreviewRequestError {
        switch failure.kind {
        case .notFound where failure.storeCode != "NoSuchBucket":
            PreviewRequestError(status: 404, detail: "No such source.")
        case .transport:
            PreviewRequestError(status: 503, detail: "\(object): \(Format.oneLine(failure.reason))")
        case .stopped:
            PreviewRequestError(status: 504, detail: "\(object): the store did not answer in time")
        default:
            PreviewRequestError(status: 502, detail: "\(object): \(Format.oneLine(failure.reason))")
        }
    }
}
