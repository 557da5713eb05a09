import FoundationEssentials

/// A recipe key's refusal: one line naming the key, its section and what it takes.
struct RecipeError: Error { var message: String }

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
        if let c = try section("poster", ["size", "quality", "start", "length", "at", "format"]) {
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
            if c.contains(AnyKey("format")) {
                let formats: [ImageFileFormat] = [.jpeg, .webp, .avif, .png]
                guard let text = try? c.decode(String.self, forKey: AnyKey("format")),
                      let format = formats.first(where: { $0.fileExtensions.contains(text) }) else {
                    throw RecipeError(message: "\"poster\".\"format\": expected \"jpg\", \"webp\", \"avif\" or \"png\"")
                }
                p.format = format
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
