internal import PreviewLoopRemote
import FoundationEssentials
import Glibc
import Synchronization

/// Outputs written to an S3-compatible store: `s3://BUCKET/KEY` for a file, `s3://BUCKET/PREFIX/` for a
/// folder of them. An object appears whole or not at all: one `PUT` of the finished bytes, or above
/// the multipart size a multipart upload that is aborted on failure; so a failed or stopped command
/// leaves nothing at its key. The store, credentials and region come from the same settings as
/// `s3://` inputs (``AWSConfiguration``). Errors name the object and the store's own code in one line,
/// never a secret.
///
/// Uploads go through one process-wide ``ObjectStore`` (a small pool of kept connections), so batch
/// workers share it; it counts the requests and bytes sent, and remembers which objects this process
/// created: only those are ever deleted (a clip's earlier outputs when a later one fails).
package enum ObjectOutput {
    /// For an `s3://BUCKET/…` argument whose bucket name S3 would refuse (`s3://Bad_Bucket!/x.jpg`), one
    /// line saying why; `nil` for a valid bucket name or anything that is not `s3://`.
    package static func bucketProblem(in argument: String) -> String? {
        guard isObject(argument) else { return nil }
        let rest = argument.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        guard let problem = S3Object.bucketNameProblem(bucket) else { return nil }
        return "'\(RemoteValidators.printable(bucket))' is not a valid bucket name: \(problem)"
    }

    /// Whether `path` names an object (`s3://…`, the scheme in any case) rather than a file.
    package static func isObject(_ path: String) -> Bool {
        path.utf8.count >= 5 && path.prefix(5).lowercased() == "s3://"
    }

    /// The environment variable that lowers the multipart size (bytes): bodies above it are uploaded
    /// in parts of that size. For tests and stores with small part limits; S3 itself takes parts of at
    /// least 5 MiB (all but the last).
    package static let multipartVariable = "PREVIEWLOOP_S3_MULTIPART_BYTES"

    /// The process's store, made on first use from the environment (as inputs read it).
    private static let shared: ObjectStore = {
        let environment = ProcessInfo.processInfo.environment
        let configuration = AWSConfiguration.fromProcess
        let limits = HTTPTransfer.Limits(connectTimeout: 30, stallTimeout: 60)
        if let text = environment[multipartVariable], let bytes = Int(text), bytes > 0 {
            return ObjectStore(configuration: configuration, limits: limits, multipartThreshold: bytes, partSize: bytes)
        }
        return ObjectStore(configuration: configuration, limits: limits)
    }()

    /// Sizes of the objects this process wrote, by URL, as the store accepted them.
    private static let written = Mutex<[String: Int64]>([:])

    /// The object a URL names, or a one-line error.
    static func object(_ url: String) throws(PreviewLoopError) -> S3Object {
        guard let object = S3Object(url) else {
            throw PreviewLoopError(.outputNotWritable, "\(url): not an object URL: write s3://BUCKET/KEY")
        }
        return object
    }

    /// Uploads `bytes` as the object `url`.
    ///
    /// - Parameter ifAbsent: refuse to replace an existing object (the store checks `If-None-Match: *`
    ///   when it commits the object).
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` naming the object and the store's reason.
    package static func upload(_ bytes: [UInt8], to url: String, ifAbsent: Bool = false) throws(PreviewLoopError) {
        let object = try object(url)
        do {
            try shared.put(bytes, at: object, ifAbsent: ifAbsent, contentType: ObjectStore.contentType(forName: object.key))
        } catch {
            throw Self.error(error, object: object)
        }
        written.withLock { $0[url] = Int64(bytes.count) }
    }

    /// Uploads the file at `path` as the object `url` (see ``upload(_:to:ifAbsent:)``).
    package static func upload(file path: String, to url: String, ifAbsent: Bool = false) throws(PreviewLoopError) {
        let object = try object(url)
        do {
            try shared.put(file: path, at: object, ifAbsent: ifAbsent, contentType: ObjectStore.contentType(forName: object.key))
        } catch {
            throw Self.error(error, object: object)
        }
        var status = stat()
        let size = FileSystem.stat(path, &status) == 0 ? Int64(status.st_size) : 0
        written.withLock { $0[url] = size }
    }

    /// The size of an object this process uploaded (as the store accepted it), `nil` for any other.
    package static func uploadedSize(_ url: String) -> Int? {
        written.withLock { $0[url] }.map(Int.init)
    }

    /// The object's size and entity tag, `nil` when there is none.
    package static func head(_ url: String) throws(PreviewLoopError) -> (size: Int64, etag: String?)? {
        let object = try object(url)
        do {
            return try shared.head(object).map { ($0.size, $0.etag) }
        } catch {
            throw Self.error(error, object: object)
        }
    }

    /// The whole object as bytes, `nil` when there is none.
    package static func get(_ url: String, limit: Int = 64 << 20) throws(PreviewLoopError) -> [UInt8]? {
        let object = try object(url)
        do {
            return try shared.get(object, limit: limit)
        } catch where error.kind == .notFound && error.storeCode != "NoSuchBucket" {
            return nil
        } catch {
            throw Self.error(error, object: object)
        }
    }

    /// The objects under a prefix (`s3://BUCKET/PREFIX/`), as URLs with their sizes and modification
    /// times, in key order.
    package static func list(_ prefixURL: String) throws(PreviewLoopError) -> [(url: String, size: Int64, lastModified: String?)] {
        let (bucket, prefix) = try bucketAndPrefix(prefixURL)
        do {
            return try shared.list(bucket: bucket, prefix: prefix).map { ("s3://\(bucket)/\($0.key)", $0.size, $0.lastModified) }
        } catch {
            throw Self.error(error, object: S3Object(bucket: bucket, key: prefix))
        }
    }

    /// Deletes an object this process created; anything else is left alone (and refused).
    package static func deleteCreated(_ url: String) throws(PreviewLoopError) {
        let object = try object(url)
        do {
            try shared.delete(object)
        } catch {
            throw Self.error(error, object: object)
        }
        written.withLock { _ = $0.removeValue(forKey: url) }
    }

    /// Whether this process created the object `url`.
    package static func wasCreated(_ url: String) -> Bool {
        S3Object(url).map(shared.created) ?? false
    }

    /// Requests made and bytes sent so far by this process's uploads, listings and checks.
    package static var counts: (requests: Int, bytesSent: Int64) {
        let counts = shared.counts
        return (counts.requests, counts.bytesSent)
    }

    /// The names of the objects directly under a prefix, refusing one whose name the output does not
    /// write (or anything in a deeper "folder"), as a local directory output is refused: before any work,
    /// so no object of the user's is replaced.
    ///
    /// - Returns: the names found (a rerun's own objects, which it replaces).
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` naming the prefix and the first foreign name.
    package static func ownNames(under url: String, ownsName: (String) -> Bool) throws(PreviewLoopError) -> Set<String> {
        let prefix = try prefixURL(url)
        let names = try list(prefix).map { String($0.url.dropFirst(prefix.count)) }
        if let foreign = names.sorted().first(where: { $0.contains("/") || !ownsName($0) }) {
            throw PreviewLoopError(.outputNotWritable, "\(prefix): holds objects this command did not write ('\(foreign)'); "
                + "it replaces a prefix only when all it holds is its own output: choose a new or empty prefix")
        }
        return Set(names)
    }

    /// Uploads files of a local folder as objects under a prefix, in the order given (the index last, so
    /// it appears once what it points at is there). When one fails, the objects this call made at keys
    /// that held nothing before are deleted again, and the error is thrown.
    ///
    /// - Parameter existing: the names that were there before (replaced, so not deleted on failure).
    package static func upload(files names: [String], from folder: String, to url: String,
                               existing: Set<String>) throws(PreviewLoopError) {
        let prefix = try prefixURL(url)
        var made: [String] = []
        do throws(PreviewLoopError) {
            for name in names {
                try upload(file: folder + "/" + name, to: prefix + name, ifAbsent: !existing.contains(name))
                if !existing.contains(name) { made.append(prefix + name) }
            }
        } catch {
            for url in made { try? deleteCreated(url) }
            throw error
        }
    }

    /// `s3://BUCKET/PREFIX/` with one trailing slash (`s3://BUCKET/` for a whole bucket).
    package static func prefixURL(_ url: String) throws(PreviewLoopError) -> String {
        let (bucket, prefix) = try bucketAndPrefix(url)
        return "s3://\(bucket)/\(prefix)"
    }

    /// `s3://BUCKET/PREFIX/` split; the prefix keeps its trailing slash (empty for the whole bucket).
    package static func bucketAndPrefix(_ url: String) throws(PreviewLoopError) -> (bucket: String, prefix: String) {
        guard isObject(url) else { throw PreviewLoopError(.outputNotWritable, "\(url): not an object URL: write s3://BUCKET/PREFIX/") }
        let rest = url.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        guard !bucket.isEmpty, !bucket.contains(where: { $0.isWhitespace || $0 == "@" || $0 == ":" }) else {
            throw PreviewLoopError(.outputNotWritable, "\(url): no bucket: write s3://BUCKET/PREFIX/")
        }
        var prefix = String(rest.dropFirst(bucket.count + 1))
        if !prefix.isEmpty, !prefix.hasSuffix("/") { prefix += "/" }
        return (bucket, prefix)
    }

    /// One line naming the object and the reason; the store's code kept as the error's `operation`
    /// (or `HTTP <status>` when it gave none), for callers that sort failures.
    static func error(_ failure: RemoteFailure, object: S3Object) -> PreviewLoopError {
        switch failure.kind {
        case .stopped:
            return PreviewLoopError(.cancelled, "\(object): the upload was stopped; nothing was left at the key")
        case .alreadyExists:
            return PreviewLoopError(.outputNotWritable, "\(object): already exists; it is not replaced (choose another key or remove it)",
                                    operation: failure.storeCode)
        default:
            return PreviewLoopError(.outputNotWritable, "\(object): \(failure.reason)",
                                    operation: failure.storeCode ?? failure.status.map { "HTTP \($0)" })
        }
    }

    /// Whether an error is a store's refusal of the credentials or permissions (HTTP 403: `AccessDenied`,
    /// `SignatureDoesNotMatch`, `InvalidAccessKeyId`, an expired token), which a retry with the same
    /// settings cannot cure.
    package static func isRefusal(_ error: PreviewLoopError) -> Bool {
        guard let operation = error.operation, error.ffmpegCode == nil else { return false }
        return refusalCodes.contains(operation)
    }

    /// The store codes of a 403 answer about who is asking.
    static let refusalCodes: Set<String> = [
        "AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId", "ExpiredToken", "InvalidToken", "TokenRefreshRequired",
        "AllAccessDisabled", "AccountProblem", "InvalidSecurity", "HTTP 403",
    ]
}

/// A local folder where an output bound for the store is made before it is uploaded (a muxer writes a
/// file by path): hidden in the system's temporary folder, registered with ``TemporaryFiles`` so a
/// signal removes it, and removed when released.
package final class ObjectStaging {
    /// The folder.
    package let folder: String

    /// Creates the folder.
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when it cannot be made.
    package init() throws(PreviewLoopError) {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let path = FileSystem.appending(".preview-loop-upload.\(getpid()).\(UInt32.random(in: 0...UInt32.max))", to: base)
        let made = TemporaryFiles.register(path, creatingWith: { FileSystem.mkdir(path, 0o700) == 0 ? 0 : errno }, created: { $0 == 0 })
        guard made == 0 else {
            throw PreviewLoopError(.outputNotWritable, "cannot create a folder for uploads in \(base): \(FileSystem.errorText(made))")
        }
        folder = path
    }

    deinit {
        FileSystem.removeTree(folder)
        TemporaryFiles.unregister(folder)
    }

    /// A path in the folder named after the object's last key component (its extension kept, so a
    /// writer that reads the format from the name sees the same one).
    package func file(for url: String) -> String {
        let name = url.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? "output"
        return folder + "/" + (name.hasPrefix(".") ? "output" + name : name)
    }
}
