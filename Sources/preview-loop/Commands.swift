import PreviewLoop

/// One of the tool's jobs, named as typed after `preview-loop`.
enum Subcommand: String, CaseIterable, Sendable {
    /// Prints what a video contains.
    case probe
    /// Writes one frame as an image.
    case thumb
    /// Writes frames sampled over a span, tiled in one image.
    case strip
    /// Writes a contact sheet of the whole clip: header, tiles with times.
    case sheet
    /// Plays a window of a video in a loop.
    case loop
    /// Summarises a loop's timing log.
    case timing
    /// Writes the loop window as a looping MP4, animated WebP or GIF.
    case render
    /// Writes scrub-bar thumbnails: sprite sheets and a WebVTT track.
    case sprites
    /// Writes a preview card: poster with play button, reveal, playing video.
    case card
    /// Makes a recipe's outputs for every clip of a manifest; `batch report` merges results.
    case batch

    /// The one-line summary shown in help.
    var abstract: String {
        switch self {
        case .probe: "Show a video's duration, size, rotation, frame rate and streams."
        case .thumb: "Write one frame of a video as an image: by default the poster frame, the first good one of the window."
        case .strip: "Write frames sampled evenly over a span, tiled in one image."
        case .sheet: "Write a contact sheet of the whole clip: a header (name, duration, size, codec, frame rate, bit "
            + "rate, file size), then a grid of frames with their times."
        case .loop: "Play a window of a video in a loop, writing frames and a timing log."
        case .timing: "Summarise a loop's CSV timing log: rates, decode and scale times, lateness, seams, drops."
        case .render: "Write a window of a video as a muted hover preview that loops: MP4, animated WebP or GIF."
        case .sprites: "Write scrub-bar thumbnails: frames every few seconds tiled into sprite sheets, and a WebVTT track."
        case .card: "Write a preview card: the poster with a play button, the circular reveal (or a fade), the playing "
            + "video in rounded corners, as an animation, PNG frames or one still."
        case .batch: "Make posters, strips, sprites and hover previews for a whole manifest of clips, resumable "
            + "and sharded, with one JSON Lines result per clip; 'batch report' merges results files."
        }
    }
}

/// What the command line asks for: the result of parsing, before anything runs.
enum ParsedCommand: Equatable, Sendable {
    /// `preview-loop probe`.
    case probe(ProbeOptions)
    /// `preview-loop thumb`.
    case thumb(ThumbOptions)
    /// `preview-loop strip`.
    case strip(StripOptions)
    /// `preview-loop sheet`.
    case sheet(SheetOptions)
    /// `preview-loop loop`.
    case loop(LoopOptions)
    /// `preview-loop timing`.
    case timing(TimingOptions)
    /// `preview-loop render`.
    case render(RenderOptions)
    /// `preview-loop sprites`.
    case sprites(SpritesOptions)
    /// `preview-loop card`.
    case card(CardOptions)
    /// `preview-loop batch`.
    case batch(BatchCommandOptions)
    /// `--help`, `-h` or `help`: the text to print on standard output.
    case help(String)
    /// `--version`.
    case version
}

/// The options of `preview-loop probe`.
struct ProbeOptions: Equatable, Sendable {
    /// The video: a path or an http(s) URL.
    var input: String
    /// Whether to print one JSON object (`--json`) rather than aligned text lines.
    var isJSON = false
    /// Seconds allowed for opening the input and without any read or decoded frame (`--timeout`).
    var timeout = 30.0
    /// Whether a URL input may redirect to another http(s) origin (`--allow-redirects`).
    var allowsRedirects = false
    /// Seconds the whole job may take (`--deadline`); `nil` for no limit.
    var deadline: Double?
}

/// The options of `preview-loop thumb`.
struct ThumbOptions: Equatable, Sendable {
    /// The video: a path or an http(s) URL.
    var input: String
    /// The image to write (`-o`, `--output`).
    var output: String
    /// The image format, chosen by the output's extension.
    var format: ImageFormat
    /// When to take the frame (`-t`, `--at`): the poster frame of the window (`auto`) or a time.
    var time: ThumbTime = .auto
    /// Where the window `--at auto` searches starts (`--start`).
    var start: TimePosition = .seconds(0)
    /// How long that window lasts (`--length`), cut at the end of the clip.
    var length: TimePosition = .seconds(15)
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 320, height: 180)
    /// The image size (`-s`, `--size`); by default a box that turns with a portrait source.
    var size: SizeRequest = .orientedBox(Self.defaultBox)
    /// Lossy quality 0–100 (`-q`, `--quality`); `nil` for the format's default (or a lossless format).
    var quality: Int?
    /// How the picture fills the size (`--fit`).
    var contentMode: ContentMode = .aspectFill
    /// Which frame answers an explicit time (`--accuracy`): exact or keyframe.
    var accuracy: SeekAccuracy = .exact
    /// Whether a play button is drawn in the middle (`--play-button`).
    var showsPlayButton = false
    /// The rounded corners' radius in pixels (`--corner-radius`); 0 for none.
    var cornerRadius = 0.0
    /// The colour outside rounded corners (`--background`); `nil`: transparent in PNG and WebP, white
    /// elsewhere.
    var background: RGBAColor?
    /// The work limits (`--max-memory`, `--max-frames` where the subcommand has them).
    var budget = WorkBudget()
    /// Decoding threads (`--threads`).
    var threads = 2
    /// Seconds allowed for opening the input and without any read or decoded frame (`--timeout`).
    var timeout = 30.0
    /// Whether a URL input may redirect to another http(s) origin (`--allow-redirects`).
    var allowsRedirects = false
    /// `--tonemap`: how HDR frames become SDR.
    var toneMapping = ToneMapping.auto
    /// `--deinterlace`: which frames are deinterlaced.
    var deinterlacing = Deinterlacing.auto
    /// Seconds the whole job may take (`--deadline`); `nil` for no limit.
    var deadline: Double?

    /// Whether the picture gets a play button or rounded corners.
    var hasOverlays: Bool { showsPlayButton || cornerRadius > 0 }
}

/// When `thumb` takes its frame, as `--at` gives it.
enum ThumbTime: Equatable, Sendable {
    /// `auto`: the poster frame, the first good frame of the `--start`/`--length` window.
    case auto
    /// `best`: the most representative good frame of the whole clip, from a few keyframes.
    case best
    /// An explicit time or percentage: the frame displayed then (or the keyframe before it).
    case at(TimePosition)
}

/// Which part of the clip a strip samples.
enum StripSpan: String, CaseIterable, Sendable {
    /// From `--start` for `--length`, cut at the end of the clip.
    case window
    /// The whole clip.
    case all
}

/// The options of `preview-loop strip`.
struct StripOptions: Equatable, Sendable {
    /// The video: a path or an http(s) URL.
    var input: String
    /// The image to write (`-o`, `--output`).
    var output: String
    /// The image format, chosen by the output's extension.
    var format: ImageFormat
    /// How many frames (`-n`, `--count`), 1 to 1000.
    var count = 8
    /// Frames per row (`-c`, `--columns`); never more than `count`.
    var columns = 8
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 160, height: 90)
    /// The size of each tile (`-s`, `--size`).
    var size: SizeRequest = .orientedBox(Self.defaultBox)
    /// Lossy quality 0–100 (`-q`, `--quality`); `nil` for the format's default (or a lossless format).
    var quality: Int?
    /// Which part of the clip is sampled (`--span`).
    var span: StripSpan = .window
    /// Where the window starts (`--start`); only with `span == .window`.
    var start: TimePosition = .seconds(0)
    /// How long the window lasts (`--length`); only with `span == .window`.
    var length: TimePosition = .seconds(15)
    /// Which frame answers each time (`--accuracy`).
    var accuracy: SeekAccuracy = .auto
    /// How each picture fills its tile (`--fit`).
    var contentMode: ContentMode = .aspectFill
    /// Black pixels between tiles (`--gap`); 0 packs them edge to edge.
    var gap = 0
    /// Whether each tile shows its frame's time (`--timestamps`).
    var showsTimestamps = false
    /// The work limits (`--max-memory`, `--max-frames` where the subcommand has them).
    var budget = WorkBudget()
    /// How the frames' times are chosen (`--pick`): even slices, or shot changes.
    var pick: TilePick = .even
    /// Whether one JSON object describing the chosen tiles replaces the summary line (`--json`).
    var json = false
    /// Decoding threads (`--threads`).
    var threads = 2
    /// Seconds allowed for opening the input and without any read or decoded frame (`--timeout`).
    var timeout = 30.0
    /// Whether a URL input may redirect to another http(s) origin (`--allow-redirects`).
    var allowsRedirects = false
    /// `--tonemap`: how HDR frames become SDR.
    var toneMapping = ToneMapping.auto
    /// Seconds the whole job may take (`--deadline`); `nil` for no limit.
    var deadline: Double?
}

/// Where `preview-loop loop` writes its timing log.
enum LogDestination: Equatable, Sendable {
    /// `--log -`: standard output, line by line.
    case standardOutput
    /// `--log FILE`: a file, written whole when the loop ends.
    case file(String)
}

/// The options of `preview-loop loop`.
struct LoopOptions: Equatable, Sendable {
    /// The video: a path or an http(s) URL.
    var input: String
    /// Where the window starts (`--start`).
    var start: TimePosition = .seconds(0)
    /// How long the window lasts (`--length`).
    var length: TimePosition = .seconds(15)
    /// Passes over the window (`--loops`); 0 means until interrupted.
    var loops = 1
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 320, height: 180)
    /// The frame size (`-s`, `--size`).
    var size: SizeRequest = .orientedBox(Self.defaultBox)
    /// How the picture fills the size (`--fit`).
    var contentMode: ContentMode = .aspectFill
    /// Whether frames are paced at playback speed (`--realtime`) rather than decoded flat out.
    var isRealtime = false
    /// Where the CSV timing log goes (`--log`), if anywhere.
    var log: LogDestination?
    /// The directory every frame is written to (`--frames`), if any.
    var framesDirectory: String?
    /// Loop-relative wall times (seconds) at which to write a still of the frame presented (`--capture-at`).
    var captureTimes: [Double] = []
    /// The wall-time span (seconds, from the loop's start) whose frames are recorded (`--record FROM-TO`).
    var recordSpan: Range<Double>?
    /// Where captures and recordings go (`--capture-dir`); `nil` means the `--frames` directory.
    var captureDirectory: String?
    /// The work limits (`--max-memory`, `--max-frames` where the subcommand has them).
    var budget = WorkBudget()
    /// Decoding threads (`--threads`).
    var threads = 2
    /// Seconds allowed for opening the input and without any read or decoded frame (`--timeout`).
    var timeout = 30.0
    /// Whether a URL input may redirect to another http(s) origin (`--allow-redirects`).
    var allowsRedirects = false
    /// `--tonemap`: how HDR frames become SDR.
    var toneMapping = ToneMapping.auto
    /// Seconds the whole job may take (`--deadline`); `nil` for no limit.
    var deadline: Double?
}

/// The options of `preview-loop render`.
struct RenderOptions: Equatable, Sendable {
    /// The video: a path or an http(s) URL.
    var input: String
    /// The file to write (`-o`, `--output`).
    var output: String
    /// The file format, chosen by the output's extension.
    var format: AnimationFormat
    /// Where the window starts (`--start`).
    var start: TimePosition = .seconds(0)
    /// How long the window lasts (`--length`).
    var length: TimePosition = .seconds(3)
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 480, height: 270)
    /// The picture size (`-s`, `--size`); even for MP4.
    var size: SizeRequest = .orientedBox(Self.defaultBox)
    /// The constant frame rate (`--fps`).
    var framesPerSecond = 15
    /// Quality 0–100 (`-q`, `--quality`); `nil` for the format's default. Not for GIF.
    var quality: Int?
    /// How the picture fills the size (`--fit`).
    var contentMode: ContentMode = .aspectFill
    /// Where the loop ends (`--loop-point`); `nil` at the end of `--length`.
    var loopPoint: RenderLoopPoint?
    /// How the last frame joins the first (`--seam`).
    var seam = LoopSeam.cut
    /// The work limits (`--max-memory`, `--max-frames` where the subcommand has them).
    var budget = WorkBudget()
    /// Decoding threads (`--threads`).
    var threads = 2
    /// Seconds allowed for opening the input and without any read or decoded frame (`--timeout`).
    var timeout = 30.0
    /// Whether a URL input may redirect to another http(s) origin (`--allow-redirects`).
    var allowsRedirects = false
    /// `--tonemap`: how HDR frames become SDR.
    var toneMapping = ToneMapping.auto
    /// `--deinterlace`: which frames are deinterlaced.
    var deinterlacing = Deinterlacing.auto
    /// Seconds the whole job may take (`--deadline`); `nil` for no limit.
    var deadline: Double?
}

/// The image format of sprite sheets, as `--format` names it.
enum SheetFormat: String, CaseIterable, Sendable {
    /// JPEG (`.jpg` sheets).
    case jpg
    /// WebP (`.webp` sheets).
    case webp

    /// The library's format.
    var imageFormat: ImageFileFormat { self == .jpg ? .jpeg : .webp }
}

/// The options of `preview-loop sprites`.
struct SpritesOptions: Equatable, Sendable {
    /// The video: a path or an http(s) URL.
    var input: String
    /// The directory the sheets and `thumbnails.vtt` go to (`-o`, `--output`); created if missing.
    var outputDirectory: String
    /// Seconds between thumbnails (`--every`).
    var every = 10.0
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 160, height: 90)
    /// The size of each tile (`-s`, `--size`).
    var size: SizeRequest = .orientedBox(Self.defaultBox)
    /// Tiles per row (`--grid` C).
    var columns = 10
    /// Rows per sheet (`--grid` R).
    var rows = 10
    /// The sheets' image format (`--format`).
    var format: SheetFormat = .jpg
    /// Which frame each tile shows (`--accuracy`).
    var accuracy: SeekAccuracy = .auto
    /// Lossy quality 0–100 (`-q`, `--quality`); `nil` for the default.
    var quality: Int?
    /// How each picture fills its tile (`--fit`).
    var contentMode: ContentMode = .aspectFill
    /// The work limits (`--max-memory`, `--max-frames` where the subcommand has them).
    var budget = WorkBudget()
    /// Decoding threads (`--threads`).
    var threads = 2
    /// Seconds allowed for opening the input and without any read or decoded frame (`--timeout`).
    var timeout = 30.0
    /// Whether a URL input may redirect to another http(s) origin (`--allow-redirects`).
    var allowsRedirects = false
    /// `--tonemap`: how HDR frames become SDR.
    var toneMapping = ToneMapping.auto
    /// Seconds the whole job may take (`--deadline`); `nil` for no limit.
    var deadline: Double?
}

/// What `preview-loop card` writes, chosen by the output path.
enum CardDestination: Equatable, Sendable {
    /// `.webp`, `.gif`, `.mp4`: the whole sequence as a looping animation.
    case animation(AnimationFormat)
    /// `.png`, `.jpg`, `.ppm`: the card at one instant (`--at`).
    case still(ImageFileFormat)
    /// Anything else (a directory): every picture as `card-NNNNN.png`.
    case directory
}

/// The options of `preview-loop card`.
struct CardOptions: Equatable, Sendable {
    /// The video: a path or an http(s) URL.
    var input: String
    /// The file or directory to write (`-o`, `--output`).
    var output: String
    /// What the output's extension asks for.
    var destination: CardDestination
    /// The card's look and timing (`--size`/`--aspect`, `--corner-radius`, `--reveal`, `--poster-hold`,
    /// `--play-length`, `--close`, `--background`, `--no-play-button`).
    var style = CardStyle()
    /// Frames per second of animations and frame directories (`--fps`).
    var framesPerSecond = 30
    /// Where the loop window starts (`--start`): the poster is its first good frame.
    var start: TimePosition = .seconds(0)
    /// How long the loop window lasts (`--length`).
    var length: TimePosition = .seconds(15)
    /// The poster's time in the clip (`--poster-at`); `nil` for the window's first good frame.
    var posterTime: TimePosition?
    /// The instant a still shows, seconds from the sequence's start (`--at`); 0 is the poster.
    var stillTime = 0.0
    /// Quality 0–100 (`-q`, `--quality`) for lossy outputs; `nil` for the default.
    var quality: Int?
    /// The work limits (`--max-memory`, `--max-frames` where the subcommand has them).
    var budget = WorkBudget()
    /// Decoding threads (`--threads`).
    var threads = 2
    /// Seconds allowed for opening the input and without any read or decoded frame (`--timeout`).
    var timeout = 30.0
    /// Whether a URL input may redirect to another http(s) origin (`--allow-redirects`).
    var allowsRedirects = false
    /// `--tonemap`: how HDR frames become SDR.
    var toneMapping = ToneMapping.auto
    /// Seconds the whole job may take (`--deadline`); `nil` for no limit.
    var deadline: Double?
    /// A note for standard error about a value replaced by its fallback (an unusable `--aspect`).
    var note: String?
}
