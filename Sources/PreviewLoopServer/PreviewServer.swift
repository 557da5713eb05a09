import Glibc
import PreviewLoop
import PreviewLoopJobs
import Synchronization

/// PreviewLoop's image API over HTTP: `/{path}/thumbnail.*`, `animated.*`, `strip.*`, `sheet.*` and
/// `probe.json` for the videos under a root folder, with validators, byte ranges, a memory cache, a disk
/// cache, coalescing, a bounded render queue, health and Prometheus metrics. `preview-loop serve` runs one; a Swift service can embed one.
///
/// A response's bytes are those the matching subcommand (`thumb`, `render`, `strip`, `sheet`) writes for
/// the same options: the request's query is read by that command's own option declarations
/// (PreviewRequests).
public final class PreviewServer: Sendable {
    /// The TCP port the server listens on.
    public let port: Int
    private let core: ServerCore
    private let daemon: HTTPDaemon

    /// Starts a server for the videos under `root` on `host` (an IPv4 address) and `port` (0 picks a
    /// free port; see ``port``).
    public convenience init(root: String, host: String = "127.0.0.1", port: Int = 0) throws {
        var options = ServeCommand(root: root)
        options.listen = ListenAddress(host: host, port: port)
        try self.init(options: options, accessLog: nil)
    }

    /// Starts a server with `serve`'s options; `accessLog` receives one JSON line per request.
    package init(options: ServeCommand, accessLog: AccessLog?) throws(ServerStartError) {
        core = try ServerCore(options: options, root: Self.root(of: options))
        do {
            // One polling thread per core: a cache hit is answered on the thread that read its request.
            daemon = try HTTPDaemon(host: options.listen.host, port: options.listen.port, threads: PreviewWall.coreCount,
                                    maxConnections: options.maxConnections,
                                    maxConnectionsPerAddress: options.maxConnectionsPerAddress,
                                    connectionTimeout: options.connectionTimeout, responder: core.chain(accessLog: accessLog))
        } catch {
            core.queue.stop(within: .seconds(1))
            core.shared?.stop()
            core.scratch.remove()
            throw error
        }
        port = daemon.port
    }

    /// Stops accepting connections, lets requests in flight finish for up to `grace` seconds, then
    /// cancels the renders still running, answers those still waiting with 503 and stops: within
    /// `grace` and one second more.
    public func stop(grace: Double) {
        daemon.stopAccepting()
        core.isAccepting = false
        let deadline = ContinuousClock.now + .milliseconds(Int64(max(0, grace) * 1000))
        while core.openExchanges > 0 && ContinuousClock.now < deadline { usleep(10_000) }
        // Past the grace: half a second for cancelled renders to return, then the refusals just
        // answered get their connections' turn to be sent.
        let end = ContinuousClock.now + .milliseconds(900)
        core.queue.stop(within: .milliseconds(500))
        while core.openExchanges > 0 && ContinuousClock.now < end { usleep(10_000) }
        daemon.stop()
        core.shared?.stop()
        core.scratch.remove()
    }

    /// The number of requests being answered now.
    package var openExchanges: Int { core.openExchanges }

    /// The root's real path, or why it cannot be served.
    private static func root(of options: ServeCommand) throws(ServerStartError) -> String {
        // A bucket's prefix is checked by ``ObjectRoot``.
        if options.root.lowercased().hasPrefix("s3://") { return options.root }
        guard let root = SourcePath.realPath(options.root) else {
            throw ServerStartError(message: "\(ServeCommand.root.spec.longSpelling) \(Format.oneLine(options.root)): no such folder")
        }
        var status = stat()
        guard FileSystem.stat(root, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw ServerStartError(message: "\(ServeCommand.root.spec.longSpelling) \(Format.oneLine(options.root)): not a folder")
        }
        return root
    }

    /// The same server without a socket: its whole chain (middlewares and routes) behind an
    /// ``InProcessClient``, and what stops its render queue and removes its scratch folder.
    package static func inProcess(options: ServeCommand, accessLog: AccessLog? = nil)
        throws(ServerStartError) -> (client: InProcessClient, stop: @Sendable () -> Void) {
        let core = try ServerCore(options: options, root: root(of: options))
        return (InProcessClient(core.chain(accessLog: accessLog)), {
            core.isAccepting = false
            core.queue.stop(within: .seconds(5))
            core.shared?.stop()
            core.scratch.remove()
        })
    }
}

/// The routes: the innermost responder of the server's chain (``chain(accessLog:)``).
final class ServerCore: HTTPResponder, @unchecked Sendable {
    let options: ServeCommand
    /// The root's real path.
    let root: String
    let metrics = ServerMetrics()
    let cache: ResponseCache
    /// The disk cache, with `--cache DIR`.
    let disk: DiskCache?
    /// The shared cache in a bucket, with `--cache s3://BUCKET/PREFIX/`.
    let shared: SharedCache?
    let queue: RenderQueue
    /// Where animations are written before they are read back.
    let scratch: ScratchFolder
    /// `--presets`' parameter sets.
    let presets: ImagePresets
    /// Checks signed URLs, with `--signing-key-file`.
    let signer: URLSigner?
    /// The clips the feed page (`/`) lists.
    let feed: FeedListing
    /// The remote sources it may read, with `--allow-source`.
    let remoteSources: RemoteSources?
    /// The bucket and prefix served, with `--root s3://…`.
    let objectRoot: ObjectRoot?
    /// The pages on other origins that may read responses from script, with `--allow-origin`.
    let crossOrigin: CrossOriginPolicy
    /// The decoded frame size of each source, for renders' memory estimates.
    let sourceSizes = SourceSizes()
    /// Parsed jobs by source path, route and raw query (at most `rememberedJobs`, then forgotten at once),
    /// each with its validator for the source version last asked for: a warm hit hashes nothing.
    private let jobs = Mutex<[String: RememberedJob]>([:])
    private struct RememberedJob {
        var job: PreviewJob
        /// The validator and the source version it was made for; `nil` for a storyboard index, whose
        /// validator also covers the request's own path and expiry.
        var tag: (version: String, value: String)?
    }
    static let rememberedJobs = 4096
    private let lock = ConditionLock()
    /// The exchanges open (counted by ``OpenExchanges``).
    private var open = 0
    private var accepting = true

    init(options: ServeCommand, root: String) throws(ServerStartError) {
        self.options = options
        self.root = root
        signer = try options.signingKeyFile.map { path throws(ServerStartError) in try URLSigner(keyFile: path) }
        presets = try options.presetsFile.map { path throws(ServerStartError) in
            let spelling = ServeCommand.presets.spec.longSpelling + " " + Format.oneLine(path)
            do {
                return try ImagePresets(json: BatchFiles.readFile(path, limit: ImagePresets.maximumBytes))
            } catch let error as PresetError {
                throw ServerStartError(message: "\(spelling): \(error.message)")
            } catch {
                throw ServerStartError(message: "\(spelling): \(Format.oneLine((error as? PreviewLoopError)?.message ?? "cannot be read"))")
            }
        } ?? ImagePresets()
        crossOrigin = CrossOriginPolicy(origins: options.allowedOrigins)
        feed = try FeedListing(manifestPath: options.isFeedEnabled ? options.feedManifest : nil)
        objectRoot = root.lowercased().hasPrefix("s3://")
            ? try ObjectRoot(root: root, tls: options.tls, checkInterval: options.sourceCheckInterval,
                             timeout: min(SourceOptions.defaultTimeout, options.requestDeadline))
            : nil
        remoteSources = options.allowedSources.map {
            RemoteSources(allowedURLs: $0, tls: options.tls, checkInterval: options.sourceCheckInterval,
                          timeout: min(SourceOptions.defaultTimeout, options.requestDeadline))
        }
        cache = ResponseCache(capacity: options.memoryCacheBytes, metrics: metrics)
        if let directory = options.cacheDirectory {
            disk = try DiskCache(directory: directory, capacity: options.cacheSizeBytes, metrics: metrics)
        } else {
            disk = nil
        }
        if let location = options.sharedCache {
            shared = try SharedCache(location: location, timeout: options.sharedCacheTimeout, tls: options.tls, metrics: metrics)
        } else {
            shared = nil
        }
        scratch = try ScratchFolder()
        queue = try RenderQueue(workers: options.workers, queueLimit: options.queue, memoryBudget: options.memoryBudget,
                                cache: cache, metrics: metrics)
    }

    var openExchanges: Int { lock.withLock { open } }
    var isAccepting: Bool {
        get { lock.withLock { accepting } }
        set { lock.withLock { accepting = newValue } }
    }

    /// What every cacheable response says to browsers and CDNs.
    static let immutable = "public, max-age=31536000, immutable"

    /// Answers the routes: health, readiness, metrics, the feed page and the previews. The steps
    /// around it (``chain``) have checked the method and the signature already; conditional requests
    /// and byte ranges are answered on the way out.
    func respond(to request: HTTPRequest, in exchange: HTTPExchange) -> HTTPReply {
        switch request.path {
        case "/healthz":
            return .now(Self.text(200, "ok\n"))
        case "/readyz":
            // With --require-shared-cache, a store that cannot be reached makes the server not ready.
            let sharedReady = !options.requiresSharedCache || shared?.checkReadiness() != false
            return .now(isAccepting && queue.hasRoom && sharedReady ? Self.text(200, "ready\n") : Self.text(503, "not ready\n"))
        case "/metrics":
            var response = Self.text(200, metrics.exposition())
            response.headers = [("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store")]
            return .now(response)
        default:
            break
        }
        var rawQuery = request.rawQuery
        // As sent (the signature check has taken it out of `request`): the feed's and a storyboard
        // index's URLs are signed with the request's own expiry.
        let expires = signer == nil ? nil : exchange.request.rawQuery.first { $0.name == URLSigner.expiresName }?.value
        if request.path == "/" {
            // A bucket's listing is asked on a thread of its own, never on the daemon's.
            guard objectRoot != nil, options.isFeedEnabled else {
                return .now(feedResponse(query: rawQuery, expires: expires, request: request))
            }
            let query = rawQuery
            return onOwnThread(exchange) { .now(self.feedResponse(query: query, expires: expires, request: request)) }
        }
        let noSource = PreviewRequestError(status: 404, detail: "No such source.")
        guard case (let components, var route)? = SourcePath.split(request.path) else { return .now(Problem.response(noSource)) }
        // `thumbnail` without an extension: the format the request's Accept prefers.
        var varies = false
        do {
            if let chosen = try PreviewRequests.negotiatedRoute(route, query: &rawQuery, accept: request.header("Accept")) {
                route = chosen
                varies = true
            }
        } catch {
            return .now(Problem.response(error))
        }
        // `?preset=NAME`: its parameters where the query sets none (after the signature, which covers
        // the query as sent).
        do {
            rawQuery = try presets.merged(rawQuery, route: route)
        } catch {
            return .now(Problem.response(error))
        }
        let hints = RequestHints(route: route, query: rawQuery, request: request, usesSizeHints: options.usesClientHints)
        route = hints.route
        rawQuery = hints.query
        let varyBy = (varies ? ["Accept"] : []) + hints.varyBy
        guard PreviewRequests.routeNames.contains(route) else {
            return .now(Problem.response(PreviewRequestError(
                status: 404, detail: "No such route; routes: \(PreviewRequests.routeNames.joined(separator: ", ")).")
            ))
        }
        if let objectRoot, !components.isEmpty {
            let query = rawQuery, chosenRoute = route, path = components
            return onOwnThread(exchange) {
                switch objectRoot.resolve(path) {
                case .success(let source):
                    self.respond(to: exchange, route: chosenRoute, query: query, source: source, remoteURL: nil, expires: expires, varyBy: varyBy)
                case .failure(let problem):
                    .now(Problem.response(problem))
                }
            }
        }
        guard components.isEmpty else {
            guard let source = SourcePath.resolve(components, under: root) else { return .now(Problem.response(noSource)) }
            return respond(to: exchange, route: route, query: rawQuery, source: source, remoteURL: nil, expires: expires, varyBy: varyBy)
        }
        // /thumbnail.jpg?url=…: a remote source, when the server has --allow-source.
        guard let index = rawQuery.firstIndex(where: { $0.name == "url" }) else { return .now(Problem.response(noSource)) }
        guard let remoteSources else {
            return .now(Problem.response(PreviewRequestError(status: 403, parameter: "url",
                                                             detail: "This server reads no remote sources (--allow-source).")))
        }
        guard let url = SourcePath.decode(rawQuery[index].value ?? "", plusIsSpace: true) else {
            return .now(Problem.response(PreviewRequestError(status: 400, parameter: "url",
                                                             detail: "The URL is not valid percent-encoded UTF-8.")))
        }
        rawQuery.remove(at: index)
        let query = rawQuery, chosenRoute = route
        // The video's server is asked on a thread of its own, never on the daemon's.
        let lookup = remoteSources.lookup(url) { result in
            switch result {
            case .success(let source):
                exchange.answer(self.respond(to: exchange, route: chosenRoute, query: query, source: source, remoteURL: url,
                                             expires: expires, varyBy: varyBy))
            case .failure(let problem):
                exchange.answer(Problem.response(problem))
            }
        }
        switch lookup {
        case .known(let source):
            return respond(to: exchange, route: route, query: query, source: source, remoteURL: url, expires: expires, varyBy: varyBy)
        case .refused(let problem):
            return .now(Problem.response(problem))
        case .started:
            exchange.suspend()
            return .later
        }
    }

    /// Answers `exchange` with what `answer` returns, run on a thread of its own (a store's answer is
    /// waited for there, never on the daemon's); 503 when no thread can be made.
    private func onOwnThread(_ exchange: HTTPExchange, _ answer: @escaping @Sendable () -> HTTPReply) -> HTTPReply {
        exchange.suspend()
        do {
            try NamedThread.detach(name: "serve-store") { exchange.answer(answer()) }
        } catch {
            exchange.answer(Problem.response(PreviewRequestError(status: 503, detail: "Too many requests at once; retry later.")))
        }
        return .later
    }

    /// Answers a request for `route` of `source` (the query without `url`, `expires` and `signature`):
    /// a problem now, or for a cacheable source the validators, whose body (from a cache now, or later
    /// from a render) is made unless the request's preconditions answer it. `varyBy`: the request
    /// headers that chose the route or its parameters (`Accept`, client hints), for `Vary`.
    private func respond(to exchange: HTTPExchange, route: String, query rawQuery: [(name: String, value: String?)],
                         source resolved: ResolvedSource, remoteURL: String?, expires: String?, varyBy: [String] = []) -> HTTPReply {
        // A live playlist's answers follow its newest segment: its validator names it, and it is cached briefly.
        let source = LivePlaylists.marked(resolved)
        // The same raw request for the same file reads to the same job: parsed once, remembered.
        let jobKey = source.path + "\n" + route + "\n"
            + rawQuery.map { $0.name + ($0.value.map { "=" + $0 } ?? "") }.joined(separator: "&")
        var job: PreviewJob
        let remembered = jobs.withLock { $0[jobKey] }
        if let remembered {
            job = remembered.job
        } else {
            let query: [(name: String, value: String)]
            switch SourcePath.decodedQuery(rawQuery) {
            case .success(let items): query = items
            case .failure(let problem): return .now(Problem.response(problem))
            }
            do {
                job = try PreviewRequests.job(route: route, query: query, source: source.path, deadline: options.requestDeadline,
                                              caps: options.animationCaps)
            } catch {
                return .now(Problem.response(error))
            }
        }
        let tag: String
        if let pictureRoute = job.pictureRoute {
            // Remembered as parsed: the picture URL is pointed afresh for each request.
            if remembered == nil { remember(RememberedJob(job: job, tag: nil), as: jobKey) }
            job = pointing(job, at: pictureRoute, rawPath: exchange.request.path, remoteURL: remoteURL, expires: expires)
            tag = Self.entityTag(source: source, job: job)
        } else if let known = remembered?.tag, known.version == source.version {
            tag = known.value
        } else {
            tag = Self.entityTag(source: source, job: job)
            remember(RememberedJob(job: job, tag: (source.version, tag)), as: jobKey)
        }
        // A remote source whose server names no version is rendered afresh for each request (identical
        // requests in flight still share one render) and never cached.
        let cacheable = source.isCacheable
        let lifetime = source.liveMaxAge.map { "public, max-age=\($0)" } ?? Self.immutable
        var validators: [(name: String, value: String)] = cacheable ? [("ETag", tag), ("Cache-Control", lifetime)]
            : [("Cache-Control", "no-cache")]
        if !varyBy.isEmpty { validators.append(("Vary", varyBy.joined(separator: ", "))) }
        let finalJob = job, finalValidators = validators
        let body: @Sendable () -> HTTPReply = {
            self.body(of: finalJob, source: source, tag: tag, validators: finalValidators, for: exchange, remoteURL: remoteURL,
                      expires: expires)
        }
        return cacheable ? .validated(validators: finalValidators, body: body) : body()
    }

    /// The body of `job`'s response: from the memory or disk cache now, or later from the shared cache
    /// or a render.
    private func body(of job: PreviewJob, source: ResolvedSource, tag: String, validators: [(name: String, value: String)],
                      for exchange: HTTPExchange, remoteURL: String?, expires: String?) -> HTTPReply {
        let cacheable = source.isCacheable
        if cacheable, let cached = cache.value(for: tag) {
            metrics.cacheHit()
            exchange.cacheOutcome = "hit"
            return .now(Self.success(.bytes(cached.body), contentType: cached.contentType, validators: validators,
                                     entityHeaders: cached.headers))
        }
        metrics.cacheMiss()
        let entryName = DiskCache.entryName(tag: tag, route: job.route)
        // A live answer is stale within seconds: kept in memory (under its validator) but never on disk.
        let disk = source.isLive ? nil : self.disk
        if cacheable, let disk, let hit = disk.open(entryName) {
            metrics.diskCacheHit()
            exchange.cacheOutcome = "disk"
            return .now(Self.success(.file(hit), contentType: job.contentType, validators: validators,
                                     entityHeaders: hit.headers))
        }
        exchange.suspend()
        // The shared cache is asked on a lookup thread, never on the daemon's; when it is skipped (every
        // lookup thread busy, the store paused) or misses, the request renders.
        if cacheable, let shared {
            let contentType = job.contentType, disk = self.disk, cache = self.cache
            let asked = shared.lookUp(entryName, found: { entry in
                guard let entry else {
                    self.render(job, source: source, tag: tag, entryName: entryName, validators: validators, for: exchange,
                                remoteURL: remoteURL, expires: expires)
                    return
                }
                exchange.cacheOutcome = "shared"
                cache.insert(entry, for: tag)
                disk?.store(entry, as: entryName)
                exchange.answer(Self.success(.bytes(entry.body), contentType: entry.contentType, validators: validators,
                                             entityHeaders: entry.headers))
            }, contentType: contentType)
            if asked { return .later }
        }
        render(job, source: source, tag: tag, entryName: entryName, validators: validators, for: exchange, remoteURL: remoteURL,
               expires: expires)
        return .later
    }

    private func remember(_ job: RememberedJob, as key: String) {
        jobs.withLock { jobs in
            if jobs.count >= Self.rememberedJobs { jobs.removeAll(keepingCapacity: true) }
            jobs[key] = job
        }
    }

    /// The steps every request passes through, outermost first, around the routes: the count of open
    /// exchanges, metrics, the access log, CORS, the methods served, the signature check, then
    /// conditional requests and byte ranges.
    func chain(accessLog: AccessLog?) -> HTTPChain {
        var steps: [any HTTPMiddleware] = [OpenExchanges(core: self), MetricsRecorder(metrics: metrics, label: Self.routeLabel)]
        if let accessLog { steps.append(accessLog) }
        steps += [crossOrigin, AllowedMethods(crossOrigin.isEnabled ? ["GET", "HEAD", "OPTIONS"] : ["GET", "HEAD"])] as [any HTTPMiddleware]
        if let signer { steps.append(SignedURLs(signer: signer, unsigned: ["/healthz", "/readyz", "/metrics"])) }
        steps.append(ConditionalRequests())
        return HTTPChain(steps, responder: self)
    }

    /// Counts the exchanges open, for ``PreviewServer/stop(grace:)``.
    struct OpenExchanges: HTTPMiddleware {
        let core: ServerCore

        func handle(_ request: HTTPRequest, in exchange: HTTPExchange, next: (HTTPRequest) -> HTTPReply) -> HTTPReply {
            core.lock.withLock { core.open += 1 }
            exchange.onFinish { [core] _, _, _ in core.lock.withLock { core.open -= 1 } }
            return next(request)
        }
    }

    /// The route for metrics: a served route's name, `feed` (`/`), `healthz`, `readyz`, `metrics` or `other`.
    static func routeLabel(_ path: String) -> String {
        switch path {
        case "/": return "feed"
        case "/healthz": return "healthz"
        case "/readyz": return "readyz"
        case "/metrics": return "metrics"
        default:
            let last = path.split(separator: "/").last.map(String.init) ?? ""
            return PreviewRequests.routeNames.contains(last) ? last : "other"
        }
    }
}
