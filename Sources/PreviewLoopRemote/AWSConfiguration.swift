/// Credentials, region and endpoint found the way the AWS SDKs and CLI find them.
///
/// Order: `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`) from the environment;
/// else the profile (`AWS_PROFILE`, default `default`) in the shared credentials file
/// (`AWS_SHARED_CREDENTIALS_FILE`, default `~/.aws/credentials`), then in the config file
/// (`AWS_CONFIG_FILE`, default `~/.aws/config`, where it is `[profile NAME]` except `[default]`); else none
/// (anonymous, unsigned reads). Region: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`, else
/// `us-east-1`. Endpoint: `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's `endpoint_url`, else
/// AWS's own (a custom endpoint gets path-style addressing).
package struct AWSConfiguration: Sendable, Equatable {
    package struct Credentials: Sendable, Equatable {
        package var accessKeyID: String
        package var secretAccessKey: String
        package var sessionToken: String?

        package init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
        }
    }

    /// `nil` for anonymous reads.
    package var credentials: Credentials?
    package var region: String
    /// A custom endpoint (`http://127.0.0.1:8333`), without a trailing slash; `nil` for AWS's.
    package var endpoint: String?

    package init(credentials: Credentials?, region: String = "us-east-1", endpoint: String? = nil) {
        self.credentials = credentials
        self.region = region
        self.endpoint = endpoint
    }

    /// Resolves from an environment and a file reader (`nil` for a file that cannot be read).
    package static func resolve(environment: [String: String], readFile: (String) -> String?) -> AWSConfiguration {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let home = value("HOME") ?? ""
        let profile = value("AWS_PROFILE") ?? "default"
        let credentialsFile = readFile(value("AWS_SHARED_CREDENTIALS_FILE") ?? home + "/.aws/credentials").map(Self.sections) ?? [:]
        let configFile = readFile(value("AWS_CONFIG_FILE") ?? home + "/.aws/config").map(Self.sections) ?? [:]
        let fromCredentials = credentialsFile[profile] ?? [:]
        let fromConfig = configFile[profile == "default" ? "default" : "profile " + profile] ?? [:]

        var credentials: Credentials?
        if let key = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY") {
            credentials = Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN"))
        } else {
            for section in [fromCredentials, fromConfig] {
                if let key = section["aws_access_key_id"], let secret = section["aws_secret_access_key"], !key.isEmpty, !secret.isEmpty {
                    credentials = Credentials(accessKeyID: key, secretAccessKey: secret,
                                              sessionToken: section["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 })
                    break
                }
            }
        }
        let region = value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? fromConfig["region"].flatMap { $0.isEmpty ? nil : $0 } ?? "us-east-1"
        var endpoint = value("AWS_ENDPOINT_URL_S3") ?? value("AWS_ENDPOINT_URL") ?? fromConfig["endpoint_url"].flatMap { $0.isEmpty ? nil : $0 }
        while endpoint?.hasSuffix("/") == true { endpoint?.removeLast() }
        return AWSConfiguration(credentials: credentials, region: region, endpoint: endpoint)
    }

    /// An INI file's sections (`[name]`), each a table of `key = value` (names lowercased; `#` and `;`
    /// lines are comments).
    static func sections(_ text: String) -> [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        var current: String?
        for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = raw.trimmingSpaces
            guard !line.isEmpty, !line.hasPrefix("#"), !line.hasPrefix(";") else { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                let name = String(line.dropFirst().dropLast()).trimmingSpaces
                current = name.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
                if let current, result[current] == nil { result[current] = [:] }
            } else if let current, let equals = line.firstIndex(of: "=") {
                let key = String(line[..<equals]).trimmingSpaces.lowercased()
                result[current]?[key] = String(line[line.index(after: equals)...]).trimmingSpaces
            }
        }
        return result
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let scalars = unicodeScalars.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars)
        return text
    }
}
