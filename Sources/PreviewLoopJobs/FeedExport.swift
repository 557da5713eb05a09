import FoundationEssentials
import Glibc
import PreviewLoop

/// `preview-loop batch export-page` as a job: its options (the folder alone), checks and work.
struct BatchExportPageCommand: Equatable, Sendable {
    /// The batch output folder, as given.
    var directory = ""
}

extension BatchExportPageCommand: ParsableCommand {
    /// `preview-loop batch export-page`: its name, summary and argument.
    static let configuration = CommandConfiguration(
        name: "export-page",
        abstract: "Write the feed page over a batch output folder's completed clips (index.html, feed.css, feed.js "
            + "beside the clips' folders), for any static host or opened from the file system.",
        arguments: [PositionalArgument(name: "out", abstract: "The batch output folder (batch's --out), or its "
                    + "s3://BUCKET/PREFIX/; its results files name the clips and their outputs.", completion: .directory)])

    var input: String { "batch" }

    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        let positionals = arguments.positionals
        guard positionals.count == 1 else {
            throw UsageError(positionals.isEmpty ? .missingInput : .unexpectedArgument(positionals[1]), subcommand: Self.subcommand,
                             "'batch export-page' takes one batch output folder.")
        }
        directory = positionals[0]
    }

    func run(in context: CommandContext) -> Int32 {
        CommandFailure.reporting(for: "batch") { try FeedExport(directory: directory).run() }
    }
}

/// `preview-loop batch export-page OUT`: the feed page over a batch output folder, as static files
/// (`OUT/index.html`, `OUT/feed.css`, `OUT/feed.js`) whose URLs are relative to the folder: each clip
/// that batch completed is a card of its poster's shape with its `poster.jpg` (its `2x` source when
/// twice the card's size, as the default recipe makes it), its `hover.mp4` as the preview and its
/// `thumbnails.vtt` sprites for scrubbing. Any static host serves it, and it works opened from the file
/// system: the page carries each `thumbnails.vtt` in itself (``FeedPage/Card/storyboardTrack``), since
/// a page from `file://` may not fetch, and everything else it shows is an `<img>`, a `<video>` or a
/// CSS background, which such a page may load.
///
/// Only its own files are replaced: an `index.html`, `feed.css` or `feed.js` already there that this
/// command did not write is left as it is and the export fails naming it.
struct FeedExport {
    var directory: String

    /// The files written, beside the clips' folders.
    static let fileNames = ["index.html", "feed.css", "feed.js"]

    func run() throws -> Int32 {
        if ObjectOutput.isObject(directory) { return try runInBucket() }
        let page = try Self.page(directory: directory)
        let contents = [page.html(), FeedPage.styleSheet, FeedPage.script]
        for name in Self.fileNames {
            let path = directory + "/" + name
            if FileSystem.fileExists(path).exists, !Self.isOwn(path) {
                throw PreviewLoopError(.outputNotWritable, "\(path): a file this command did not write is there; move it or export elsewhere")
            }
        }
        for (name, text) in zip(Self.fileNames, contents) {
            try AtomicFile.write(Array(text.utf8), to: directory + "/" + name)
        }
        let clips = page.cards.count == 1 ? "1 clip" : "\(page.cards.count) clips"
        Console.writeOutput("wrote \(Format.oneLine(directory))/index.html (\(clips)), feed.css and feed.js\n")
        return ExitStatus.success
    }

    /// The page over `batch --out s3://BUCKET/PREFIX/`: the results objects and the clips' WebVTT tracks
    /// are fetched into a local folder (removed after), the page is made from it as from a batch folder,
    /// and `index.html`, `feed.css` and `feed.js` are uploaded beside the clips' folders; their URLs are
    /// relative, so the page works served from the bucket. Objects of those names that an export did not
    /// write are not replaced (checked first, and new ones are put with `If-None-Match: *`).
    private func runInBucket() throws -> Int32 {
        let prefix = try ObjectOutput.prefixURL(directory)
        let objects = try ObjectOutput.list(prefix).map { String($0.url.dropFirst(prefix.count)) }
        let staging = try ObjectStaging()
        let local = staging.folder + "/out"
        try AtomicFile.createDirectory(local)
        for name in objects {
            let parts = name.split(separator: "/", omittingEmptySubsequences: false)
            let isResults = parts.count == 1 && name.hasPrefix("results") && name.hasSuffix(".jsonl")
            let isTrack = parts.count == 2 && name.hasSuffix(".vtt") && !parts[0].hasPrefix(".")
            guard isResults || isTrack, !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else { continue }
            guard let bytes = try ObjectOutput.get(prefix + name, limit: isResults ? 1 << 30 : Self.maxTrackBytes) else { continue }
            if isTrack { try AtomicFile.createDirectory(local + "/" + parts[0]) }
            try AtomicFile.write(bytes, to: local + "/" + name)
        }
        var page = try Self.page(directory: local)
        let name = prefix.dropFirst(5).split(separator: "/").last.map(String.init) ?? prefix
        page.title = "Previews: " + FilePathBytes.displayed(name)
        let contents = [page.html(), FeedPage.styleSheet, FeedPage.script]
        var existing: Set<String> = []
        for name in Self.fileNames where objects.contains(name) {
            let copy = staging.folder + "/" + name
            try AtomicFile.write(try ObjectOutput.get(prefix + name, limit: 1 << 24) ?? [], to: copy)
            guard Self.isOwn(copy) else {
                throw PreviewLoopError(.outputNotWritable, "\(prefix)\(name): an object this command did not write is there; move it or export elsewhere")
            }
            existing.insert(name)
        }
        for (name, text) in zip(Self.fileNames, contents) {
            try ObjectOutput.upload(Array(text.utf8), to: prefix + name, ifAbsent: !existing.contains(name))
        }
        let clips = page.cards.count == 1 ? "1 clip" : "\(page.cards.count) clips"
        Console.writeOutput("wrote \(Format.oneLine(prefix))index.html (\(clips)), feed.css and feed.js\n")
        return ExitStatus.success
    }

    /// Whether the file at `path` is one an export wrote (its first bytes carry the page's marks).
    static func isOwn(_ path: String) -> Bool {
        guard let bytes = try? BatchFiles.readFile(path, limit: 1 << 24) else { return false }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.contains("<meta name=\"generator\" content=\"\(FeedPage.generator)\">")
            || text.hasPrefix("/* PreviewLoop feed") || text.hasPrefix("// PreviewLoop feed")
    }

    /// The page for the folder's latest record of each clip (in id order), completed clips only.
    ///
    /// - Throws: ``PreviewLoopError/Code/inputNotFound`` when the folder has no results or no clip completed.
    static func page(directory: String) throws -> FeedPage {
        var latest: [String: BatchRecord] = [:]
        let decoder = JSONDecoder()
        for file in try BatchReport.resultsFiles([directory]) {
            try ResultsLines.read(file) { _, line, _ in
                guard let record = try? decoder.decode(BatchRecord.self, from: Data(line)), record.type == "clip" else { return }
                if let earlier = latest[record.id], earlier.finishedAt > record.finishedAt { return }
                latest[record.id] = record
            }
        }
        let cards = latest.values.filter { $0.status == .ok }.sorted { $0.id < $1.id }.compactMap { card($0, directory: directory) }
        guard !cards.isEmpty else {
            throw PreviewLoopError(.inputNotFound, "\(directory): no completed clip with a poster in its results")
        }
        if let missing = missingRecipeKeys(cards) { Console.writeWarning(missing) }
        let name = directory.split(separator: "/").last.map(String.init) ?? directory
        var page = FeedPage(title: "Previews: " + FilePathBytes.displayed(name), cards: cards)
        page.assets = .files
        return page
    }

    /// What the recipe the clips were made with lacks for the page, as one line naming the recipe keys
    /// to add, or `nil` when every card has a poster at twice its size and a hover MP4 (the default
    /// recipe makes both): a smaller poster is soft on a high-density screen, and a card without a
    /// hover MP4 has no play button.
    static func missingRecipeKeys(_ cards: [FeedPage.Card]) -> String? {
        let soft = cards.filter { $0.posterDensity < 2 }.count
        let still = cards.filter { $0.video == nil }.count
        guard soft > 0 || still > 0 else { return nil }
        var problems: [String] = [], keys: [String] = []
        if soft > 0 {
            problems.append("\(soft) of \(cards.count) posters are smaller than twice their card (soft on a high-density screen)")
            let size = BatchRecipe.standard.poster?.size ?? Size(width: 960, height: 540)
            keys.append("\"poster\": {\"size\": \"\(size.width)x\(size.height)\"}")
        }
        if still > 0 {
            problems.append("\(still) of \(cards.count) clips have no hover MP4 (no play button)")
            keys.append("\"hover\": {}")
        }
        return problems.joined(separator: " and ") + "; add " + keys.joined(separator: " and ")
            + " to the recipe (or run batch without --recipe) and run batch again with --force"
    }

    /// The most bytes of a storyboard track the page carries: ample for any track batch writes (100
    /// cues by default, about 7 KB; 4 hours at one tile a second, about 1 MB).
    static let maxTrackBytes = 2 << 20

    /// A clip's card: its poster, its hover MP4 (when the recipe made one) and its sprites' track, whose
    /// text the page carries.
    static func card(_ record: BatchRecord, directory: String) -> FeedPage.Card? {
        func output(_ kind: String, suffix: String? = nil) -> BatchRecord.Output? {
            record.outputs.first { $0.kind == kind && (suffix.map($0.path.hasSuffix) ?? true) }
        }
        guard let poster = output("poster") else { return nil }
        var card = FeedPage.Card(
            title: record.id, name: record.id, posters: [FeedPage.urlPath(poster.path)],
            video: output("hover", suffix: ".mp4").map { FeedPage.urlPath($0.path) },
            storyboard: output("webvtt").map { FeedPage.urlPath($0.path) },
            storyboardTrack: output("webvtt").flatMap { track($0.path, in: directory) },
            color: poster.dominantColor)
        // The card takes the poster's shape (the recipe's box, turned for a portrait clip); a poster at
        // least twice the card's size is its 2x source.
        if let width = poster.width, let height = poster.height, width > 0, height > 0 {
            let aspect = Double(width) / Double(height)
            card.aspectRatio = aspect
            let box = FeedPage.cardBox(aspectRatio: aspect)
            if width >= 2 * box.width && height >= 2 * box.height - 2 { card.posterDensity = 2 }
        }
        return card
    }

    /// The text of the WebVTT file at `path` (relative to `directory`) for the page to carry; `nil`, with
    /// a warning, for one that cannot be had: not under the folder (an absolute path, or `.` or `..` in
    /// it), unreadable, over ``maxTrackBytes`` or not WebVTT. The card keeps the track's URL, which a
    /// page on a host fetches.
    static func track(_ path: String, in directory: String) -> String? {
        func skipped(_ why: String) -> String? {
            Console.writeWarning(Format.oneLine(why) + "; the page does not carry that storyboard (scrubbing it works on a host, not from file://)")
            return nil
        }
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !path.hasPrefix("/"), !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            return skipped("\(path): not a path inside \(directory)")
        }
        let text: String
        do {
            text = String(decoding: try BatchFiles.readFile(directory + "/" + path, limit: maxTrackBytes), as: UTF8.self)
        } catch {
            return skipped(error.message)
        }
        guard text.hasPrefix("WEBVTT") else { return skipped("\(directory)/\(path): not a WebVTT file") }
        return text
    }
}
