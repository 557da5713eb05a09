import Glibc
import PreviewLoop
import Synchronization

// The image API's parameters, read by the jobs' own declarations: a request's query sets the options of
// the job (`thumb`, `probe`, …) directly — each value typed and checked by its option's declaration, then
// the job's cross-option checks and work limits, as on the command line — and the job renders the same
// bytes. Every option a job declares as a parameter (`.parameter()` where it is declared) is a query
// parameter of each of the job's routes under that name, in the job's order; a route adds only the
// parameters spelled differently from their option (Mux's `time`, `width`, `height`, `fit_mode`, a flag
// turned the other way) and leaves out, by name, what it cannot take. An error about an option is
// reported under the parameter's name.

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

    /// The parameter an option declared with `.parameter()` is: its value passed as is, or `true`/`false`
    /// for a flag; its help is the option's first sentence.
    static func derived(from option: any OptionDeclaration) -> QueryParameter {
        let name = option.spec.parameter ?? option.spec.name
        let abstract = option.spec.abstract
        let help = abstract.firstRange(of: ". ").map { String(abstract[..<$0.lowerBound]) + "." } ?? abstract
        return option.spec.takesValue ? .passing(name, help, option) : .toggle(name, help, option, on: "true")
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
    package var sizePair: String?

    /// `thumbnail.jpg`, `thumbnail.png`, …
    package var fileNames: [String] { formats.map { stem + "." + $0.fileExtension } }

    /// A route of `command`: its parameters are the options it declares as parameters, but those named
    /// in `excluded`, and the `spelled` parameters (set on an option differently), each at its option's
    /// place in the job's order. `described` words a parameter's help for the image API where the
    /// option's own first sentence speaks of the command line.
    init(stem: String, formats: [(fileExtension: String, mediaType: String)], command: any ServedJob.Type,
         spelled: [QueryParameter] = [], excluding excluded: Set<String> = [], described: [String: String] = [:],
         sizePair: String? = nil) {
        var parameters: [QueryParameter] = []
        for option in command.options {
            parameters += spelled.filter { $0.option.name == option.spec.name }
            if let name = option.spec.parameter, !excluded.contains(name), !spelled.contains(where: { $0.name == name }) {
                var parameter = QueryParameter.derived(from: option)
                if let help = described[name] { parameter.help = help }
                parameters.append(parameter)
            }
        }
        precondition(described.keys.allSatisfy { name in parameters.contains { $0.name == name } },
                     "\(stem): a described parameter is not one of the route's")
        precondition(spelled.allSatisfy { parameter in parameters.contains { $0.name == parameter.name } },
                     "\(stem): a spelled parameter sets an option \(command.configuration.name) does not take")
        self.init(stem: stem, formats: formats, command: command, parameters: parameters, sizePair: sizePair)
    }

    private init(stem: String, formats: [(fileExtension: String, mediaType: String)], command: any ServedJob.Type,
                 parameters: [QueryParameter], sizePair: String?) {
        self.stem = stem
        self.formats = formats
        self.command = command
        self.parameters = parameters
        self.sizePair = sizePair
    }
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
                               option: option, setting: { _ in nil }, expectation: sideExpectation),
                QueryParameter(name: "dpr", help: "Device pixel ratio: width and height (or the default size) times this.",
                               option: option, setting: { _ in nil }, expectation: dprExpectation)]
    }

    /// `fit_mode`.
    static func fitMode(of command: any ParsableCommand.Type) -> QueryParameter {
        QueryParameter(name: "fit_mode", help: "crop (fill the size), smartcrop (fill it, the crop placed on what matters), "
                           + "preserve (fit inside it, no bars), pad (letterbox) or stretch.",
                       option: command.option("fit").spec, setting: { fitModes[$0].map { .value($0) } },
                       expectation: "crop, smartcrop, preserve, pad or stretch")
    }

    /// `time`, `width`, `height` and `fit_mode` of a still of `thumb`.
    static let thumbnailSpelled = [
        QueryParameter(name: "time", help: "When: absent (or poster) the poster frame, best, seconds, mm:ss or N%.",
                       option: ThumbCommand.option("at").spec, setting: { .value($0 == "poster" ? "auto" : $0) },
                       expectation: "poster, " + ThumbCommand.option("at").valueExpectation!.replacing("auto, ", with: "")),
        fitMode(of: ThumbCommand.self),
    ] + sizePair("the picture", of: ThumbCommand.self)

    /// The help of `thumb`'s parameters as the image API has them.
    static let thumbnailDescribed = [
        "start": "Where the poster search window starts.", "length": "How long the poster search window lasts.",
        "quality": "Lossy quality (JPEG, WebP, AVIF).", "accuracy": "exact or keyframe, for an explicit time or program_time.",
        "latest": "true: the newest frame, the last of a live HLS playlist's newest segment (of a file, its last frame).",
        "program_time": "The frame at this ISO 8601 wall-clock time on an HLS playlist's EXT-X-PROGRAM-DATE-TIME timeline.",
    ]

    /// `thumbnail.{jpg,png,webp,avif}`: `thumb` (its overlays' background is the command line's only).
    static let thumbnail = PreviewRoute(stem: "thumbnail", formats: stills, command: ThumbCommand.self, spelled: thumbnailSpelled,
                                        excluding: ["background"], described: thumbnailDescribed, sizePair: "the picture")

    /// `placeholder.json`: the placeholder of the picture `thumbnail.*` serves for the same parameters
    /// (`thumb`): its ThumbHash, BlurHash, dominant colour, pHash, the frame's time and size.
    static let placeholder = PreviewRoute(stem: "placeholder", formats: [("json", "application/json")], command: ThumbCommand.self,
                                          spelled: thumbnailSpelled, excluding: ["background", "quality"],
                                          described: thumbnailDescribed.filter { $0.key != "quality" }, sizePair: "the picture")

    /// The headers that carry a picture's placeholder, so a page can paint it before the picture
    /// arrives: `Thumbhash` (standard base64), `Blurhash` (4x3 components) and `Dominant-Color`
    /// (`#rrggbb`).
    package static func headers(of placeholder: ImagePlaceholder) -> [(name: String, value: String)] {
        [("Thumbhash", placeholder.thumbHash), ("Blurhash", placeholder.blurHash), ("Dominant-Color", "\(placeholder.dominantColor)")]
    }

    /// `animated.{webp,gif,mp4}`: `render`, within the server's ``AnimationCaps``.
    static let animated = PreviewRoute(
        stem: "animated", formats: [("webp", "image/webp"), ("gif", "image/gif"), ("mp4", "video/mp4")], command: RenderCommand.self,
        spelled: [
            QueryParameter(name: "end", help: "Where it ends instead of length: a time after start.",
                           option: RenderCommand.option("loop-point").spec,
                           setting: { $0 == "auto" ? nil : .value($0) },
                           expectation: "a time after start: seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage (10%)"),
            fitMode(of: RenderCommand.self),
        ] + sizePair("the picture", of: RenderCommand.self), described: [
            "start": "Where the animation starts: poster (where the poster frame is), seconds, mm:ss or N%.",
            "length": "How long it lasts (within the server's cap).", "fps": "Frames per second (within the server's cap).",
            "quality": "Lossy quality (WebP, MP4).",
            "latest": "true: the newest length seconds instead of start: of a live HLS playlist, the segments it lists now "
                + "(of a file, its end).",
            "loop_point": "auto: end on the frame that best matches the first, or a time after start.",
            "seam": "cut, crossfade or crossfade=T.",
            "flash_safety": "check (the default): analyse the loop for photosensitive flashes and say the verdict "
                + "in the Flash-Safety header; avoid: move the window to the nearest safe start (422 when there is "
                + "none); off.",
        ], sizePair: "the picture")

    /// `strip.{jpg,png,webp,avif}`: `strip`.
    static let strip = PreviewRoute(stem: "strip", formats: stills, command: StripCommand.self,
                                    spelled: [fitMode(of: StripCommand.self)] + sizePair("each tile", of: StripCommand.self),
                                    described: [
                                        "count": "How many frames.", "columns": "Frames per row.",
                                        "span": "window (from start for length) or all (the whole clip).",
                                        "start": "Where the window starts.", "length": "How long the window lasts.",
                                        "quality": "Lossy quality (JPEG, WebP, AVIF).", "accuracy": "exact, keyframe or auto.",
                                        "gap": "Pixels between tiles.", "timestamps": "true: each frame's time in its tile's corner.",
                                        "pick": "even or scenes.",
                                    ], sizePair: "each tile")

    /// `sheet.{jpg,png,webp,avif}`: `sheet` (its fonts are the server's defaults).
    static let sheet = PreviewRoute(stem: "sheet", formats: stills, command: SheetCommand.self, spelled: [
        .toggle("header", "false leaves out the header.", SheetCommand.option("no-header"), on: "false"),
        .toggle("timestamps", "false leaves out the tiles' times.", SheetCommand.option("no-timestamps"), on: "false"),
    ], described: [
        "grid": "Columns x rows (4x4).", "width": "The sheet's width in pixels.", "tile_width": "Each tile's width instead.",
        "gap": "Pixels between tiles.", "margin": "Pixels around everything.", "background": "#rrggbb, #rgb, black or white.",
        "text_color": "The text's colour, in the same forms.", "accuracy": "exact, keyframe or auto.", "pick": "even or scenes.",
        "quality": "Lossy quality (JPEG, WebP, AVIF).",
    ])

    /// The parameters of a storyboard spelled otherwise than its options, its picture and its index alike.
    static let storyboardSpelled: [QueryParameter] = [
        QueryParameter(name: "columns", help: "Tiles per row; the rows are as many as the thumbnails need.",
                       option: SpritesCommand.option("grid").spec,
                       setting: { text in Int(text).flatMap { ValueRanges.spriteGrid.contains($0) ? .value("\($0)x1") : nil } },
                       expectation: integerExpectation(ValueRanges.spriteGrid)),
        fitMode(of: SpritesCommand.self),
    ] + sizePair("each tile", of: SpritesCommand.self)

    /// The help of `sprites`' parameters as the image API has them.
    static let storyboardDescribed = [
        "every": "Seconds between thumbnails, or auto.", "count": "Thumbnails spread over the clip instead.",
        "quality": "Lossy quality (JPEG, WebP).", "accuracy": "auto, exact or keyframe.", "pick": "even or scenes.",
    ]

    /// `storyboard.{jpg,webp}`: every thumbnail of `sprites` on one picture (its format is its extension).
    static let storyboard = PreviewRoute(stem: "storyboard", formats: [("jpg", "image/jpeg"), ("webp", "image/webp")],
                                         command: SpritesCommand.self, spelled: storyboardSpelled, excluding: ["format"],
                                         described: storyboardDescribed, sizePair: "each tile")

    /// `storyboard.{vtt,json}`: where each thumbnail of the storyboard's picture is, and when; `format` is
    /// the picture's.
    static let storyboardIndex = PreviewRoute(
        stem: "storyboard", formats: [("vtt", "text/vtt; charset=utf-8"), ("json", "application/json")], command: SpritesCommand.self,
        spelled: storyboardSpelled,
        described: storyboardDescribed.merging(["format": "The picture the index points to: jpg or webp."]) { $1 },
        sizePair: "each tile")

    /// `card.{webp,gif,mp4}` (the card's sequence, within the server's ``AnimationCaps``) and
    /// `card.{png,jpg}` (one instant of it): `card`.
    static let card = PreviewRoute(
        stem: "card", formats: [("webp", "image/webp"), ("gif", "image/gif"), ("mp4", "video/mp4"), ("png", "image/png"),
                                ("jpg", "image/jpeg")], command: CardCommand.self,
        spelled: sizePair("the card (both or neither)", of: CardCommand.self) + [
            .toggle("play_button", "false: the poster without its play button.", CardCommand.option("no-play-button"), on: "false"),
        ], described: [
            "aspect": "The card's shape at 480 pixels wide instead (16:9, 4:3, 1.5).", "corner_radius": "Pixels of the rounded corners.",
            "reveal": "circle or fade.", "poster_hold": "How long the poster shows first.",
            "play_length": "How long the video plays after the reveal.", "close": "true: end by fading back to the poster.",
            "background": "The colour outside the corners.", "fps": "Frames per second of an animation (within the server's cap).",
            "start": "Where the loop window starts.", "length": "How long the loop window lasts.",
            "poster_at": "The poster's time instead of the window's first good frame.",
            "at": "For card.png and card.jpg: the instant of the sequence, seconds from its start.",
            "quality": "Lossy quality (WebP, MP4, JPEG).",
            "flash_safety": "check (the default): analyse an animation for photosensitive flashes and say the "
                + "verdict in the Flash-Safety header; off. Stills are not analysed.",
        ], sizePair: "the card")

    /// `probe.json`: `probe --json`.
    static let probe = PreviewRoute(stem: "probe", formats: [("json", "application/json")], command: ProbeCommand.self)

    /// `fit_mode`'s words and the `--fit` each means (`preserve` is `fill` into the fitted size).
    static let fitModes = ["crop": ContentMode.aspectFill.rawValue, "smartcrop": ContentMode.smartCrop.rawValue,
                           "preserve": ContentMode.aspectFill.rawValue, "pad": ContentMode.aspectFit.rawValue,
                           "stretch": ContentMode.stretch.rawValue]
    /// What `width` and `height` take.
    static let sideExpectation = "a whole number of pixels from 1 to \(SizeRequest.maximumSide)"
    /// What `dpr` takes.
    static let dprExpectation = "a number from 1 to 4 (2, 1.5)"
    /// The device pixel ratios `dpr` takes.
    static let dprRange = 1.0...4.0
    /// The most parameters a request may carry.
    package static let maximumParameters = 32
}
