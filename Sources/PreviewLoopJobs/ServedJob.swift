import PreviewLoop

// What a job does for the image API, declared by the job itself: the options its routes set before the
// query's (where output would go, the format an extension names), the request-wide checks its
// parameters need, what it holds at its peak, and the body it answers with. `PreviewRequests.job` and
// `PreviewJob.render` only dispatch to these; a new served job conforms here and joins the route table.

/// A request for a route, as a job sees it while it is made ready to serve.
struct ServingRequest {
    /// The route asked for.
    var route: PreviewRoute
    /// The file name asked for (`thumbnail.jpg`).
    var fileName: String
    /// Its extension and media type.
    var format: (fileExtension: String, mediaType: String)
    /// The query as sent, in order.
    var query: [(name: String, value: String)]
    /// `width` and `height` as the picture is made (as sent, times `dpr`), if sent.
    var width: Int?, height: Int?
    /// Whether `fit_mode=preserve` was sent.
    var preservesShape: Bool
    /// The server's caps on an animation.
    var caps: AnimationCaps

    /// Whether the query has the parameter `name`.
    func has(_ name: String) -> Bool { query.contains { $0.name == name } }
}

/// A job the image API answers with: see the file's header.
protocol ServedJob: ClipCommand {
    /// Whether the route's file `fileName` is an animation (its sides are held to the server's caps).
    static func isAnimation(_ fileName: String) -> Bool
    /// Sets what the route decides before the query's own parameters (`--output`, `--format`, a grid)
    /// and refuses combinations of parameters only a request can make.
    static func prepare(_ given: inout ScannedArguments, for request: ServingRequest) throws(PreviewRequestError)
    /// Adapts the parsed job to serving (quiet, the server's caps) and returns what it holds at its peak
    /// besides its decoder's frames (``PreviewJob/heldBytes``); refuses what the caps forbid (413).
    mutating func prepareToServe(_ request: ServingRequest) throws(PreviewRequestError) -> Int
    /// Multiplies the picture's default size by a device pixel ratio (`dpr` without `width` or `height`).
    mutating func scaleDefaultSize(by factor: Double)
    /// Renders `job`'s body, with the bodies of `siblings` (``PreviewJob/siblingRequests``) when the
    /// same render makes them. An animation is rendered in memory; `scratch` holds a playlist's copy.
    func body(for job: PreviewJob, scratch: String, siblings: [PreviewJob]) throws -> RenderedBody
    /// The routes one render of `job` also makes (``PreviewJob/siblingRequests``).
    func siblingRequests(of job: PreviewJob) -> [(route: String, query: [(name: String, value: String)])]
}

extension ServedJob {
    static func isAnimation(_ fileName: String) -> Bool { false }

    /// Most jobs write one file named as the route: its extension chooses the format.
    static func prepare(_ given: inout ScannedArguments, for request: ServingRequest) throws(PreviewRequestError) {
        given.give("output", request.fileName)
    }

    func siblingRequests(of job: PreviewJob) -> [(route: String, query: [(name: String, value: String)])] { [] }

    mutating func scaleDefaultSize(by factor: Double) {}

    /// 413 naming `parameter` when `framesPerSecond` is above the caps.
    static func checkFramesPerSecond(_ framesPerSecond: Int, caps: AnimationCaps) throws(PreviewRequestError) {
        guard framesPerSecond <= caps.framesPerSecond else {
            throw PreviewRequestError(status: 413, parameter: "fps",
                                      detail: "At most \(caps.framesPerSecond) fps for an animation on this server.")
        }
    }
}
