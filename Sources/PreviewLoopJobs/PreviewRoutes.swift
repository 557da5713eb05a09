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
    var command: any ServedJob.Type
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

/// The routes that render through a subcommand, and their parameters.
package enum PreviewRequests {
    /// Every route, in the order the docs list them.
    package static let routes: [PreviewRoute] = [thumbnail, placeholder, animated, strip, sheet, storyboard, storyboardIndex, card, probe]

    /// The file names a route answers to, after the source's path (`/clip.mp4/thumbnail.jpg`).
    package static let routeNames = routes.flatMap(\.fileNames)

    /// The routes by file name.
    static let routesByName: [String: (route: PreviewRoute, format: Int)] = Dictionary(uniqueKeysWithValues:
        routes.flatMap { route in route.fileNames.enumerated().map { ($1, (route, $0)) } })

    /// Still images, as `thumb`, `strip` and `sheet` write them.
    static let stills = ImageFileFormat.served.map { ($0.fileExtensions[0], $0.mediaType) }

    /// `width` and `height`, which set the command's `--size`.
    static func sizePair(_ what: String, of command: any ParsableCommand.Type) -> [QueryParameter] {
        let option = command.option("size").spec
        return [QueryParameter(name: "width", help: "Width of \(what) in pixels; with height absent the shape is kept.",
                               option: option, setting: { _ in nil }, expectation: sideExpectation),
                QueryParameter(name: "height", help: "Height of \(what) in pixels; with width absent the shape is kept.",
                               option: option, setting: { _ in nil }, expectation: sideExpectation)]
    }

    /// `fit_mode`.
    static func fitMode(of command: any ParsableCommand.Type) -> QueryParameter {
        QueryParameter(name: "fit_mode", help: "crop (fill the size), preserve (fit inside it, no bars), pad (letterbox) or stretch.",
                       option: command.option("fit").spec, setting: { fitModes[$0].map { .value($0) } },
                       expectation: "crop, preserve, pad or stretch")
    }

    /// `quality` of a still.
    static func imageQuality(of command: any ParsableCommand.Type) -> QueryParameter {
        .passing("quality", "Lossy quality (JPEG, WebP).", command.option("quality"))
    }

    /// `pick` of a tiled route.
    static func pick(of command: any ParsableCommand.Type) -> QueryParameter {
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
    static let storyboardParameters: [QueryParameter] = [
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
}
