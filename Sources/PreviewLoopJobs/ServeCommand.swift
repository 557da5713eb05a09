import PreviewLoop

/// `preview-loop serve`'s options: where the videos are, where to listen and how much work to take on
/// at once. The server itself (PreviewLoopServer) reads them; the CLI declares and parses them like
/// every other subcommand's, so help, the manual page and the completions list them.
package struct ServeCommand: Equatable, Sendable {
    /// `--root` as typed, which becomes ``root`` (serve needs it).
    @Option(ServeCommand.root, folded: true) var rootOption: String? = nil
    /// The folder whose videos are served by relative path (`--root`).
    package var root = ""
    /// The address to listen on (`--listen`), host and port; port 0 picks a free one.
    @Option(ServeCommand.listen) package var listen = ServeCommand.listen.defaultValue
    /// Render workers (`--workers`).
    @Option(ServeCommand.workers) package var workers = ServeCommand.workers.defaultValue
    /// Renders that may wait for a worker before requests get 503 (`--queue`).
    @Option(ServeCommand.queue) package var queue = ServeCommand.queue.defaultValue
    /// `--memory-cache` as typed, in MiB, which becomes ``memoryCacheBytes``.
    @Option(ServeCommand.memoryCache, folded: true) var memoryCacheOption = ServeCommand.memoryCache.defaultValue
    /// The in-memory response cache's cap in bytes (`--memory-cache`).
    package var memoryCacheBytes = ServeCommand.memoryCache.defaultValue << 20
    /// `--cache` as typed (the last one), which with the others becomes ``cacheDirectory`` and
    /// ``sharedCache``.
    @Option(ServeCommand.cache, folded: true) var cacheOption: String? = nil
    /// The folder of the disk cache (a `--cache` that is not `s3://`); `nil` keeps no disk cache.
    package var cacheDirectory: String?
    /// The bucket and prefix of the shared cache (`--cache s3://BUCKET/PREFIX/`); `nil` keeps none.
    package var sharedCache: SharedCacheLocation?
    /// Seconds a shared-cache lookup may take before the request renders instead (`--shared-cache-timeout`).
    @Option(ServeCommand.sharedCacheTimeout) package var sharedCacheTimeout = ServeCommand.sharedCacheTimeout.defaultValue
    /// Whether `/readyz` says not ready while the shared cache cannot be reached (`--require-shared-cache`).
    @Flag(ServeCommand.requireSharedCache) package var requiresSharedCache = false
    /// The disk cache's cap in bytes (`--cache-size`).
    @Option(ServeCommand.cacheSize) package var cacheSizeBytes = ServeCommand.cacheSize.defaultValue
    /// `--max-memory` as typed, in MiB, which becomes ``memoryBudget``.
    @Option(ServeCommand.maxMemory, folded: true) var maxMemoryOption = ServeCommand.maxMemory.defaultValue
    /// The memory all renders in flight may use together, in bytes (`--max-memory`).
    package var memoryBudget = ServeCommand.maxMemory.defaultValue << 20
    /// Seconds a request may wait and render before it gets 504 (`--request-deadline`).
    @Option(ServeCommand.requestDeadline) package var requestDeadline = ServeCommand.requestDeadline.defaultValue
    /// Open connections at most (`--max-connections`).
    @Option(ServeCommand.maxConnections) package var maxConnections = ServeCommand.maxConnections.defaultValue
    /// Open connections from one address at most (`--max-connections-per-address`).
    @Option(ServeCommand.maxConnectionsPerAddress) package var maxConnectionsPerAddress = ServeCommand.maxConnectionsPerAddress.defaultValue
    /// Seconds a connection may be idle, or trickle its request, before it is closed (`--connection-timeout`).
    @Option(ServeCommand.connectionTimeout) package var connectionTimeout = ServeCommand.connectionTimeout.defaultValue
    /// Seconds in-flight requests get to finish after SIGTERM or SIGINT (`--grace`).
    @Option(ServeCommand.grace) package var grace = ServeCommand.grace.defaultValue
    /// Where the access log's JSON lines go (`--access-log`); `nil` for standard error.
    @Option(ServeCommand.accessLog) package var accessLog = ServeCommand.accessLog.defaultValue
    /// The key file of signed URLs (`--signing-key-file`); `nil` serves unsigned requests.
    @Option(ServeCommand.signingKeyFile) package var signingKeyFile = ServeCommand.signingKeyFile.defaultValue
    /// `--presets`: named sets of parameters that `?preset=NAME` applies.
    @Option(ServeCommand.presets) package var presetsFile = ServeCommand.presets.defaultValue
    /// `--animated-max-length`, `--animated-max-side` and `--animated-max-fps` as typed, which become
    /// ``animationCaps``.
    @Option(ServeCommand.animatedMaxLength, folded: true) var animatedMaxLengthOption = ServeCommand.animatedMaxLength.defaultValue
    @Option(ServeCommand.animatedMaxSide, folded: true) var animatedMaxSideOption = ServeCommand.animatedMaxSide.defaultValue
    @Option(ServeCommand.animatedMaxFPS, folded: true) var animatedMaxFPSOption = ServeCommand.animatedMaxFPS.defaultValue
    /// What one animated request may render (`--animated-max-length`, `--animated-max-side`,
    /// `--animated-max-fps`).
    package var animationCaps = AnimationCaps()
    /// `--allow-source` as typed (the last one), which with the others becomes ``allowedSources``.
    @Option(ServeCommand.allowSource, folded: true) var allowSourceOption: URLAllowList? = nil
    /// The URL prefixes remote sources may be read from (`--allow-source`); `nil` serves files under the
    /// root only.
    package var allowedSources: URLAllowList?
    /// Seconds a remote source's validators are trusted before its server is asked again
    /// (`--source-check-interval`).
    @Option(ServeCommand.sourceCheckInterval) package var sourceCheckInterval = ServeCommand.sourceCheckInterval.defaultValue
    /// `--allow-origin` as typed (the last one), which with the others becomes ``allowedOrigins``.
    @Option(ServeCommand.allowOrigin, folded: true) var allowOriginOption: String? = nil
    /// The origins whose pages may read responses from script (`--allow-origin`): `["*"]` for any, empty
    /// for none (no CORS header is sent).
    package var allowedOrigins: [String] = []
    /// `--insecure`: accept any certificate.
    @Flag(TLSOptions.insecure) var isInsecure = false
    /// `--ca-file FILE`: the authorities to trust instead of the system's.
    @Option(TLSOptions.caFile) var authoritiesFile = TLSOptions.caFile.defaultValue
    /// `--preview-length` as typed, which becomes ``feed``.
    @Option(FeedSettings.previewLength, folded: true) var previewLengthOption = FeedSettings.previewLength.defaultValue
    /// The feed page's defaults (`--preview-length`).
    package var feed = FeedSettings()
    /// The clips the feed page lists (`--feed-manifest`); `nil` lists every video under the root.
    @Option(ServeCommand.feedManifest) package var feedManifest = ServeCommand.feedManifest.defaultValue
    /// `--no-feed` as typed, which becomes ``isFeedEnabled``.
    @Flag(ServeCommand.noFeed, folded: true) var noFeedOption = false
    /// Whether `/` answers with the feed page (`--no-feed` turns it off: 404).
    package var isFeedEnabled = true
    /// Whether the start-up line is one JSON object (`--json`).
    @Flag(ServeCommand.jsonFlag) package var json = false
    /// Whether requests' client hints size pictures (`--client-hints`).
    @Flag(ServeCommand.clientHints) package var usesClientHints = false

    /// `--root <dir>`.
    package static let root = ValueOption<String?>.path(
        "root", value: "dir", help: "The folder of videos to serve: /CLIP/thumbnail.jpg serves CLIP, a path relative to it. "
            + "A path leaving it (.., a symbolic link pointing outside) is 404 and never opened. "
            + "s3://BUCKET/PREFIX/ serves the objects under a prefix of a bucket instead (/CLIP/… reads the key PREFIX/CLIP; "
            + "credentials and endpoint as for s3:// inputs; checked at start).",
        required: true, completing: .directory)
    /// `--listen <host:port>`.
    static let listen = ValueOption<ListenAddress>(
        "listen", value: "host:port", help: "The IPv4 address and port to listen on; port 0 picks a free port, which the "
            + "start-up line names.",
        default: ListenAddress(host: "127.0.0.1", port: 8080), showing: "127.0.0.1:8080",
        expecting: "an IPv4 address and a port from 0 to 65535 (127.0.0.1:8080, 0.0.0.0:0)") { ListenAddress(parsing: $0) }
    /// `--workers <n>`.
    static let workers = ValueOption<Int>.integer(
        "workers", help: "Renders at once, 1 to 64; each decodes with FFmpeg's own threads.",
        default: max(1, PreviewWall.coreCount), in: 1...64, showing: "the number of cores")
    /// `--queue <n>`.
    static let queue = ValueOption<Int>.integer(
        "queue", help: "Renders that may wait for a worker, 0 to 10000; past it a request gets 503 with Retry-After.",
        default: 64, in: 0...10_000)
    /// `--memory-cache <MiB>`.
    static let memoryCache = ValueOption<Int>.integer(
        "memory-cache", value: "MiB", help: "The cap of the in-memory cache of rendered responses, least recently used "
            + "evicted first; 0 turns it off.", default: 256, in: 0...1_048_576)
    /// `--cache <dir>`, repeatable: one folder and one `s3://` location at most.
    package static let cache = ValueOption<String?>.path(
        "cache", value: "dir", help: "Keep rendered responses on disk in this folder (made if absent; else empty or an "
            + "earlier cache, marked by its CACHEDIR.TAG), shared safely by several servers and kept across restarts. "
            + "s3://BUCKET/PREFIX/ (or s3://BUCKET/) keeps them in a bucket shared by every server pointed at it, "
            + "looked up after memory and disk (credentials and endpoint as for s3:// inputs). May be given twice: "
            + "one folder and one s3:// location.",
        completing: .directory)
    /// `--shared-cache-timeout <time>`.
    static let sharedCacheTimeout = ValueOption<Double>.seconds(
        "shared-cache-timeout", help: "How long a lookup in the s3:// cache may take before the request is rendered "
            + "instead.", default: 1, showing: "1", allowsZero: false)
    /// `--require-shared-cache`.
    package static let requireSharedCache = FlagOption(
        "require-shared-cache", help: "Answer /readyz with 503 while the s3:// cache cannot be reached (requests are "
            + "still answered, by rendering).")
    /// `--cache-size <size>`.
    static let cacheSize = ValueOption<Int>.byteSize(
        "cache-size", help: "The cap of the disk cache, least recently used evicted first.",
        default: 10 << 30, showing: "10G", in: (1 << 20)...(1 << 50))
    /// `--max-memory <MiB>`.
    static let maxMemory = ValueOption<Int>.integer(
        "max-memory", value: "MiB", help: "The memory all renders in flight may use together; a render waits for room "
            + "and one that alone needs more is refused with 413.", default: 2048, in: 16...1_048_576)
    /// `--request-deadline <time>`.
    static let requestDeadline = ValueOption<Double>.seconds(
        "request-deadline", help: "How long a request may wait and render before it gets 504.",
        default: 30, showing: "30", allowsZero: false)
    /// `--max-connections <n>`.
    static let maxConnections = ValueOption<Int>.integer(
        "max-connections", help: "Open connections at most; more are refused at accept.", default: 512, in: 1...65_536)
    /// `--max-connections-per-address <n>`.
    static let maxConnectionsPerAddress = ValueOption<Int>.integer(
        "max-connections-per-address", help: "Open connections from one client address at most.", default: 64, in: 1...65_536)
    /// `--connection-timeout <time>`.
    static let connectionTimeout = ValueOption<Double>.seconds(
        "connection-timeout", help: "Seconds a connection may sit idle or trickle its request before it is closed.",
        default: 10, showing: "10", allowsZero: false)
    /// `--grace <time>`.
    static let grace = ValueOption<Double>.seconds(
        "grace", help: "After SIGTERM or SIGINT: how long requests in flight get to finish before the server exits.",
        default: 10, showing: "10", allowsZero: true)
    /// `--access-log <file>`.
    package static let accessLog = ValueOption<String?>.path(
        "access-log", value: "file", help: "Append the access log (one JSON object per request) to this file instead of "
            + "standard error.")
    /// `--signing-key-file <file>`.
    package static let signingKeyFile = ValueOption<String?>.path(
        "signing-key-file", value: "file", help: "Serve signed URLs only: each request needs expires (Unix seconds, not "
            + "past) and signature, the hex HMAC-SHA256 under this file's bytes (16 to 4096; one final newline "
            + "dropped) of the path, ?, and the other parameters sorted by name. Else 403.")
    /// `--presets <file>`.
    package static let presets = ValueOption<String?>.path(
        "presets", value: "file", help: "Named sets of parameters, as JSON ({\"card\": {\"width\": 480, \"fit_mode\": "
            + "\"crop\"}}): ?preset=card sets those the query does not, on every route that takes them. Each preset is "
            + "checked at start against every route that takes its parameters.")
    /// `--animated-max-length <time>`.
    static let animatedMaxLength = ValueOption<Double>.seconds(
        "animated-max-length", help: "The most seconds of the clip one animated.* request renders (its window, with "
            + "loop_point=auto's search and a crossfade's tail); longer is 413.",
        default: AnimationCaps().seconds, showing: "10", allowsZero: false)
    /// `--animated-max-side <px>`.
    static let animatedMaxSide = ValueOption<Int>.integer(
        "animated-max-side", value: "px", help: "The most pixels on either side of an animated.* picture, 2 to 4096; "
            + "more is 413.", default: AnimationCaps().side, in: 2...4096)
    /// `--animated-max-fps <n>`.
    static let animatedMaxFPS = ValueOption<Int>.integer(
        "animated-max-fps", help: "The most frames per second an animated.* request asks for, \(ValueRanges.framesPerSecond.inWords); more is 413.",
        default: AnimationCaps().framesPerSecond, in: ValueRanges.framesPerSecond)
    /// `--allow-source <url-prefix>`, repeatable.
    package static let allowSource = ValueOption<URLAllowList?>(
        "allow-source", value: "url-prefix",
        help: "Also serve http(s) videos under this URL prefix, by /thumbnail.jpg?url=URL (any route, the URL "
            + "percent-encoded); may be given more than once. A URL, redirect or playlist segment outside every "
            + "prefix is 403 and never fetched.",
        default: nil, showing: nil,
        expecting: "an http(s) URL prefix with no user, query or fragment (https://media.example.com/videos/)") { text in
        (try? URLAllowList([text])).map { .some($0) }
    }
    /// `--allow-origin <origin>`, repeatable.
    static let allowOrigin = ValueOption<String?>(
        "allow-origin", value: "origin",
        help: "Let pages on this origin (https://www.example.com; * for any) read responses from script: fetch(), "
            + "a crossorigin <img> drawn on a <canvas>, the placeholder headers. Responses get "
            + "Access-Control-Allow-Origin and Access-Control-Expose-Headers, and an OPTIONS preflight 204; "
            + "may be given more than once (the request's listed Origin is then echoed, with Vary: Origin). "
            + "Without it no CORS header is sent.",
        default: nil, showing: nil,
        expecting: "* or an origin, http(s)://host[:port] with no path (https://www.example.com)") { text in
        ServeCommand.origin(parsing: text).map { .some($0) }
    }
    /// `--source-check-interval <time>`.
    static let sourceCheckInterval = ValueOption<Double>.seconds(
        "source-check-interval", help: "How long a remote source's ETag and Last-Modified are trusted before its "
            + "server is asked again with HEAD (0 asks on every request).",
        default: 10, showing: "10", allowsZero: true)
    /// `--feed-manifest <file>`.
    package static let feedManifest = ValueOption<String?>.path(
        "feed-manifest", value: "file",
        help: "The clips the feed page (/) lists, in order: JSON Lines {\"path\": \"dir/clip.mp4\", \"title\": \"…\", "
            + "\"preview_length\": 5} (title and preview_length optional) or one path a line, relative to --root. "
            + "Without it the page lists every video under the root.")
    /// `--no-feed`.
    package static let noFeed = FlagOption("no-feed", help: "Answer / with 404 instead of the feed page.")
    /// `--client-hints`.
    package static let clientHints = FlagOption(
        "client-hints",
        help: "Size pictures by the browser's client hints when the query does not: Sec-CH-DPR (or DPR) as dpr, "
            + "Sec-CH-Width (or Width, in device pixels) as width; and answer Save-Data: on with a lighter picture "
            + "(quality 50 unless the query sets one, CSS pixels). Responses ask for them (Accept-CH) and vary by "
            + "those used.")
    /// `--json`.
    static let jsonFlag = FlagOption("json", help: "Print the start-up line as one JSON object ({\"listening\":\"http://…\",…}).")

    /// Takes `--root` and turns the folded options into the byte counts, caps, allow-list, TLS settings
    /// and feed settings they become.
    package mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        if let extra = arguments.positionals.first {
            throw UsageError(.unexpectedArgument(extra), subcommand: Self.subcommand,
                             "Unexpected argument '\(Format.oneLine(extra))'; serve takes its folder as --root.")
        }
        guard let root = try arguments.value(Self.root) else {
            throw UsageError(.missingOption("root"), subcommand: Self.subcommand, "Missing '--root <dir>': the folder of videos to serve.")
        }
        self.root = root
        cacheDirectory = nil
        sharedCache = nil
        for location in try arguments.all(Self.cache) {
            let shown = Format.oneLine(location)
            guard location.lowercased().hasPrefix("s3://") else {
                guard cacheDirectory == nil else {
                    throw UsageError(.conflictingOptions("cache", "cache"), subcommand: Self.subcommand,
                                     "'--cache \(shown)': a second cache folder; give one folder and at most one s3:// location.")
                }
                cacheDirectory = location
                continue
            }
            guard sharedCache == nil else {
                throw UsageError(.conflictingOptions("cache", "cache"), subcommand: Self.subcommand,
                                 "'--cache \(shown)': a second s3:// cache; give one folder and at most one s3:// location.")
            }
            switch SharedCacheLocation.parse(location) {
            case .success(let parsed): sharedCache = parsed
            case .failure(let reason):
                throw UsageError(.invalidValue(option: "cache", value: location), subcommand: Self.subcommand,
                                 "Invalid value '\(shown)' for '--cache': \(reason).")
            }
        }
        let sharedOptions: [any OptionDeclaration] = [Self.sharedCacheTimeout, Self.requireSharedCache]
        if sharedCache == nil, let given = sharedOptions.first(where: { arguments.isGiven($0) }) {
            throw UsageError(.conflictingOptions(given.spec.name, "cache"), subcommand: Self.subcommand,
                             "'\(given.spec.longSpelling)' sets up the shared cache; give '--cache s3://BUCKET/PREFIX/' too.")
        }
        memoryCacheBytes = try arguments.value(Self.memoryCache) << 20
        memoryBudget = try arguments.value(Self.maxMemory) << 20
        animationCaps = AnimationCaps(seconds: try arguments.value(Self.animatedMaxLength),
                                      side: try arguments.value(Self.animatedMaxSide),
                                      framesPerSecond: try arguments.value(Self.animatedMaxFPS))
        let prefixes = try arguments.all(Self.allowSource).flatMap(\.prefixes)
        allowedSources = prefixes.isEmpty ? nil : try? URLAllowList(prefixes)
        allowedOrigins = []
        for origin in try arguments.all(Self.allowOrigin) where !allowedOrigins.contains(origin) {
            allowedOrigins.append(origin)
        }
        if allowedOrigins.count > 1, allowedOrigins.contains("*") {
            throw UsageError(.conflictingOptions("allow-origin", "allow-origin"), subcommand: Self.subcommand,
                             "'--allow-origin *' already allows every origin; give it alone.")
        }
        feed.previewLength = try arguments.value(FeedSettings.previewLength)
        isFeedEnabled = !arguments.isSet(Self.noFeed)
        let feedOptions: [any OptionDeclaration] = [FeedSettings.previewLength, Self.feedManifest]
        if !isFeedEnabled, let given = feedOptions.first(where: { arguments.isGiven($0) }) {
            throw UsageError(.conflictingOptions(given.spec.name, "no-feed"), subcommand: Self.subcommand,
                             "'\(given.spec.longSpelling)' sets up the feed page, which '--no-feed' turns off.")
        }
    }

    /// An origin as browsers send it in `Origin` (scheme and host lower-cased, the default port dropped,
    /// no trailing slash), or `*`; `nil` for anything else (a path, a query, a user, another scheme).
    static func origin(parsing text: String) -> String? {
        if text == "*" { return text }
        guard var origin = URLAllowList.normalized(text), origin.hasSuffix("/") else { return nil }
        origin.removeLast()
        guard let authority = origin.firstRange(of: "://")?.upperBound,
              !origin[authority...].contains(where: { $0 == "/" || $0 == "?" }) else { return nil }
        return origin
    }

    /// Whether the values, each valid on its own, go together.
    package func validate() throws(UsageError) {
        try tls.validate(for: Self.subcommand)
    }

    /// How https sources are authenticated (`--insecure`, `--ca-file`): the TLS group's options, held
    /// here so that help lists them before the feed's.
    package var tls: TLSOptions {
        get {
            var tls = TLSOptions()
            tls.isInsecure = isInsecure
            tls.authoritiesFile = authoritiesFile
            return tls
        }
        set {
            isInsecure = newValue.isInsecure
            authoritiesFile = newValue.authoritiesFile
        }
    }

    /// Options with every value at its default (`--root` empty), or read from the current
    /// ``ArgumentContext``.
    package init() {}

    /// Options for a server embedded in a program (and its tests): `root`, the rest at their defaults
    /// but port 0.
    package init(root: String) {
        self.init()
        self.root = root
        listen = ListenAddress(host: "127.0.0.1", port: 0)
    }
}

extension ServeCommand: ParsableCommand {
    /// `preview-loop serve`: its name and summary (it takes no positional argument).
    package static let configuration = CommandConfiguration(
        name: "serve",
        abstract: "Serve previews over HTTP, rendered on request and cached: thumbnails, probes and more by URL "
            + "(/CLIP/thumbnail.jpg?time=5&width=640), for <img> tags, a CDN or nginx in front.",
        arguments: [])

    package var input: String { "serve" }

    package func run(in context: CommandContext) -> Int32 {
        guard let serve = context.serve else {
            Console.writeError("Error: serve: this build of \(Tool.name) has no server\n")
            return ExitStatus.failure
        }
        return serve(self)
    }
}

/// Where the shared cache lives: `--cache s3://BUCKET/PREFIX/`.
package struct SharedCacheLocation: Equatable, Sendable, CustomStringConvertible {
    /// The bucket, named by S3's rules.
    package var bucket: String
    /// Empty (the whole bucket) or a prefix ending with `/`.
    package var prefix: String

    package init(bucket: String, prefix: String) {
        self.bucket = bucket
        self.prefix = prefix
    }

    /// `s3://BUCKET/PREFIX/` read, or why it is not a cache location: a bucket named by S3's rules
    /// (``ObjectOutput/bucketProblem(in:)``) and a prefix that ends with `/` (or none), with no empty, `.` or `..` component.
    package static func parse(_ text: String) -> Result<SharedCacheLocation, SharedCacheLocationError> {
        guard text.lowercased().hasPrefix("s3://") else { return .failure(.init("expected s3://BUCKET/PREFIX/")) }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        let prefix = String(rest.dropFirst(bucket.count + 1))
        if let problem = ObjectOutput.bucketProblem(in: text) { return .failure(.init(problem)) }
        guard prefix.isEmpty || prefix.hasSuffix("/") else {
            return .failure(.init("not a prefix: end it with / (s3://\(bucket)/\(Format.oneLine(prefix))/)"))
        }
        for component in prefix.split(separator: "/", omittingEmptySubsequences: false).dropLast() {
            guard !component.isEmpty, component != ".", component != ".." else {
                return .failure(.init("the prefix has an empty, . or .. component"))
            }
        }
        return .success(SharedCacheLocation(bucket: bucket, prefix: prefix))
    }

    /// `s3://BUCKET/PREFIX/`.
    package var description: String { "s3://\(bucket)/\(prefix)" }
}

/// Why a `--cache s3://…` location was refused.
package struct SharedCacheLocationError: Error, Equatable {
    package var reason: String
    init(_ reason: String) { self.reason = reason }
}

/// An IPv4 address and a TCP port, as `--listen` takes them.
package struct ListenAddress: Equatable, Sendable, CustomStringConvertible {
    /// Dotted-quad IPv4 address (`127.0.0.1`, `0.0.0.0`).
    package var host: String
    /// The port; 0 asks the system for a free one.
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` (`localhost` stands for 127.0.0.1), or `:PORT` for 127.0.0.1.
    init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        if host.isEmpty || host == "localhost" { host = "127.0.0.1" }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber)
                && Int(part).map { $0 <= 255 } == true
        }) else { return nil }
        let portText = text[text.index(after: colon)...]
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(portText), port <= 65_535 else { return nil }
        self.host = host
        self.port = port
    }

    /// `127.0.0.1:8080`.
    package var description: String { "\(host):\(port)" }
}
