import Glibc
import PreviewLoop
import PreviewLoopJobs
import Synchronization

/// The clips the feed page lists: the `--feed-manifest`'s, or every video under the root (read again at
/// most every ``rescanInterval``, so a burst of page requests walks the folder once).
final class FeedListing: Sendable {
    /// The manifest's entries, read at start; `nil` lists the root.
    let manifest: FeedManifest?
    private let scan = Mutex<(at: ContinuousClock.Instant, entries: [FeedManifest.Entry])?>(nil)
    /// Each probed source's display size by its version (0x0: not a video the probe could read).
    private let shapes = Mutex<[String: Size]>([:])
    /// The most sources whose shape is remembered (then forgotten at once).
    static let shapeLimit = 8192
    /// The longest one page request spends probing clips it has not seen; the cards past it take the
    /// page's `aspect` until a later request has probed them.
    static let probeBudget = Duration.milliseconds(300)
    static let rescanInterval = Duration.seconds(10)
    /// The most bytes a manifest file may have.
    static let maxManifestBytes = 4 << 20

    init(manifestPath: String?) throws(ServerStartError) {
        guard let manifestPath else {
            manifest = nil
            return
        }
        do {
            let bytes = try BatchFiles.readRegularFile(manifestPath, limit: Self.maxManifestBytes)
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw PreviewLoopError(.invalidArgument, "\(manifestPath): not UTF-8 text")
            }
            manifest = try FeedManifest.parse(text, name: manifestPath)
        } catch {
            let message = (error as? PreviewLoopError)?.message ?? "\(error)"
            throw ServerStartError(message: "\(ServeCommand.feedManifest.spec.longSpelling): \(Format.oneLine(message))")
        }
    }

    /// The entries to list for `root` (a real path): the manifest's, or the videos found under it in
    /// path order that a URL can name (``FeedPage/unservableReason(_:)``), at most ``FeedPage/maxCards``.
    func entries(root: String) -> [FeedManifest.Entry] {
        if let manifest { return manifest.entries }
        let now = ContinuousClock.now
        if let known = scan.withLock({ $0 }), now - known.at < Self.rescanInterval { return known.entries }
        let prefix = root == "/" ? "/" : root + "/"
        let clips = (try? BatchFolder.scan(root).clips) ?? []
        // A file no URL can name (a newline in its name, a path too long once encoded) gets no card.
        let entries = Array(clips.lazy.compactMap { clip -> FeedManifest.Entry? in
            guard clip.input.hasPrefix(prefix) else { return nil }
            let relative = String(clip.input.dropFirst(prefix.count))
            return FeedPage.unservableReason(relative) == nil ? FeedManifest.Entry(path: relative) : nil
        }.prefix(FeedPage.maxCards))
        scan.withLock { $0 = (now, entries) }
        return entries
    }

    /// The display size of `source` (rotation and pixel shape applied), from its container alone; `nil`
    /// when it is not known: not a video the probe reads, or not probed because `deadline` has passed.
    func displaySize(of source: ResolvedSource, until deadline: ContinuousClock.Instant) -> Size? {
        // An object in a store is not probed for its card (the card takes the page's shape).
        if source.objectEntityTag != nil { return nil }
        if let known = shapes.withLock({ $0[source.version] }) { return known.width > 0 ? known : nil }
        guard ContinuousClock.now < deadline else { return nil }
        let size = (try? MediaProbe.probe(.file(source.path)))?.displaySize ?? Size(width: 0, height: 0)
        shapes.withLock { shapes in
            if shapes.count >= Self.shapeLimit { shapes.removeAll(keepingCapacity: true) }
            shapes[source.version] = size
        }
        return size.width > 0 && size.height > 0 ? size : nil
    }
}

extension ServerCore {
    /// `GET /`: the feed page of the listed clips under the root. Its URLs are the server's routes,
    /// signed with the page request's `expires` when the server signs; the capture button (whose URLs
    /// the page makes as it goes, so could not be signed) is left out then.
    ///
    /// The page follows its reader's wishes: with `Sec-CH-Prefers-Reduced-Motion: reduce` its cards have
    /// no moving preview (the poster and the storyboard's scrubbing stay), and, with `--client-hints`,
    /// under `Save-Data: on` each poster is offered at 1x only. It asks for the hints (`Accept-CH`), names
    /// reduced motion critical (`Critical-CH`: a browser that would have sent it retries the page with it)
    /// and varies by what it read (`Vary`).
    func feedResponse(query rawQuery: [(name: String, value: String?)], expires: String?, request: HTTPRequest) -> HTTPResponse {
        guard options.isFeedEnabled else { return Problem.response(PreviewRequestError(status: 404, detail: "No such source.")) }
        let query: [(name: String, value: String)]
        switch SourcePath.decodedQuery(rawQuery) {
        case .success(let items): query = items
        case .failure(let problem): return Problem.response(problem)
        }
        let settings: FeedSettings
        do {
            settings = try options.feed.applying(query: query)
        } catch {
            return Problem.response(error)
        }
        // The clips: under a bucket's prefix, the video objects its listing names (a manifest's entries
        // among them); under a folder, the manifest's entries or the videos found.
        let listed: [(entry: FeedManifest.Entry, source: ResolvedSource)]
        if let objectRoot {
            switch objectRoot.videos() {
            case .success(let videos):
                if let manifest = feed.manifest {
                    let byPath = Dictionary(videos.map { ($0.entry.path, $0.source) }, uniquingKeysWith: { first, _ in first })
                    listed = manifest.entries.compactMap { entry in byPath[entry.path].map { (entry, $0) } }
                } else {
                    listed = videos
                }
            case .failure(let problem):
                return Problem.response(problem)
            }
        } else {
            listed = feed.entries(root: root).compactMap { entry in
                SourcePath.resolve(entry.path.split(separator: "/").map(String.init), under: root).map { (entry, $0) }
            }
        }
        var page = FeedPage(title: "Previews: " + FilePathBytes.displayed(root.split(separator: "/").last.map(String.init) ?? "/"),
                            cards: [])
        page.aspectRatio = settings.aspectRatio
        page.previewLength = settings.previewLength
        page.maxPlaying = settings.maxPlaying
        page.recordMaxLength = options.animationCaps.seconds
        let reducesMotion = request.header(RequestHints.reducedMotion)?.trimmingWhitespace().lowercased() == "reduce"
        let savesData = options.usesClientHints && RequestHints.savesData(request)
        let probeDeadline = ContinuousClock.now + FeedListing.probeBudget
        for (entry, source) in listed {
            let components = entry.path.split(separator: "/").map(String.init)
            // The card takes its clip's shape (within the page's limits): posters, preview and tiles
            // are asked for at it, so nothing is cropped past the limits and the layout never moves.
            let aspect = settings.cardAspect(display: settings.fitsClips ? feed.displaySize(of: source, until: probeDeadline) : nil)
            let poster = FeedPage.cardBox(aspectRatio: aspect)
            let video = FeedPage.cardBox(aspectRatio: aspect, maxSide: options.animationCaps.side)
            let tile = FeedPage.cardBox(longSide: 160, aspectRatio: aspect, maxSide: 320)
            let base = "/" + FeedPage.urlPath(entry.path) + "/"
            func url(_ route: String, _ items: [(name: String, value: String?)]) -> String {
                var items = items
                if let signer, let expires {
                    items.append((URLSigner.expiresName, expires))
                    items.append((URLSigner.signatureName, signer.signature(path: base + route, query: items)))
                }
                let text = items.map { $0.name + ($0.value.map { "=" + $0 } ?? "") }.joined(separator: "&")
                return base + route + (text.isEmpty ? "" : "?" + text)
            }
            let posterQueries: [[(name: String, value: String?)]] = (1...(savesData ? 1 : 3)).map { scale in
                [("width", "\(poster.width * scale)"), ("height", "\(poster.height * scale)")]
            }
            let length = min(entry.previewLength ?? settings.previewLength, options.animationCaps.seconds)
            let fileName = components.last ?? entry.path
            var stem = fileName
            if let dot = stem.lastIndex(of: "."), dot != stem.startIndex { stem = String(stem[..<dot]) }
            var card = FeedPage.Card(
                title: entry.title ?? FilePathBytes.displayed(fileName), name: stem,
                posters: posterQueries.map { url("thumbnail.jpg", $0) },
                video: url("animated.mp4", [("length", FeedPage.decimal(length)), ("width", "\(video.width)"), ("height", "\(video.height)")]),
                storyboard: url("storyboard.vtt", [("width", "\(tile.width)"), ("height", "\(tile.height)")]),
                previewLength: entry.previewLength)
            if signer == nil {
                card.probe = url("probe.json", [])
                card.still = url("thumbnail.jpg", [])
                card.record = url("animated.mp4", [("width", "\(video.width)"), ("height", "\(video.height)")])
            }
            if reducesMotion {
                card.video = nil
                card.record = nil
            }
            card.aspectRatio = aspect == settings.aspectRatio ? nil : aspect
            // The poster's colour, painted at once, when a render of it is cached; a cold card asks for
            // nothing more than its poster (whose render also makes its placeholder, for the next page).
            card.color = posterQueries.lazy.compactMap { self.cachedColor(of: source, query: $0) }.first
            page.cards.append(card)
        }
        var headers = [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache"),
                        ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "same-origin")]
        // The hints the page's pictures are then asked with: reduced motion always, sizes when taken
        // (RFC 8942). Reduced motion changes the page itself, so it is critical: a browser that supports
        // it but did not send it retries at once with it (Critical-CH, draft-davidben-http-client-hint-reliability).
        headers.append(("Accept-CH", (options.usesClientHints ? RequestHints.asked : [RequestHints.reducedMotion]).joined(separator: ", ")))
        headers.append(("Critical-CH", RequestHints.reducedMotion))
        headers.append(("Vary", ([RequestHints.reducedMotion] + (options.usesClientHints ? [RequestHints.saveData] : [])).joined(separator: ", ")))
        return HTTPResponse(status: 200, headers: headers, body: Array(page.html().utf8))
    }

    /// The `Dominant-Color` of the thumbnail `query` names when the memory or disk cache holds it.
    func cachedColor(of source: ResolvedSource, query: [(name: String, value: String?)]) -> String? {
        guard source.isCacheable,
              let job = try? PreviewRequests.job(route: "thumbnail.jpg", query: query.map { ($0.name, $0.value ?? "") }, source: source.path,
                                                 deadline: options.requestDeadline, caps: options.animationCaps) else { return nil }
        let tag = Self.entityTag(source: source, job: job)
        var headers = cache.value(for: tag)?.headers
        if headers == nil, let disk, let hit = disk.open(DiskCache.entryName(tag: tag, route: job.route)) {
            close(hit.descriptor)
            headers = hit.headers
        }
        return headers?.first { $0.name == "Dominant-Color" }?.value
    }
}
