import FoundationEssentials

/// One clip of a batch: a stable id (its output folder's name), the input, and per-clip overrides.
public struct BatchClip: Sendable, Hashable {
    /// The folder name under the output directory: 1–128 of `A–Z a–z 0–9 . _ -`, not starting with a
    /// dot and not ending in `.jsonl`, so it can never leave the output directory or hide a results file.
    public var id: String
    /// A path (relative paths are taken from the manifest's directory) or an `http(s)` URL.
    public var input: String
    /// Per-clip settings that replace the recipe's.
    public var overrides: BatchOverrides

    /// Creates a clip; the id must be valid (see ``BatchManifest/validate(id:)``).
    public init(id: String, input: String, overrides: BatchOverrides = .init()) {
        self.id = id
        self.input = input
        self.overrides = overrides
    }
}

/// Per-clip settings a manifest line may carry; `nil` keeps the recipe's value.
public struct BatchOverrides: Sendable, Hashable, Codable {
    /// Where the poster's window and the hover preview start, in seconds (`"start"`).
    public var start: Double?
    /// How long the poster's window lasts, in seconds (`"length"`).
    public var length: Double?
    /// Seconds between scrub-bar thumbnails (`"every"`).
    public var every: Double?

    /// Creates overrides.
    public init(start: Double? = nil, length: Double? = nil, every: Double? = nil) {
        self.start = start
        self.length = length
        self.every = every
    }
}

/// Reads batch manifests: JSON Lines (one object per clip: `id`, `input`, optional `start`, `length`,
/// `every`) or a plain list of paths/URLs, one a line (blank lines and `#` comments skipped). A clip
/// without an id gets a derived one: its sanitised base name, and a short hash of its input only when
/// another clip of the manifest would get the same name (see ``plainID(for:)`` and ``derivedID(for:)``).
public enum BatchManifest {
    /// The largest manifest read (it is read whole, before any clip starts).
    public static let maxBytes = 256 << 20
    /// The longest input (a path or URL), in bytes: paths on Linux stop at 4096, URLs servers take at
    /// about 8 KiB.
    public static let maxInputBytes = 8192

    /// Parses a manifest's text.
    ///
    /// - Parameters:
    ///   - text: the whole manifest: JSON Lines, or one path or URL a line (blank lines skipped, and
    ///     `#` comments in a plain list).
    ///   - name: how errors name the manifest.
    ///   - baseDirectory: what relative input paths are relative to (`nil`: left as they are).
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` naming the line for a line that is not a
    ///   valid object, a missing input, an unknown key, an invalid or duplicate id, an input `-` or one
    ///   holding a NUL character (which would cut the path short).
    public static func parse(_ text: String, name: String = "manifest", baseDirectory: String? = nil) throws(PreviewLoopError) -> [BatchClip] {
        // Lines first (each checked alone), then the derived ids (which depend on the other lines).
        var entries: [(number: Int, clip: BatchClip, isDerived: Bool)] = []
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        let isJSON = lines.first { !String($0).trimmedSpaces.isEmpty }.map { String($0).trimmedSpaces.hasPrefix("{") } ?? false
        func fail(_ number: Int, _ why: String) -> PreviewLoopError {
            PreviewLoopError(.invalidArgument, "\(name): line \(number): \(why)")
        }
        for (offset, rawLine) in lines.enumerated() {
            let number = offset + 1
            var line = String(rawLine)
            if line.hasSuffix("\r") { line.removeLast() }
            let trimmed = line.trimmedSpaces
            if trimmed.isEmpty || (!isJSON && trimmed.hasPrefix("#")) { continue }
            var clip: BatchClip
            var isDerived = false
            if isJSON {
                let entry: ManifestEntry
                do {
                    entry = try JSONDecoder().decode(ManifestEntry.self, from: Data(trimmed.utf8))
                } catch let error as ManifestEntry.KeyError {
                    throw fail(number, error.message)
                } catch {
                    throw fail(number, "not a JSON object with a string \"input\" (\(Self.reason(error)))")
                }
                isDerived = entry.id == nil
                clip = BatchClip(id: entry.id ?? "", input: entry.input,
                                 overrides: BatchOverrides(start: entry.start, length: entry.length, every: entry.every))
            } else {
                // A plain list: the whole line is the input (spaces inside a file name are kept).
                isDerived = true
                clip = BatchClip(id: "", input: line)
            }
            guard !clip.input.isEmpty else { throw fail(number, "the input is empty") }
            // A path is a C string to the system: a NUL would cut it, and a shorter name be opened instead.
            guard !clip.input.utf8.contains(0) else {
                throw fail(number, "the input holds a NUL character (\\u0000), which no path or URL can hold")
            }
            guard clip.input.utf8.count <= maxInputBytes else {
                throw fail(number, "the input is \(clip.input.utf8.count) bytes long; at most \(maxInputBytes) (a path or URL)")
            }
            guard clip.input != "-" else { throw fail(number, "'-' (standard input) cannot be a batch input") }
            if let start = clip.overrides.start, !(start >= 0 && start.isFinite) { throw fail(number, "\"start\" must be 0 or more") }
            if let length = clip.overrides.length, !(length > 0 && length.isFinite) { throw fail(number, "\"length\" must be above 0") }
            if let every = clip.overrides.every, !(every > 0 && every.isFinite) { throw fail(number, "\"every\" must be above 0") }
            if !isDerived {
                do { try validate(id: clip.id) } catch { throw fail(number, error.message) }
            }
            entries.append((number, clip, isDerived))
        }
        let derived = entries.filter(\.isDerived)
        let derivedIDs = uniqueIDs(names: derived.map { plainID(for: $0.clip.input) }, keys: derived.map(\.clip.input),
                                   reserved: Set(entries.filter { !$0.isDerived }.map(\.clip.id)), maxLength: 64)
        var nextDerived = derivedIDs.makeIterator()
        var clips: [BatchClip] = []
        var seen: [String: Int] = [:]
        for (number, var clip, isDerived) in entries {
            if isDerived { clip.id = nextDerived.next()! }
            if let first = seen[clip.id] { throw fail(number, "the id '\(clip.id)' is already used on line \(first)") }
            seen[clip.id] = number
            if let baseDirectory, Source(argument: clip.input).isFile, !clip.input.hasPrefix("/") {
                clip.input = baseDirectory == "." ? clip.input : baseDirectory + "/" + clip.input
            }
            clips.append(clip)
        }
        return clips
    }

    /// Reads and parses a manifest file whole (or standard input for `-`, only when asked).
    public static func read(path: String) throws(PreviewLoopError) -> [BatchClip] {
        let data: [UInt8]
        if path == "-" {
            data = try BatchFiles.readAll(descriptor: 0, name: "<standard input>", limit: maxBytes)
        } else {
            data = try BatchFiles.readFile(path, limit: maxBytes)
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw PreviewLoopError(.invalidArgument, "\(path): the manifest is not UTF-8 text")
        }
        let directory = path == "-" ? nil : FileSystem.split(FileSystem.absolute(path)).directory
        return try parse(text, name: path, baseDirectory: directory.map { path.contains("/") ? $0 : "." })
    }

    /// An input's id when nothing else shares it: its base name without extension (a URL's without its
    /// query), reduced to `A-Z a-z 0-9 _ -` (`Beach Day (1).mp4` → `Beach_Day__1_`); empty when nothing is left.
    public static func plainID(for input: String) -> String {
        var base = input
        if let query = base.firstIndex(where: { $0 == "?" || $0 == "#" }), Source(argument: input).isURL { base = String(base[..<query]) }
        while base.hasSuffix("/") { base.removeLast() }
        if let slash = base.lastIndex(of: "/") { base = String(base[base.index(after: slash)...]) }
        if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = String(base[..<dot]) }
        var safe = String(base.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-")
                ? Character(scalar) : "_"
        })
        while safe.hasPrefix("_") || safe.hasPrefix("-") { safe.removeFirst() }
        return safe
    }

    /// An input's id when its plain id is shared, empty or too long: the plain id (at most 64
    /// characters, `clip` when empty) and the first 8 hex digits of a hash of the whole input
    /// (`beach_day-3fa2c1d0`), stable across runs and machines.
    public static func derivedID(for input: String) -> String {
        hashedID(plainID(for: input), key: input, maxLength: 64)
    }

    /// Ids for clips named `names`: each name as it is, unless it is empty, longer than `maxLength`, or
    /// shared with another name or one of `reserved`; then the name (cut to `maxLength`, `clip` when
    /// empty) and 8 hex digits of a hash of its `key` (the input, or the relative path).
    static func uniqueIDs(names: [String], keys: [String], reserved: Set<String> = [], maxLength: Int) -> [String] {
        var counts: [String: Int] = [:]
        for name in names { counts[name, default: 0] += 1 }
        return zip(names, keys).map { name, key in
            guard name.isEmpty || name.count > maxLength || counts[name, default: 0] > 1 || reserved.contains(name) else { return name }
            return hashedID(name, key: key, maxLength: maxLength)
        }
    }

    /// `name` (cut to `maxLength`, `clip` when empty), `-` and 8 hex digits of a hash of `key`.
    private static func hashedID(_ name: String, key: String, maxLength: Int) -> String {
        let hash = String(StableHash.fnv1a64(key), radix: 16)
        let padded = String(repeating: "0", count: max(0, 16 - hash.count)) + hash
        return (name.isEmpty ? "clip" : String(name.prefix(maxLength))) + "-" + padded.prefix(8)
    }

    /// Checks that an id is a safe folder name.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` saying what is wrong.
    public static func validate(id: String) throws(PreviewLoopError) {
        guard !id.isEmpty, id.utf8.count <= 128 else {
            throw PreviewLoopError(.invalidArgument, "the id '\(id)' must be 1 to 128 characters")
        }
        guard id.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)
                                                            || $0 == "." || $0 == "_" || $0 == "-") }) else {
            throw PreviewLoopError(.invalidArgument, "the id '\(id)' may use only letters, digits, '.', '_' and '-'")
        }
        guard !id.hasPrefix(".") else { throw PreviewLoopError(.invalidArgument, "the id '\(id)' must not start with '.'") }
        guard !id.hasSuffix(".jsonl") else {
            throw PreviewLoopError(.invalidArgument, "the id '\(id)' must not end in '.jsonl' (the results files' names)")
        }
    }

    /// Why JSON could not be decoded, on one line (a recipe's reader says it too).
    package static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "no \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context): "wrong type at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\""
        case DecodingError.valueNotFound(_, let context): "null at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\""
        case DecodingError.dataCorrupted(let context):
            // The parser's own words (a number out of range, a stray character), on one line.
            "invalid JSON: " + String((context.underlyingError.map { "\($0)" } ?? context.debugDescription).prefix(200))
                .split(whereSeparator: \.isNewline).joined(separator: " ")
        default: "invalid JSON"
        }
    }
}

/// One JSON manifest line, unknown keys refused (a typo must not silently drop a setting).
private struct ManifestEntry: Decodable {
    struct KeyError: Error { var message: String }
    var id: String?
    var input: String
    var start: Double?
    var length: Double?
    var every: Double?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        let known = ["id", "input", "start", "length", "every"]
        if let unknown = container.allKeys.first(where: { !known.contains($0.stringValue) }) {
            throw KeyError(message: "unknown key \"\(unknown.stringValue)\" (known: \(known.joined(separator: ", ")))")
        }
        id = try container.decodeIfPresent(String.self, forKey: AnyKey("id"))
        input = try container.decode(String.self, forKey: AnyKey("input"))
        start = try container.decodeIfPresent(Double.self, forKey: AnyKey("start"))
        length = try container.decodeIfPresent(Double.self, forKey: AnyKey("length"))
        every = try container.decodeIfPresent(Double.self, forKey: AnyKey("every"))
    }
}

/// A coding key of any name, for objects whose unknown keys must be reported.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Hashes that never change between runs, machines or Swift versions (unlike `Hasher`).
package enum StableHash {
    /// 64-bit FNV-1a of the string's UTF-8 bytes.
    package static func fnv1a64(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    /// The hash as 16 hex digits.
    package static func hex(_ text: String) -> String {
        let digits = String(fnv1a64(text), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

extension Source {
    /// Whether the source is a local path.
    var isFile: Bool { if case .file = self { true } else { false } }
    /// Whether the source is an http(s) URL.
    var isURL: Bool { if case .url = self { true } else { false } }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmedSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
