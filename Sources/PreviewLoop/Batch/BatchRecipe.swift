import FoundationEssentials

/// What a batch makes for each clip. Every output is optional; ``standard`` (poster JPEG and sprites
/// with WebVTT) is used when no recipe is given. Files, inside `OUT/<id>/`: `poster.jpg`, `strip.jpg`,
/// `contact-sheet.jpg`, `sheet-N.jpg` + `thumbnails.vtt`, `hover.mp4` (or `.webp`, `.gif`).
///
/// As JSON (a recipe file): `{"poster": {"size": "320x180", "quality": 85, "start": 0, "length": 15,
/// "at": "auto"}, "strip": {"count": 8, "columns": 8, "size": "160x90", "quality": 85, "pick": "even",
/// "gap": 0, "timestamps": false}, "sheet": {"grid": "4x4", "width": 1280, "gap": 6, "margin": 12,
/// "header": true, "timestamps": true, "pick": "even", "quality": 85}, "sprites": {"every": "auto",
/// "size": "160x90", "grid": "10x10", "quality": 85}, "hover": {"start": "poster", "length": 3, "size":
/// "480x270", "fps": 15, "quality": 75, "loop_point": "auto", "seam": "crossfade=0.5"}}` (the sheet may
/// give `tile_width` instead of `width`); an empty object `{}` takes every default of that output;
/// unknown keys and values out of range are refused, naming the key.
public struct BatchRecipe: Sendable, Hashable {
    /// The poster, as JPEG: by default the first good frame of a window (as `thumb --at auto`).
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
    /// `render --loop-point … --seam …` (``LoopPlayer/render(to:format:framesPerSecond:quality:encoderThreads:maxFrames:loopPoint:seam:flashSafety:progress:)``,
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

    /// The default: a poster JPEG and sprites with WebVTT.
    public static let standard = BatchRecipe(poster: Poster(), sprites: Sprites())

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
            // `at` named only when not auto, so posters made before it existed stay complete.
            parts.append("poster(\(Self.canonical(p.sizeRequest)),q\(p.quality),\(p.start)+\(p.length)\(p.at == .auto ? "" : ",at=\(p.at)"))")
        }
        if let s = strip {
            // The newer options named only when not their defaults, so strips made before stay complete.
            let extra = (s.pick == .even ? "" : ",\(s.pick.rawValue)") + (s.gap == 0 ? "" : ",gap\(s.gap)")
                + (s.showsTimestamps ? ",times" : "")
            parts.append("strip(\(s.count)/\(s.columns),\(Self.canonical(s.sizeRequest)),q\(s.quality)\(extra))")
        }
        if let s = sheet {
            let c = s.configuration
            // Named after its file, contact-sheet.jpg (clips made when it was sheet.jpg are redone).
            parts.append("contact-sheet(\(c.columns)x\(c.rows),\(c.tileWidth.map { "tile\($0)" } ?? "width\(c.sheetWidth)"),gap\(c.gap),"
                         + "margin\(c.margin),\(c.showsHeader ? "header" : "no-header"),\(c.style.showsTimestamps ? "times" : "no-times"),"
                         + "\(c.pick.rawValue),q\(s.quality))")
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
    func sizeRefusal() -> (key: String, reason: String)? {
        let limit = Double(OutputLimits.defaultMemoryBytes)
        func megabytes(_ bytes: Double) -> Int { Int(bytes / 1_048_576) }
        /// A JPEG still: one the encoder takes, within the memory a command holds by default.
        func still(_ size: Size, _ what: String, extra: Double = 0) -> String? {
            if let refusal = OutputLimits.encoderRefusal(size, webp: false, jpeg: true) {
                return "\(what) cannot be encoded as JPEG: \(refusal)"
            }
            let bytes = OutputLimits.stillBytes(size) + extra
            guard bytes <= limit else {
                return "\(what) would hold about \(megabytes(bytes)) MB of pictures, more than \(OutputLimits.defaultMemoryBytes >> 20) MB "
                    + "(as the commands' --max-memory default)"
            }
            return nil
        }
        if let p = poster, let why = still(p.size, "a \(p.size) picture") { return ("\"poster\".\"size\"", why) }
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

    /// Parses a recipe file's JSON.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` naming the key for anything unknown or out of range.
    public static func parse(json: [UInt8], name: String = "recipe") throws(PreviewLoopError) -> BatchRecipe {
        do {
            let recipe = try JSONDecoder().decode(DecodedRecipe.self, from: Data(json)).recipe
            guard !recipe.isEmpty else { throw RecipeError(message: "names no output (poster, strip, sheet, sprites, hover)") }
            return recipe
        } catch let error as RecipeError {
            throw PreviewLoopError(.invalidArgument, "\(name): \(error.message)")
        } catch {
            throw PreviewLoopError(.invalidArgument, "\(name): not a JSON recipe object (\(BatchManifest.reason(error)))")
        }
    }
}

private struct RecipeError: Error { var message: String }

/// Decodes the recipe's JSON, refusing unknown keys and values out of range.
struct DecodedRecipe: Decodable {
    var recipe = BatchRecipe()

    init(from decoder: any Decoder) throws {
        let top = try decoder.container(keyedBy: AnyKey.self)
        try Self.refuseUnknown(top, known: ["poster", "strip", "sheet", "sprites", "hover"], in: "the recipe")
        func section(_ name: String, _ known: [String]) throws -> KeyedDecodingContainer<AnyKey>? {
            guard top.contains(AnyKey(name)) else { return nil }
            let container = try top.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey(name))
            try Self.refuseUnknown(container, known: known, in: "\"\(name)\"")
            return container
        }
        if let c = try section("poster", ["size", "quality", "start", "length", "at"]) {
            var p = BatchRecipe.Poster()
            p.sizeRequest = try Self.sizeRequest(c, "size", p.sizeRequest, "poster")
            p.size = p.sizeRequest.exactSize ?? p.size
            p.quality = try Self.integer(c, "quality", p.quality, ValueRanges.quality, "poster")
            p.start = try Self.seconds(c, "start", p.start, allowZero: true, "poster")
            p.length = try Self.seconds(c, "length", p.length, allowZero: false, "poster")
            if let time = try Self.time(c, "at", "poster", otherwise: "\"auto\", \"best\"", PosterTime.at,
                                        parsing: PosterTime.init(parsing:)) {
                // As thumb: the window belongs to auto.
                if time != .auto, let window = ["start", "length"].first(where: { c.contains(AnyKey($0)) }) {
                    throw RecipeError(message: "\"poster\".\"\(window)\": sets the window of \"at\": \"auto\"; it has no effect "
                                      + "with \"at\": \"\(time)\"")
                }
                p.at = time
            }
            recipe.poster = p
        }
        if let c = try section("strip", ["count", "columns", "size", "quality", "pick", "gap", "timestamps"]) {
            var s = BatchRecipe.Strip()
            s.count = try Self.integer(c, "count", s.count, ValueRanges.stripCount, "strip")
            s.columns = min(try Self.integer(c, "columns", s.count, ValueRanges.stripColumns, "strip"), s.count)
            s.sizeRequest = try Self.sizeRequest(c, "size", s.sizeRequest, "strip")
            s.size = s.sizeRequest.exactSize ?? s.size
            s.quality = try Self.integer(c, "quality", s.quality, ValueRanges.quality, "strip")
            s.pick = try Self.pick(c, s.pick, "strip")
            s.gap = try Self.integer(c, "gap", s.gap, ValueRanges.tileGap, "strip")
            s.showsTimestamps = try Self.flag(c, "timestamps", s.showsTimestamps, "strip")
            let stripSize = s.configuration.stripSize(tileSize: s.size)
            guard stripSize.width <= SizeRequest.maximumSide, stripSize.height <= SizeRequest.maximumSide else {
                throw RecipeError(message: "\"strip\": \(s.configuration.effectiveColumns)x\(s.configuration.rows) tiles of \(s.size) "
                                  + "make a strip of \(stripSize) pixels; at most \(SizeRequest.maximumSide) a side")
            }
            recipe.strip = s
        }
        if let c = try section("sheet", ["grid", "width", "tile_width", "gap", "margin", "header", "timestamps", "pick", "quality"]) {
            var s = BatchRecipe.Sheet()
            var configuration = s.configuration
            if let grid = try c.decodeIfPresent(String.self, forKey: AnyKey("grid")) {
                guard let parsed = Size(parsing: grid), ValueRanges.sheetGrid.contains(parsed.width), ValueRanges.sheetGrid.contains(parsed.height),
                      parsed.area <= ClipContactSheet.Configuration.maximumTiles else {
                    throw RecipeError(message: "\"sheet\".\"grid\": expected CxR, each \(ValueRanges.sheetGrid.inWords), at most "
                                      + "\(ClipContactSheet.Configuration.maximumTiles) tiles, not \(grid)")
                }
                (configuration.columns, configuration.rows) = (parsed.width, parsed.height)
            }
            if c.contains(AnyKey("width")) && c.contains(AnyKey("tile_width")) {
                throw RecipeError(message: "\"sheet\".\"tile_width\": \"width\" and \"tile_width\" both set the tiles' width; give one of them")
            }
            configuration.sheetWidth = try Self.integer(c, "width", configuration.sheetWidth, ValueRanges.sheetWidth, "sheet")
            if c.contains(AnyKey("tile_width")) {
                configuration.tileWidth = try Self.integer(c, "tile_width", 160, ValueRanges.sheetTileWidth, "sheet")
            }
            configuration.gap = try Self.integer(c, "gap", configuration.gap, ValueRanges.tileGap, "sheet")
            configuration.margin = try Self.integer(c, "margin", configuration.margin, ValueRanges.sheetMargin, "sheet")
            configuration.showsHeader = try Self.flag(c, "header", configuration.showsHeader, "sheet")
            configuration.style.showsTimestamps = try Self.flag(c, "timestamps", configuration.style.showsTimestamps, "sheet")
            configuration.pick = try Self.pick(c, configuration.pick, "sheet")
            s.quality = try Self.integer(c, "quality", s.quality, ValueRanges.quality, "sheet")
            do {
                try configuration.validate()
            } catch {
                throw RecipeError(message: "\"sheet\".\"\(configuration.tileWidth == nil ? "width" : "tile_width")\": \(error.message)")
            }
            s.configuration = configuration
            recipe.sheet = s
        }
        if let c = try section("sprites", ["every", "count", "size", "grid", "quality"]) {
            var s = BatchRecipe.Sprites()
            if c.contains(AnyKey("every")) {
                // As `sprites --every`: auto, or seconds above 0 (a number, or a string such as "0:30").
                let every: SpriteInterval? = if let seconds = try? c.decode(Double.self, forKey: AnyKey("every")) {
                    seconds > 0 && seconds <= 1e9 ? .every(seconds) : nil
                } else {
                    (try? c.decode(String.self, forKey: AnyKey("every"))).flatMap(SpriteInterval.init(parsing:))
                }
                guard let every else {
                    throw RecipeError(message: "\"sprites\".\"every\": expected \"auto\" or seconds above 0 (a number, or a string such as \"0:30\")")
                }
                s.every = every
            }
            if c.contains(AnyKey("count")) {
                if c.contains(AnyKey("every")) {
                    throw RecipeError(message: "\"sprites\".\"count\": give \"every\" or \"count\", not both")
                }
                s.every = .count(try Self.integer(c, "count", SpriteInterval.autoThumbnails, ValueRanges.spriteCount, "sprites"))
            }
            s.sizeRequest = try Self.sizeRequest(c, "size", s.sizeRequest, "sprites")
            s.size = s.sizeRequest.exactSize ?? s.size
            if let grid = try c.decodeIfPresent(String.self, forKey: AnyKey("grid")) {
                guard let parsed = Size(parsing: grid), ValueRanges.spriteGrid.contains(parsed.width), ValueRanges.spriteGrid.contains(parsed.height) else {
                    throw RecipeError(message: "\"sprites\".\"grid\": expected CxR, each \(ValueRanges.spriteGrid.inWords), not \(grid)")
                }
                (s.columns, s.rows) = (parsed.width, parsed.height)
            }
            s.quality = try Self.integer(c, "quality", s.quality, ValueRanges.quality, "sprites")
            recipe.sprites = s
        }
        if let c = try section("hover", ["start", "length", "size", "fps", "quality", "loop_point", "seam", "format", "flash_safety"]) {
            var h = BatchRecipe.Hover()
            h.start = try Self.time(c, "start", "hover", otherwise: "\"poster\"", HoverStart.at, parsing: HoverStart.init(parsing:)) ?? h.start
            h.length = try Self.seconds(c, "length", h.length, allowZero: false, "hover")
            h.sizeRequest = try Self.sizeRequest(c, "size", h.sizeRequest, "hover")
            if c.contains(AnyKey("format")) {
                guard let text = try? c.decode(String.self, forKey: AnyKey("format")), let format = AnimationFormat(rawValue: text) else {
                    throw RecipeError(message: "\"hover\".\"format\": expected \"mp4\", \"webp\" or \"gif\"")
                }
                h.format = format
                if format == .gif && c.contains(AnyKey("quality")) {
                    throw RecipeError(message: "\"hover\".\"quality\" has no effect on a GIF (a palette, no quality setting); drop it or use mp4 or webp")
                }
            }
            h.size = h.sizeRequest.exactSize ?? h.size
            guard h.format != .mp4 || (h.size.width % 2 == 0 && h.size.height % 2 == 0) else {
                throw RecipeError(message: "\"hover\".\"size\": H.264 needs an even width and height, not \(h.size)")
            }
            h.framesPerSecond = try Self.integer(c, "fps", h.framesPerSecond, ValueRanges.framesPerSecond, "hover")
            h.quality = try Self.integer(c, "quality", h.quality, ValueRanges.quality, "hover")
            if c.contains(AnyKey("flash_safety")) {
                guard let text = try? c.decode(String.self, forKey: AnyKey("flash_safety")), let mode = FlashSafety(rawValue: text) else {
                    throw RecipeError(message: "\"hover\".\"flash_safety\": expected \"check\", \"avoid\" or \"off\"")
                }
                h.flashSafety = mode
            }
            try Self.readSeam(c, into: &h)
            recipe.hover = h
        }
        // Sizes known now (exact, or the default box in either turn) go through the rules at once;
        // the others once the clip is open (``BatchRecipe/resolved(display:)``).
        if let refusal = recipe.sizeRefusal() { throw RecipeError(message: "\(refusal.key): \(refusal.reason)") }
    }

    /// The most bytes of frames a seamed hover may hold until its out point is known (as `render`'s
    /// default `--max-memory`, 1024 MB).
    static let seamedHoverBytes = 1 << 30

    /// `"loop_point"` (a number of seconds, or a string as `render --loop-point` reads it) and `"seam"`
    /// (as `render --seam`): a loop point after the start, a crossfade shorter than the loop, and the
    /// frames held to find the seam within ``seamedHoverBytes``.
    static func readSeam(_ c: KeyedDecodingContainer<AnyKey>, into h: inout BatchRecipe.Hover) throws {
        if let point = try Self.time(c, "loop_point", "hover", otherwise: "\"auto\"", LoopEnd.at, parsing: LoopEnd.init(parsing:)) {
            if case .at(.seconds(let end)) = point {
                guard case .at(.seconds(let start)) = h.start else {
                    throw RecipeError(message: "\"hover\".\"loop_point\": a loop point at \(end) s needs a \"start\" in seconds "
                                      + "(the start is \(h.start)); give \"length\" instead")
                }
                guard end > start else {
                    throw RecipeError(message: "\"hover\".\"loop_point\": \(end) s must come after \"start\" (\(start) s)")
                }
                h.length = end - start
            }
            h.loopPoint = point
        }
        if let text = try c.decodeIfPresent(String.self, forKey: AnyKey("seam")) {
            guard let seam = LoopSeam(parsing: text) else {
                throw RecipeError(message: "\"hover\".\"seam\": expected cut, crossfade or crossfade=T (T seconds above 0), not \(text)")
            }
            if case .crossfade(let fade) = seam, h.loopPoint.map({ if case .at(.percent) = $0 { false } else { true } }) ?? true,
               fade.seconds >= h.length {
                throw RecipeError(message: "\"hover\".\"seam\": the crossfade (\(fade.seconds) s) must be shorter than the loop (\(h.length) s)")
            }
            h.seam = seam
        }
        if h.isSeamed {
            // The frames held until the out point is known: the window (+25 % for a search) and the crossfade.
            var seconds = h.length * (h.loopPoint == .auto ? 1 + LoopEnd.searchFraction : 1)
            if case .crossfade(let fade) = h.seam { seconds += fade.seconds }
            let bytes = (seconds * Double(h.framesPerSecond)).rounded(.up) * Double(h.size.area * 3)
            if case .at(.percent) = h.loopPoint {} else if bytes > Double(seamedHoverBytes) {
                throw RecipeError(message: "\"hover\": a loop point or seam holds the window's frames to find the seam: "
                                  + "about \(Int((bytes / 1_048_576).rounded(.up))) MB here, more than \(seamedHoverBytes >> 20) MB "
                                  + "(shorten \"length\" or \"loop_point\", or lower \"size\" or \"fps\")")
            }
        }
    }

    static func refuseUnknown(_ container: KeyedDecodingContainer<AnyKey>, known: [String], in place: String) throws {
        if let unknown = container.allKeys.first(where: { !known.contains($0.stringValue) }) {
            throw RecipeError(message: "unknown key \"\(unknown.stringValue)\" in \(place) (known: \(known.joined(separator: ", ")))")
        }
    }

    static func flag(_ c: KeyedDecodingContainer<AnyKey>, _ key: String, _ fallback: Bool, _ section: String) throws -> Bool {
        guard c.contains(AnyKey(key)) else { return fallback }
        guard let value = try? c.decode(Bool.self, forKey: AnyKey(key)) else {
            throw RecipeError(message: "\"\(section)\".\"\(key)\": expected true or false")
        }
        return value
    }

    static func pick(_ c: KeyedDecodingContainer<AnyKey>, _ fallback: TilePick, _ section: String) throws -> TilePick {
        guard c.contains(AnyKey("pick")) else { return fallback }
        guard let text = try? c.decode(String.self, forKey: AnyKey("pick")), let pick = TilePick(rawValue: text) else {
            throw RecipeError(message: "\"\(section)\".\"pick\": expected \"even\" or \"scenes\"")
        }
        return pick
    }

    /// A size as the commands' `--size` reads it: `WxH`, `W` (the height at the clip's aspect), `xH`,
    /// `Wx-1`, `-1xH` or `source`.
    static func sizeRequest(_ c: KeyedDecodingContainer<AnyKey>, _ key: String, _ fallback: SizeRequest, _ section: String) throws -> SizeRequest {
        guard c.contains(AnyKey(key)) else { return fallback }
        guard let text = try? c.decode(String.self, forKey: AnyKey(key)), let request = SizeRequest(parsing: text) else {
            let shown = (try? c.decode(String.self, forKey: AnyKey(key))) ?? "a value that is not a string"
            throw RecipeError(message: "\"\(section)\".\"\(key)\": expected WxH, W, xH or source (each side 1 to 16384), not \(shown)")
        }
        return request
    }

    static func integer(_ c: KeyedDecodingContainer<AnyKey>, _ key: String, _ fallback: Int, _ range: ClosedRange<Int>,
                        _ section: String) throws -> Int {
        guard c.contains(AnyKey(key)) else { return fallback }
        guard let value = try? c.decode(Int.self, forKey: AnyKey(key)) else {
            // A number with a fraction, out of Int's range, or not a number at all: named as such.
            let shown = (try? c.decode(Double.self, forKey: AnyKey(key))).map { $0.isFinite ? ", not \($0)" : ", not \($0) (out of range)" }
                ?? " (the value is not one, or too large for a number)"
            throw RecipeError(message: "\"\(section)\".\"\(key)\": expected a whole number from \(range.lowerBound) to \(range.upperBound)\(shown)")
        }
        guard range.contains(value) else {
            throw RecipeError(message: "\"\(section)\".\"\(key)\": \(value) is outside \(range.lowerBound)–\(range.upperBound)")
        }
        return value
    }

    /// A time key: a number of seconds (finite, 0 to 10⁹) made into `at`, or a string `parsing` reads
    /// (as the CLI's option does); `nil` when the key is absent. Anything else is refused, naming the
    /// `words` accepted besides a time.
    static func time<T>(_ c: KeyedDecodingContainer<AnyKey>, _ key: String, _ section: String, otherwise words: String,
                        _ at: (TimePosition) -> T, parsing: (String) -> T?) throws -> T? {
        let codingKey = AnyKey(key)
        guard c.contains(codingKey) else { return nil }
        let value: T?
        if let seconds = try? c.decode(Double.self, forKey: codingKey) {
            value = seconds.isFinite && (0...1e9).contains(seconds) ? at(.seconds(seconds)) : nil
        } else {
            value = (try? c.decode(String.self, forKey: codingKey)).flatMap(parsing)
        }
        guard let value else {
            throw RecipeError(message: "\"\(section)\".\"\(key)\": expected \(words) or a time (seconds, mm:ss, hh:mm:ss.ms or a "
                              + "percentage such as \"10%\")")
        }
        return value
    }

    static func seconds(_ c: KeyedDecodingContainer<AnyKey>, _ key: String, _ fallback: Double, allowZero: Bool,
                        _ section: String) throws -> Double {
        guard let value = try c.decodeIfPresent(Double.self, forKey: AnyKey(key)) else { return fallback }
        guard value.isFinite, allowZero ? value >= 0 : value > 0 else {
            throw RecipeError(message: "\"\(section)\".\"\(key)\": \(value) must be \(allowZero ? "0 or more" : "above 0") seconds")
        }
        return value
    }
}
