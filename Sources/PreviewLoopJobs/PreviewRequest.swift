import Glibc
import PreviewLoop
import Synchronization

// The image API's parameters, read by the jobs' own declarations: a request's query sets the options of
// the job (`thumb`, `probe`, …) directly — each value typed and checked by its option's declaration, then
// the job's cross-option checks and work limits, as on the command line — and the job renders the same
// bytes. A parameter names the option it sets, found by name among the job's declarations
// (`StripOptions.option("count")`, which fails at once for an option the job does not take), so an error
// about that option is reported under the parameter's name.

/// A query parameter of a route: its name, the option it sets and how its value is spelled for it.
package struct QueryParameter: Sendable {
    /// The name in the query (`time`).
    package var name: String
    /// What it does, for the route table in the docs.
    package var help: String
    /// The option it sets, by its declaration.
    package var option: OptionSpec
    /// What a value sets on the option (`.value("5")`, the flag on, or nothing for a flag left off); `nil`
    /// when the value is not one of the parameter's own words (the option's conversion judges the rest).
    var setting: @Sendable (String) -> OptionSetting?
    /// What a valid value looks like.
    package var expectation: String

    /// A parameter whose value is the option's argument as is (`command.option("count")`).
    static func passing(_ name: String, _ help: String, _ option: any OptionDeclaration) -> QueryParameter {
        QueryParameter(name: name, help: help, option: option.spec, setting: { .value($0) },
                              expectation: option.valueExpectation ?? "")
    }

    /// `true` or `false`, turning the flag on for `on` (`false` for a flag that leaves something out).
    static func toggle(_ name: String, _ help: String, _ flag: any OptionDeclaration, on: String) -> QueryParameter {
        QueryParameter(name: name, help: help, option: flag.spec, setting: { value in
            guard value == "true" || value == "false" else { return nil }
            return value == on ? .flagOn : .nothing
        }, expectation: "true or false")
    }
}

/// What a query value sets on its option.
enum OptionSetting: Equatable, Sendable {
    /// The option's value as its declaration reads it (`5` for `--at`).
    case value(String)
    /// The flag, turned on.
    case flagOn
    /// Nothing: the flag stays off.
    case nothing
}

/// A route of the image API: the file names it answers to after the source's path, the subcommand
/// that renders it and the parameters it takes.
package struct PreviewRoute: Sendable {
    /// The file name without its extension (`thumbnail`).
    package var stem: String
    /// The extensions served, each with its media type.
    package var formats: [(fileExtension: String, mediaType: String)]
    /// The job whose options read the query.
    var command: any ClipCommand.Type
    /// The job's subcommand name (`thumb`), for the docs.
    package var subcommand: String { command.configuration.name }
    /// Its parameters.
    package var parameters: [QueryParameter]
    /// What `width` and `height` size: the picture or each tile (`--size`); `nil` when the route has no
    /// `width`/`height` pair (a sheet's `width` is the sheet's own option).
    var sizePair: String?

    /// `thumbnail.jpg`, `thumbnail.png`, …
    package var fileNames: [String] { formats.map { stem + "." + $0.fileExtension } }
}

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
    let command: any ClipCommand
    /// A storyboard index's query for its picture (the request's parameters but `format`, encoded;
    /// a server adds what it needs to find the source and check the signature).
    package var pictureQuery = ""
    /// The query the job was made from, decoded, in the order given.
    package var query: [(name: String, value: String)] = []

    /// For a storyboard index (`storyboard.vtt`, `.json`), the route of the picture it points at
    /// (`storyboard.jpg`); `nil` for every other route.
    package var pictureRoute: String? {
        guard let options = command as? SpritesOptions, route.hasSuffix(".vtt") || route.hasSuffix(".json") else { return nil }
        return "storyboard.\(options.format.rawValue)"
    }

    /// Renders the response body: the bytes the matching command writes, with the headers that go with
    /// them (a thumbnail's or card still's placeholder). An animation is written to a file of its own in
    /// `scratch` (a folder only the server writes to), read back and removed.
    ///
    /// With `opened`, the source is read from that path instead (see ``InputOptions/opened``); with
    /// `remote`, a URL source is read as a server's remote sources are (its allow list, TLS settings and
    /// preconditions).
    ///
    /// `siblings` are jobs of ``siblingRequests``: their bodies come back in the result's `siblings`, in order.
    package func render(scratch: String, opened: String? = nil, remote: RemoteReading? = nil, siblings: [PreviewJob] = []) throws -> RenderedBody {
        var command = command
        if let opened { command.source.opened = opened }
        if let remote {
            command.source.allowedURLs = remote.allowedURLs
            command.source.requestHeaders = remote.requestHeaders
            command.source.tls = remote.tls
        }
        switch command {
        case let options as ThumbOptions:
            let picture = try ThumbCommand(options: options).render()
            guard route.hasPrefix(PreviewRequests.placeholder.stem + ".") else {
                var body = RenderedBody(body: picture.bytes, headers: PreviewRequests.headers(of: ImagePlaceholder(picture.frame.image)))
                // The placeholder of the same picture, for `placeholder.json` with the same parameters.
                body.siblings = siblings.map { _ in Self.placeholderBody(of: picture.frame) }
                return body
            }
            return Self.placeholderBody(of: picture.frame)
        case let options as StripOptions:
            return RenderedBody(body: try StripCommand(options: options).render().bytes)
        case let options as SheetOptions:
            return RenderedBody(body: try SheetCommand(options: options).render().bytes)
        case var options as RenderOptions:
            let number = PreviewJob.renders.add(1, ordering: .relaxed).newValue
            options.output = scratch + "/render-\(number).\(options.format.rawValue)"
            defer { FileSystem.unlink(options.output) }
            let rendered = try RenderCommand(options: options).render()
            return RenderedBody(body: try BatchFiles.readFile(options.output, limit: 1 << 30),
                                flashes: rendered.summary.flashes, avoidance: rendered.summary.flashAvoidance)
        case var options as CardOptions:
            if case .animation = options.destination {
                let number = PreviewJob.renders.add(1, ordering: .relaxed).newValue
                options.output = scratch + "/card-\(number)." + (route.split(separator: ".").last.map(String.init) ?? "webp")
            }
            defer { if case .animation = options.destination { FileSystem.unlink(options.output) } }
            switch try CardCommand(options: options).render().rendered {
            case .still(let bytes, _, _, let picture):
                return RenderedBody(body: bytes, headers: PreviewRequests.headers(of: ImagePlaceholder(picture)))
            case .sequence(let summary):
                return RenderedBody(body: try BatchFiles.readFile(options.output, limit: 1 << 30), flashes: summary.flashes)
            }
        case let options as SpritesOptions:
            let storyboard = try SpritesCommand(options: options).storyboard()
            var body = storyboardBody(storyboard, format: options.format)
            body.siblings = siblings.map { $0.storyboardBody(storyboard, format: options.format) }
            return body
        case let options as ProbeOptions:
            let info = try MediaProbe.probe(options.source.source, options: options.source.sourceOptions)
            return RenderedBody(body: Array(ProbeCommand.json(for: info).utf8))
        default:
            throw PreviewLoopError(.invalidArgument, "not a route")
        }
    }

    /// Renders started in this process, naming their scratch files.
    private static let renders = Atomic<Int>(0)

    /// `placeholder.json` of a picture: its ThumbHash, BlurHash, dominant colour, pHash, time and size.
    private static func placeholderBody(of frame: VideoFrame) -> RenderedBody {
        let image = frame.image
        let placeholder = ImagePlaceholder(image)
        let json = JSONValue.object([
            "thumbhash": .string(placeholder.thumbHash), "blurhash": .string(placeholder.blurHash),
            "dominant_color": .string("\(placeholder.dominantColor)"),
            "phash": .string("\(PerceptualHash(image))"), "time": .number((frame.sourceTime * 1e6).rounded() / 1e6),
            "width": .integer(image.width), "height": .integer(image.height),
        ])
        return RenderedBody(body: Array((json.text(.memberPerLine) + "\n").utf8))
    }

    /// This job's body made from a storyboard: the index (`.vtt`, `.json`) pointing at its picture, or
    /// the picture.
    private func storyboardBody(_ storyboard: Storyboard, format: SheetFormat) -> RenderedBody {
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
        switch command {
        case let options as SpritesOptions:
            let picture = "storyboard.\(options.format.rawValue)"
            let indexQuery = options.format == .jpg ? baseQuery : baseQuery + [("format", options.format.rawValue)]
            return ["storyboard.vtt", "storyboard.json", picture].filter { $0 != route }.map { sibling in
                (sibling, sibling == picture ? baseQuery : indexQuery)
            }
        case is ThumbOptions where !route.hasPrefix(PreviewRequests.placeholder.stem + "."):
            return [(PreviewRequests.placeholder.stem + ".json", baseQuery)]
        default:
            return []
        }
    }

    /// The query without `format` (which a storyboard's picture takes from its extension).
    private var baseQuery: [(name: String, value: String)] { query.filter { $0.name != "format" } }
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

/// The routes that render through a subcommand, and their parameters.
package enum PreviewRequests {
    /// Every route, in the order the docs list them.
    package static let routes: [PreviewRoute] = [thumbnail, placeholder, animated, strip, sheet, storyboard, storyboardIndex, card, probe]

    /// The file names a route answers to, after the source's path (`/clip.mp4/thumbnail.jpg`).
    package static let routeNames = routes.flatMap(\.fileNames)

    /// The routes by file name.
    private static let routesByName: [String: (route: PreviewRoute, format: Int)] = Dictionary(uniqueKeysWithValues:
        routes.flatMap { route in route.fileNames.enumerated().map { ($1, (route, $0)) } })

    /// Still images, as `thumb`, `strip` and `sheet` write them.
    private static let stills = ImageFileFormat.served.map { ($0.fileExtensions[0], $0.mediaType) }

    /// `width` and `height`, which set the command's `--size`.
    private static func sizePair(_ what: String, of command: any ParsableCommand.Type) -> [QueryParameter] {
        let option = command.option("size").spec
        return [QueryParameter(name: "width", help: "Width of \(what) in pixels; with height absent the shape is kept.",
                               option: option, setting: { _ in nil }, expectation: sideExpectation),
                QueryParameter(name: "height", help: "Height of \(what) in pixels; with width absent the shape is kept.",
                               option: option, setting: { _ in nil }, expectation: sideExpectation)]
    }

    /// `fit_mode`.
    private static func fitMode(of command: any ParsableCommand.Type) -> QueryParameter {
        QueryParameter(name: "fit_mode", help: "crop (fill the size), preserve (fit inside it, no bars), pad (letterbox) or stretch.",
                       option: command.option("fit").spec, setting: { fitModes[$0].map { .value($0) } },
                       expectation: "crop, preserve, pad or stretch")
    }

    /// `quality` of a still.
    private static func imageQuality(of command: any ParsableCommand.Type) -> QueryParameter {
        .passing("quality", "Lossy quality (JPEG, WebP).", command.option("quality"))
    }

    /// `pick` of a tiled route.
    private static func pick(of command: any ParsableCommand.Type) -> QueryParameter {
        .passing("pick", "even or scenes.", command.option("pick"))
    }

    /// `thumbnail.{jpg,png,webp}`: `thumb`.
    static let thumbnail = PreviewRoute(stem: "thumbnail", formats: stills, command: ThumbOptions.self, parameters: [
        QueryParameter(name: "time", help: "When: absent (or poster) the poster frame, best, seconds, mm:ss or N%.",
                       option: ThumbOptions.option("at").spec, setting: { .value($0 == "poster" ? "auto" : $0) },
                       expectation: "poster, " + ThumbOptions.option("at").valueExpectation!.replacing("auto, ", with: "")),
        .passing("start", "Where the poster search window starts.", ThumbOptions.option("start")),
        .passing("length", "How long the poster search window lasts.", ThumbOptions.option("length")),
    ] + sizePair("the picture", of: ThumbOptions.self) + [
        fitMode(of: ThumbOptions.self), imageQuality(of: ThumbOptions.self),
        .passing("accuracy", "exact or keyframe, for an explicit time.", ThumbOptions.option("accuracy")),
    ], sizePair: "the picture")

    /// `placeholder.json`: the placeholder of the picture `thumbnail.*` serves for the same parameters
    /// (`thumb`): its ThumbHash, BlurHash, dominant colour, pHash, the frame's time and size.
    static let placeholder = PreviewRoute(stem: "placeholder", formats: [("json", "application/json")], command: ThumbOptions.self,
                                          parameters: thumbnail.parameters.filter { $0.name != "quality" }, sizePair: "the picture")

    /// The headers that carry a picture's placeholder, so a page can paint it before the picture
    /// arrives: `Thumbhash` (standard base64), `Blurhash` (4x3 components) and `Dominant-Color`
    /// (`#rrggbb`).
    package static func headers(of placeholder: ImagePlaceholder) -> [(name: String, value: String)] {
        [("Thumbhash", placeholder.thumbHash), ("Blurhash", placeholder.blurHash), ("Dominant-Color", "\(placeholder.dominantColor)")]
    }

    /// `animated.{webp,gif,mp4}`: `render`, within the server's ``AnimationCaps``.
    static let animated = PreviewRoute(
        stem: "animated", formats: [("webp", "image/webp"), ("gif", "image/gif"), ("mp4", "video/mp4")], command: RenderOptions.self,
        parameters: [
            .passing("start", "Where the animation starts: poster (where the poster frame is), seconds, mm:ss or N%.",
                     RenderOptions.option("start")),
            .passing("length", "How long it lasts (within the server's cap).", RenderOptions.option("length")),
            QueryParameter(name: "end", help: "Where it ends instead of length: a time after start.",
                           option: RenderOptions.option("loop-point").spec,
                           setting: { $0 == "auto" ? nil : .value($0) },
                           expectation: "a time after start: seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage (10%)"),
        ] + sizePair("the picture", of: RenderOptions.self) + [
            .passing("fps", "Frames per second (within the server's cap).", RenderOptions.option("fps")),
            fitMode(of: RenderOptions.self),
            .passing("quality", "Lossy quality (WebP, MP4).", RenderOptions.option("quality")),
            .passing("loop_point", "auto: end on the frame that best matches the first, or a time after start.",
                     RenderOptions.option("loop-point")),
            .passing("seam", "cut, crossfade or crossfade=T.", RenderOptions.option("seam")),
            .passing("flash_safety", "check (the default): analyse the loop for photosensitive flashes and say the verdict "
                         + "in the Flash-Safety header; avoid: move the window to the nearest safe start (422 when there is "
                         + "none); off.", RenderOptions.option("flash-safety")),
        ], sizePair: "the picture")

    /// `strip.{jpg,png,webp}`: `strip`.
    static let strip = PreviewRoute(stem: "strip", formats: stills, command: StripOptions.self, parameters: [
        .passing("count", "How many frames.", StripOptions.option("count")),
        .passing("columns", "Frames per row.", StripOptions.option("columns")),
        .passing("span", "window (from start for length) or all (the whole clip).", StripOptions.option("span")),
        .passing("start", "Where the window starts.", StripOptions.option("start")),
        .passing("length", "How long the window lasts.", StripOptions.option("length")),
    ] + sizePair("each tile", of: StripOptions.self) + [
        fitMode(of: StripOptions.self), imageQuality(of: StripOptions.self),
        .passing("accuracy", "exact, keyframe or auto.", StripOptions.option("accuracy")),
        .passing("gap", "Pixels between tiles.", StripOptions.option("gap")),
        .toggle("timestamps", "true: each frame's time in its tile's corner.", StripOptions.option("timestamps"), on: "true"),
        pick(of: StripOptions.self),
    ], sizePair: "each tile")

    /// `sheet.{jpg,png,webp}`: `sheet` (its fonts are the server's defaults).
    static let sheet = PreviewRoute(stem: "sheet", formats: stills, command: SheetOptions.self, parameters: [
        .passing("grid", "Columns x rows (4x4).", SheetOptions.option("grid")),
        .passing("width", "The sheet's width in pixels.", SheetOptions.option("width")),
        .passing("tile_width", "Each tile's width instead.", SheetOptions.option("tile-width")),
        .passing("gap", "Pixels between tiles.", SheetOptions.option("gap")),
        .passing("margin", "Pixels around everything.", SheetOptions.option("margin")),
        .passing("background", "#rrggbb, #rgb, black or white.", SheetOptions.option("background")),
        .passing("text_color", "The text's colour, in the same forms.", SheetOptions.option("text-color")),
        .toggle("header", "false leaves out the header.", SheetOptions.option("no-header"), on: "false"),
        .toggle("timestamps", "false leaves out the tiles' times.", SheetOptions.option("no-timestamps"), on: "false"),
        .passing("accuracy", "exact, keyframe or auto.", SheetOptions.option("accuracy")),
        pick(of: SheetOptions.self), imageQuality(of: SheetOptions.self),
    ])

    /// The parameters of a storyboard, its picture and its index alike.
    private static let storyboardParameters: [QueryParameter] = [
        .passing("every", "Seconds between thumbnails, or auto.", SpritesOptions.option("every")),
        .passing("count", "Thumbnails spread over the clip instead.", SpritesOptions.option("count")),
        QueryParameter(name: "columns", help: "Tiles per row; the rows are as many as the thumbnails need.",
                       option: SpritesOptions.option("grid").spec,
                       setting: { text in Int(text).flatMap { ValueRanges.spriteGrid.contains($0) ? .value("\($0)x1") : nil } },
                       expectation: integerExpectation(ValueRanges.spriteGrid)),
    ] + sizePair("each tile", of: SpritesOptions.self) + [
        fitMode(of: SpritesOptions.self), imageQuality(of: SpritesOptions.self),
        .passing("accuracy", "auto, exact or keyframe.", SpritesOptions.option("accuracy")),
        pick(of: SpritesOptions.self),
    ]

    /// `storyboard.{jpg,webp}`: every thumbnail of `sprites` on one picture.
    static let storyboard = PreviewRoute(stem: "storyboard", formats: [("jpg", "image/jpeg"), ("webp", "image/webp")],
                                         command: SpritesOptions.self, parameters: storyboardParameters, sizePair: "each tile")

    /// `storyboard.{vtt,json}`: where each thumbnail of the storyboard's picture is, and when.
    static let storyboardIndex = PreviewRoute(
        stem: "storyboard", formats: [("vtt", "text/vtt; charset=utf-8"), ("json", "application/json")], command: SpritesOptions.self,
        parameters: storyboardParameters + [
            .passing("format", "The picture the index points to: jpg or webp.", SpritesOptions.option("format")),
        ], sizePair: "each tile")

    /// `card.{webp,gif,mp4}` (the card's sequence, within the server's ``AnimationCaps``) and
    /// `card.{png,jpg}` (one instant of it): `card`.
    static let card = PreviewRoute(
        stem: "card", formats: [("webp", "image/webp"), ("gif", "image/gif"), ("mp4", "video/mp4"), ("png", "image/png"),
                                ("jpg", "image/jpeg")], command: CardOptions.self,
        parameters: sizePair("the card (both or neither)", of: CardOptions.self) + [
            .passing("aspect", "The card's shape at 480 pixels wide instead (16:9, 4:3, 1.5).", CardOptions.option("aspect")),
            .passing("corner_radius", "Pixels of the rounded corners.", CardOptions.option("corner-radius")),
            .passing("reveal", "circle or fade.", CardOptions.option("reveal")),
            .passing("poster_hold", "How long the poster shows first.", CardOptions.option("poster-hold")),
            .passing("play_length", "How long the video plays after the reveal.", CardOptions.option("play-length")),
            .toggle("close", "true: end by fading back to the poster.", CardOptions.option("close"), on: "true"),
            .toggle("play_button", "false: the poster without its play button.", CardOptions.option("no-play-button"), on: "false"),
            .passing("background", "The colour outside the corners.", CardOptions.option("background")),
            .passing("fps", "Frames per second of an animation (within the server's cap).", CardOptions.option("fps")),
            .passing("start", "Where the loop window starts.", CardOptions.option("start")),
            .passing("length", "How long the loop window lasts.", CardOptions.option("length")),
            .passing("poster_at", "The poster's time instead of the window's first good frame.", CardOptions.option("poster-at")),
            .passing("at", "For card.png and card.jpg: the instant of the sequence, seconds from its start.", CardOptions.option("at")),
            .passing("quality", "Lossy quality (WebP, MP4, JPEG).", CardOptions.option("quality")),
            .passing("flash_safety", "check (the default): analyse an animation for photosensitive flashes and say the "
                         + "verdict in the Flash-Safety header; off. Stills are not analysed.", CardOptions.option("flash-safety")),
        ], sizePair: "the card")

    /// `probe.json`: `probe --json`.
    static let probe = PreviewRoute(stem: "probe", formats: [("json", "application/json")], command: ProbeOptions.self, parameters: [])

    /// `fit_mode`'s words and the `--fit` each means (`preserve` is `fill` into the fitted size).
    static let fitModes = ["crop": ContentMode.aspectFill.rawValue, "preserve": ContentMode.aspectFill.rawValue,
                           "pad": ContentMode.aspectFit.rawValue, "stretch": ContentMode.stretch.rawValue]
    /// What `width` and `height` take.
    static let sideExpectation = "a whole number of pixels from 1 to \(SizeRequest.maximumSide)"
    /// The most parameters a request may carry.
    package static let maximumParameters = 32

    /// Checks a request for `route` on the video at `source` (an absolute path the server resolved)
    /// and returns the job, or why it cannot be done.
    ///
    /// `deadline` bounds the render's reading, in seconds (the command's `--deadline`); `caps` bound
    /// an animation.
    package static func job(route name: String, query: [(name: String, value: String)], source: String,
                            deadline: Double? = nil, caps: AnimationCaps = AnimationCaps()) throws(PreviewRequestError) -> PreviewJob {
        guard query.count <= maximumParameters else {
            throw PreviewRequestError(status: 400, detail: "At most \(maximumParameters) query parameters.")
        }
        var seen = Set<String>()
        for item in query where !seen.insert(item.name).inserted {
            throw PreviewRequestError(status: 400, parameter: printable(item.name), detail: "A parameter is given twice.")
        }
        guard let (route, formatIndex) = routesByName[name] else {
            throw PreviewRequestError(status: 404, detail: "No such route; routes: \(routeNames.joined(separator: ", ")).")
        }
        let format = route.formats[formatIndex]
        let table = Dictionary(uniqueKeysWithValues: route.parameters.map { ($0.name, $0) })
        // The job's options, set by name as its declarations read them; the source is its input.
        var given = ScannedArguments(subcommand: route.command.subcommand)
        given.positionals = [source]
        func set(_ option: String, _ value: String) {
            given.values[option] = value
            given.everyValue[option, default: []].append(value)
        }
        let isCard = route.command == CardOptions.self, isStoryboard = route.command == SpritesOptions.self
        switch route.command {
        case is ProbeOptions.Type:
            given.flags.insert("json")
        case is SpritesOptions.Type:
            // The storyboard is rendered in memory; sprites' output directory is never made.
            set("output", "storyboard")
            // The picture's format is its extension's; an index's is its `format` parameter.
            if format.mediaType.hasPrefix("image/") { set("format", format.fileExtension) }
        case is ThumbOptions.Type where route.stem == placeholder.stem:
            // The picture is measured, never written: PPM is the cheapest to make.
            set("output", "placeholder.ppm")
        default:
            set("output", name)
        }
        // An animation's sides are capped; a card still's are not.
        let animates = route.command == RenderOptions.self || (isCard && AnimationFormat(path: name) != nil)
        var width: String?, height: String?
        var canonical: [(String, String)] = []
        var preserves = false
        for (parameterName, value) in query {
            guard let parameter = table[parameterName] else {
                throw PreviewRequestError(status: 400, parameter: printable(parameterName),
                                          detail: route.parameters.isEmpty ? "\(name) takes no parameters."
                                              : "Unknown parameter; \(name) takes: "
                                              + route.parameters.map(\.name).joined(separator: ", ") + ".")
            }
            if route.sizePair != nil && (parameterName == "width" || parameterName == "height") {
                let side = try side(value, parameter)
                if animates, Int(side)! > caps.side {
                    throw PreviewRequestError(status: 413, parameter: parameterName,
                                              detail: "At most \(caps.side) pixels a side for an animation on this server.")
                }
                if parameterName == "width" { width = side } else { height = side }
            } else {
                guard let setting = parameter.setting(value) else {
                    throw PreviewRequestError(status: 400, parameter: parameterName, detail: "Expected \(parameter.expectation).")
                }
                if parameterName == "fit_mode" && value == "preserve" { preserves = true }
                switch setting {
                case .value(let text): set(parameter.option.name, text)
                case .flagOn: given.flags.insert(parameter.option.name)
                case .nothing: break
                }
            }
            canonical.append((parameterName, value))
        }
        if seen.contains("end") && (seen.contains("length") || seen.contains("loop_point")) {
            throw PreviewRequestError(status: 400, parameter: "end",
                                      detail: "end sets where the animation ends: give it without length and loop_point.")
        }
        if isCard && animates && seen.contains("at") {
            throw PreviewRequestError(status: 400, parameter: "at",
                                      detail: "at picks the instant of a still: ask for card.png or card.jpg.")
        }
        if isCard && (width == nil) != (height == nil) {
            throw PreviewRequestError(status: 400, parameter: width == nil ? "height" : "width",
                                      detail: "A card takes width and height together, or aspect.")
        }
        if isStoryboard {
            // A storyboard has as many rows as its thumbnails need (counted once the clip is open): its
            // grid is the columns by one row here, and its sides are checked against what was sent.
            let sentColumns = query.first { $0.name == "columns" }.flatMap { Int($0.value) }
            let columns = sentColumns ?? SpritesOptions.grid.defaultValue.width
            if sentColumns == nil { set("grid", "\(columns)x1") }
            try checkStoryboardSides(columns: columns, columnsSent: sentColumns != nil, width: width.flatMap { Int($0) },
                                     height: height.flatMap { Int($0) })
        }
        switch (width, height) {
        case let (width?, height?): set("size", "\(width)x\(height)")
        case let (width?, nil): set("size", "\(width)x-1")
        case let (nil, height?): set("size", "x\(height)")
        case (nil, nil): break
        }
        if let deadline { set("deadline", "\(deadline)") }
        let parsed: any ClipCommand
        do {
            guard let command = try route.command.init(given) as? any ClipCommand else {
                throw PreviewRequestError(status: 500, detail: "The request did not make a \(route.stem).")
            }
            parsed = command
        } catch let error as UsageError {
            throw problem(error, parameters: route.parameters)
        } catch {
            throw PreviewRequestError(status: 500, detail: "The request did not make a \(route.stem).")
        }
        // What the command holds beyond its decoder's frames (counted by `PreviewJob.memoryEstimate`,
        // at the source's size once it is known).
        let decoding = 0
        var command = parsed
        let estimate: Int
        switch parsed {
        case var options as ThumbOptions:
            options.preservesShape = preserves && width != nil && height != nil
            let box = options.size.knownSizes.first ?? Size(width: 1920, height: 1920)
            estimate = decoding + 4 * Int(WorkBudget.rgba(box))
            command = options
        case var options as RenderOptions:
            guard options.framesPerSecond <= caps.framesPerSecond else {
                throw PreviewRequestError(status: 413, parameter: "fps",
                                          detail: "At most \(caps.framesPerSecond) fps for an animation on this server.")
            }
            if case .seconds(let seconds) = options.length, seconds > caps.seconds + 1e-9 {
                throw PreviewRequestError(status: 413, parameter: "length",
                                          detail: "At most \(Format.limit(caps.seconds)) s for an animation on this server.")
            }
            options.caps = caps
            options.reporting.isQuiet = true
            let box = options.size.knownSizes.first ?? Size(width: caps.side, height: caps.side)
            let frames = (caps.seconds * (1 + LoopEnd.searchFraction) + 1) * Double(options.framesPerSecond)
            estimate = decoding + Int(RenderOptions.bytes(frames: frames, size: box, format: options.format)
                                      + options.heldBytes(frames: frames, size: box))
            command = options
        case var options as StripOptions:
            options.reporting.isQuiet = true
            let box = options.size.knownSizes.first ?? Size(width: 1920, height: 1920)
            estimate = decoding + 3 * options.count * Int(WorkBudget.rgb(box))
            command = options
        case var options as SheetOptions:
            options.reporting.isQuiet = true
            // The sheet is at most its width squared-ish: tiles, the sheet and the encoder's copy.
            let side = min(ImageFileFormat.maxWebPSide, max(options.sheetWidth, (options.tileWidth ?? 0) * options.columns))
            estimate = decoding + 3 * Int(WorkBudget.rgb(Size(width: side, height: side)))
            command = options
        case var options as SpritesOptions:
            options.reporting.isQuiet = true
            // The most a storyboard may be: a full sheet of the tiles, the sheet and the encoder's copy.
            let tile = options.size.knownSizes.first ?? SpritesOptions.defaultBox
            let sheet = Size(width: min(ImageFileFormat.maxWebPSide, options.columns * tile.width),
                             height: min(ImageFileFormat.maxWebPSide, SpritesCommand.storyboardRows * tile.height))
            estimate = decoding + 3 * Int(WorkBudget.rgb(sheet))
            command = options
        case var options as CardOptions:
            options.isQuiet = true
            let size = options.style.size
            var frames = 1.0, encoder = 0.0
            if case .animation(let animation) = options.destination {
                guard options.framesPerSecond <= caps.framesPerSecond else {
                    throw PreviewRequestError(status: 413, parameter: "fps",
                                              detail: "At most \(caps.framesPerSecond) fps for an animation on this server.")
                }
                let duration = CardTimeline(style: options.style).duration
                guard duration <= caps.seconds + 1e-9 else {
                    throw PreviewRequestError(status: 413, parameter: "play_length",
                                              detail: "At most \(Format.limit(caps.seconds)) s for an animation on this server; "
                                                  + "this card lasts \(Format.fixed(duration, 3)) s.")
                }
                guard max(size.width, size.height) <= caps.side else {
                    throw PreviewRequestError(status: 413, parameter: "aspect",
                                              detail: "At most \(caps.side) pixels a side for an animation on this server.")
                }
                if animation == .gif { frames = Double(PreviewCard.frameCount(duration: duration, framesPerSecond: options.framesPerSecond)) }
                encoder = OutputLimits.encoderBytes(size, format: animation)
            }
            estimate = decoding + Int(8 * WorkBudget.rgba(size) + frames * WorkBudget.rgb(size) + encoder)
            command = options
        case is ProbeOptions:
            estimate = 16 << 20
        default:
            throw PreviewRequestError(status: 500, detail: "The request did not make a \(route.stem).")
        }
        let sorted = canonical.sorted { $0.0 < $1.0 }
        // An index points to its picture: the same parameters but `format`, percent-encoded.
        let picture = sorted.filter { $0.0 != "format" }.map { "\(PercentEncoding.queryComponent($0))=\(PercentEncoding.queryComponent($1))" }.joined(separator: "&")
        return PreviewJob(route: name, contentType: format.mediaType,
                          canonicalQuery: sorted.map { "\($0)=\($1)" }.joined(separator: "&"),
                          heldBytes: estimate, command: command, pictureQuery: picture, query: query)
    }

    /// Refuses a storyboard whose tiles cannot fit the picture's sides, naming the parameter sent:
    /// `width` (times the columns) or `height` past the JPEG and WebP limit.
    private static func checkStoryboardSides(columns: Int, columnsSent: Bool, width: Int?, height: Int?) throws(PreviewRequestError) {
        let most = ImageFileFormat.maxWebPSide
        if let width, columns * width > most {
            let shown = "\(columns) column\(columns == 1 ? "" : "s")" + (columnsSent ? "" : " (the default)")
            throw PreviewRequestError(status: 413, parameter: "width",
                                      detail: "Tiles \(width) pixels wide in \(shown) make the storyboard \(columns * width) pixels wide; "
                                          + "it is at most \(most): ask for a smaller width or fewer columns.")
        }
        if let height, height > most {
            throw PreviewRequestError(status: 413, parameter: "height",
                                      detail: "Tiles \(height) pixels high make the storyboard at least that high; it is at most \(most).")
        }
    }

    /// A `width` or `height`: a whole number of pixels in the sizes' range.
    private static func side(_ value: String, _ parameter: QueryParameter) throws(PreviewRequestError) -> String {
        guard value.count <= 5, let number = Int(value), (1...SizeRequest.maximumSide).contains(number) else {
            throw PreviewRequestError(status: 400, parameter: parameter.name, detail: "Expected \(parameter.expectation).")
        }
        return String(number)
    }

    /// A command-line usage error as the request's problem, naming the parameter that set the option.
    private static func problem(_ error: UsageError, parameters: [QueryParameter]) -> PreviewRequestError {
        func parameter(for option: String) -> QueryParameter? { parameters.first { $0.option.name == option } }
        switch error.kind {
        case .invalidValue(let option, _):
            if let parameter = parameter(for: option) {
                return PreviewRequestError(status: 400, parameter: parameter.name, detail: "Expected \(parameter.expectation).")
            }
        case .overLimit(let option):
            return PreviewRequestError(status: 413, parameter: parameter(for: option)?.name, detail: Format.oneLine(error.message))
        case .conflictingOptions(let first, let second):
            let names = [first, second].map { parameter(for: $0)?.name ?? $0 }
            return PreviewRequestError(status: 400, parameter: names[0],
                                       detail: "The parameters \(names[0]) and \(names[1]) cannot be used together.")
        default: break
        }
        return PreviewRequestError(status: 400, detail: "The parameters cannot be used together.")
    }

    /// The problem for an error a render threw, its detail saying what happened without the source's
    /// path on the server (`source`, and the `opened` path it was read from, are removed from the message).
    package static func problem(forRenderError error: any Error, source: String, opened: String? = nil) -> PreviewRequestError {
        if let limit = error as? WorkLimitError {
            return PreviewRequestError(status: 413, detail: Format.oneLine(limit.message))
        }
        guard let error = error as? PreviewLoopError else {
            return PreviewRequestError(status: 500, detail: "The render failed.")
        }
        var detail = Format.oneLine(error.message)
        for path in [opened, source].compactMap({ $0 }) {
            detail = detail.replacing(path + ": ", with: "").replacing(path, with: "the source")
        }
        if detail.isEmpty { detail = "The render failed." }
        let status: Int
        switch error.code {
        case .inputNotFound, .inputNotReadable: status = 404
        case .notMediaFile, .noVideoStream, .unsupportedCodec: status = 415
        case .corruptData, .decodingFailed, .unsafeFlashes: status = 422
        case .timedOut: status = 504
        case .tooLarge, .refusedByPolicy: status = 413
        case .invalidArgument: status = 400
        case .cancelled: status = 503
        case .outputNotWritable, .encodingFailed: status = 500
        }
        return PreviewRequestError(status: status, detail: detail)
    }

    /// A name from the client, kept only if it is short plain ASCII (letters, digits, `_`, `-`);
    /// otherwise `nil`, so a problem body never carries what the client typed verbatim beyond that.
    static func printable(_ name: String) -> String? {
        name.count <= 32 && !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
            ? name : nil
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
    static let served: [ImageFileFormat] = [.jpeg, .png, .webp]

    /// The format's media type (`image/jpeg`).
    package var mediaType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .ppm: "image/x-portable-pixmap"
        }
    }
}
