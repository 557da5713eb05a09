import Glibc
import PreviewLoop
import PreviewLoopJobs
import PreviewLoopRemote

/// Signed URLs: a request carries `expires` (Unix seconds) and `signature`, the hex HMAC-SHA256 under
/// the server's key of the string to sign — the request's path, `?`, and its other query items as sent
/// (escapes kept), sorted by name and joined by `&` (`/clip.mp4/thumbnail.jpg?expires=1767225600&time=5&width=320`).
struct URLSigner: Sendable {
    /// The key's bytes.
    let key: [UInt8]

    /// The parameter names the signature takes.
    static let expiresName = "expires", signatureName = "signature"

    /// Reads the key from `path`, a regular file: its bytes with one final newline (`\n`) removed, as
    /// the documented recipes write it (a `\r` is part of the key); 16 to 4096 bytes.
    init(keyFile path: String) throws(ServerStartError) {
        var bytes: [UInt8]
        do {
            bytes = try BatchFiles.readRegularFile(path, limit: 4097)
        } catch {
            throw ServerStartError(message: "\(ServeCommand.signingKeyFile.spec.longSpelling) \(Format.oneLine(error.message))")
        }
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        guard (16...4096).contains(bytes.count) else {
            throw ServerStartError(message: "\(ServeCommand.signingKeyFile.spec.longSpelling) \(Format.oneLine(path)): a key is 16 to 4096 bytes (this one is \(bytes.count))")
        }
        self.init(key: bytes)
    }

    init(key: [UInt8]) {
        self.key = key
        keyIdentity = SHA256.hex(SHA256.hash(Array("previewloop signing key\n".utf8) + key)).prefix(16).description
    }

    /// Names the key without revealing it (a hash of it), for cache keys of what holds a signature.
    let keyIdentity: String

    /// The signature of `path` with these raw query items (`signature` itself left out).
    func signature(path: String, query: [(name: String, value: String?)]) -> String {
        // Sorted by name (bytes), a repeated name keeping its order.
        let items = query.filter { $0.name != Self.signatureName }
            .enumerated()
            .sorted { first, second in
                first.element.name == second.element.name ? first.offset < second.offset
                    : Array(first.element.name.utf8).lexicographicallyPrecedes(Array(second.element.name.utf8))
            }
            .map { $0.element.name + ($0.element.value.map { "=" + $0 } ?? "") }
        return SHA256.hex(SHA256.hmac(key: key, message: Array((path + "?" + items.joined(separator: "&")).utf8)))
    }

    /// Checks a request's signature and expiry at `now` (Unix seconds); returns the query without
    /// `expires` and `signature`, or the 403 to answer with.
    func verify(path: String, query: [(name: String, value: String?)], now: Int) -> Result<[(name: String, value: String?)], PreviewRequestError> {
        let signatures = query.filter { $0.name == Self.signatureName }
        let expiries = query.filter { $0.name == Self.expiresName }
        guard signatures.count == 1, let sent = signatures[0].value, expiries.count == 1 else {
            return .failure(PreviewRequestError(status: 403, detail: "This server serves signed URLs only: expires and signature are required."))
        }
        let expected = Array(signature(path: path, query: query).utf8)
        let given = Array(sent.lowercased().utf8)
        // Constant time: every byte is compared whatever the first difference.
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in 0..<expected.count { difference |= expected[index] ^ (index < given.count ? given[index] : 0) }
        guard difference == 0 else {
            return .failure(PreviewRequestError(status: 403, detail: "The signature does not match."))
        }
        guard let text = expiries[0].value, text.count <= 12, text.allSatisfy({ $0.isASCII && $0.isNumber }),
              let expires = Int(text), expires >= now else {
            return .failure(PreviewRequestError(status: 403, detail: "The signed URL has expired."))
        }
        return .success(query.filter { $0.name != Self.signatureName && $0.name != Self.expiresName })
    }
}

/// With signed URLs (`--signing-key-file`): a request whose path is not in `unsigned` is checked
/// before anything looks at its path (an unsigned request learns nothing about the files) and is 403
/// unless signed and unexpired; the next step gets its query without `expires` and `signature`.
struct SignedURLs: HTTPMiddleware {
    let signer: URLSigner
    /// Paths served without a signature (health, readiness, metrics).
    let unsigned: Set<String>

    func handle(_ request: HTTPRequest, in exchange: HTTPExchange, next: (HTTPRequest) -> HTTPReply) -> HTTPReply {
        guard !unsigned.contains(request.path) else { return next(request) }
        switch signer.verify(path: request.path, query: request.rawQuery, now: time(nil)) {
        case .success(let rest):
            var signed = request
            signed.rawQuery = rest
            return next(signed)
        case .failure(let problem):
            return .now(Problem.response(problem))
        }
    }
}
