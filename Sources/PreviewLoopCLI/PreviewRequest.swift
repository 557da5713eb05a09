import PreviewLoop

// The image API's parameters, read by the subcommands' own declarations: a request's query becomes the
// command line `thumb` (or `probe`) would take, which the commands' parser checks with the same ranges,
// conflicts and work limits as on the command line, and the command renders the same bytes. A parameter
// names the option it sets, so an error about that option is reported under the parameter's name.

/// A query parameter of a route: its name, the option it sets and how its value is spelled for it.
package struct QueryParameter: Sendable {
    /// The name in the query (`time`).
    package var name: String
    /// What it does, for the route table in the docs.
    package var help: String
    /// The option it sets, by its declaration.
    var option: OptionSpec
    /// The option's argument for a value (`--at=5`); `nil` when the value is not one of the parameter's
    /// own words (the option's conversion then judges the rest).
    var argument: @Sendable (String) -> String?
    /// What a valid value looks like.
    var expectation: String
}

/// A render or probe that a request asked for, checked and ready to run on a worker.
package struct PreviewJob: Sendable {
    /// The route as requested (`thumbnail.jpg`).
    package var route: String
    /// The response's `Content-Type`.
    package var contentType: String
    /// The normalised parameters (`accuracy=exact&time=5`: sorted, defaults left out, each as the
    /// command read it), for validators and cache keys: equal requests have equal queries.
    package var canonicalQuery: String
    /// Memory the render may use at its peak, in bytes, for the server's shared budget.
    package var memoryEstimate: Int
    /// The parsed command.
    let command: ParsedCommand

    /// Renders the response body: the bytes the matching command writes.
    package func render() throws -> [UInt8] {
        switch command {
        case .thumb(let options):
            return try ThumbCommand(options: options).render().bytes
        case .probe(let options):
            let info = try MediaProbe.probe(options.source.source, options: options.source.sourceOptions)
            return Array(ProbeCommand.json(for: info).utf8)
        default:
            throw PreviewLoopError(.invalidArgument, "not a route")
        }
    }
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
    /// The file names a route answers to, after the source's path (`/clip.mp4/thumbnail.jpg`).
    package static let routeNames = ImageFormat.served.map { "thumbnail.\($0.fileExtensions[0])" } + ["probe.json"]

    /// `thumbnail.*`'s parameters.
    package static let thumbnailParameters: [QueryParameter] = [
        QueryParameter(name: "time", help: "When: absent (or poster) the poster frame, best, seconds, mm:ss or N%.",
                       option: ThumbOptions.at.spec, argument: { "--at=" + ($0 == "poster" ? "auto" : $0) },
                       expectation: "poster, " + ThumbOptions.at.expectation.replacing("auto, ", with: "")),
        QueryParameter(name: "start", help: "Where the poster search window starts.", option: ThumbOptions.start.spec,
                       argument: { "--start=" + $0 }, expectation: ThumbOptions.start.expectation),
        QueryParameter(name: "length", help: "How long the poster search window lasts.", option: ThumbOptions.length.spec,
                       argument: { "--length=" + $0 }, expectation: ThumbOptions.length.expectation),
        QueryParameter(name: "width", help: "Width in pixels; with height absent the shape is kept.",
                       option: ThumbOptions.size.spec, argument: { _ in nil }, expectation: sideExpectation),
        QueryParameter(name: "height", help: "Height in pixels; with width absent the shape is kept.",
                       option: ThumbOptions.size.spec, argument: { _ in nil }, expectation: sideExpectation),
        QueryParameter(name: "fit_mode", help: "crop (fill the size), preserve (fit inside it, no bars), pad (letterbox) or stretch.",
                       option: PictureOptions.fit.spec, argument: { fitModes[$0].map { "--fit=" + $0 } },
                       expectation: "crop, preserve, pad or stretch"),
        QueryParameter(name: "quality", help: "Lossy quality 0 to 100 (JPEG, WebP).", option: OutputOptions.imageQuality.spec,
                       argument: { "--quality=" + $0 }, expectation: OutputOptions.imageQuality.expectation),
        QueryParameter(name: "accuracy", help: "exact or keyframe, for an explicit time.", option: ThumbOptions.accuracy.spec,
                       argument: { "--accuracy=" + $0 }, expectation: ThumbOptions.accuracy.expectation),
    ]

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
    /// `deadline` bounds the render's reading, in seconds (the command's `--deadline`).
    package static func job(route: String, query: [(name: String, value: String)],
                            source: String, deadline: Double? = nil) throws(PreviewRequestError) -> PreviewJob {
        guard query.count <= maximumParameters else {
            throw PreviewRequestError(status: 400, detail: "At most \(maximumParameters) query parameters.")
        }
        var seen = Set<String>()
        for item in query where !seen.insert(item.name).inserted {
            throw PreviewRequestError(status: 400, parameter: printable(item.name), detail: "A parameter is given twice.")
        }
        if route == "probe.json" {
            if let unknown = query.first {
                throw PreviewRequestError(status: 400, parameter: printable(unknown.name),
                                          detail: "probe.json takes no parameters.")
            }
            var input = InputOptions(input: source)
            input.deadline = deadline
            let options = ProbeOptions(source: input, isJSON: true)
            return PreviewJob(route: route, contentType: "application/json", canonicalQuery: "",
                              memoryEstimate: 16 << 20, command: .probe(options))
        }
        guard route.hasPrefix("thumbnail."),
              let format = ImageFormat.served.first(where: { "thumbnail.\($0.fileExtensions[0])" == route }) else {
            throw PreviewRequestError(status: 404, detail: "No such route; routes: \(routeNames.joined(separator: ", ")).")
        }
        return try thumbnail(format: format, route: route, query: query, source: source, deadline: deadline)
    }

    /// `thumbnail.{jpg,png,webp}`.
    private static func thumbnail(format: ImageFormat, route: String, query: [(name: String, value: String)],
                                  source: String, deadline: Double?) throws(PreviewRequestError) -> PreviewJob {
        let table = Dictionary(uniqueKeysWithValues: thumbnailParameters.map { ($0.name, $0) })
        var arguments = ["thumb", "--output=thumbnail.\(format.fileExtensions[0])"]
        var width: String?, height: String?
        var canonical: [(String, String)] = []
        var preserves = false
        for (name, value) in query {
            guard let parameter = table[name] else {
                throw PreviewRequestError(status: 400, parameter: printable(name),
                                          detail: "Unknown parameter; \(route) takes: "
                                              + thumbnailParameters.map(\.name).joined(separator: ", ") + ".")
            }
            switch name {
            case "width": width = try side(value, parameter)
            case "height": height = try side(value, parameter)
            default:
                guard let argument = parameter.argument(value) else {
                    throw PreviewRequestError(status: 400, parameter: name, detail: "Expected \(parameter.expectation).")
                }
                if name == "fit_mode" && value == "preserve" { preserves = true }
                arguments.append(argument)
            }
            canonical.append((name, value))
        }
        switch (width, height) {
        case let (width?, height?): arguments.append("--size=\(width)x\(height)")
        case let (width?, nil): arguments.append("--size=\(width)x-1")
        case let (nil, height?): arguments.append("--size=x\(height)")
        case (nil, nil): break
        }
        if let deadline { arguments.append("--deadline=\(deadline)") }
        arguments += ["--", source]
        let parsed: ParsedCommand
        do {
            parsed = try CommandLineParser.parse(arguments)
        } catch {
            throw problem(error, parameters: thumbnailParameters)
        }
        guard case .thumb(var options) = parsed else {
            throw PreviewRequestError(status: 500, detail: "The request did not make a thumbnail.")
        }
        options.preservesShape = preserves && width != nil && height != nil
        let box = options.size.knownSizes.first ?? Size(width: 1920, height: 1920)
        // The decoded source frame is unknown until it is opened: allow a 4K one, plus the picture's copies.
        let estimate = 4 * 3840 * 2160 * 3 / 2 + 4 * Int(WorkBudget.rgba(box))
        return PreviewJob(route: route, contentType: format.mediaType,
                          canonicalQuery: canonical.sorted { $0.0 < $1.0 }.map { "\($0)=\($1)" }.joined(separator: "&"),
                          memoryEstimate: estimate, command: .thumb(options))
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
    /// path on the server (`source` is removed from the message).
    package static func problem(forRenderError error: any Error, source: String) -> PreviewRequestError {
        if let limit = error as? WorkLimitError {
            return PreviewRequestError(status: 413, detail: Format.oneLine(limit.message))
        }
        guard let error = error as? PreviewLoopError else {
            return PreviewRequestError(status: 500, detail: "The render failed.")
        }
        var detail = Format.oneLine(error.message).replacing(source + ": ", with: "").replacing(source, with: "the source")
        if detail.isEmpty { detail = "The render failed." }
        let status: Int
        switch error.code {
        case .inputNotFound, .inputNotReadable: status = 404
        case .notMediaFile, .noVideoStream, .unsupportedCodec: status = 415
        case .corruptData, .decodingFailed: status = 422
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

extension ImageFormat {
    /// The formats the image API serves thumbnails in.
    static let served: [ImageFormat] = [.jpeg, .png, .webp]

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
