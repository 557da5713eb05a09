/// AWS Signature Version 4 for requests signed in their headers (`Authorization`), as the published
/// specification describes it: a canonical request, the string to sign over its SHA-256, and a signature
/// by a key derived from the secret through the date, region and service.
package struct SignatureV4: Sendable {
    /// What `x-amz-content-sha256` says for a request whose body is not hashed (allowed for S3 `GET`s).
    package static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The SHA-256 of an empty body.
    package static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    package var accessKeyID: String
    package var secretAccessKey: String
    package var region: String
    package var service: String

    package init(accessKeyID: String, secretAccessKey: String, region: String, service: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.region = region
        self.service = service
    }

    /// The value of the `Authorization` header for a request.
    ///
    /// - Parameters:
    ///   - path: the request's path, already percent-encoded as sent (S3 paths are not encoded twice).
    ///   - query: the query's name-value pairs, not encoded.
    ///   - headers: every header to sign, `host` and `x-amz-date` among them (names in any case).
    ///   - payloadHash: the hex SHA-256 of the body, or ``unsignedPayload``.
    ///   - amzDate: the request's time as `x-amz-date` says it (`20150830T123600Z`).
    package func authorization(method: String, path: String, query: [(String, String)] = [], headers: [(String, String)],
                               payloadHash: String, amzDate: String) -> String {
        let (signedHeaders, signature) = sign(method: method, path: path, query: query, headers: headers,
                                              payloadHash: payloadHash, amzDate: amzDate)
        return "AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope(amzDate)), SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    /// The signed header names (`host;x-amz-date`) and the hex signature.
    package func sign(method: String, path: String, query: [(String, String)], headers: [(String, String)],
                      payloadHash: String, amzDate: String) -> (signedHeaders: String, signature: String) {
        let request = canonicalRequest(method: method, path: path, query: query, headers: headers, payloadHash: payloadHash)
        let toSign = "AWS4-HMAC-SHA256\n\(amzDate)\n\(scope(amzDate))\n" + SHA256.hex(SHA256.hash(Array(request.text.utf8)))
        return (request.signedHeaders, SHA256.hex(SHA256.hmac(key: signingKey(date: String(amzDate.prefix(8))), message: Array(toSign.utf8))))
    }

    /// The key for one day, region and service: HMAC-SHA256 chained from `AWS4` + the secret.
    package func signingKey(date: String) -> [UInt8] {
        var key = Array(("AWS4" + secretAccessKey).utf8)
        for part in [date, region, service, "aws4_request"] { key = SHA256.hmac(key: key, message: Array(part.utf8)) }
        return key
    }

    /// `20150830/us-east-1/service/aws4_request`.
    func scope(_ amzDate: String) -> String { "\(amzDate.prefix(8))/\(region)/\(service)/aws4_request" }

    /// The canonical request's text and its signed header names.
    package func canonicalRequest(method: String, path: String, query: [(String, String)], headers: [(String, String)],
                                  payloadHash: String) -> (text: String, signedHeaders: String) {
        let encoded: [(String, String)] = query.map { (Self.encode($0.0), Self.encode($0.1)) }
        let sorted = encoded.sorted { (a: (String, String), b: (String, String)) -> Bool in a.0 == b.0 ? a.1 < b.1 : a.0 < b.0 }
        let canonicalQuery = sorted.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        var merged: [String: [String]] = [:]
        for (name, value) in headers {
            // Names lowercased; values trimmed, their inner runs of spaces made one.
            let folded = value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            merged[name.lowercased(), default: []].append(folded)
        }
        let names = merged.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(merged[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let text = [method, path.isEmpty ? "/" : path, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].joined(separator: "\n")
        return (text, signedHeaders)
    }

    /// Percent-encodes all but the unreserved characters (`A–Z a–z 0–9 - . _ ~`), as SigV4 asks; `/` too
    /// unless `keepingSlashes` (an object key in a path).
    package static func encode(_ text: String, keepingSlashes: Bool = false) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlashes:
                encoded.append("/")
            default:
                let digits = Array("0123456789ABCDEF")
                encoded += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
            }
        }
        return encoded
    }

    /// `x-amz-date` for a time in seconds since 1970 (UTC): `20150830T123600Z`.
    package static func amzDate(secondsSince1970 seconds: Int) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let inDay = seconds - days * 86_400
        let (year, month, day) = CivilDate.date(daysSince1970: days)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)\(two(month))\(two(day))T\(two(inDay / 3600))\(two(inDay % 3600 / 60))\(two(inDay % 60))Z"
    }
}
