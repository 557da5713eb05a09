import Glibc
import PreviewLoop
import PreviewLoopCLI
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

    init(allowedURLs: URLAllowList, tls: TLSOptions, checkInterval: Double) {
        self.allowedURLs = allowedURLs
        self.tls = tls
        self.checkInterval = checkInterval
    }

    /// The source a `url` parameter names (already percent-decoded): its validators, asked of its
    /// server or remembered, or the problem to answer with.
    func resolve(_ url: String) -> Result<ResolvedSource, PreviewRequestError> {
        guard allowedURLs.admits(url), let normal = URLAllowList.normalized(url) else {
            return .failure(PreviewRequestError(status: 403, parameter: "url",
                                                detail: "The URL is not under a source prefix this server may read (--allow-source)."))
        }
        let now = ContinuousClock.now
        if let entry = known.withLock({ $0[normal] }), now - entry.at < .milliseconds(Int64(checkInterval * 1000)) {
            return .success(Self.source(entry.validators))
        }
        switch validators(of: normal) {
        case .success(let validators):
            known.withLock { known in
                if known.count >= Self.remembered { known.removeAll(keepingCapacity: true) }
                known[normal] = (validators, now)
            }
            return .success(Self.source(validators))
        case .failure(let problem):
            return .failure(problem)
        }
    }

    /// Forgets what is remembered of the source whose validators came from `url`, so the next request
    /// asks its server again.
    func forget(validatedAt url: String) {
        known.withLock { known in known = known.filter { $0.value.validators.url != url } }
    }

    /// Asks the source's server again, bypassing what is remembered.
    func validators(of url: String) -> Result<RemoteValidators, PreviewRequestError> {
        do {
            return .success(try RemoteValidators.fetch(url, options: reading(url, preconditions: [:]).sourceOptions))
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
