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
            throw ServerStartError(message: "\(ServeOptions.feedManifest.spec.longSpelling): \(Format.oneLine(message))")
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
}

extension ServerCore {
    /// `GET /`: the feed page of the listed clips under the root. Its URLs are the server's routes,
    /// signed with the page request's `expires` when the server signs; the capture button (whose URLs
    /// the page makes as it goes, so could not be signed) is left out then.
    func feedResponse(query rawQuery: [(name: String, value: String?)], expires: String?) -> HTTPResponse {
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
        var page = FeedPage(title: "Previews: " + FilePathBytes.displayed(root.split(separator: "/").last.map(String.init) ?? "/"),
                            cards: [])
        page.aspectRatio = settings.aspectRatio
        page.previewLength = settings.previewLength
        page.maxPlaying = settings.maxPlaying
        page.recordMaxLength = options.animationCaps.seconds
        let poster = FeedPage.cardSize(aspectRatio: settings.aspectRatio)
        let video = FeedPage.cardSize(aspectRatio: settings.aspectRatio, maxSide: options.animationCaps.side)
        let tile = FeedPage.cardSize(width: 160, aspectRatio: settings.aspectRatio, maxSide: 320)
        let hasPlaceholders = PreviewRequests.routeNames.contains("placeholder.json")
        for entry in feed.entries(root: root) {
            let components = entry.path.split(separator: "/").map(String.init)
            guard SourcePath.resolve(components, under: root) != nil else { continue }
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
            let length = min(entry.previewLength ?? settings.previewLength, options.animationCaps.seconds)
            let fileName = components.last ?? entry.path
            var stem = fileName
            if let dot = stem.lastIndex(of: "."), dot != stem.startIndex { stem = String(stem[..<dot]) }
            var card = FeedPage.Card(
                title: entry.title ?? FilePathBytes.displayed(fileName), name: stem,
                posters: (1...3).map { scale in
                    url("thumbnail.jpg", [("width", "\(poster.width * scale)"), ("height", "\(poster.height * scale)")])
                },
                video: url("animated.mp4", [("length", FeedPage.decimal(length)), ("width", "\(video.width)"), ("height", "\(video.height)")]),
                storyboard: url("storyboard.vtt", [("width", "\(tile.width)"), ("height", "\(tile.height)")]),
                previewLength: entry.previewLength)
            if signer == nil {
                card.probe = url("probe.json", [])
                card.still = url("thumbnail.jpg", [])
                card.record = url("animated.mp4", [("width", "\(video.width)"), ("height", "\(video.height)")])
            }
            if hasPlaceholders { card.placeholder = url("placeholder.json", []) }
            page.cards.append(card)
        }
        let headers = [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache"),
                       ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "same-origin")]
        return HTTPResponse(status: 200, headers: headers, body: Array(page.html().utf8))
    }
}
