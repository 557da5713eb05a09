import PreviewLoop

// The recipe's sections, each the job that makes its output (BatchRecipe+Jobs.swift reads them): what
// only the recipe has, the job's parameters it leaves out and why, and the typed job turned into the
// library's `BatchRecipe` output. A parameter a job declares is a key of its section with no edit here;
// one whose value `BatchRecipe` cannot hold is left out by name below, until it can.

extension BatchRecipeSection {
    /// `poster`: `thumb -o poster.EXT` (JPEG by default).
    static let poster = BatchRecipeSection(
        name: "poster", command: ThumbCommand.self, commandLine: "thumb -o poster.EXT", output: "poster",
        formats: ["jpg", "webp", "avif", "png"],
        formatAliases: ["jpeg": "jpg"],
        // A batch's poster is the first good frame of its window, the best of the clip or the exact frame
        // at a time, of the file as a whole, without overlays: no keyframe accuracy, live-playlist choice
        // or overlay background to hold.
        leftOut: ["accuracy", "latest", "program_time", "background"]) { job, _, recipe throws(RecipeRefusal) in
        let thumb = job as! ThumbCommand
        var poster = BatchRecipe.Poster()
        poster.sizeRequest = thumb.size
        poster.size = thumb.size.exactSize ?? poster.size
        poster.quality = thumb.quality ?? poster.quality
        poster.start = try seconds(thumb.start, "poster", "start")
        poster.length = try seconds(thumb.length, "poster", "length")
        poster.at = thumb.time
        poster.format = thumb.format
        recipe.poster = poster
    }

    /// `strip`: `strip --span all -o strip.jpg`.
    static let strip = BatchRecipeSection(
        name: "strip", command: StripCommand.self, commandLine: "strip --span all", output: "strip", formats: ["jpg"],
        // A batch's strip is of the whole clip, each tile chosen as `--accuracy auto` does.
        leftOut: ["span", "start", "length", "accuracy"]) { job, _, recipe throws(RecipeRefusal) in
        let command = job as! StripCommand
        var strip = BatchRecipe.Strip()
        strip.count = command.count
        strip.columns = command.columns
        strip.sizeRequest = command.size
        strip.size = command.size.exactSize ?? strip.size
        strip.quality = command.quality ?? strip.quality
        strip.pick = command.pick
        strip.gap = command.gap
        strip.showsTimestamps = command.showsTimestamps
        recipe.strip = strip
    }

    /// `sheet`: `sheet -o contact-sheet.jpg`, its configuration the one the command builds.
    static let sheet = BatchRecipeSection(
        name: "sheet", command: SheetCommand.self, commandLine: "sheet", output: "contact-sheet", formats: ["jpg"]) {
        job, given, recipe throws(RecipeRefusal) in
        let command = job as! SheetCommand
        var sheet = BatchRecipe.Sheet()
        var configuration = command.sheetConfiguration
        // The batch's JPEG goes through the recipe's size rules (``BatchRecipe/resolved(display:)``).
        configuration.outputFormat = nil
        do throws(PreviewLoopError) {
            try configuration.validate()
        } catch {
            throw RecipeRefusal("\"sheet\".\"\(given.contains("tile_width") ? "tile_width" : "width")\": \(error.message)")
        }
        sheet.configuration = configuration
        sheet.quality = command.quality ?? sheet.quality
        recipe.sheet = sheet
    }

    /// `sprites`: `sprites -o DIR`, JPEG sheets and their WebVTT track.
    static let sprites = BatchRecipeSection(
        name: "sprites", command: SpritesCommand.self, commandLine: "sprites -o DIR", output: "sprites", formats: [""],
        // A batch's sprite sheets are JPEG (`sprites-N.jpg`, which its record and the feed page name),
        // each tile the frame `--accuracy auto` takes at its interval's middle.
        leftOut: ["format", "accuracy", "pick"]) { job, _, recipe throws(RecipeRefusal) in
        let command = job as! SpritesCommand
        var sprites = BatchRecipe.Sprites()
        sprites.every = command.every
        sprites.sizeRequest = command.size
        sprites.size = command.size.exactSize ?? sprites.size
        sprites.columns = command.columns
        sprites.rows = command.rows
        sprites.quality = command.quality ?? sprites.quality
        recipe.sprites = sprites
    }

    /// `hover`: `render -o hover.EXT` (MP4 by default), starting at the poster unless told.
    static let hover = BatchRecipeSection(
        name: "hover", command: RenderCommand.self, commandLine: "render -o hover.EXT", output: "hover",
        formats: AnimationFormat.allCases.map(\.rawValue),
        defaults: ["start": "poster"],
        // A batch's hover is a window of the file as it is: no live playlist's newest seconds to hold.
        leftOut: ["latest"]) { job, _, recipe throws(RecipeRefusal) in
        let render = job as! RenderCommand
        var hover = BatchRecipe.Hover()
        hover.start = render.startsAtPoster ? .poster : .at(render.start)
        hover.length = try seconds(render.length, "hover", "length")
        hover.sizeRequest = render.size
        hover.size = render.size.exactSize ?? hover.size
        hover.framesPerSecond = render.framesPerSecond
        hover.quality = render.quality ?? hover.quality
        hover.format = render.format
        hover.flashSafety = render.flashSafety
        hover.seam = render.seam
        hover.loopPoint = render.loopPoint
        if case .at(.seconds(let end))? = render.loopPoint {
            // A loop point in seconds replaces the length, which a start in seconds makes known now.
            guard !render.startsAtPoster, case .seconds(let start) = render.start else {
                throw RecipeRefusal("\"hover\".\"loop_point\": a loop point at \(end) s needs a \"start\" in seconds "
                                    + "(the start is \(hover.start)); give \"length\" instead")
            }
            hover.length = end - start
        }
        if let refusal = seamedHoverRefusal(hover) { throw RecipeRefusal("\"hover\": " + refusal) }
        recipe.hover = hover
    }

    /// Why a hover with a loop point or seam would hold too many frames to find the seam (the window,
    /// +25 % for a search, and the crossfade), or `nil`; a percentage loop point is bounded while rendering.
    static func seamedHoverRefusal(_ hover: BatchRecipe.Hover) -> String? {
        guard hover.isSeamed else { return nil }
        var seconds = hover.length * (hover.loopPoint == .auto ? 1 + LoopEnd.searchFraction : 1)
        if case .crossfade(let fade) = hover.seam { seconds += fade.seconds }
        let bytes = (seconds * Double(hover.framesPerSecond)).rounded(.up) * Double(hover.size.area * 3)
        if case .at(.percent) = hover.loopPoint { return nil }
        guard bytes > Double(BatchRecipe.seamedHoverBytes) else { return nil }
        return "a loop point or seam holds the window's frames to find the seam: about \(Int((bytes / 1_048_576).rounded(.up))) MB "
            + "here, more than \(BatchRecipe.seamedHoverBytes >> 20) MB (shorten \"length\" or \"loop_point\", or lower \"size\" or \"fps\")"
    }
}
