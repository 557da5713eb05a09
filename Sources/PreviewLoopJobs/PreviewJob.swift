import Glibc
import PreviewLoop
import Synchronization

/// A render or probe that a request asked for, checked and ready to run on a worker.
package struct PreviewJob: Sendable {
    /// The route as requested (`thumbnail.jpg`).
    package var route: String
    /// The response's `Content-Type`.
    package var contentType: String
    /// The normalised parameters (`accuracy=exact&time=5`: sorted, each as given), for validators and
    /// cache keys: equal requests have equal queries.
    package var canonicalQuery: String
    /// Memory the render may use at its peak, in bytes, for the server's shared budget, before the
    /// source's size is known: its decoder's frames counted at 4K (``decoderFrames`` of
    /// ``assumedFrameBytes``).
    package var memoryEstimate: Int { heldBytes + Self.decoderFrames * Self.assumedFrameBytes }
    /// What the render holds besides the decoder's frames: its pictures, conversions and encoder.
    package var heldBytes: Int
    /// Decoded frames a render's decoder holds at its peak, counted in frames of the source's coded
    /// size: the references H.264 and HEVC keep at 4K (up to 6 at levels 5.x), one frame for each of
    /// FFmpeg's decoding threads (2 by default) and the frame being converted. Measured on a 3840x2160
    /// H.264 source: one 640x640 animation render grows the server by 150 MB, against 61 MB from a
    /// 400x300 source, so its decoder holds about 7.2 4K frames (`Benchmarks/serve-overload.sh --burst-only`).
    package static let decoderFrames = 9
    /// An 8-bit 4:2:0 4K frame: the size assumed before the source is opened.
    package static let assumedFrameBytes = 3840 * 2160 * 3 / 2

    /// The memory estimate once the source's coded frame is known to take `frameBytes`.
    package func memoryEstimate(frameBytes: Int) -> Int { heldBytes + Self.decoderFrames * frameBytes }

    /// Bytes one decoded frame of a source takes: 4:2:0 at its coded size, two bytes a sample above 8 bits.
    package static func frameBytes(width: Int, height: Int, bitDepth: Int) -> Int {
        width * height * 3 / 2 * (bitDepth > 8 ? 2 : 1)
    }
    /// The parsed command.
    let command: any ServedJob
    /// A storyboard index's query for its picture (the request's parameters but `format`, encoded;
    /// a server adds what it needs to find the source and check the signature).
    package var pictureQuery = ""
    /// The query the job was made from, decoded, in the order given.
    package var query: [(name: String, value: String)] = []

    /// For a storyboard index (`storyboard.vtt`, `.json`), the route of the picture it points at
    /// (`storyboard.jpg`); `nil` for every other route.
    package var pictureRoute: String? {
        guard let options = command as? SpritesCommand, route.hasSuffix(".vtt") || route.hasSuffix(".json") else { return nil }
        return "storyboard.\(options.format.rawValue)"
    }

    /// Renders the response body: the bytes the matching command writes, with the headers that go with
    /// them (a thumbnail's or card still's placeholder). Every body is made in memory (an animation too,
    /// byte for byte what the command writes to a file); `scratch`, a folder only the server writes to,
    /// holds a playlist's checked copy while it is read.
    ///
    /// With `opened`, the source is read from that path instead (see ``InputOptions/opened``); with
    /// `confinedTo`, every file the source names (a playlist's segments) must be inside that folder; with
    /// `remote`, a URL source is read as a server's remote sources are (its allow list, TLS settings and
    /// preconditions).
    ///
    /// `siblings` are jobs of ``siblingRequests``: their bodies come back in the result's `siblings`, in order.
    /// With `pinnedEntityTag`, an `s3://` source is read only while the object still has that entity
    /// tag (`If-Match` on every range); with `objectKeyPrefix`, every object an `s3://` playlist names
    /// must have a key that starts with it.
    package func render(scratch: String, opened: String? = nil, confinedTo root: String? = nil, remote: RemoteReading? = nil,
                        pinnedEntityTag: String? = nil, objectKeyPrefix: String? = nil, tls: TLSOptions? = nil,
                        siblings: [PreviewJob] = []) throws -> RenderedBody {
        var command = command
        if let opened { command.source.opened = opened }
        if let root { command.source.confinement = root }
        if let objectKeyPrefix { command.source.objectKeyPrefix = objectKeyPrefix }
        if let pinnedEntityTag { command.source.requestHeaders["If-Match"] = pinnedEntityTag }
        if let tls { command.source.tls = tls }
        if let remote {
            command.source.allowedURLs = remote.allowedURLs
            command.source.requestHeaders = remote.requestHeaders
            command.source.tls = remote.tls
        }
        // A playlist on a server is read from a copy naming its segments by their checked real paths.
        let playlistCopy = try command.source.confinedPlaylistCopy(in: scratch, serial: Self.nextRenderSerial())
        defer { if let playlistCopy { FileSystem.unlink(playlistCopy) } }
        if let playlistCopy { command.source.opened = playlistCopy }
        return try command.body(for: self, scratch: scratch, siblings: siblings)
    }

    /// Renders started in this process, numbering their playlist copies in the scratch folder.
    private static let renders = Atomic<Int>(0)

    /// A number no other render of this process has, for a file of its own in the scratch folder.
    static func nextRenderSerial() -> Int { renders.add(1, ordering: .relaxed).newValue }

    /// This job's body made from a storyboard: the index (`.vtt`, `.json`) pointing at its picture, or
    /// the picture.
    func storyboardBody(_ storyboard: Storyboard, format: SheetFormat) -> RenderedBody {
        let picture = (pictureRoute ?? "storyboard.\(format.rawValue)") + (pictureQuery.isEmpty ? "" : "?" + pictureQuery)
        if route.hasSuffix(".vtt") { return RenderedBody(body: Array(storyboard.track.webVTT { _ in picture }.utf8)) }
        if route.hasSuffix(".json") { return RenderedBody(body: Array((storyboard.json(url: picture).text(.memberPerLine) + "\n").utf8)) }
        return RenderedBody(body: storyboard.picture)
    }

    /// The routes one render of this job also makes, for the same parameters (the server keeps their
    /// bodies under their own validators, so asking for them next costs no render): a storyboard's
    /// picture and its two indexes make each other; a thumbnail makes its `placeholder.json`. Each is
    /// named with the query it is asked with.
    package var siblingRequests: [(route: String, query: [(name: String, value: String)])] {
        command.siblingRequests(of: self)
    }
}

/// A rendered response: its body and the headers that describe it (``PreviewRequests/headers(of:)``),
/// which the server's memory and disk caches keep with the body.
package struct RenderedBody: Sendable {
    /// The bytes.
    package var body: [UInt8]
    /// Headers of the entity itself, sent with every full or partial response of it.
    package var headers: [(name: String, value: String)]
    /// The bodies of the sibling jobs the render was given (``PreviewJob/siblingRequests``), in order.
    package var siblings: [RenderedBody] = []

    package init(body: [UInt8], headers: [(name: String, value: String)] = []) {
        self.body = body
        self.headers = headers
    }

    /// An animation's body with its flash verdict (`Flash-Safety: pass`, `warning`, `extended_failure` or
    /// `failure`), and with `avoid` where its window starts (`Flash-Safety-Start`, seconds).
    init(body: [UInt8], flashes: FlashReport?, avoidance: FlashAvoidance? = nil) {
        var headers: [(name: String, value: String)] = []
        if let flashes { headers.append((Self.flashSafetyHeader, flashes.verdict.rawValue)) }
        if let avoidance { headers.append((Self.flashSafetyStartHeader, Format.fixed(avoidance.start.seconds, 3))) }
        self.init(body: body, headers: headers)
    }

    /// `Flash-Safety`: the verdict of the loop as a player repeats it (WCAG 2.3.1).
    package static let flashSafetyHeader = "Flash-Safety"
    /// `Flash-Safety-Start`: with `flash_safety=avoid`, where the window written starts, in seconds.
    package static let flashSafetyStartHeader = "Flash-Safety-Start"
}

/// Why a request cannot be answered: the HTTP status, the parameter at fault and one line saying why,
/// never echoing what the client sent.
package struct PreviewRequestError: Error, Equatable, Sendable {
    /// 400, 404, 413, 415, 422, 500 or 504.
    package var status: Int
    /// The query parameter at fault, if one is.
    package var parameter: String?
    /// One line for the problem body's `detail`.
    package var detail: String

    package init(status: Int, parameter: String? = nil, detail: String) {
        self.status = status
        self.parameter = parameter
        self.detail = detail
    }
}

/// How a server reads a remote source: the URLs it may reach, how https is authenticated and the
/// preconditions that pin the version it validated.
package struct RemoteReading: Sendable {
    /// `--allow-source`'s prefixes.
    package var allowedURLs: URLAllowList
    /// `--insecure`, `--ca-file`.
    package var tls: TLSOptions
    /// `If-Match` or `If-Unmodified-Since` (``RemoteValidators/preconditions``).
    package var requestHeaders: [String: String]

    package init(allowedURLs: URLAllowList, tls: TLSOptions, requestHeaders: [String: String]) {
        self.allowedURLs = allowedURLs
        self.tls = tls
        self.requestHeaders = requestHeaders
    }

    /// The library's options for asking the source's validators.
    package var sourceOptions: SourceOptions {
        var options = SourceOptions()
        tls.apply(to: &options)
        options.allowedURLs = allowedURLs
        options.requestHeaders = requestHeaders
        return options
    }
}

extension ImageFileFormat {
    /// The formats the image API serves thumbnails in.
    static let served: [ImageFileFormat] = [.jpeg, .png, .webp, .avif]

    /// The format's media type (`image/jpeg`).
    package var mediaType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .avif: "image/avif"
        case .ppm: "image/x-portable-pixmap"
        }
    }
}
