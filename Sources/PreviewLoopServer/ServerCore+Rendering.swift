import Glibc
import PreviewLoop
import PreviewLoopJobs

/// How a response no cache holds is made: rendered once for every request asking for it, with what the
/// same render also answers (a storyboard's parts, a thumbnail's placeholder), and kept by the caches.
extension ServerCore {
    /// Renders `job` for a suspended `exchange` (coalesced with the same render in flight) and answers
    /// it; the result is kept by the caches.
    func render(_ job: PreviewJob, source: ResolvedSource, tag: String, entryName: String,
                validators: [(name: String, value: String)], for exchange: HTTPExchange, remoteURL: String?,
                expires: String?) {
        let cacheable = source.isCacheable
        let deadline = exchange.arrival + .milliseconds(Int64(options.requestDeadline * 1000))
        let path = source.path, scratch = self.scratch.path, root = self.root, finalJob = job
        // What the same render also makes (a storyboard's picture and indexes, a thumbnail's placeholder),
        // each under the validator its own request would have.
        let siblings = siblingJobs(of: job, source: source, rawPath: exchange.request.path, remoteURL: remoteURL, expires: expires)
        let siblingJobs = siblings.map(\.job)
        var work = RenderWork(memoryEstimate: job.memoryEstimate, contentType: job.contentType) { () throws(PreviewRequestError) in
            if source.objectEntityTag != nil, let objectRoot = self.objectRoot {
                return try objectRoot.render(finalJob, siblings: siblingJobs, source: source, scratch: scratch)
            }
            if let validated = source.remote, let remoteSources = self.remoteSources {
                return try Self.renderRemote(finalJob, siblings: siblingJobs, validated: validated, pinned: !source.isLive,
                                             from: remoteSources, scratch: scratch)
            }
            // Opened and checked now, and read through its descriptor: a swap since the request resolved
            // the path cannot make the render read another file.
            guard let opened = SourcePath.open(source, under: root, sameVersion: !source.isLive) else {
                throw PreviewRequestError(status: 503, detail: "The source changed while the request waited; retry.")
            }
            defer { close(opened.descriptor) }
            do {
                return try finalJob.render(scratch: scratch, opened: opened.path, confinedTo: root, siblings: siblingJobs)
            } catch {
                throw PreviewRequests.problem(forRenderError: error, source: path, opened: opened.path)
            }
        }
        work.isCacheable = cacheable
        work.siblings = siblings.map { sibling in
            var kept = RenderWork.Sibling(key: sibling.tag, contentType: sibling.job.contentType)
            // On disk and in the shared cache only a storyboard's parts, which players ask for together; a
            // thumbnail's placeholder stays in memory (one more file for every thumbnail would double the
            // folder's files).
            if cacheable, disk != nil || shared != nil, sibling.job.route.hasPrefix("storyboard.") {
                let entry = DiskCache.entryName(tag: sibling.tag, route: sibling.job.route)
                let disk = self.disk, shared = self.shared
                kept.keep = { @Sendable body in
                    disk?.store(body, as: entry)
                    shared?.upload(body, as: entry)
                }
            }
            return kept
        }
        // A playlist is not probed through FFmpeg for its size: its segments are read only by the render,
        // which confines them to the root (and a live one would make the probe wait for segments).
        if source.remote == nil && source.objectEntityTag == nil && !LivePlaylists.isPlaylistPath(source.path) {
            let sizes = self.sourceSizes
            work.refinedEstimate = { sizes.frameBytes(of: source).map { finalJob.memoryEstimate(frameBytes: $0) } }
        }
        if cacheable, disk != nil || shared != nil {
            let disk = self.disk, shared = self.shared
            work.keep = { body in
                disk?.store(body, as: entryName)
                shared?.upload(body, as: entryName)
            }
        }
        let admission = queue.submit(key: tag, work: work, deadline: deadline, isGone: { exchange.isClientGone }) { result in
            switch result {
            case .success(let body):
                exchange.answer(Self.success(.bytes(body.body), contentType: body.contentType, validators: validators,
                                             entityHeaders: body.headers))
            case .failure(let problem):
                exchange.answer(Problem.response(problem))
            }
        }
        switch admission {
        case .queued:
            exchange.cacheOutcome = "miss"
        case .coalesced:
            exchange.cacheOutcome = "coalesced"
            metrics.coalescedRequest()
        case .full:
            metrics.refused()
            exchange.answer(Problem.response(PreviewRequestError(status: 503, detail: "Too many renders are waiting; retry later.")))
        case .tooLarge:
            exchange.answer(Problem.response(RenderQueue.tooLarge))
        }
    }

    /// The jobs one render of `job` also answers (``PreviewJob/siblingRequests``), each with its
    /// validator; a sibling whose parameters its route does not take is left out.
    func siblingJobs(of job: PreviewJob, source: ResolvedSource, rawPath: String, remoteURL: String?,
                     expires: String?) -> [(job: PreviewJob, tag: String)] {
        job.siblingRequests.compactMap { request in
            guard var sibling = try? PreviewRequests.job(route: request.route, query: request.query, source: source.path,
                                                         deadline: options.requestDeadline, caps: options.animationCaps) else { return nil }
            if let pictureRoute = sibling.pictureRoute {
                sibling = pointing(sibling, at: pictureRoute, rawPath: rawPath, remoteURL: remoteURL, expires: expires)
            }
            return (sibling, Self.entityTag(source: source, job: sibling))
        }
    }

    /// A storyboard index whose picture URL finds the same source and passes the signature check: the
    /// remote source's `url`, and with signed URLs the request's `expires` and the picture's own
    /// signature (the index's validator then covers `expires` too, so no cache hands out an index
    /// whose picture URL has expired sooner than the request's).
    func pointing(_ job: PreviewJob, at pictureRoute: String, rawPath: String, remoteURL: String?, expires: String?) -> PreviewJob {
        var job = job
        var items: [(name: String, value: String?)] = job.pictureQuery.split(separator: "&").map { item in
            let parts = item.split(separator: "=", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : nil)
        }
        if let remoteURL { items.insert(("url", PercentEncoding.queryComponent(remoteURL)), at: 0) }
        if let signer, let expires {
            items.append((URLSigner.expiresName, expires))
            let directory = rawPath[..<(rawPath.lastIndex(of: "/") ?? rawPath.startIndex)]
            items.append((URLSigner.signatureName, signer.signature(path: directory + "/" + pictureRoute, query: items)))
            // The index holds a signature: it depends on the request's own path (two paths may name one
            // file), the expiry and the key, so the validator does too.
            job.canonicalQuery += "\nexpires=\(expires)\npath=\(directory)\nkey=\(signer.keyIdentity)"
        }
        job.pictureQuery = items.map { $0.name + ($0.value.map { "=" + $0 } ?? "") }.joined(separator: "&")
        return job
    }

    /// Renders `job` from a remote source, reading the version `validated` names (the preconditions
    /// make the server refuse another). A failed render whose source has changed since is 503, so the
    /// client asks again and gets the new version under new validators. A live playlist (`pinned`
    /// false) is read as it stands when the render runs: it changes with every segment.
    static func renderRemote(_ job: PreviewJob, siblings: [PreviewJob] = [], validated: RemoteValidators, pinned: Bool = true,
                             from remoteSources: RemoteSources, scratch: String) throws(PreviewRequestError) -> RenderedBody {
        do {
            return try job.render(scratch: scratch, remote: remoteSources.reading(validated.url, preconditions: pinned ? validated.preconditions : [:]),
                                  siblings: siblings)
        } catch {
            if pinned, case .success(let now) = remoteSources.validators(of: validated.url),
               (now.entityTag, now.lastModified, now.contentLength) != (validated.entityTag, validated.lastModified, validated.contentLength) {
                remoteSources.forget(validatedAt: validated.url)
                throw PreviewRequestError(status: 503, detail: "The source changed while the request waited; retry.")
            }
            if let failure = error as? PreviewLoopError, failure.code == .inputNotReadable || failure.code == .refusedByPolicy {
                throw RemoteSources.problem(failure)
            }
            throw PreviewRequests.problem(forRenderError: error, source: validated.url)
        }
    }
}
