internal import PreviewLoopRemote

/// Small documents in an S3-compatible store (a playlist's text), read whole, and the objects they name.
extension RemoteDocument {
    /// The whole object an `s3://BUCKET/KEY` URL names, at most `limit` bytes, in one signed `GET` with
    /// `options`' timeouts and TLS settings; only while it still has the entity tag of an `If-Match`
    /// among `options`' request headers, when there is one.
    ///
    /// - Throws: ``PreviewLoopError`` `.inputNotFound` for no such object, `.tooLarge` for one over
    ///   `limit`, `.timedOut`, `.inputNotReadable` for another failure (a changed object included),
    ///   `.invalidArgument` for a URL that is not an object's; each message names the object.
    package static func fetchObject(_ url: String, options: SourceOptions, limit: Int) throws(PreviewLoopError) -> [UInt8] {
        guard let object = S3Object(url) else {
            throw PreviewLoopError(.invalidArgument, "\(RemoteValidators.printable(url)): not an object URL (s3://BUCKET/KEY)")
        }
        let limits = HTTPTransfer.Limits(connectTimeout: options.openTimeout, stallTimeout: options.readTimeout,
                                         verifiesCertificates: options.verifiesCertificates,
                                         certificateAuthorities: options.certificateAuthorities)
        let store = ObjectStore(configuration: .fromProcess, limits: limits)
        let pinned = options.requestHeaders.first { $0.key.lowercased() == "if-match" }?.value
        let body: [UInt8]
        do {
            // One byte over the limit tells a document too large from one exactly at it.
            body = try store.get(object, limit: limit + 1, ifMatch: pinned)
        } catch {
            throw ObjectStoreBytes.error(error, object: object)
        }
        RangeReader.processRequests.add(1, ordering: .relaxed)
        RangeReader.processBytesReceived.add(Int64(body.count), ordering: .relaxed)
        guard body.count <= limit else {
            throw PreviewLoopError(.tooLarge, "\(object): more than \(limit >> 20) MB; a playlist is far smaller")
        }
        return body
    }

    /// `reference` (a segment's URI in the playlist at the object URL `base`) as the `s3://` URL of an
    /// object in the same bucket whose key starts with `keyPrefix` (`""` for any): a relative path
    /// from the playlist's folder, a path from the bucket's top (`/…`), or an `s3://` URL of the same
    /// bucket; its query and fragment dropped, percent-escapes decoded. `nil` for anything else: another
    /// scheme or bucket, `..` above the bucket's top, an empty component, a key outside the prefix.
    package static func resolveObject(_ reference: String, against base: String, keyPrefix: String = "") -> String? {
        guard let playlist = S3Object(base) else { return nil }
        var text = reference
        if let end = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = String(text[..<end]) }
        var components: [Substring]
        if text.lowercased().hasPrefix("s3://") {
            guard let named = S3Object(text), named.bucket == playlist.bucket else { return nil }
            components = named.key.split(separator: "/", omittingEmptySubsequences: false)
        } else {
            // A scheme (letters, then `:` before any `/`) is another protocol.
            if let colon = text.firstIndex(of: ":"), !text[..<colon].contains("/") { return nil }
            guard let bytes = PercentEncoding.decode(text), let decoded = String(validating: bytes, as: UTF8.self),
                  !decoded.isEmpty, !decoded.contains("\0") else { return nil }
            if decoded.hasPrefix("/") {
                components = decoded.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            } else {
                components = playlist.key.split(separator: "/", omittingEmptySubsequences: false).dropLast()
                    + decoded.split(separator: "/", omittingEmptySubsequences: false)
            }
        }
        var kept: [Substring] = []
        for component in components {
            guard !component.isEmpty, !component.contains("\\") else { return nil }
            switch component {
            case ".": continue
            case "..":
                guard !kept.isEmpty else { return nil }
                kept.removeLast()
            default: kept.append(component)
            }
        }
        let key = kept.joined(separator: "/")
        guard !key.isEmpty, key.hasPrefix(keyPrefix) else { return nil }
        return "s3://\(playlist.bucket)/" + SignatureV4.encode(key, keepingSlashes: true)
    }
}
