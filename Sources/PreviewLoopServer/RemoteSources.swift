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
    /// Validators by URL, with when they were asked; at most `remembered`.
    private let known = Mutex<[String: (validators: RemoteValidators, at: ContinuousClock.Instant)]>([:])
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
        if let entry = known.withLock({ $0[normal] }), ContinuousClock.now - entry.at < .milliseconds(Int64(checkInterval * 1000)) {
            return .known(Self.source(entry.validators))
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
                    known.withLock { known in
                        if known.count >= Self.remembered { known.removeAll(keepingCapacity: true) }
                        known[normal] = (validators, ContinuousClock.now)
                    }
                    return Self.source(validators)
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

    /// A remote video as a resolved source: its URL after redirects, identified by its validators.
    static func source(_ validators: RemoteValidators) -> ResolvedSource {
        ResolvedSource(path: validators.url, identity: "remote\n" + validators.identity, remote: validators)
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
