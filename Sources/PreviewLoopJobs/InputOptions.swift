import Glibc
import PreviewLoop

/// The input group (swift-argument-parser's `@OptionGroup`): the `<input>` argument and how it is read —
/// `--timeout`, `--deadline`, `--threads`, `--allow-redirects`, `--tonemap`, `--deinterlace`. Every command that reads a
/// clip holds one; its ``sourceOptions`` are the only place the CLI builds the library's ``SourceOptions``.
struct InputOptions: Equatable, Sendable, OptionGroup {
    /// The video: a path, an http(s) URL or `-`.
    var input = ""
    /// `--tonemap`: how HDR frames become SDR.
    @Option(InputOptions.tonemap) var toneMapping = ToneMapping.auto
    /// `--deinterlace`: which frames are deinterlaced.
    @Option(InputOptions.deinterlace) var deinterlacing = Deinterlacing.auto
    /// `--rotate`: the clockwise quarter turns after the source's own orientation.
    @Option(InputOptions.rotate) var rotation = QuarterTurn.none
    /// `--flip-h`: mirrored left to right, after the turn.
    @Flag(InputOptions.flipH) var flipsHorizontally = false
    /// `--flip-v`: mirrored top to bottom, after the turn.
    @Flag(InputOptions.flipV) var flipsVertically = false
    /// Decoding threads (`--threads`).
    @Option(InputOptions.threads) var threads = DecodingDefaults.threads
    /// Whether a URL input may redirect to another http(s) origin (`--allow-redirects`).
    @Flag(InputOptions.allowRedirects) var allowsRedirects = false
    /// `--insecure`, `--ca-file`: how https servers are authenticated.
    var tls = TLSOptions()
    /// Seconds allowed for opening the input and without any read or decoded frame (`--timeout`).
    @Option(InputOptions.timeout) var timeout = SourceOptions.defaultTimeout
    /// Seconds the whole job may take (`--deadline`); `nil` for no limit.
    @Option(InputOptions.deadline) var deadline: Double? = nil
    /// The URLs a URL input may read (a server's `--allow-source`); `nil` for the origin rules alone.
    var allowedURLs: URLAllowList?
    /// Header fields sent with the input's http(s) requests (a server's preconditions).
    var requestHeaders: [String: String] = [:]

    /// The library's limits: `--timeout` bounds opening and each read (a stall: nothing read for that
    /// long), `--deadline` (when given) the whole job's reading.
    var sourceOptions: SourceOptions {
        var options = SourceOptions(openTimeout: timeout, readTimeout: timeout, jobTimeout: deadline,
                                    allowsCrossOriginRedirects: allowsRedirects, toneMapping: toneMapping, deinterlacing: deinterlacing)
        tls.apply(to: &options)
        options.allowedURLs = allowedURLs
        options.requestHeaders = requestHeaders
        options.transform = PictureTransform(rotation: rotation, flipsHorizontally: flipsHorizontally, flipsVertically: flipsVertically)
        return options
    }

    /// A path to read instead of `input` that names the same file: a server's `/proc/self/fd/N` for a
    /// file it opened and checked, so no rename or link swapped in later changes what is read. Headers
    /// and messages still name `input`.
    var opened: String?

    /// A folder every file the input names (a playlist's segments) must be inside, by its real path:
    /// a server's root. `nil` on the command line.
    var confinement: String?

    /// For an `s3://` input, the key prefix every object it names (a playlist's segments) must have:
    /// a server's `s3://` root's prefix (`""` for the whole bucket). `nil` on the command line.
    var objectKeyPrefix: String?

    /// The input as the library opens it.
    var source: Source { Source(argument: opened ?? input) }

    /// A sampler over the input, opened with these options; its colour warning printed and, when there
    /// is a report, its opening recorded there.
    func openSampler(report: ClipReport?) throws -> FrameSampler {
        let sampler = try FrameSampler(source: source, threads: threads, options: sourceOptions)
        if let warning = sampler.info.colorWarning { Console.writeWarning(warning) }
        report?.opened(sampler.info)
        return sampler
    }
}

extension InputOptions {
    /// `--timeout <seconds>`: a stall, not work.
    static let timeout = ValueOption<Double>(
        "timeout", value: "seconds",
        help: "Give up when opening the input takes longer, or when nothing is read for this long (a "
            + "stalled server or pipe). A long job that keeps reading is never cut short by it.",
        default: SourceOptions.defaultTimeout, showing: Format.limit(SourceOptions.defaultTimeout),
        expecting: "a number of seconds above 0 and at most 86400") { text in
        DecimalText.number(text).flatMap { $0 > 0 && $0 <= 86_400 ? $0 : nil }
    }

    /// `--deadline <seconds>`: the whole job.
    static let deadline = ValueOption<Double?>(
        "deadline", value: "seconds", help: "Give up when the whole job's reading takes longer than this, however steady.",
        default: nil, showing: "none", expecting: "a number of seconds above 0 and at most 86400") { text in
        Double(text).flatMap { $0.isFinite && $0 > 0 && $0 <= 86_400 ? .some($0) : nil }
    }

    /// `--rotate <degrees>`: a parameter of every job that makes pictures (Mux's `rotate`).
    static let rotate = ValueOption<QuarterTurn>(
        "rotate", value: "degrees",
        help: "Turn the picture clockwise by 0, 90, 180 or 270 degrees after the video's own orientation (its "
            + "display matrix); sizes are of the turned picture.",
        default: .none, showing: "0", expecting: "0, 90, 180 or 270", completing: .choices(QuarterTurn.allCases.map { "\($0.rawValue)" })) { text in
        Int(text).flatMap(QuarterTurn.init(rawValue:))
    }.parameter()

    /// `--flip-h`: a parameter of every job that makes pictures (Mux's `flip_h`).
    static let flipH = FlagOption("flip-h", help: "Mirror the picture left to right, after --rotate.").parameter()

    /// `--flip-v`: a parameter of every job that makes pictures (Mux's `flip_v`).
    static let flipV = FlagOption("flip-v", help: "Mirror the picture top to bottom, after --rotate and --flip-h.").parameter()

    /// `--threads <n>`.
    static let threads = ValueOption<Int>.integer("threads", help: "Decoding threads, 1 to 64.",
                                             default: DecodingDefaults.threads, in: 1...64)

    /// `--allow-redirects`.
    static let allowRedirects = FlagOption(
        "allow-redirects",
        help: "Let a URL input redirect to another http(s) host or port (by default only redirects within its "
            + "own host and port are followed). Never to another protocol; a playlist's segments stay on the "
            + "input's origins either way.")

    /// `--tonemap <curve>`.
    static let tonemap = ValueOption<ToneMapping>.choice(
        "tonemap", value: "curve",
        help: "How HDR (PQ, HLG) frames become SDR: auto (reference white at SDR white, highlights rolled off "
            + "to the picture's peak, BT.2020 colours desaturated into BT.709), clip (reference white at SDR white, "
            + "brighter clipped) or none (no conversion: washed out). SDR input is never changed.",
        default: .auto)

    /// `--deinterlace <mode>`.
    static let deinterlace = ValueOption<Deinterlacing>.choice(
        "deinterlace", value: "mode",
        help: "auto (deinterlace the frames the decoder flags as interlaced, every frame of a stream that "
            + "declares a field order, and every frame of one whose first frames look combed; progressive input is untouched), on "
            + "(every frame) or off. The deinterlacer keeps the first field and rebuilds the other's lines from it "
            + "(no combing; still areas lose half their vertical detail).",
        default: .auto)
}

extension ScannedArguments {
    /// The one positional argument, the input.
    func input() throws(UsageError) -> String {
        guard let input = positionals.first else {
            throw UsageError(.missingInput, subcommand: subcommand,
                             "Missing expected argument '<input>' (a video file or an http(s) URL).")
        }
        if let extra = positionals.dropFirst().first {
            throw UsageError(.unexpectedArgument(extra), subcommand: subcommand,
                             "Unexpected argument '\(extra)'; only one input is accepted (the first was '\(input)').")
        }
        guard !input.isEmpty else {
            throw UsageError(.missingInput, subcommand: subcommand, "The input is an empty string.")
        }
        try checkBucket(input, option: nil)
        return input
    }
}

extension ScannedArguments {
    /// Refuses an `s3://` argument whose bucket name a store would refuse, before any work.
    ///
    /// - Parameter option: the option's long name, or `nil` for the input.
    func checkBucket(_ argument: String, option: String?) throws(UsageError) {
        guard let problem = ObjectOutput.bucketProblem(in: argument) else { return }
        let kind: UsageError.Kind = option.map { .invalidValue(option: $0, value: argument) } ?? .invalidValue(option: "input", value: argument)
        throw UsageError(kind, subcommand: subcommand, "Invalid \(option.map { "value for '--\($0)'" } ?? "input") '\(argument)': \(problem).")
    }
}

/// How https inputs are authenticated (`--insecure`, `--ca-file`): by default the server's
/// certificate must chain to an authority in the system's store and name the URL's host.
package struct TLSOptions: Equatable, Sendable, OptionGroup {
    /// `--insecure`: accept any certificate.
    @Flag(TLSOptions.insecure) var isInsecure = false
    /// `--ca-file FILE`: the authorities to trust instead of the system's.
    @Option(TLSOptions.caFile) var authoritiesFile: String? = nil

    /// Whether certificates are checked (no `--insecure`).
    package var verifies: Bool {
        get { !isInsecure }
        set { isInsecure = !newValue }
    }

    /// `--ca-file FILE`: the authorities to trust instead of the system's.
    package var caFile: String? {
        get { authoritiesFile }
        set { authoritiesFile = newValue }
    }

    package init() {}

    func validate(for subcommand: Subcommand) throws(UsageError) {
        if !verifies, caFile != nil {
            throw UsageError(.conflictingOptions("insecure", "ca-file"), subcommand: subcommand,
                             "'--insecure' skips the certificate check that '--ca-file' sets up; give one of them.")
        }
        // FFmpeg takes the authorities' path as a text option (`ca_file`), which cannot carry a byte
        // that is not UTF-8: such a path is refused here rather than reported missing by GnuTLS later.
        if let caFile, FilePathBytes.encode(caFile) != Array(caFile.utf8) {
            throw UsageError(.invalidValue(option: "ca-file", value: caFile), subcommand: subcommand,
                             "'--ca-file \(caFile)': the path is not UTF-8, which FFmpeg's TLS option needs; give a link with a UTF-8 name.")
        }
        if let caFile, FileSystem.access(caFile, R_OK) != 0 {
            throw UsageError(.invalidValue(option: "ca-file", value: caFile), subcommand: subcommand,
                             "'--ca-file \(caFile)': no readable file there (a PEM file of certificate authorities).")
        }
    }

    func apply(to options: inout SourceOptions) {
        options.verifiesCertificates = verifies
        options.certificateAuthorities = caFile
    }

    /// The two declarations, for a command's option list.
    static let declarations: [any OptionDeclaration] = [insecure, caFile]

    /// `--insecure`.
    static let insecure = FlagOption(
        "insecure",
        help: "Accept any https certificate, unverified (by default it must chain to an authority in the "
            + "system's store and name the URL's host). Anyone on the network path can then serve anything.")

    /// `--ca-file <file>`.
    static let caFile = ValueOption<String?>.path(
        "ca-file", value: "file",
        help: "Trust the certificate authorities in this PEM file for https inputs instead of the system's "
            + "(a private CA).")
}
