import FoundationEssentials
import Glibc

/// Where a clip comes from.
public enum Source: Sendable, Hashable, CustomStringConvertible {
    /// A local file path. Opened through FFmpeg's `file` protocol only, so a path can never name
    /// another protocol (a path such as `concat:a|b` is a file name, not a concatenation). A name that
    /// is not UTF-8 is given with ``FilePathBytes``' escape (``FilePathBytes/decode(_:)``).
    case file(String)
    /// An `http` or `https` URL, or an object in an S3-compatible store (`s3://BUCKET/KEY`, read in
    /// signed byte ranges with the credentials, region and endpoint the AWS SDKs would use). Nested
    /// resources (playlist segments) must come from the same origin; an object may open none.
    case url(URL)
    /// Bytes in memory, read through a custom I/O context; nothing else is ever opened.
    case data(Data)
    /// The process's standard input (a pipe): read forward only, never rewound.
    case standardInput

    /// Interprets a command-line argument: `http://…`, `https://…` and `s3://…` are URLs, `-` is standard input,
    /// a `file://` URL on this host (`file:///clips/a%20b.mp4`, `file://localhost/…`) is its
    /// percent-decoded path, anything else a path.
    public init(argument: String) {
        let lowered = argument.lowercased()
        if argument == "-" {
            self = .standardInput
        } else if lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), let url = URL(string: argument) {
            self = .url(url)
        } else if lowered.hasPrefix("s3://"), let url = URL(string: argument) ?? Self.encodedObjectURL(argument) {
            self = .url(url)
        } else if let path = Self.localPath(fileURL: argument) {
            self = .file(path)
        } else {
            self = .file(argument)
        }
    }

    /// The scheme of a text shaped like a URL (`ftp` for `ftp://host/a.mp4`: letters, digits, `+`, `-`
    /// and `.` before `://`), or `nil`.
    static func urlScheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return nil }
        let scheme = text[..<colon]
        guard let first = scheme.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
              scheme.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)) })
        else { return nil }
        return scheme.lowercased()
    }

    /// The path a `file://` URL names when it is on this host (empty host or `localhost`), percent-decoded;
    /// `nil` for anything else (another host stays a file name, and is then not found).
    static func localPath(fileURL text: String) -> String? {
        guard text.lowercased().hasPrefix("file://") else { return nil }
        let rest = text.dropFirst("file://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let host = rest[..<slash].lowercased()
        guard host.isEmpty || host == "localhost", slash < rest.endIndex else { return nil }
        guard let bytes = PercentEncoding.decode(rest[slash...]), !bytes.contains(0),
              let path = String(validating: bytes, as: UTF8.self) else { return nil }
        return path
    }

    /// How errors name this input: the path or URL as given.
    public var description: String {
        switch self {
        case .file(let path): path
        case .url(let url): url.absoluteString
        case .data(let data): "<\(data.count) bytes in memory>"
        case .standardInput: "<standard input>"
        }
    }
}

/// Limits that apply while a source is opened and read: deadlines, and what the input may make the
/// engine open or decode. The defaults suit untrusted input.
public struct SourceOptions: Sendable, Hashable {
    /// Deadline for opening the input and reading its stream information, in seconds.
    public var openTimeout: Double
    /// Deadline for each read once open, in seconds (a stalled server).
    public var readTimeout: Double
    /// Deadline for all the input's I/O from the moment it is opened, in seconds (a server that
    /// trickles a byte a second); `nil` for none (the default, so endless loops can run).
    public var jobTimeout: Double?
    /// The demuxers an input may use (FFmpeg short names); `nil` allows every demuxer FFmpeg has.
    public var allowedFormats: Set<String>?
    /// The largest picture, in pixels, a stream may declare (default 8192x4320).
    public var maxPixels: Int
    /// The most streams an input may have (default 64).
    public var maxStreams: Int
    /// Whether a URL input may be redirected to another http(s) origin (default `false`: only within
    /// its own scheme, host and port). Redirects to other protocols (`file:`…) are always refused, and
    /// the resources a playlist names may never be redirected off the input's origins.
    public var allowsCrossOriginRedirects: Bool
    /// How HDR (PQ and HLG) frames become SDR BT.709 pictures (default ``ToneMapping/auto``); SDR input is
    /// never changed by it.
    public var toneMapping: ToneMapping = .auto
    /// Whether interlaced frames are deinterlaced before scaling (default ``Deinterlacing/auto``: frames
    /// the decoder flags as interlaced), for every output.
    public var deinterlacing: Deinterlacing = .auto

    /// The demuxers allowed by default: the containers and raw streams previews are made from.
    public static let defaultFormats: Set<String> = [
        "mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", "mpegts", "mpeg", "avi", "flv", "ogg", "asf",
        "h264", "hevc", "m4v", "mpegvideo", "ivf", "obu", "mjpeg", "gif", "webp_pipe", "png_pipe", "jpeg_pipe",
        "mp3", "hls", "mxf", "nut", "yuv4mpegpipe",
    ]
    // Not "dash": FFmpeg 5.1's DASH demuxer opens its segments with avio_open2, past the io_open gate
    // that keeps a remote input on its own origin. Add it to allowedFormats only for trusted manifests.

    /// Whether https servers must show a certificate that a trusted authority signed for their host
    /// name (default `true`): the chain against ``certificateAuthorities`` (or the system's store),
    /// and the name against the URL's host, by GnuTLS through FFmpeg's `tls_verify`. `false` accepts
    /// any certificate: an attacker on the path can then serve anything.
    public var verifiesCertificates = true
    /// A PEM file of the authorities to trust instead of the system's store (a private CA); `nil` for
    /// the system's (`/etc/ssl/certs/ca-certificates.crt` on Debian, from `ca-certificates`).
    public var certificateAuthorities: String?

    /// The http(s) URLs a URL input may read, when set: the input itself, each redirect hop and each
    /// resource a playlist names must be under one of its prefixes, or the open is refused
    /// (`.refusedByPolicy`) before anything is sent. `nil` (the default) leaves only the origin rules.
    public var allowedURLs: URLAllowList?
    /// Header fields sent with every http(s) request of a URL input (conditional requests such as
    /// `If-Match`, authorisation); names and values may hold no line break. Empty by default.
    public var requestHeaders: [String: String] = [:]
    /// A turn and flips applied after the source's own orientation (its display matrix): every picture
    /// made from the source, and its ``VideoInfo/orientation`` and ``VideoInfo/displaySize``, are
    /// those of the transformed picture. None by default.
    public var transform = PictureTransform()

    /// The TLS options every https open gets.
    var tlsOptions: [String: String] {
        guard verifiesCertificates else { return ["tls_verify": "0"] }
        var options = ["tls_verify": "1"]
        if let certificateAuthorities { options["ca_file"] = certificateAuthorities }
        return options
    }

    /// Creates options; see each property for its default.
    public init(openTimeout: Double = SourceOptions.defaultTimeout, readTimeout: Double = SourceOptions.defaultTimeout, jobTimeout: Double? = nil,
                allowedFormats: Set<String>? = SourceOptions.defaultFormats,
                maxPixels: Int = 8192 * 4320, maxStreams: Int = 64, allowsCrossOriginRedirects: Bool = false,
                toneMapping: ToneMapping = .auto, deinterlacing: Deinterlacing = .auto) {
        self.toneMapping = toneMapping
        self.deinterlacing = deinterlacing
        self.openTimeout = openTimeout
        self.readTimeout = readTimeout
        self.jobTimeout = jobTimeout
        self.allowedFormats = allowedFormats
        self.maxPixels = maxPixels
        self.maxStreams = maxStreams
        self.allowsCrossOriginRedirects = allowsCrossOriginRedirects
    }

    /// What FFmpeg opens, the options it is opened with, and the policy its nested opens obey.
    func ffmpegInput(for source: Source) throws(PreviewLoopError) -> (url: String, options: [String: String], policy: SourcePolicy) {
        var options: [String: String] = ["max_streams": String(maxStreams)]
        if let allowedFormats { options["format_whitelist"] = allowedFormats.sorted().joined(separator: ",") }
        switch source {
        case .file(let path):
            guard !path.isEmpty else { throw PreviewLoopError(.inputNotFound, "empty input path") }
            // The explicit `file:` prefix stops FFmpeg from reading a protocol out of the path.
            let absolute = FileSystem.absolute(path)
            var linkStatus = stat()
            if FileSystem.lstat(absolute, &linkStatus) != 0, let scheme = Source.urlScheme(of: path) {
                // `ftp://…`, `gopher://…`: a URL of a protocol that is never read, not a missing file.
                throw PreviewLoopError(.refusedByPolicy, "\(path): \(scheme) URLs are not read; only local files and http(s) URLs")
            }
            if FileSystem.fileExists(absolute).isDirectory {
                throw PreviewLoopError(.notMediaFile, "\(path): is a directory, not a media file")
            }
            // Opening a named pipe blocks until a writer comes, beyond any timeout's reach, and a device
            // may never end: only regular files are read by path (`-` reads a pipe on standard input).
            var status = stat()
            if FileSystem.stat(absolute, &status) == 0 && (status.st_mode & S_IFMT) != S_IFREG {
                throw PreviewLoopError(.refusedByPolicy, "\(path): not a regular file (a pipe or device); use - for standard input")
            }
            options["protocol_whitelist"] = "file"
            return ("file:" + absolute, options, SourcePolicy(kind: .localFiles))
        case .url(let url) where url.scheme?.lowercased() == "s3":
            // Read through the range reader's custom I/O: FFmpeg opens no protocol and nothing nested.
            guard source.objectInStore != nil else {
                throw PreviewLoopError(.invalidArgument, "\(url.absoluteString): an object in a store is named s3://BUCKET/KEY")
            }
            options["protocol_whitelist"] = ""
            return ("", options, SourcePolicy(kind: .nothing))
        case .url(let url):
            guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host else {
                throw PreviewLoopError(.refusedByPolicy, "\(url.absoluteString): only http, https and s3 URLs are allowed")
            }
            options["protocol_whitelist"] = "http,https,tcp,tls"
            options["rw_timeout"] = String(Int(readTimeout * 1_000_000))
            options.merge(tlsOptions) { $1 }
            options["reconnect"] = "0"
            if !requestHeaders.isEmpty {
                guard requestHeaders.allSatisfy({ !($0.key + $0.value).contains(where: \.isNewline) && !$0.key.contains(":") }) else {
                    throw PreviewLoopError(.invalidArgument, "a request header holds a line break or a colon in its name")
                }
                options["headers"] = requestHeaders.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)\r\n" }.joined()
            }
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            return (url.absoluteString, options, SourcePolicy(kind: .sameOrigin(host: host.lowercased(), port: port),
                                                              allowsCrossOriginRedirects: allowsCrossOriginRedirects,
                                                              allowedURLs: allowedURLs))
        case .data:
            options["protocol_whitelist"] = ""
            return ("", options, SourcePolicy(kind: .nothing))
        case .standardInput:
            options["protocol_whitelist"] = "pipe"
            return ("pipe:0", options, SourcePolicy(kind: .nothingNested))
        }
    }
}

/// Makes standard input non-blocking for as long as it lives, then restores its flags.
///
/// Non-blocking reads let FFmpeg poll its interrupt callback (timeouts, `stop()`) while a producer is
/// silent, instead of sleeping in read(2) for ever. The flag belongs to the file description, which
/// other processes of a shell pipeline share, so it must not outlive the read.
final class NonBlockingStandardInput {
    private let savedFlags: Int32

    init() {
        savedFlags = fcntl(STDIN_FILENO, F_GETFL)
        if savedFlags >= 0 { _ = fcntl(STDIN_FILENO, F_SETFL, savedFlags | O_NONBLOCK) }
    }

    deinit {
        if savedFlags >= 0 { _ = fcntl(STDIN_FILENO, F_SETFL, savedFlags) }
    }
}
