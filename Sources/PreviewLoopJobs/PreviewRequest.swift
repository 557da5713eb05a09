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
        let job = route.command
        // An animation's sides are capped; a card still's are not.
        let animates = job.isAnimation(name)
        var width: Int?, height: Int?
        var dpr = 1.0
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
                if parameterName == "width" { width = side } else { height = side }
            } else if route.sizePair != nil && parameterName == "dpr" {
                guard value.count <= 8, let ratio = DecimalText.number(value), dprRange.contains(ratio) else {
                    throw PreviewRequestError(status: 400, parameter: parameterName, detail: "Expected \(dprExpectation).")
                }
                dpr = ratio
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
        // The sides as the picture is made: as sent, times the device pixel ratio, within the limits.
        width = width.map { Int((Double($0) * dpr).rounded()) }
        height = height.map { Int((Double($0) * dpr).rounded()) }
        for (side, parameterName) in [(width, "width"), (height, "height")] {
            guard let made = side else { continue }
            let named = dpr > 1 ? "dpr" : parameterName
            if made > SizeRequest.maximumSide {
                throw PreviewRequestError(status: 413, parameter: named,
                                          detail: "\(parameterName) times dpr is \(made) pixels; at most \(SizeRequest.maximumSide).")
            }
            if animates, made > caps.side {
                throw PreviewRequestError(status: 413, parameter: named,
                                          detail: "At most \(caps.side) pixels a side for an animation on this server.")
            }
        }
        let request = ServingRequest(route: route, fileName: name, format: format, query: query,
                                     width: width, height: height, preservesShape: preserves, caps: caps)
        try job.prepare(&given, for: request)
        switch (width, height) {
        case let (width?, height?): set("size", "\(width)x\(height)")
        case let (width?, nil): set("size", "\(width)x-1")
        case let (nil, height?): set("size", "x\(height)")
        case (nil, nil): break
        }
        if let deadline { set("deadline", "\(deadline)") }
        var command: any ServedJob
        do {
            command = try job.init(given)
        } catch {
            throw problem(error, parameters: route.parameters.filter { seen.contains($0.name) } + route.parameters)
        }
        // What the job holds beyond its decoder's frames (counted by `PreviewJob.memoryEstimate`, at the
        // source's size once it is known).
        if dpr != 1, width == nil, height == nil { command.scaleDefaultSize(by: dpr) }
        let estimate = try command.prepareToServe(request)
        let sorted = canonical.sorted { $0.0 < $1.0 }
        // An index points to its picture: the same parameters but `format`, percent-encoded.
        let picture = sorted.filter { $0.0 != "format" }.map { "\(PercentEncoding.queryComponent($0))=\(PercentEncoding.queryComponent($1))" }.joined(separator: "&")
        return PreviewJob(route: name, contentType: format.mediaType,
                          canonicalQuery: sorted.map { "\($0)=\($1)" }.joined(separator: "&"),
                          heldBytes: estimate, command: command, pictureQuery: picture, query: query)
    }

    /// A `width` or `height`: a whole number of pixels in the sizes' range.
    private static func side(_ value: String, _ parameter: QueryParameter) throws(PreviewRequestError) -> Int {
        guard value.count <= 5, let number = Int(value), (1...SizeRequest.maximumSide).contains(number) else {
            throw PreviewRequestError(status: 400, parameter: parameter.name, detail: "Expected \(parameter.expectation).")
        }
        return number
    }

    /// A command-line usage error as the request's problem, naming the parameter that set the option
    /// (the first of `parameters` that sets it: the ones sent come first).
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
        if let outside = error as? ProgramTimeOutsideWindow {
            return PreviewRequestError(status: 404, parameter: "program_time", detail: Format.oneLine(outside.message) + ".")
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
