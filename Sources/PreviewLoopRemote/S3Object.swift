/// An object in an S3-compatible store, named `s3://BUCKET/KEY`, and how a request for it is addressed
/// and signed.
package struct S3Object: Sendable, Hashable, CustomStringConvertible {
    package var bucket: String
    package var key: String

    package init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }

    /// Parses `s3://BUCKET/KEY` (scheme in any case; the key percent-decoded when it was encoded to
    /// make a URL); `nil` without a bucket or a key.
    package init?(_ text: String) {
        guard text.lowercased().hasPrefix("s3://") else { return nil }
        let rest = text.dropFirst(5)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let bucket = String(rest[..<slash]), key = String(rest[rest.index(after: slash)...])
        guard !bucket.isEmpty, !key.isEmpty, !bucket.contains(where: { $0.isWhitespace || $0 == "@" || $0 == ":" }) else { return nil }
        self.bucket = bucket
        self.key = Self.percentDecoded(key) ?? key
    }

    /// Why `bucket` is not a bucket name S3 accepts, or `nil` when it is one: 3 to 63 characters of
    /// lowercase letters, digits, dots and hyphens, a letter or digit first and last, no two dots in a
    /// row, not shaped like an IP address (`192.168.5.4`).
    package static func bucketNameProblem(_ bucket: String) -> String? {
        let characters = Array(bucket.utf8)
        guard (3...63).contains(characters.count) else {
            return "a bucket name has 3 to 63 characters, not \(characters.count)"
        }
        func isLowerOrDigit(_ c: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(c) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) }
        guard characters.allSatisfy({ isLowerOrDigit($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }) else {
            return "a bucket name holds only lowercase letters, digits, dots and hyphens"
        }
        guard isLowerOrDigit(characters.first!), isLowerOrDigit(characters.last!) else {
            return "a bucket name begins and ends with a letter or a digit"
        }
        guard !bucket.contains("..") else { return "a bucket name has no two dots in a row" }
        let parts = bucket.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4, parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isNumber) }) {
            return "a bucket name is not shaped like an IP address"
        }
        return nil
    }

    /// `s3://bucket/key`, as messages name it.
    package var description: String { "s3://\(bucket)/\(key)" }

    /// The URL a request goes to, the `Host` header it signs and the encoded path it signs.
    package func address(in configuration: AWSConfiguration) -> (url: String, host: String, path: String) {
        let encodedKey = SignatureV4.encode(key, keepingSlashes: true)
        if let endpoint = configuration.endpoint {
            // A custom endpoint (MinIO, SeaweedFS, R2…): path-style, `ENDPOINT/BUCKET/KEY`.
            let afterScheme: Substring = endpoint.firstRange(of: "://").map { endpoint[$0.upperBound...] } ?? endpoint[...]
            let host = String(afterScheme.prefix { $0 != "/" })
            let base = String(afterScheme.dropFirst(host.count))
            let path = base + "/" + SignatureV4.encode(bucket) + "/" + encodedKey
            return (String(endpoint.prefix(endpoint.count - afterScheme.count)) + host + path, host, path)
        }
        let region = configuration.region
        let virtualHosted = bucket.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") } && bucket.count >= 3
        if virtualHosted {
            let host = "\(bucket).s3.\(region).amazonaws.com"
            return ("https://\(host)/\(encodedKey)", host, "/" + encodedKey)
        }
        // A bucket name with dots (or capitals) would break the certificate's wildcard: path-style.
        let host = "s3.\(region).amazonaws.com"
        let path = "/" + SignatureV4.encode(bucket) + "/" + encodedKey
        return ("https://\(host)\(path)", host, path)
    }

    /// The header lines of a signed (or, without credentials, anonymous) `GET` of some bytes.
    ///
    /// - Parameters:
    ///   - range: `bytes=A-B`, signed with the rest.
    ///   - extra: further headers to sign (`If-Match`).
    ///   - secondsSince1970: the request's time.
    package func getHeaders(range: String, extra: [(String, String)] = [], configuration: AWSConfiguration,
                            secondsSince1970: Int) -> [String] {
        let address = address(in: configuration)
        var headers = [("Range", range)] + extra
        guard let credentials = configuration.credentials else {
            return headers.map { "\($0.0): \($0.1)" }
        }
        let date = SignatureV4.amzDate(secondsSince1970: secondsSince1970)
        headers += [("x-amz-content-sha256", SignatureV4.unsignedPayload), ("x-amz-date", date)]
        if let token = credentials.sessionToken { headers.append(("x-amz-security-token", token)) }
        let signer = SignatureV4(accessKeyID: credentials.accessKeyID, secretAccessKey: credentials.secretAccessKey,
                                 region: configuration.region, service: "s3")
        let authorization = signer.authorization(method: "GET", path: address.path, headers: headers + [("Host", address.host)],
                                                 payloadHash: SignatureV4.unsignedPayload, amzDate: date)
        return (headers + [("Authorization", authorization)]).map { "\($0.0): \($0.1)" }
    }

    /// The store's own reason from an S3 XML error body: its `Code` and `Message`, without anything
    /// else the body holds (a `SignatureDoesNotMatch` body repeats the string to sign).
    package static func storeError(body: [UInt8]) -> (code: String, message: String?)? {
        let text = String(decoding: body.prefix(64 * 1024), as: UTF8.self)
        func element(_ name: String) -> String? {
            guard let open = text.firstRange(of: "<\(name)>"),
                  let close = text[open.upperBound...].firstRange(of: "</\(name)>") else { return nil }
            var printable = ""
            for scalar in text[open.upperBound..<close.lowerBound].unicodeScalars where scalar.value >= 0x20 && scalar.value != 0x7F {
                printable.unicodeScalars.append(scalar)
            }
            let clean = printable.trimmingSpaces
            return clean.isEmpty ? nil : String(clean.prefix(200))
        }
        guard let code = element("Code"), code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_") }) else { return nil }
        return (code, element("Message"))
    }

    private static func percentDecoded(_ text: String) -> String? {
        guard text.contains("%") else { return text }
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                      let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
