import FoundationEssentials
import Glibc
import PreviewLoop
import PreviewLoopJobs
import Synchronization

/// The remote sources a server may read (`--allow-source`): requests name one by `?url=`, its server is
/// asked for the video's validators (`HEAD`, remembered for `--source-check-interval` seconds), and
/// the render reads exactly that version (`If-Match` or `If-Unmodified-Since`).
final class RemoteSources: Sendable {
    let allowedURLs: URLAllowList
    let tls: TLSOptions
    let checkInterval: Double
    /// A remote live HLS playlist's newest segment (sequence number and URI) and the seconds its answers
    /// may be cached, read from its text when its validators are asked.
    struct LiveEdge: Sendable {
        var sequence: Int
        var uri: String
        var maxAge: Int
    }

    /// Validators by URL (with a live playlist's edge), with when they were asked; at most `remembered`.
    private let known = Mutex<[String: (validators: RemoteValidators, live: LiveEdge?, at: ContinuousClock.Instant)]>([:])
    static let remembered = 4096

    /// Seconds the video's server has to answer a `HEAD`.
    let timeout: Double

    init(allowedURLs: URLAllowList, tls: TLSOptions, checkInterval: Double, timeout: Double = SourceOptions.defaultTimeout) {
        self.allowedURLs = allowedURLs
        self.tls = tls
        self.checkInterval = checkInterval
        self.timeout = timeout
    }

    /// What ``lookup(_:then:)`` found at once.
    enum Lookup {
        /// Validators asked less than `checkInterval` ago.
        case known(ResolvedSource)
        /// Not under a prefix, or too many lookups at once.
        case refused(PreviewRequestError)
        /// The video's server is being asked; `then` will be called once, from another thread.
        case started
    }

    /// Lookups of different URLs at once, at most; more are 503.
    static let maximumLookups = 64
    /// The requests waiting for each URL's lookup (a URL asked by many at once is asked once).
    private let waiting = Mutex<[String: [@Sendable (Result<ResolvedSource, PreviewRequestError>) -> Void]]>([:])

    /// The source a `url` parameter names (already percent-decoded): remembered validators at once, or
    /// its server asked on a thread of its own (never the caller's: a slow server must not hold up the
    /// daemon), `then` receiving the source or the problem to answer with.
    func lookup(_ url: String, then deliver: @escaping @Sendable (Result<ResolvedSource, PreviewRequestError>) -> Void) -> Lookup {
        guard allowedURLs.admits(url), let normal = URLAllowList.normalized(url) else {
            return .refused(PreviewRequestError(status: 403, parameter: "url",
                                                detail: "The URL is not under a source prefix this server may read (--allow-source)."))
        }
        // A live playlist's edge moves on every segment: what is known of it lasts its cache time at most.
        if let entry = known.withLock({ $0[normal] }),
           ContinuousClock.now - entry.at < .milliseconds(Int64(min(checkInterval, Double(entry.live?.maxAge ?? Int.max)) * 1000)) {
            return .known(Self.source(entry.validators, live: entry.live))
        }
        let starts: Bool? = waiting.withLock { waiting in
            if waiting[normal] != nil {
                waiting[normal]!.append(deliver)
                return false
            }
            guard waiting.count < Self.maximumLookups else { return nil }
            waiting[normal] = [deliver]
            return true
        }
        let busy = PreviewRequestError(status: 503, detail: "Too many remote sources are being checked; retry later.")
        guard let starts else { return .refused(busy) }
        guard starts else { return .started }
        do {
            try NamedThread.detach(name: "serve-head") { [self] in
                let result = self.validators(of: normal).map { validators in
                    let live = self.liveEdge(of: validators)
                    known.withLock { known in
                        if known.count >= Self.remembered { known.removeAll(keepingCapacity: true) }
                        known[normal] = (validators, live, ContinuousClock.now)
                    }
                    return Self.source(validators, live: live)
                }
                for waiter in waiting.withLock({ $0.removeValue(forKey: normal) ?? [] }) { waiter(result) }
            }
        } catch {
            for waiter in waiting.withLock({ $0.removeValue(forKey: normal) ?? [] }) { waiter(.failure(busy)) }
        }
        return .started
    }

    /// Forgets what is remembered of the source whose validators came from `url`, so the next request
    /// asks its server again.
    func forget(validatedAt url: String) {
        known.withLock { known in known = known.filter { $0.value.validators.url != url } }
    }

    /// Asks the source's server again, bypassing what is remembered.
    func validators(of url: String) -> Result<RemoteValidators, PreviewRequestError> {
        do {
            var options = reading(url, preconditions: [:]).sourceOptions
            options.openTimeout = timeout
            options.readTimeout = timeout
            return .success(try RemoteValidators.fetch(url, options: options))
        } catch {
            return .failure(Self.problem(error))
        }
    }

    /// How a render reads the source: under the allowed prefixes, with the preconditions given.
    func reading(_ url: String, preconditions: [String: String]) -> RemoteReading {
        RemoteReading(allowedURLs: allowedURLs, tls: tls, requestHeaders: preconditions)
    }

    /// A remote video as a resolved source: its URL after redirects, identified by its validators; a
    /// live playlist's also by its newest segment, and cached briefly (as a live playlist under the root).
    static func source(_ validators: RemoteValidators, live: LiveEdge? = nil) -> ResolvedSource {
        var source = ResolvedSource(path: validators.url, identity: "remote\n" + validators.identity, remote: validators)
        if let live {
            source.version += "\nlive\n\(live.sequence)\n\(live.uri)"
            source.liveMaxAge = live.maxAge
        }
        return source
    }

    /// For a URL named as a playlist (`.m3u8`, `.m3u`) whose text is a media playlist without
    /// `#EXT-X-ENDLIST`: its live edge; `nil` for anything else or when the text cannot be read (the
    /// render then says why).
    func liveEdge(of validators: RemoteValidators) -> LiveEdge? {
        guard let path = URL(string: validators.url)?.path, LivePlaylists.isPlaylistPath(path) else { return nil }
        var options = reading(validators.url, preconditions: [:]).sourceOptions
        options.openTimeout = timeout
        options.readTimeout = timeout
        guard let (body, _) = try? RemoteDocument.fetch(validators.url, options: options, limit: LivePlaylists.limit),
              let playlist = try? MediaPlaylist(text: String(decoding: body, as: UTF8.self), name: validators.url),
              playlist.isLive else { return nil }
        let newest = playlist.newest
        return LiveEdge(sequence: newest?.sequenceNumber ?? playlist.mediaSequence, uri: newest?.uri ?? "",
                        maxAge: min(10, max(1, Int((playlist.targetDuration ?? 1).rounded(.down)))))
    }

    /// The problem for a failure to reach a remote source, naming no URL.
    static func problem(_ error: PreviewLoopError) -> PreviewRequestError {
        switch error.code {
        case .inputNotFound: PreviewRequestError(status: 404, detail: "No such source: its server answered 404 or 410.")
        case .refusedByPolicy: PreviewRequestError(status: 403, parameter: "url",
                                                   detail: "The source redirects outside the prefixes this server may read.")
        case .timedOut: PreviewRequestError(status: 504, detail: "The source's server did not answer in time.")
        default: PreviewRequestError(status: 502, detail: "The source's server could not be read (no answer, an error status, "
                                     + "or a certificate that was not accepted).")
        }
    }
}
