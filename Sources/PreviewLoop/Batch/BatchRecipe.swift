import FoundationEssentials

/// What a batch makes for each clip. Every output is optional; ``standard`` (a 960x540 poster JPEG,
/// sprites with WebVTT and a hover MP4) is used when no recipe is given. Files, inside `OUT/<id>/`: `poster.jpg`, `strip.jpg`,
/// `contact-sheet.jpg`, `sheet-N.jpg` + `thumbnails.vtt`, `hover.mp4` (or `.webp`, `.gif`).
///
/// As JSON (a recipe file): `{"poster": {"size": "320x180", "quality": 85, "start": 0, "length": 15,
/// "at": "auto", "format": "jpg"}, "strip": {"count": 8, "columns": 8, "size": "160x90", "quality": 85, "pick": "even",
/// "gap": 0, "timestamps": false}, "sheet": {"grid": "4x4", "width": 1280, "gap": 6, "margin": 12,
/// "header": true, "timestamps": true, "pick": "even", "quality": 85}, "sprites": {"every": "auto",
/// "size": "160x90", "grid": "10x10", "quality": 85}, "hover": {"start": "poster", "length": 3, "size":
/// "480x270", "fps": 15, "quality": 75, "loop_point": "auto", "seam": "crossfade=0.5"}}` (the sheet may
/// give `tile_width` instead of `width`); an empty object `{}` takes every default of that output;
/// unknown keys and values out of range are refused, naming the key. The `preview-loop batch --recipe`
/// command reads that file: each section is the single-clip command that makes its output, its keys
/// that command's options (Docs/batch.md lists them); in Swift, build the recipe's values directly.
public struct BatchRecipe: Sendable, Hashable {
    /// The poster, as JPEG (or WebP, AVIF, PNG): by default the first good frame of a window (as `thumb --at auto`).
    public struct Poster: Sendable, Hashable {
        /// The size asked for (as `thumb --size`): by default 320x180, turned for a portrait clip.
        public var sizeRequest = SizeRequest.orientedBox(Size(width: 320, height: 180))
        /// The size for the clip at hand: ``sizeRequest`` resolved (``BatchRecipe/resolved(display:)``).
        public var size = Size(width: 320, height: 180)
        public var quality = 85
        /// The window ``PosterTime/auto`` searches (the manifest's `start` and `length` override it).
        public var start = 0.0
        public var length = 15.0
        /// Which frame (as `thumb --at`): the first good one of the window, the best of the clip, or the
        /// frame shown at a time (exact), kept within the clip.
        public var at = PosterTime.auto
        /// The file's format (as `thumb -o poster.EXT`): JPEG by default; WebP, AVIF or PNG.
        public var format = ImageFileFormat.jpeg
        /// The file's name in the clip's folder: `poster.jpg`, `poster.avif`…
        public var fileName: String { "poster.\(format.fileExtensions[0])" }
        public init() {}
    }
    /// A contact strip over the whole clip (as `strip --span all`), as JPEG.
    public struct Strip: Sendable, Hashable {
        public var count = 8
        public var columns = 8
        /// Each tile's size asked for (as `strip --size`): by default 160x90, turned for a portrait clip.
        public var sizeRequest = SizeRequest.orientedBox(Size(width: 160, height: 90))
        /// Each tile's size for the clip at hand (``sizeRequest`` resolved).
        public var size = Size(width: 160, height: 90)
        public var quality = 85
        /// How the tiles' times are chosen (as `strip --pick`): even slices or shot changes.
        public var pick = TilePick.even
        /// Pixels between tiles, 0 to 256 (as `strip --gap`).
        public var gap = 0
        /// Whether each tile shows its time (as `strip --timestamps`).
        public var showsTimestamps = false
        public init() {}

        /// The library's strip configuration (what `strip --span all` with these options builds).
        public var configuration: ContactStrip.Configuration {
            var style = ContactStrip.Configuration.defaultStyle
            style.showsTimestamps = showsTimestamps
            return ContactStrip.Configuration(count: count, columns: columns, tileSize: .exact(size), span: .wholeClip,
                                              accuracy: .auto, pick: pick, gap: gap, style: style)
        }
    }
    /// A contact sheet of the whole clip with a header (as `sheet`), as JPEG.
    public struct Sheet: Sendable, Hashable {
        /// The grid, widths, gap, margin, header, times and pick (as `sheet`'s options; the same defaults).
        public var configuration = ClipContactSheet.Configuration()
        public var quality = 85
        public init() {}
    }
    /// Scrub-bar thumbnails: JPEG sprite sheets and a WebVTT track (as `sprites`).
    public struct Sprites: Sendable, Hashable {
        /// How far apart the thumbnails are (as `sprites --every`/`--count`): by default chosen from the
        /// duration, about 50 for a clip under 15 minutes (a manifest's `every` replaces it).
        public var every = SpriteInterval.auto
        /// Each thumbnail's size asked for (as `sprites --size`): by default 160x90, turned for a portrait clip.
        public var sizeRequest = SizeRequest.orientedBox(Size(width: 160, height: 90))
        /// Each thumbnail's size for the clip at hand (``sizeRequest`` resolved).
        public var size = Size(width: 160, height: 90)
        public var columns = 10
        public var rows = 10
        public var quality = 85
        public init() {}
    }
    /// A muted hover preview that loops: H.264 MP4 of a window (as `render`).
    ///
    /// With a ``loopPoint`` or a seam other than ``LoopSeam/cut`` it is made by the same library call as
    /// `render --loop-point … --seam …` (``LoopPlayer/render(to:format:framesPerSecond:quality:encoderThreads:maxFrames:loopPoint:seam:flashSafety:progress:)-(String,_,_,_,_,_,_,_,_,_)``,
    /// which opens the clip a second time), and its record carries the loop point and the seam measure.
    public struct Hover: Sendable, Hashable {
        /// Where the window starts: by default at the poster (the recipe's poster when it has one, else
        /// the first good frame of the first 15 s, as `thumb --at auto`), so the preview opens on the
        /// picture past a title card or a fade; or at a time (seconds or a percentage). A manifest's
        /// `start` moves the poster's window (and so a hover at the poster), or replaces a time here.
        public var start = HoverStart.poster
        public var length = 3.0
        /// The size asked for (as `render --size`): by default 480x270, turned for a portrait clip; a
        /// computed side is made even (H.264).
        public var sizeRequest = SizeRequest.orientedBox(Size(width: 480, height: 270))
        /// The size for the clip at hand (``sizeRequest`` resolved).
        public var size = Size(width: 480, height: 270)
        public var framesPerSecond = 15
        public var quality = 75
        /// Where the loop ends (as `render --loop-point`): searched, or a time replacing ``length``; `nil` at the length.
        public var loopPoint: LoopEnd?
        /// How the last frame joins the first (as `render --seam`).
        public var seam = LoopSeam.cut
        /// The file's format (as `render -o hover.EXT`): MP4 (H.264) by default, animated WebP or GIF.
        public var format = AnimationFormat.mp4
        /// Photosensitive flashes (as `render --flash-safety`, recipe key `flash_safety`): checked and
        /// recorded by default, the window moved clear of them with ``FlashSafety/avoid``, or not analysed.
        public var flashSafety = FlashSafety.check
        public init() {}

        /// The file's name in the clip's folder: `hover.mp4`, `hover.webp` or `hover.gif`.
        public var fileName: String { "hover.\(format.rawValue)" }

        /// Whether the loop engine's render makes it (a loop point, a seam or `flash_safety` `avoid` asked for).
        public var isSeamed: Bool { loopPoint != nil || seam != .cut || flashSafety == .avoid }
    }

    public var poster: Poster?
    public var strip: Strip?
    public var sprites: Sprites?
    public var hover: Hover?
    public var sheet: Sheet?

    /// Creates a recipe.
    public init(poster: Poster? = nil, strip: Strip? = nil, sprites: Sprites? = nil, hover: Hover? = nil, sheet: Sheet? = nil) {
        self.poster = poster
        self.strip = strip
        self.sprites = sprites
        self.hover = hover
        self.sheet = sheet
    }

    /// The default: what a feed page over the folder needs (`batch export-page`): a poster JPEG at
    /// 960x540 (twice the page's 480x270 card, turned for a portrait clip), sprites with WebVTT for
    /// scrubbing, and a 3 s hover MP4 at 480x270 for the play button.
    public static let standard: BatchRecipe = {
        var poster = Poster()
        poster.sizeRequest = .orientedBox(Size(width: 960, height: 540))
        poster.size = Size(width: 960, height: 540)
        return BatchRecipe(poster: poster, sprites: Sprites(), hover: Hover())
    }()

    /// Whether the recipe makes nothing.
    public var isEmpty: Bool { poster == nil && strip == nil && sprites == nil && hover == nil && sheet == nil }

    /// The output kinds, in the order they are made.
    public var kinds: [String] {
        [poster.map { _ in "poster" }, strip.map { _ in "strip" }, sheet.map { _ in "sheet" }, sprites.map { _ in "sprites" },
         hover.map { _ in "hover" }]
            .compactMap { $0 }
    }

    /// A canonical one-line description: two recipes make the same files exactly when these are equal
    /// (it goes into the completion marker, so a changed recipe redoes the clip).
    public var canonical: String {
        var parts: [String] = []
        if let p = poster {
            // `at` and `format` named only when not their defaults, so posters made before them stay complete.
            parts.append("poster(\(Self.canonical(p.sizeRequest)),q\(p.quality),\(p.start)+\(p.length)\(p.at == .auto ? "" : ",at=\(p.at)")"
                         + "\(p.format == .jpeg ? "" : ",\(p.format.fileExtensions[0])"))")
        }
        if let s = strip {
            // The newer options named only when not their defaults, so strips made before stay complete.
            let extra = (s.pick == .even ? "" : ",\(s.pick.rawValue)") + (s.gap == 0 ? "" : ",gap\(s.gap)")
                + (s.showsTimestamps ? ",times" : "")
            parts.append("strip(\(s.count)/\(s.columns),\(Self.canonical(s.sizeRequest)),q\(s.quality)\(extra))")
        }
        if let s = sheet {
            let c = s.configuration
            // The colours and accuracy named only when not their defaults, so sheets made before stay complete.
            let style = ContactSheetStyle()
            let extra = (c.style.background == style.background ? "" : ",bg\(c.style.background)")
                + (c.style.textColor == style.textColor ? "" : ",text\(c.style.textColor)")
                + (c.accuracy == .exact ? "" : ",\(c.accuracy.rawValue)")
            // Named after its file, contact-sheet.jpg (clips made when it was sheet.jpg are redone).
            parts.append("contact-sheet(\(c.columns)x\(c.rows),\(c.tileWidth.map { "tile\($0)" } ?? "width\(c.sheetWidth)"),gap\(c.gap),"
                         + "margin\(c.margin),\(c.showsHeader ? "header" : "no-header"),\(c.style.showsTimestamps ? "times" : "no-times"),"
                         + "\(c.pick.rawValue),q\(s.quality)\(extra))")
        }
        if let s = sprites { parts.append("sprites(\(s.every),\(Self.canonical(s.sizeRequest)),\(s.columns)x\(s.rows),q\(s.quality))") }
        if let h = hover {
            // Named only when asked for, so hovers made before these existed stay complete.
            let seamed = (h.loopPoint.map { ",loop=\($0)" } ?? "") + (h.seam == .cut ? "" : ",seam=\(h.seam)")
                + (h.format == .mp4 ? "" : ",\(h.format.rawValue)") + (h.flashSafety == .check ? "" : ",flash=\(h.flashSafety.rawValue)")
            parts.append("hover(\(h.start)+\(h.length),\(Self.canonical(h.sizeRequest)),\(h.framesPerSecond)fps,q\(h.quality)\(seamed))")
        }
        return parts.joined(separator: ";")
    }

    /// The most bytes of frames a seamed hover may hold until its out point is known (as `render`'s
    /// default `--max-memory`, 1024 MB): a recipe over it is refused, a percentage loop point bounded while rendering.
    package static let seamedHoverBytes = 1 << 30

    /// A size request in ``canonical``: `320x180` exactly, `320x180~` for the box turned for portrait
    /// clips, `320x-1`, `-1x180`, `source`.
    static func canonical(_ request: SizeRequest) -> String {
        if case .orientedBox(let box) = request { return "\(box)~" }
        return request.description
    }

    /// The recipe with every size resolved for a clip whose upright picture is `display` (the
    /// default boxes turned for a portrait clip, a width or height completed at its aspect), each
    /// checked against the encoders' and the memory rules (``OutputLimits``).
    ///
    /// - Throws: ``PreviewLoopError/Code/tooLarge`` for a size those rules refuse.
    public func resolved(display: Size) throws(PreviewLoopError) -> BatchRecipe {
        var recipe = self
        if var p = recipe.poster { p.size = p.sizeRequest.resolved(display: display); recipe.poster = p }
        if var s = recipe.strip { s.size = s.sizeRequest.resolved(display: display); recipe.strip = s }
        if var s = recipe.sprites { s.size = s.sizeRequest.resolved(display: display); recipe.sprites = s }
        if var h = recipe.hover { h.size = h.sizeRequest.resolved(display: display, even: h.format == .mp4); recipe.hover = h }
        if let refusal = recipe.sizeRefusal() {
            throw PreviewLoopError(.tooLarge, "\(refusal.key) for this \(display) clip: \(refusal.reason)")
        }
        return recipe
    }

    /// The first output whose size the encoders' or the memory rules refuse (``OutputLimits``): the
    /// recipe key that sets it and why; `nil` when every output can be made. Checked when a recipe is
    /// read (with the sizes known then) and again for each clip once its sizes are resolved.
    package func sizeRefusal() -> (key: String, reason: String)? {
        let limit = Double(OutputLimits.defaultMemoryBytes)
        func megabytes(_ bytes: Double) -> Int { Int(bytes / 1_048_576) }
        /// A still (JPEG unless told): one the encoder takes, within the memory a command holds by default.
        func still(_ size: Size, _ what: String, extra: Double = 0, format: ImageFileFormat = .jpeg) -> String? {
            if let refusal = OutputLimits.encoderRefusal(size, format: format) {
                return "\(what) cannot be encoded as \(format.rawValue.uppercased()): \(refusal)"
            }
            let bytes = OutputLimits.stillBytes(size, format: format) + extra
            guard bytes <= limit else {
                return "\(what) would hold about \(megabytes(bytes)) MB of pictures, more than \(OutputLimits.defaultMemoryBytes >> 20) MB "
                    + "(as the commands' --max-memory default)"
            }
            return nil
        }
        if let p = poster, let why = still(p.size, "a \(p.size) picture", format: p.format) { return ("\"poster\".\"size\"", why) }
        if let s = strip {
            let size = s.configuration.stripSize(tileSize: s.size)
            if let why = still(size, "a strip of \(size)", extra: 9 * Double(s.count) * Double(s.size.area)) { return ("\"strip\".\"size\"", why) }
        }
        if let s = sprites {
            let sheet = Size(width: s.size.width * s.columns, height: s.size.height * s.rows)
            if let why = still(sheet, "a sprite sheet of \(sheet) (\(s.columns)x\(s.rows) tiles of \(s.size))") {
                return ("\"sprites\".\"size\"", why)
            }
        }
        if let h = hover {
            if let refusal = OutputLimits.encoderRefusal(h.size, webp: h.format == .webp) {
                return ("\"hover\".\"size\"", "\(h.size) cannot be encoded: \(refusal)")
            }
            // As render's --max-memory default: the pictures in flight and the encoder's own frames (a
            // GIF holds every frame until its palette is made).
            let frames = (h.loopPoint.map { _ in 1.25 } ?? 1) * h.length * Double(h.framesPerSecond)
            let bytes = OutputLimits.renderBytes(frames: frames.rounded(.up), size: h.size, format: h.format)
            guard bytes <= limit else {
                return ("\"hover\".\"size\"", "a \(h.size) hover would hold about \(megabytes(bytes)) MB of pictures and encoder frames, "
                        + "more than \(OutputLimits.defaultMemoryBytes >> 20) MB (as render's --max-memory default)")
            }
        }
        return nil
    }
}
