import Foundation

/// Where a clip comes from.
public enum Source: Sendable, Hashable, CustomStringConvertible {
    /// A local file path. Opened through FFmpeg's `file` protocol only, so a path can never name
    /// another protocol (a path such as `concat:a|b` is a file name, not a concatenation).
    case file(String)
    /// An `http` or `https` URL.
    case url(URL)

    /// Interprets a command-line argument: `http://…` and `https://…` are URLs, anything else a path.
    public init(argument: String) {
        let lowered = argument.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), let url = URL(string: argument) {
            self = .url(url)
        } else {
            self = .file(argument)
        }
    }

    /// How errors name this input: the path or URL as given.
    public var description: String {
        switch self {
        case .file(let path): path
        case .url(let url): url.absoluteString
        }
    }
}

/// Limits that apply while a source is opened and read.
public struct SourceOptions: Sendable, Hashable {
    /// Deadline for opening the input and reading its stream information, in seconds.
    public var openTimeout: Double
    /// Deadline for each read once open, in seconds (network stalls).
    public var readTimeout: Double

    /// Creates options; the defaults are 30 seconds each.
    public init(openTimeout: Double = 30, readTimeout: Double = 30) {
        self.openTimeout = openTimeout
        self.readTimeout = readTimeout
    }

    /// What FFmpeg opens and the options it is opened with.
    func ffmpegInput(for source: Source) throws(PreviewLoopError) -> (url: String, options: [String: String]) {
        switch source {
        case .file(let path):
            guard !path.isEmpty else { throw PreviewLoopError(.inputNotFound, "empty input path") }
            // The explicit `file:` prefix stops FFmpeg from reading a protocol out of the path.
            let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: absolute, isDirectory: &isDirectory), isDirectory.boolValue {
                throw PreviewLoopError(.notMediaFile, "\(path): is a directory, not a media file")
            }
            return ("file:" + absolute, ["protocol_whitelist": "file"])
        case .url(let url):
            guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                throw PreviewLoopError(.refusedByPolicy, "\(url.absoluteString): only http and https URLs are allowed")
            }
            let microseconds = String(Int(readTimeout * 1_000_000))
            return (url.absoluteString, [
                "protocol_whitelist": "http,https,tcp,tls",
                "rw_timeout": microseconds,
                "reconnect": "0",
            ])
        }
    }
}
