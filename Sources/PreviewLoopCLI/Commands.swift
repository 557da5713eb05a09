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
    /// Plays many loops at once on one wall: shared cache budget, shared decode workers.
    case wall
    /// Serves previews over HTTP, rendered on request: an image API for video.
    case serve

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
        case .wall: "Play many loops at once in one process (one shared frame-cache budget, a bounded pool of "
            + "decode workers), writing one timing log per loop and a summary over all of them."
        case .serve: "Serve previews over HTTP, rendered on request and cached: thumbnails, probes and more by URL "
            + "(/CLIP/thumbnail.jpg?time=5&width=640), for <img> tags, a CDN or nginx in front."
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
    /// `preview-loop wall`.
    case wall(WallOptions)
    /// `preview-loop serve`.
    case serve(ServeOptions)
    /// `--help`, `-h` or `help`: the text to print on standard output.
    case help(String)
    /// `--version`.
    case version
    /// `man` or `completions <shell>`: a generated text to print on standard output as it is.
    case generated(String)
}

/// The options of `preview-loop probe`.
struct ProbeOptions: Equatable, Sendable {
    /// The input and how it is read: `<input>`, `--timeout`, `--deadline`, `--threads`, `--allow-redirects`,
    /// `--tonemap` (the input group).
    var source: InputOptions
    /// Whether to print one JSON object (`--json`) rather than aligned text lines.
    var isJSON = false
    /// Whether every frame is decoded and analysed for photosensitive flashes (`--flashes`).
    var analysesFlashes = false
}

/// The options of `preview-loop thumb`.
struct ThumbOptions: Equatable, Sendable {
    /// The input and how it is read: `<input>`, `--timeout`, `--deadline`, `--threads`, `--allow-redirects`,
    /// `--tonemap` (the input group).
    var source: InputOptions
    /// The image to write (`-o`, `--output`).
    var output: String
    /// The image format, chosen by the output's extension.
    var format: ImageFileFormat
    /// When to take the frame (`-t`, `--at`): the poster frame of the window (`auto`) or a time.
    var time = ThumbOptions.at.defaultValue
    /// Where the window `--at auto` searches starts (`--start`).
    var start = ThumbOptions.start.defaultValue
    /// How long that window lasts (`--length`), cut at the end of the clip.
    var length = ThumbOptions.length.defaultValue
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 320, height: 180)
    /// The image size (`-s`, `--size`); by default a box that turns with a portrait source.
    var size = ThumbOptions.size.defaultValue
    /// Lossy quality 0–100 (`-q`, `--quality`); `nil` for the format's default (or a lossless format).
    var quality: Int?
    /// How the picture fills the size (`--fit`).
    var contentMode = PictureOptions.fit.defaultValue
    /// Which frame answers an explicit time (`--accuracy`): exact or keyframe.
    var accuracy = ThumbOptions.accuracy.defaultValue
    /// Whether a play button is drawn in the middle (`--play-button`).
    var showsPlayButton = false
    /// The rounded corners' radius in pixels (`--corner-radius`); 0 for none.
    var cornerRadius = ThumbOptions.cornerRadius.defaultValue
    /// The colour outside rounded corners (`--background`); `nil`: transparent in PNG and WebP, white
    /// elsewhere.
    var background: RGBAColor?
    /// The work limits (`--max-memory`, `--max-frames` where the subcommand has them).
    var budget = WorkBudget()
    /// Whether one JSON record (the batch record's schema) replaces the summary line (`--json`).
    var json = false
    /// Whether an exact `size` is a box the picture fits inside keeping its shape (the image API's
    /// `fit_mode=preserve`), rather than the picture's size.
    var preservesShape = false

    /// Whether the picture gets a play button or rounded corners.
    var hasOverlays: Bool { showsPlayButton || cornerRadius > 0 }
    /// Progress and quiet (`--progress`, `--quiet`).
    var reporting = ReportingOptions()
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
    /// The input and how it is read: `<input>`, `--timeout`, `--deadline`, `--threads`, `--allow-redirects`,
    /// `--tonemap` (the input group).
    var source: InputOptions
    /// The image to write (`-o`, `--output`).
    var output: String
    /// The image format, chosen by the output's extension.
    var format: ImageFileFormat
    /// How many frames (`-n`, `--count`), 1 to 1000.
    var count = StripOptions.count.defaultValue
    /// Frames per row (`-c`, `--columns`); never more than `count`.
    var columns = StripOptions.count.defaultValue
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 160, height: 90)
    /// The size of each tile (`-s`, `--size`).
    var size = StripOptions.size.defaultValue
    /// Lossy quality 0–100 (`-q`, `--quality`); `nil` for the format's default (or a lossless format).
    var quality: Int?
    /// Which part of the clip is sampled (`--span`).
    var span = StripOptions.span.defaultValue
    /// Where the window starts (`--start`); only with `span == .window`.
    var start = WindowOptions.start.defaultValue
    /// How long the window lasts (`--length`); only with `span == .window`.
    var length = WindowOptions.length.defaultValue
    /// Which frame answers each time (`--accuracy`).
    var accuracy = StripOptions.accuracy.defaultValue
    /// How each picture fills its tile (`--fit`).
    var contentMode = PictureOptions.fit.defaultValue
    /// Black pixels between tiles (`--gap`); 0 packs them edge to edge.
    var gap = StripOptions.gap.defaultValue
    /// Whether each tile shows its frame's time (`--timestamps`).
    var showsTimestamps = false
    /// The work limits (`--max-memory`, `--max-frames` where the subcommand has them).
    var budget = WorkBudget()
    /// How the frames' times are chosen (`--pick`): even slices, or shot changes.
    var pick = TilePlanOptions.pick.defaultValue
    /// Whether one JSON record (the batch record's schema, with the chosen tiles) replaces the summary line (`--json`).
    var json = false
    /// Progress and quiet (`--progress`, `--quiet`).
    var reporting = ReportingOptions()
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
    /// The input and how it is read: `<input>`, `--timeout`, `--deadline`, `--threads`, `--allow-redirects`,
    /// `--tonemap` (the input group).
    var source: InputOptions
    /// Where the window starts (`--start`).
    var start = WindowOptions.start.defaultValue
    /// How long the window lasts (`--length`).
    var length = WindowOptions.length.defaultValue
    /// Passes over the window (`--loops`); 0 means until interrupted.
    var loops = LoopOptions.loops.defaultValue
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 320, height: 180)
    /// The frame size (`-s`, `--size`).
    var size = LoopOptions.size.defaultValue
    /// How the picture fills the size (`--fit`).
    var contentMode = PictureOptions.fit.defaultValue
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
    /// The format of frames, captures and recordings (`--format`): PPM, PNG or JPEG.
    var imageFormat = ImageFileFormat.ppm
    /// The work limits (`--max-memory`, `--max-frames` where the subcommand has them).
    var budget = WorkBudget()
    /// Whether one JSON record (the batch record's schema) replaces the summary line (`--json`).
    var json = false
    /// Progress and quiet (`--progress`, `--quiet`).
    var reporting = ReportingOptions()
}

/// The options of `preview-loop render`.
struct RenderOptions: Equatable, Sendable {
    /// The input and how it is read: `<input>`, `--timeout`, `--deadline`, `--threads`, `--allow-redirects`,
    /// `--tonemap` (the input group).
    var source: InputOptions
    /// The file to write (`-o`, `--output`).
    var output: String
    /// The file format, chosen by the output's extension.
    var format: AnimationFormat
    /// Where the window starts (`--start`); with `--start poster`, 0 until the poster is found.
    var start = WindowOptions.start.defaultValue
    /// Whether the window starts at the poster's frame (`--start poster`).
    var startsAtPoster = false
    /// How long the window lasts (`--length`).
    var length = RenderOptions.length.defaultValue
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 480, height: 270)
    /// The picture size (`-s`, `--size`); even for MP4.
    var size = RenderOptions.size.defaultValue
    /// The constant frame rate (`--fps`).
    var framesPerSecond = RenderOptions.fps.defaultValue
    /// Quality 0–100 (`-q`, `--quality`); `nil` for the format's default. Not for GIF.
    var quality: Int?
    /// How the picture fills the size (`--fit`).
    var contentMode = PictureOptions.fit.defaultValue
    /// Where the loop ends (`--loop-point`); `nil` at the end of `--length`.
    var loopPoint = RenderOptions.loopPoint.defaultValue
    /// How the last frame joins the first (`--seam`).
    var seam = RenderOptions.seam.defaultValue
    /// Whether the frames written are checked for photosensitive flashes (`--flash-safety`).
    var flashSafety = RenderOptions.flashSafety.defaultValue
    /// The work limits (`--max-memory`, `--max-frames` where the subcommand has them).
    var budget = WorkBudget()
    /// Whether one JSON record (the batch record's schema) replaces the summary line (`--json`).
    var json = false
    /// Progress and quiet (`--progress`, `--quiet`).
    var reporting = ReportingOptions()
    /// What a server lets one request render (`serve --animated-max-*`); `nil` on the command line.
    var caps: AnimationCaps?
}

/// What a server lets one animated request render: checked before decoding, once the source's size
/// and the window are known.
package struct AnimationCaps: Equatable, Sendable {
    /// The most seconds of the clip one animation takes (its window, with a loop-point search and a
    /// crossfade's tail).
    package var seconds: Double
    /// The most pixels on either side.
    package var side: Int
    /// The most frames per second.
    package var framesPerSecond: Int

    /// Mux's caps: 10 s, 640 pixels, 30 fps.
    package init(seconds: Double = 10, side: Int = 640, framesPerSecond: Int = 30) {
        self.seconds = seconds
        self.side = side
        self.framesPerSecond = framesPerSecond
    }
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
    /// The input and how it is read: `<input>`, `--timeout`, `--deadline`, `--threads`, `--allow-redirects`,
    /// `--tonemap` (the input group).
    var source: InputOptions
    /// The directory the sheets and `thumbnails.vtt` go to (`-o`, `--output`); created if missing.
    var outputDirectory: String
    /// How far apart the thumbnails are (`--every`, `--count`).
    var every = SpritesOptions.every.defaultValue
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 160, height: 90)
    /// The size of each tile (`-s`, `--size`).
    var size = SpritesOptions.size.defaultValue
    /// Tiles per row (`--grid` C).
    var columns = SpritesOptions.grid.defaultValue.width
    /// Rows per sheet (`--grid` R).
    var rows = SpritesOptions.grid.defaultValue.height
    /// The sheets' image format (`--format`).
    var format = SpritesOptions.format.defaultValue
    /// Which frame each tile shows (`--accuracy`).
    var accuracy = SpritesOptions.accuracy.defaultValue
    /// Where in its interval each tile is taken (`--pick`): the middle, or the longest shot's middle.
    var pick = TilePlanOptions.pick.defaultValue
    /// Lossy quality 0–100 (`-q`, `--quality`); `nil` for the default.
    var quality: Int?
    /// How each picture fills its tile (`--fit`).
    var contentMode = PictureOptions.fit.defaultValue
    /// The work limits (`--max-memory`, `--max-frames` where the subcommand has them).
    var budget = WorkBudget()
    /// Whether one JSON record (the batch record's schema) replaces the summary line (`--json`).
    var json = false
    /// Progress and quiet (`--progress`, `--quiet`).
    var reporting = ReportingOptions()
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
    /// The input and how it is read: `<input>`, `--timeout`, `--deadline`, `--threads`, `--allow-redirects`,
    /// `--tonemap` (the input group).
    var source: InputOptions
    /// The file or directory to write (`-o`, `--output`).
    var output: String
    /// What the output's extension asks for.
    var destination: CardDestination
    /// The card's look and timing (`--size`/`--aspect`, `--corner-radius`, `--reveal`, `--poster-hold`,
    /// `--play-length`, `--close`, `--background`, `--no-play-button`).
    var style = CardStyle()
    /// Frames per second of animations and frame directories (`--fps`).
    var framesPerSecond = CardOptions.fps.defaultValue
    /// Where the loop window starts (`--start`): the poster is its first good frame.
    var start = WindowOptions.start.defaultValue
    /// How long the loop window lasts (`--length`).
    var length = CardOptions.length.defaultValue
    /// The poster's time in the clip (`--poster-at`); `nil` for the window's first good frame.
    var posterTime: TimePosition?
    /// The instant a still shows, seconds from the sequence's start (`--at`); 0 is the poster.
    var stillTime = CardOptions.at.defaultValue
    /// Quality 0–100 (`-q`, `--quality`) for lossy outputs; `nil` for the default.
    var quality: Int?
    /// The work limits (`--max-memory`, `--max-frames` where the subcommand has them).
    var budget = WorkBudget()
    /// Whether an animation's pictures are checked for photosensitive flashes (`--flash-safety`).
    var flashSafety = CardOptions.flashSafety.defaultValue
    /// A note for standard error about a value replaced by its fallback (an unusable `--aspect`).
    var note: String?
    /// Whether one JSON record (the batch record's schema) replaces the summary line (`--json`).
    var json = false
    /// Whether warnings stay off standard error (a server's renders).
    var isQuiet = false
}
