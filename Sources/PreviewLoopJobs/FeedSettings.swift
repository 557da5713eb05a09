import FoundationEssentials
import PreviewLoop

/// The feed page's settings: `serve --preview-length`, and the query of `/` (`preview_length`,
/// `aspect`, `min_aspect`, `max_aspect`, `max_playing`), which overrides them for one page.
package struct FeedSettings: Equatable, Sendable {
    /// Seconds between the preview's seeks back to its start.
    package var previewLength = FeedPage.defaultPreviewLength
    /// The shape of every card when ``fitsClips`` is off, and of a card whose clip's shape is not known,
    /// width ÷ height.
    package var aspectRatio = CardStyle.defaultAspectRatio
    /// Whether each card takes its clip's display shape, kept within ``aspectRange`` (the default);
    /// off when the page asks for one `aspect` for all.
    package var fitsClips = true
    /// The narrowest and the widest card a clip's shape gives, width ÷ height.
    package var aspectRange = FeedSettings.defaultAspectRange
    /// Previews playing at once at most.
    package var maxPlaying = FeedPage.defaultMaxPlaying

    package init() {}

    /// 9:16 (a phone held upright) to 16:9: a wider clip is cropped at its sides, a taller one at its
    /// top and bottom.
    package static let defaultAspectRange = (9.0 / 16)...(16.0 / 9)

    /// The shape of the card for a clip shown at `display` (its display size, rotation and pixel shape
    /// applied; `nil` when it is not known): its own shape within ``aspectRange`` when the cards fit
    /// their clips (``aspectRatio`` within it when the shape is not known), else ``aspectRatio``.
    package func cardAspect(display: Size?) -> Double {
        guard fitsClips else { return aspectRatio }
        var ratio = aspectRatio
        if let display, display.width > 0, display.height > 0 { ratio = Double(display.width) / Double(display.height) }
        return min(aspectRange.upperBound, max(aspectRange.lowerBound, ratio))
    }

    /// `--preview-length <time>` (and `preview_length`).
    static let previewLength = ValueOption<Double>(
        "preview-length", value: "time",
        help: "The feed page (/): a playing preview seeks back to its start every this many seconds, as a "
            + "PlayerView loop does, \(secondsRange); a page's preview_length parameter overrides it.",
        default: FeedPage.defaultPreviewLength, showing: Format.limit(FeedPage.defaultPreviewLength),
        expecting: "a time from \(secondsRange) seconds: seconds (1.5), mm:ss or hh:mm:ss.ms") { text in
        if case .seconds(let value)? = TimePosition(parsing: text), FeedPage.previewLengthRange.contains(value) { value } else { nil }
    }
    /// `0.5 to 3600`: the preview length's range in words.
    private static let secondsRange = Format.limit(FeedPage.previewLengthRange.lowerBound) + " to "
        + Format.limit(FeedPage.previewLengthRange.upperBound)
    /// `max_playing`.
    static let maxPlaying = ValueOption<Int>.integer(
        "max-playing", help: "Previews playing at once at most.", default: FeedPage.defaultMaxPlaying,
        in: FeedPage.maxPlayingRange)

    /// The query parameters of `/`, each read by an option's declaration.
    package static let parameters: [QueryParameter] = [
        .passing("preview_length", "Seconds between a playing preview's seeks back to its start.", previewLength),
        .passing("aspect", "One shape for every card (16:9, 4:3, 1.5); without it each card takes its clip's shape.", CardCommand.aspect),
        .passing("min_aspect", "The narrowest card a clip's shape gives (9:16 by default).", CardCommand.aspect),
        .passing("max_aspect", "The widest card a clip's shape gives (16:9 by default).", CardCommand.aspect),
        .passing("max_playing", "Previews playing at once at most.", maxPlaying),
    ]
    /// Their names.
    package static let parameterNames = parameters.map(\.name)

    /// These settings with a page request's query applied (items percent-decoded).
    ///
    /// - Throws: a 400 naming the parameter for an unknown or repeated one or a value out of range.
    package func applying(query: [(name: String, value: String)]) throws(PreviewRequestError) -> FeedSettings {
        var settings = self
        var seen: Set<String> = []
        var minimum: Double?, maximum: Double?
        for (name, value) in query {
            guard let known = Self.parameterNames.first(where: { $0 == name }) else {
                let shown = PreviewRequests.printable(name)
                return try Self.fail(shown, "Unknown parameter\(shown.map { " '\($0)'" } ?? ""); the page takes "
                                        + Self.parameterNames.joined(separator: ", ") + ".")
            }
            guard seen.insert(known).inserted else { return try Self.fail(known, "The parameter is given twice.") }
            switch known {
            case "preview_length":
                guard let length = Self.previewLength.convert(value) else {
                    return try Self.fail(known, "Expected \(Self.previewLength.expectation).")
                }
                settings.previewLength = length
            case "aspect", "min_aspect", "max_aspect":
                guard let ratio = CardCommand.aspect.convert(value) ?? nil else {
                    return try Self.fail(known, "Expected \(CardCommand.aspect.expectation).")
                }
                if known == "aspect" {
                    settings.aspectRatio = ratio
                    settings.fitsClips = false
                } else if known == "min_aspect" {
                    minimum = ratio
                } else {
                    maximum = ratio
                }
            default:
                guard let count = Self.maxPlaying.convert(value) else {
                    return try Self.fail(known, "Expected \(Self.maxPlaying.expectation).")
                }
                settings.maxPlaying = count
            }
        }
        if minimum != nil || maximum != nil {
            let low = minimum ?? min(settings.aspectRange.lowerBound, maximum ?? .infinity)
            let high = maximum ?? max(settings.aspectRange.upperBound, minimum ?? 0)
            guard low <= high else {
                return try Self.fail(minimum != nil ? "min_aspect" : "max_aspect", "min_aspect is wider than max_aspect.")
            }
            settings.aspectRange = low...high
        }
        return settings
    }

    private static func fail(_ parameter: String?, _ detail: String) throws(PreviewRequestError) -> FeedSettings {
        throw PreviewRequestError(status: 400, parameter: parameter, detail: detail)
    }
}

/// The clips a feed page lists, from `serve --feed-manifest FILE`: JSON Lines
/// `{"path": "trailers/dune.mp4", "title": "Dune", "preview_length": 5}` (`title` and `preview_length`
/// optional), or a plain list of paths one a line. Paths are relative to `--root`.
package struct FeedManifest: Equatable, Sendable {
    /// One listed clip.
    package struct Entry: Equatable, Sendable {
        /// Relative to the root, `/`-separated; never absolute, never with `.` or `..` components.
        package var path: String
        package var title: String?
        package var previewLength: Double?

        package init(path: String, title: String? = nil, previewLength: Double? = nil) {
            self.path = path
            self.title = title
            self.previewLength = previewLength
        }
    }

    package var entries: [Entry]

    /// The longest title kept, in characters.
    package static let maxTitleLength = 300

    /// Parses a manifest's text.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` naming the line: not a JSON object, no `path`,
    ///   a key of the wrong type or unknown, a path that is absolute, leaves the root or no URL can name
    ///   (``FeedPage/unservableReason(_:)``), a title too long, a `preview_length` out of range; more than
    ///   ``FeedPage/maxCards`` entries.
    package static func parse(_ text: String, name: String) throws(PreviewLoopError) -> FeedManifest {
        var entries: [Entry] = []
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        let isJSON = lines.first { !Self.trimmed(String($0)).isEmpty }.map { Self.trimmed(String($0)).hasPrefix("{") } ?? false
        for (offset, rawLine) in lines.enumerated() {
            let number = offset + 1
            func fail(_ why: String) -> PreviewLoopError { PreviewLoopError(.invalidArgument, "\(name): line \(number): \(why)") }
            var line = String(rawLine)
            if line.hasSuffix("\r") { line.removeLast() }
            let trimmed = Self.trimmed(line)
            if trimmed.isEmpty || (!isJSON && trimmed.hasPrefix("#")) { continue }
            var entry: Entry
            if isJSON {
                do {
                    let decoded = try JSONDecoder().decode(Line.self, from: Data(trimmed.utf8))
                    entry = Entry(path: decoded.path, title: decoded.title, previewLength: decoded.previewLength)
                } catch let error as Line.Problem {
                    throw fail(error.message)
                } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
                    throw fail("not a JSON object; a line is {\"path\": …, \"title\": …, \"preview_length\": …}")
                } catch {
                    throw fail("not a JSON object (invalid JSON)")
                }
            } else {
                entry = Entry(path: line)
            }
            let components = entry.path.split(separator: "/", omittingEmptySubsequences: false)
            guard !entry.path.isEmpty, !entry.path.hasPrefix("/"),
                  components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
                throw fail("the path must be relative to --root, without empty, . or .. components")
            }
            if let reason = FeedPage.unservableReason(entry.path) { throw fail(reason) }
            if let title = entry.title, title.count > maxTitleLength {
                throw fail("the title is \(title.count) characters long; at most \(maxTitleLength)")
            }
            if let length = entry.previewLength, !FeedPage.previewLengthRange.contains(length) {
                throw fail("\"preview_length\" must be 0.5 to 3600 seconds")
            }
            entries.append(entry)
            guard entries.count <= FeedPage.maxCards else {
                throw PreviewLoopError(.invalidArgument, "\(name): more than \(FeedPage.maxCards) clips; a page lists at most that many")
            }
        }
        return FeedManifest(entries: entries)
    }

    /// `text` without leading and trailing spaces and tabs.
    static func trimmed(_ text: String) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(text[first...last])
    }

    /// One JSON line; unknown keys are refused, and every problem of the line is reported at once.
    private struct Line: Decodable {
        var path: String
        var title: String?
        var previewLength: Double?

        /// What is wrong with the line, on one line.
        struct Problem: Error { var message: String }
        struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            for key in container.allKeys where !["path", "title", "preview_length"].contains(key.stringValue) {
                throw Problem(message: "unknown key \"\(Format.oneLine(String(key.stringValue.prefix(40))))\"; "
                                  + "a line takes path, title and preview_length")
            }
            var problems: [String] = []
            let pathKey = AnyKey(stringValue: "path")
            var path: String?
            if !container.contains(pathKey) || (try? container.decodeNil(forKey: pathKey)) == true {
                problems.append("no \"path\" (the clip's path under --root)")
            } else if let text = try? container.decode(String.self, forKey: pathKey) {
                path = text
            } else {
                problems.append("\"path\" must be a string")
            }
            do {
                title = try container.decodeIfPresent(String.self, forKey: AnyKey(stringValue: "title"))
            } catch {
                problems.append("\"title\" must be a string")
            }
            do {
                previewLength = try container.decodeIfPresent(Double.self, forKey: AnyKey(stringValue: "preview_length"))
            } catch {
                problems.append("\"preview_length\" must be a number of seconds")
            }
            guard let path, problems.isEmpty else { throw Problem(message: problems.joined(separator: "; ")) }
            self.path = path
        }
    }
}
