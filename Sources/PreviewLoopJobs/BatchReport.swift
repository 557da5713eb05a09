import FoundationEssentials
import Glibc
import PreviewLoop

/// `preview-loop batch report` as a job: its options (declared once, for every front end), checks and work.
struct BatchReportCommand: Equatable, Sendable {
    /// The output folders and results files, as given.
    var paths: [String] = []
    /// `--json`.
    @Flag(BatchReportCommand.json) var isJSON = false
    /// `--duplicates` and `--hamming` as typed, which become ``duplicateThreshold``.
    @Flag(BatchReportCommand.duplicates, folded: true) var duplicatesOption = false
    @Option(BatchReportCommand.hamming, folded: true) var hammingOption = BatchReportCommand.hamming.defaultValue
    /// `--duplicates`: the Hamming threshold it compares with (`--hamming`), or `nil` without it.
    var duplicateThreshold: Int?

    static let json = FlagOption("json", help: "Print one JSON object instead of text.")
    /// `--duplicates`: the report lists the clips that look alike.
    static let duplicates = FlagOption(
        "duplicates", help: "List the clips whose posters and tiles are near-identical (re-uploads "
            + "under other names, at other bitrates or sizes), in groups, by the perceptual hashes (phash, "
            + "tile_phashes) their records carry, with the Hamming distances found and the threshold used.")
    /// `--hamming <bits>`: the largest distance `--duplicates` counts as the same picture.
    static let hamming = ValueOption<Int>.integer(
        "hamming", value: "bits",
        help: "With --duplicates: the largest Hamming distance, in bits of 64, between two hashes "
            + "of the same picture, \(DuplicateFinder.thresholdRange.lowerBound) to \(DuplicateFinder.thresholdRange.upperBound).",
        default: DuplicateFinder.defaultThreshold, in: DuplicateFinder.thresholdRange)
}

extension BatchReportCommand: ParsableCommand {
    /// `preview-loop batch report`: its name, summary and arguments.
    static let configuration = CommandConfiguration(
        name: "report",
        abstract: "Merge batch results files (every shard's, every rerun's) into one summary: counts, failures by "
            + "reason with their ids, the slowest clips; with --duplicates, the clips that look alike.",
        arguments: [PositionalArgument(name: "results", abstract: "A batch output folder (its results*.jsonl files) or "
                    + "results files; the latest record of each clip counts.", repeats: true)])

    var input: String { "batch" }

    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        guard !arguments.positionals.isEmpty else {
            throw UsageError(.missingInput, subcommand: Self.subcommand, "Missing the output directory or results files to report on.")
        }
        paths = arguments.positionals
        if duplicatesOption {
            duplicateThreshold = try arguments.value(Self.hamming)
        } else if arguments.isGiven(Self.hamming) {
            throw UsageError(.conflictingOptions("hamming", "duplicates"), subcommand: Self.subcommand,
                             "'--hamming' sets the threshold of '--duplicates'; give '--duplicates' too.")
        }
    }

    func run(in context: CommandContext) -> Int32 {
        CommandFailure.reporting(for: "batch") {
            try BatchReport(paths: paths, isJSON: isJSON, duplicateThreshold: duplicateThreshold).run()
        }
    }
}

/// `preview-loop batch report <OUT or results files…>`: merges per-shard results files into one
/// summary — counts, failures by reason (with their ids), the slowest clips; with `--duplicates`, the
/// clips that look alike (``DuplicateFinder``).
struct BatchReport {
    var paths: [String]
    var isJSON: Bool
    /// With `--duplicates`: the Hamming threshold; `nil` without.
    var duplicateThreshold: Int? = nil

    /// The results files `paths` name: each folder's `results*.jsonl`, and each other path as it is.
    ///
    /// - Throws: ``PreviewLoopError/Code/inputNotFound`` for a folder without one.
    static func resultsFiles(_ paths: [String]) throws(PreviewLoopError) -> [String] {
        var files: [String] = []
        for path in paths {
            if BatchReport.isDirectory(path) {
                let names = FileSystem.names(inDirectory: path) ?? []
                let found = names.filter { $0.hasPrefix("results") && $0.hasSuffix(".jsonl") }.sorted().map { path + "/" + $0 }
                guard !found.isEmpty else { throw PreviewLoopError(.inputNotFound, "\(path): no results*.jsonl file in it") }
                files += found
            } else {
                files.append(path)
            }
        }
        return files
    }

    func run() throws -> Int32 {
        let files = try Self.resultsFiles(paths)
        var byID: [String: ClipOutcome] = [:]
        // With --duplicates: the hashes of each clip's latest record (a few bytes a clip).
        var prints: [String: DuplicateFinder.Fingerprint] = [:]
        var duplicates = 0, torn = 0
        // The latest summary of each file and shard: a rerun appends its own after the earlier runs'.
        var summaries: [String: BatchSummary] = [:]
        let decoder = JSONDecoder()
        for file in files {
            try ResultsLines.read(file) { number, line, isLast in
                let data = Data(line)
                if let record = try? decoder.decode(BatchRecord.self, from: data), record.type == "clip" {
                    if let earlier = byID[record.id] {
                        duplicates += 1
                        if earlier.finishedAt > record.finishedAt { return }
                    }
                    byID[record.id] = ClipOutcome(record)
                    if duplicateThreshold != nil { prints[record.id] = DuplicateFinder.Fingerprint(record) }
                } else if let summary = try? decoder.decode(BatchSummary.self, from: data), summary.type == "summary" {
                    summaries[file + "\n" + summary.shard] = summary
                } else if isLast {
                    torn += 1                 // a line a killed run did not finish
                } else {
                    throw PreviewLoopError(.invalidArgument, "\(file): line \(number) is not a batch record")
                }
            }
        }
        let records = byID.sorted { $0.key < $1.key }.map(\.value)
        let ok = records.filter { $0.status == .ok }
        let failed = records.filter { $0.status == .failed }
        var reasons: [String: [String]] = [:]
        for record in failed { reasons[record.reason ?? "unknown", default: []].append(record.id) }
        let slowest = ok.sorted { $0.totalMs > $1.totalMs }.prefix(5)
        let notDone = summaries.values.map(\.notDone).reduce(0, +)
        let bytes = ok.map(\.outputBytes).reduce(0, +)
        let sortedPrints = prints.sorted { $0.key < $1.key }.map(\.value)
        let matches = duplicateThreshold.map { threshold in DuplicateFinder.matches(sortedPrints, threshold: threshold) }
        if isJSON {
            let object = ReportJSON(files: files.count, clips: records.count, ok: ok.count, failed: failed.count,
                                    permanent: failed.filter { $0.permanence == .permanent }.count,
                                    transient: failed.filter { $0.permanence == .transient }.count,
                                    notDone: notDone, duplicates: duplicates, torn: torn, outputBytes: bytes,
                                    failuresByReason: reasons,
                                    slowest: slowest.map { ReportJSON.Slow(id: $0.id, totalMs: $0.totalMs) },
                                    nearDuplicates: matches.map { matches in
                                        ReportJSON.NearDuplicates(threshold: duplicateThreshold ?? 0, hashed: prints.count,
                                                                  flatByColor: DuplicateFinder.flatByColor(sortedPrints),
                                                                  incomparable: DuplicateFinder.incomparable(sortedPrints),
                                                                  groups: DuplicateFinder.groups(matches),
                                                                  pairs: matches.map(ReportJSON.Pair.init))
                                    })
            Console.writeOutput(try JSONValue(encoding: object).text(.pretty) + "\n")
            return ExitStatus.success
        }
        var text = "files:       \(files.count)\n"
        text += "clips:       \(records.count)\n"
        text += "ok:          \(ok.count) (\(Format.byteCount(bytes)) of outputs)\n"
        text += "failed:      \(failed.count) (\(failed.filter { $0.permanence == .permanent }.count) permanent, "
            + "\(failed.filter { $0.permanence == .transient }.count) transient)\n"
        if notDone > 0 { text += "not done:    \(notDone) (a run was stopped)\n" }
        if duplicates > 0 { text += "duplicates:  \(duplicates) (the same clip recorded again, by a rerun or in several files; the latest record counts)\n" }
        if torn > 0 { text += "torn lines:  \(torn) (a last line a killed run did not finish; skipped)\n" }
        for (reason, ids) in reasons.sorted(by: { $0.key < $1.key }) {
            let shown = ids.prefix(10).joined(separator: ", ") + (ids.count > 10 ? ", …" : "")
            text += "  \(reason): \(ids.count) (\(shown))\n"
        }
        if !slowest.isEmpty {
            text += "slowest:     " + slowest.map { "\($0.id) \(Format.fixed($0.totalMs / 1000, 2)) s" }
                .joined(separator: ", ") + "\n"
        }
        if let matches, let threshold = duplicateThreshold {
            text += Self.duplicatesText(matches, threshold: threshold, hashed: prints.count,
                                        flatByColor: DuplicateFinder.flatByColor(sortedPrints),
                                        incomparable: DuplicateFinder.incomparable(sortedPrints))
        }
        Console.writeOutput(text)
        return ExitStatus.success
    }

    /// `near-duplicates: 1 group (pHash, at most 8 bits of 64 apart; 5 clips with hashes)`, then a line a
    /// group and a line a pair with its distances; then the clips whose pictures are all flat (one
    /// colour), compared by their posters' colours alone or not at all.
    static func duplicatesText(_ matches: [DuplicateFinder.Match], threshold: Int, hashed: Int,
                               flatByColor: [String] = [], incomparable: [String] = []) -> String {
        let groups = DuplicateFinder.groups(matches)
        var text = "near-duplicates: \(groups.count) group\(groups.count == 1 ? "" : "s") (pHash, at most \(threshold) bits of 64 "
            + "apart; \(hashed) clip\(hashed == 1 ? "" : "s") with hashes)\n"
        for group in groups {
            text += "  " + group.joined(separator: ", ") + "\n"
            for match in matches where group.contains(match.first) {
                var distances: [String] = []
                if let poster = match.posterDistance { distances.append("poster \(poster)") }
                if let color = match.colorDistance { distances.append("flat posters, colours \(color) of 255 apart") }
                if let tiles = match.tileDistance { distances.append("tiles \(tiles) (median of \(match.tiles))") }
                text += "    \(match.first) ~ \(match.second): " + distances.joined(separator: ", ") + "\n"
            }
        }
        func list(_ ids: [String]) -> String { ids.prefix(10).joined(separator: ", ") + (ids.count > 10 ? ", …" : "") }
        if !flatByColor.isEmpty {
            text += "  flat pictures (one colour; their hashes are alike), compared by the poster's colour alone "
                + "(at most \(DuplicateFinder.maxColorDistance) of 255 apart): \(flatByColor.count) (\(list(flatByColor)))\n"
        }
        if !incomparable.isEmpty {
            text += "  flat pictures without a poster colour, which cannot be compared: \(incomparable.count) (\(list(incomparable)))\n"
        }
        return text
    }

    static func isDirectory(_ path: String) -> Bool {
        FileSystem.fileExists(path).isDirectory
    }
}

private struct ReportJSON: Encodable {
    struct Slow: Encodable {
        var id: String
        var totalMs: Double
        enum CodingKeys: String, CodingKey { case id, totalMs = "total_ms" }
    }
    var files, clips, ok, failed, permanent, transient, notDone, duplicates, torn, outputBytes: Int
    var failuresByReason: [String: [String]]
    var slowest: [Slow]
    /// With `--duplicates`.
    var nearDuplicates: NearDuplicates?
    struct NearDuplicates: Encodable {
        var threshold: Int
        /// Clips whose records carry a hash.
        var hashed: Int
        /// Clips whose pictures are all flat, compared by their posters' dominant colours alone.
        var flatByColor: [String]
        /// Clips whose pictures are all flat with no poster colour: never compared.
        var incomparable: [String]
        var groups: [[String]]
        var pairs: [Pair]
        enum CodingKeys: String, CodingKey { case threshold, hashed, incomparable, groups, pairs, flatByColor = "flat_by_color" }
    }
    struct Pair: Encodable {
        var ids: [String]
        var posterDistance: Int?
        var colorDistance: Int?
        var tileDistance: Int?
        var tiles: Int
        init(_ match: DuplicateFinder.Match) {
            ids = [match.first, match.second]
            posterDistance = match.posterDistance
            colorDistance = match.colorDistance
            tileDistance = match.tileDistance
            tiles = match.tiles
        }
        enum CodingKeys: String, CodingKey { case ids, tiles, posterDistance = "poster_distance", colorDistance = "color_distance", tileDistance = "tile_distance" }
    }
    enum CodingKeys: String, CodingKey {
        case files, clips, ok, failed, permanent, transient, duplicates, torn, slowest
        case notDone = "not_done", outputBytes = "output_bytes", failuresByReason = "failures_by_reason"
        case nearDuplicates = "near_duplicates"
    }
}

/// What the report keeps of a clip's latest record: a few numbers, not the record, so its memory
/// follows the number of clips, not the size of the files.
private struct ClipOutcome {
    var id: String
    var status: BatchRecord.Status
    var reason: String?
    var permanence: BatchRecord.Permanence?
    var totalMs: Double
    var outputBytes: Int
    var finishedAt: Double

    init(_ record: BatchRecord) {
        id = record.id
        status = record.status
        reason = record.reason
        permanence = record.permanence
        totalMs = record.timings["total_ms"] ?? 0
        outputBytes = record.outputs.map(\.bytes).reduce(0, +)
        finishedAt = record.finishedAt
    }
}
