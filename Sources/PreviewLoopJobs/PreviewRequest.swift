import Glibc
import PreviewLoop
import Synchronization

// A request's query set onto its job: each value typed and checked by the declaration of the option its
// parameter names, then the job's own checks; what the request may cost, and its problems as HTTP
// statuses.

extension PreviewRequests {
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
        func set(_ option: String, _ value: String) { given.give(option, value) }
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
