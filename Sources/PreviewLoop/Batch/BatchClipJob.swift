/// What is known about a clip while it is made, kept for its failure record.
final class BatchClipContext {
    /// The clip's probe, once opened.
    var info: VideoInfo?
    /// Milliseconds spent, by step: `open_ms`, `poster_ms`, … `total_ms`.
    var timings: [String: Double] = [:]
}

/// One clip's outputs made from one opened input: each output is one step (``step(_:_:)``: a check for a
/// stop, the work, its entries and its time), writing into the clip's staging folder.
final class BatchClipJob {
    let clip: BatchClip
    let staging: String
    let sampler: FrameSampler
    let info: VideoInfo
    /// The recipe, its sizes resolved for this clip (the default boxes turned for a portrait clip).
    let recipe: BatchRecipe
    let threads: Int
    let sourceOptions: SourceOptions
    let context: BatchClipContext
    private let isStopped: () -> Bool
    private(set) var outputs: [BatchRecord.Output] = []
    /// Where the hover starts when the recipe gives a time (the manifest's `start` replaces it).
    private var hoverStartTime: Double?
    /// The hover preview made from this clip's decoder, started before the poster's search when it
    /// starts where the search does.
    private var hoverPreview: HoverPreview?
    /// The poster's time, once made: where an `auto` hover starts.
    private var posterTime: Double?

    /// Opens the clip (timed as `open_ms`).
    init(clip: BatchClip, staging: String, recipe: BatchRecipe, threads: Int, sourceOptions: SourceOptions,
         context: BatchClipContext, isStopped: @escaping () -> Bool) throws(PreviewLoopError) {
        let started = ContinuousClock.now
        let source = Source(argument: clip.input)
        if case .standardInput = source { throw PreviewLoopError(.refusedByPolicy, "'-' cannot be a batch input") }
        self.clip = clip
        self.staging = staging
        self.threads = threads
        self.sourceOptions = sourceOptions
        self.context = context
        self.isStopped = isStopped
        sampler = try FrameSampler(source: source, threads: min(threads, 16), options: sourceOptions)
        info = sampler.info
        context.info = info
        context.timings["open_ms"] = Self.milliseconds(since: started)
        self.recipe = try recipe.resolved(display: info.displaySize)
    }

    /// Makes every output of the recipe, in the order later ones depend on (the hover starts at the
    /// poster), then measures each file where it lies: never "ok" with a missing or empty file.
    func run() throws -> [BatchRecord.Output] {
        try prepareHover()
        if let poster = recipe.poster { try step("poster") { try makePoster(poster) } }
        if let hover = recipe.hover { try step("hover") { try makeHover(hover) } }
        if let strip = recipe.strip { try step("strip") { try makeStrip(strip) } }
        if let sheet = recipe.sheet { try step("sheet") { try makeSheet(sheet) } }
        if let sprites = recipe.sprites { try step("sprites") { try makeSprites(sprites) } }
        try checkStop()
        for index in outputs.indices {
            let name = String(outputs[index].path.dropFirst(clip.id.count + 1))
            guard let size = BatchFiles.fileSize(staging + "/" + name), size > 0 else {
                throw PreviewLoopError(.outputNotWritable, "\(clip.input): \(name) is missing or empty after writing")
            }
            outputs[index].bytes = size
        }
        return outputs
    }

    /// One output step: checks for a stop, runs `body`, keeps the entries it returns and its time as
    /// `<name>_ms`.
    private func step(_ name: String, _ body: () throws -> [BatchRecord.Output]) throws {
        try checkStop()
        let began = ContinuousClock.now
        outputs += try body()
        context.timings[name + "_ms"] = Self.milliseconds(since: began)
    }

    func checkStop() throws(PreviewLoopError) {
        if isStopped() { throw PreviewLoopError(.cancelled, "\(clip.input): the batch was stopped") }
    }

    /// The entry of an output named `name` in the clip's folder, its size measured at the end.
    func entry(_ kind: String, _ name: String) -> BatchRecord.Output {
        BatchRecord.Output(kind: kind, path: clip.id + "/" + name, bytes: 0)
    }

    /// Writes `image` as the JPEG `name` in the staging folder.
    private func writeJPEG(_ image: RGBImage, quality: Int, _ name: String) throws(PreviewLoopError) {
        try AtomicFile.write(try ImageEncoder.encode(image, as: .jpeg, quality: quality), to: staging + "/" + name)
    }

    /// Milliseconds since `instant`, to the microsecond, for a record's timings.
    static func milliseconds(since instant: ContinuousClock.Instant) -> Double {
        let elapsed = (ContinuousClock.now - instant).components
        return (Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15).rounded(toPlaces: 3)
    }

    // MARK: The steps

    /// A hover at a known time starts now, so that the poster's search can hand it frames.
    private func prepareHover() throws {
        if case .at(let position)? = recipe.hover?.start {
            hoverStartTime = try clip.overrides.start ?? position.resolved(duration: info.duration, "\(clip.input): the hover's \"start\"")
        }
        // A hover with a loop point or a seam is made by render's own call; the others from this decoder.
        if let hover = recipe.hover, !hover.isSeamed, let start = hoverStartTime {
            hoverPreview = try HoverPreview(hover, start: start, clip: clip, duration: info.duration, path: staging + "/" + hover.fileName)
        }
    }

    private func makePoster(_ poster: BatchRecipe.Poster) throws -> [BatchRecord.Output] {
        var made = entry("poster", poster.fileName)
        made.width = poster.size.width
        made.height = poster.size.height
        let picture: RGBImage
        switch poster.at {
        case .at(let position):
            // As `thumb --at <time>`: the frame shown then, exactly, the time kept within the clip.
            let time = StillTime(asked: try position.resolved(duration: info.duration, "\(clip.input): the poster's \"at\""), info: info)
            let frame = try sampler.frame(at: time.taken, size: poster.size, accuracy: .exact)
            picture = frame.image
            made.time = frame.sourceTime
            made.timeAsked = time.asked
            made.choice = time.choice(accuracy: .exact)
        case .best, .auto:
            // As `thumb --at best` (the most representative good frame of the whole clip) or `--at auto`.
            let choice = poster.at == .best ? try sampler.bestPosterFrame(size: poster.size)
                : try autoPoster(poster, sharingWith: hoverPreview)
            picture = choice.frame.image
            made.time = choice.time
            made.choice = choice.reason.description + (choice.flaw.map { " (itself \($0))" } ?? "")
            made.skippedFrames = choice.rejected.count
        }
        try AtomicFile.write(try ImageEncoder.encode(picture, as: poster.format, quality: poster.quality), to: staging + "/" + poster.fileName)
        made.placeholder = ImagePlaceholder(picture)
        made.phash = PerceptualHash(picture).description
        posterTime = made.time
        return [made]
    }

    private func makeHover(_ hover: BatchRecipe.Hover) throws -> [BatchRecord.Output] {
        // At the poster: the recipe's poster, or (without one) the search `thumb --at auto` makes.
        let start: Double
        if let known = hoverStartTime ?? posterTime {
            start = known
        } else {
            var poster = BatchRecipe.Poster()
            poster.size = poster.sizeRequest.resolved(display: info.displaySize)
            start = try autoPoster(poster, sharingWith: nil).time
        }
        if hover.isSeamed {
            return [try renderHover(hover, start: start, entry: entry("hover", hover.fileName))]
        }
        let preview = try hoverPreview
            ?? HoverPreview(hover, start: start, clip: clip, duration: info.duration, path: staging + "/" + hover.fileName)
        return [try finishHover(preview, hover, entry: entry("hover", hover.fileName))]
    }

    private func makeStrip(_ strip: BatchRecipe.Strip) throws -> [BatchRecord.Output] {
        // As `strip --span all` with the same options: the library's contact strip.
        let made = try sampler.contactStrip(strip.configuration)
        try writeJPEG(made.image, quality: strip.quality, "strip.jpg")
        return [tiled(entry("strip", "strip.jpg"), image: made.image, plan: made.plan)]
    }

    private func makeSheet(_ sheet: BatchRecipe.Sheet) throws -> [BatchRecord.Output] {
        // As `sheet` with the same options: the library's contact sheet, its header naming the input.
        let drawer = try ContactSheet(style: sheet.configuration.style, hasHeader: sheet.configuration.showsHeader)
        let made = try sampler.contactSheet(sheet.configuration, drawer: drawer, name: ContactSheetHeader.displayName(of: clip.input),
                                            fileSize: ContactSheetHeader.fileSize(of: clip.input))
        try writeJPEG(made.image, quality: sheet.quality, "contact-sheet.jpg")
        return [tiled(entry("sheet", "contact-sheet.jpg"), image: made.image, plan: made.plan)]
    }

    private func makeSprites(_ sprites: BatchRecipe.Sprites) throws -> [BatchRecord.Output] {
        var sheets: [BatchRecord.Output] = []
        var sheetHashes: [[PerceptualHash]] = []
        let layout = ThumbnailTrack.Layout(tileSize: sprites.size, columns: sprites.columns, rows: sprites.rows)
        let cues = try sampler.thumbnailTrack(
            every: clip.overrides.every ?? sprites.every.seconds(duration: info.duration, frameInterval: info.frameInterval),
            layout: layout,
            onSheet: { index, sheet throws(PreviewLoopError) in
                try checkStop()
                let name = ThumbnailTrack.sheetFileName(index, fileExtension: "jpg")
                try writeJPEG(sheet, quality: sprites.quality, name)
                var made = entry("sprite_sheet", name)
                made.width = sheet.width
                made.height = sheet.height
                sheets.append(made)
                // Each place's pHash while the sheet is in memory; the cues say how many it holds.
                let rows = min(layout.rows, sheet.height / max(1, layout.tileSize.height))
                sheetHashes.append(layout.perceptualHashes(of: sheet, index: index, count: layout.columns * rows))
            })
        for index in sheets.indices {
            sheets[index].tilePhashes = sheetHashes[index].prefix(cues.cues.filter { $0.sheet == index }.count).map(\.description)
        }
        let vtt = cues.webVTT { ThumbnailTrack.sheetFileName($0, fileExtension: "jpg") }
        try AtomicFile.write(Array(vtt.utf8), to: staging + "/thumbnails.vtt")
        var track = entry("webvtt", "thumbnails.vtt")
        track.tiles = cues.cues.count
        track.duration = cues.cues.last?.end
        return [track] + sheets
    }
    /// A strip's or sheet's entry, with its picture's size and the tiles it shows.
    private func tiled(_ entry: BatchRecord.Output, image: RGBImage, plan: TilePlan) -> BatchRecord.Output {
        var entry = entry
        entry.describeTiles(of: image, plan: plan)
        return entry
    }
}

extension BatchRecord.Output {
    /// Records a strip's or sheet's picture size and the tiles it shows: how many, the first one's
    /// time, the plan that chose them and each tile's perceptual hash.
    package mutating func describeTiles(of image: RGBImage, plan: TilePlan) {
        width = image.width
        height = image.height
        tiles = plan.frames.count
        time = plan.frames.first?.sourceTime
        self.plan = TilePlanReport(plan)
        tilePhashes = plan.frames.map { PerceptualHash($0.image).description }
    }
}
