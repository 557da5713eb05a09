internal import PreviewLoopFFmpeg
internal import PreviewLoopRemote
import FoundationEssentials
import Glibc

/// An `s3://BUCKET/KEY` input's bytes, read in signed byte ranges (``RangeReader``) and handed to FFmpeg
/// through its custom I/O. The first window is fetched when it is made, so a missing object, a refused
/// key or a bad signature fails the open in one line naming the object and the store's own reason.
/// Kept for the input's life, so opening the input again reads what was already fetched.
final class ObjectStoreBytes: RangedBytes {
    let object: S3Object
    let reader: RangeReader
    var failure: RemoteFailure?

    init(object: S3Object, options: SourceOptions, interrupter: Interrupter,
         configuration: AWSConfiguration = .fromProcess) throws(PreviewLoopError) {
        self.object = object
        let limits = HTTPTransfer.Limits(connectTimeout: options.openTimeout, stallTimeout: options.readTimeout,
                                         verifiesCertificates: options.verifiesCertificates,
                                         certificateAuthorities: options.certificateAuthorities)
        let transfer: HTTPTransfer
        do { transfer = try HTTPTransfer(limits: limits) } catch { throw Self.error(error, object: object) }
        // A server pins the version it validated (`If-Match` among the request headers).
        let pinned = options.requestHeaders.first { $0.key.lowercased() == "if-match" }?.value
        reader = RangeReader(transfer: transfer, pinnedTo: pinned) { range, ifMatch in
            let address = object.address(in: configuration)
            let headers = object.getHeaders(range: range, extra: ifMatch.map { [("If-Match", $0)] } ?? [],
                                            configuration: configuration, secondsSince1970: Int(time(nil)))
            return (address.url, headers)
        }
        reader.shouldStop = { interrupter.shouldInterrupt }
        do { try reader.open() } catch { throw Self.error(error, object: object) }
    }

    /// Bytes received and requests made so far.
    var bytesReceived: Int64 { reader.bytesReceived }
    var requests: Int { reader.requests }

    /// The last read's failure as the library's error, if a read failed for a reason of the store's.
    var readError: PreviewLoopError? {
        guard let failure, failure.kind != .stopped else { return nil }
        return Self.error(failure, object: object)
    }

    /// One line naming the object and the reason; never a credential, signature or token (the reason
    /// is the store's `Code` and `Message`, or libcurl's transport text, neither of which holds them).
    static func error(_ failure: RemoteFailure, object: S3Object) -> PreviewLoopError {
        let code: PreviewLoopError.Code = switch failure.kind {
        case .notFound: .inputNotFound
        case .refused, .transport, .changed, .alreadyExists, .local: .inputNotReadable
        case .stopped: .timedOut
        }
        return PreviewLoopError(code, "\(object): \(failure.reason)", operation: failure.storeCode)
    }
}

/// What reading a remote object cost: body bytes received (error bodies and retries included) and HTTP
/// requests made, as `--json` records carry them (`remote`).
public struct RemoteReads: Sendable, Hashable, Codable {
    /// Body bytes received.
    public var bytesFetched: Int64
    /// HTTP requests made.
    public var requests: Int

    /// Creates a count.
    public init(bytesFetched: Int64, requests: Int) {
        self.bytesFetched = bytesFetched
        self.requests = requests
    }

    enum CodingKeys: String, CodingKey {
        case bytesFetched = "bytes_fetched", requests
    }
}

extension AWSConfiguration {
    /// The configuration from this process's environment and the shared files it names.
    static var fromProcess: AWSConfiguration {
        let environment = ProcessInfo.processInfo.environment
        return AWSConfiguration.resolve(environment: environment) { path in
            FileSystem.prefix(ofFileAt: path, count: 1 << 20).map { String(decoding: $0, as: UTF8.self) }
        }
    }
}

extension Source {
    /// The object an `s3://BUCKET/KEY` URL names; `nil` for anything else.
    var objectInStore: S3Object? {
        guard case .url(let url) = self, url.scheme?.lowercased() == "s3" else { return nil }
        return S3Object(url.absoluteString)
    }

    /// An `s3://` argument whose key holds characters a URL may not (spaces…), percent-encoded.
    static func encodedObjectURL(_ text: String) -> URL? {
        var encoded = ""
        for byte in text.utf8 {
            if byte > 0x20, byte < 0x7F, !"\"<>\\^`{|}%#?[]".utf8.contains(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return URL(string: encoded)
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
