import FoundationEssentials
import PreviewLoop

// The batch recipe as a view of the jobs' declarations, as the image API's query is: each section of a
// recipe file is a job (`poster` is `thumb`, `strip` is `strip --span all`, `sheet` is `sheet`, `sprites`
// is `sprites`, `hover` is `render`) and its keys are the job's parameters (`.parameter()`) and recipe
// keys (`.recipeKey()`), under those names. A key's JSON value becomes the option's text (a number as
// written, a string as is, `true`/`false` a flag), typed and checked by the option's own declaration;
// then the job's own checks run, as on the command line, and the typed job becomes the library's output
// (`BatchRecipe.Poster`, …). What only the recipe has — a poster's or hover's `format` (the file's
// extension) and the hover starting at the poster by default — is declared here, once.

extension BatchRecipe {
    /// Reads a recipe file's JSON: each section as its job's options, refusing unknown keys and values
    /// the job's declarations or checks refuse.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument``, one line naming the section and the key.
    package static func parse(json: [UInt8], name: String = "recipe") throws(PreviewLoopError) -> BatchRecipe {
        let top: [String: RecipeValue]
        do {
            top = try JSONDecoder().decode([String: RecipeValue].self, from: Data(json))
        } catch {
            throw PreviewLoopError(.invalidArgument, "\(name): not a JSON recipe object (\(BatchManifest.reason(error)))")
        }
        do throws(RecipeRefusal) {
            let known = BatchRecipeSection.all.map(\.name)
            if let unknown = top.keys.sorted().first(where: { !known.contains($0) }) {
                throw RecipeRefusal("unknown key \"\(unknown)\" in the recipe (known: \(known.joined(separator: ", ")))")
            }
            var recipe = BatchRecipe()
            for section in BatchRecipeSection.all {
                guard let value = top[section.name] else { continue }
                guard case .object(let keys) = value else {
                    throw RecipeRefusal("\"\(section.name)\": expected an object of keys ({} for every default), not \(value.shown)")
                }
                try section.read(keys, into: &recipe)
            }
            guard !recipe.isEmpty else { throw RecipeRefusal("names no output (\(known.joined(separator: ", ")))") }
            // Sizes known now (exact, or the default box in either turn) go through the library's rules at
            // once; the others once the clip is open (``BatchRecipe/resolved(display:)``).
            if let refusal = recipe.sizeRefusal() { throw RecipeRefusal("\(refusal.key): \(refusal.reason)") }
            return recipe
        } catch {
            throw PreviewLoopError(.invalidArgument, "\(name): \(error.message)")
        }
    }
}

/// A recipe's refusal: one line naming the section and the key.
struct RecipeRefusal: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// A JSON value of a recipe, as its key's option reads it.
enum RecipeValue: Decodable {
    case null
    case bool(Bool)
    /// A number, as its option's text: whole numbers without a fraction (`8`, `2.5`).
    case number(String)
    case string(String)
    case object([String: RecipeValue])
    case array
    /// A number no number type holds (`1e400`).
    case outOfRange

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let whole = try? container.decode(Int.self) {
            self = .number(String(whole))
        } else if let number = try? container.decode(Double.self) {
            self = .number(number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : "\(number)")
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let object = try? container.decode([String: RecipeValue].self) {
            self = .object(object)
        } else if (try? container.decode([RecipeValue].self)) != nil {
            self = .array
        } else {
            self = .outOfRange
        }
    }

    /// The option's text: a number or a string; `nil` for anything else.
    var text: String? {
        switch self {
        case .number(let text), .string(let text): text
        default: nil
        }
    }

    /// The value as an error shows it, on one line.
    var shown: String {
        switch self {
        case .null: "null"
        case .bool(let flag): "\(flag)"
        case .number(let text): text
        case .string(let text):
            text.count <= 80 && !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f } ? text
                : String(reflecting: String(text.prefix(80)))
        case .object: "an object"
        case .array: "an array"
        case .outOfRange: "a number out of range"
        }
    }
}

/// A section of a recipe: the job that makes its output, what only the recipe adds to the job's keys,
/// and how the typed job becomes the library's output.
struct BatchRecipeSection: Sendable {
    /// The section's name in the recipe (`poster`).
    var name: String
    /// The job whose declarations read the section.
    var command: any ParsableCommand.Type
    /// The job as the section is made by it, for the reference (`strip --span all`).
    var commandLine: String
    /// The file the job is told to write, without its extension (`poster`): the batch's file name.
    var output: String
    /// The extensions the recipe-only key `format` chooses among, the default first; one: no `format` key.
    var formats: [String]
    /// Other spellings `format` takes, and the extension each means (`jpeg` for `jpg`).
    var formatAliases: [String: String] = [:]
    /// Keys whose absence the recipe fills otherwise than the job's default, as the option's text (a hover
    /// starts at the poster).
    var defaults: [String: String] = [:]
    /// The job's parameters this section does not take, with why (``BatchRecipeSection/all``).
    var leftOut: Set<String> = []
    /// Sets the typed job's output on the recipe; `given` are the keys the section named.
    var apply: @Sendable (_ job: any ParsableCommand, _ given: Set<String>, _ recipe: inout BatchRecipe) throws(RecipeRefusal) -> Void

    /// The parameters of every job that the recipe does not take: the batch opens each clip once for all
    /// its outputs, so a turn or flip of one output's picture is not one ``BatchRecipe`` holds.
    static let leftOutEverywhere: Set<String> = ["rotate", "flip_h", "flip_v"]

    /// Every section, in the order the outputs are read (and refused).
    static let all: [BatchRecipeSection] = [poster, strip, sheet, sprites, hover]

    /// The job's options the section takes, by key, in the job's order.
    var keyed: [(key: String, option: any OptionDeclaration)] {
        command.options.compactMap { option in
            guard let key = option.spec.recipeName, !Self.leftOutEverywhere.contains(key), !leftOut.contains(key) else { return nil }
            return (key, option)
        }
    }

    /// Every key the section takes, the job's in its order, then `format`.
    var keys: [String] { keyed.map(\.key) + (formats.count > 1 ? ["format"] : []) }

    /// Every section with its command and keys, for `batch --recipe`'s help and the manual page:
    /// `poster (thumb -o poster.EXT): at, start, …; strip (strip --span all): count, …`.
    static var reference: String {
        all.map { section in
            let format = section.formats.count > 1 ? " (" + section.formats.joined(separator: ", ") + ")" : ""
            return "\(section.name) (\(section.commandLine)): " + section.keys.joined(separator: ", ") + format
        }.joined(separator: "; ")
    }

    /// The stand-in input the job is typed with (no clip is opened while a recipe is read).
    static let input = "clip.mp4"

    /// Types the section's keys as the job's options, runs the job's checks and sets its output on `recipe`.
    func read(_ values: [String: RecipeValue], into recipe: inout BatchRecipe) throws(RecipeRefusal) {
        let keyed = self.keyed, known = keys
        if let unknown = values.keys.sorted().first(where: { !known.contains($0) }) {
            throw RecipeRefusal("unknown key \"\(unknown)\" in \"\(name)\" (known: \(known.joined(separator: ", ")))")
        }
        var given = ScannedArguments(subcommand: command.subcommand)
        given.positionals = [Self.input]
        var fileExtension = formats[0]
        if let value = values["format"] {
            guard let text = value.text.map({ formatAliases[$0] ?? $0 }), formats.contains(text) else {
                throw refusal("format", "expected " + formats.map { "\"\($0)\"" }.dropLast().joined(separator: ", ")
                              + " or \"\(formats.last!)\", not \(value.shown)")
            }
            fileExtension = text
        }
        given.give("output", fileExtension.isEmpty ? output : output + "." + fileExtension)
        for (key, option) in keyed {
            guard let value = values[key] else {
                if let text = defaults[key] { given.give(option.spec.name, text) }
                continue
            }
            if option.spec.takesValue {
                guard let text = value.text else {
                    throw refusal(key, "expected \(option.valueExpectation ?? "a value"), not \(value.shown)")
                }
                given.give(option.spec.name, text)
            } else {
                guard case .bool(let isOn) = value else { throw refusal(key, "expected true or false, not \(value.shown)") }
                if isOn != option.spec.recipeKeyInverts { given.flags.insert(option.spec.name) }
            }
        }
        let job: any ParsableCommand
        do {
            job = try command.init(given)
        } catch {
            throw refusal(for: error, given: Set(values.keys), values: values)
        }
        try apply(job, Set(values.keys), &recipe)
    }

    /// `"poster"."at": …`.
    func refusal(_ key: String?, _ message: String) -> RecipeRefusal {
        RecipeRefusal("\"\(name)\"" + (key.map { ".\"\($0)\"" } ?? "") + ": " + message)
    }

    /// The job's usage error as the section's: naming the key of the option at fault (of two that
    /// conflict, the one the section gave that the job declares later), its words about options said
    /// with the recipe's keys.
    func refusal(for error: UsageError, given: Set<String>, values: [String: RecipeValue]) -> RecipeRefusal {
        let keyed = self.keyed
        /// The key that sets the option named `option` (`format` sets the output).
        func key(_ option: String) -> String? {
            option == "output" ? (formats.count > 1 ? "format" : nil) : keyed.first { $0.option.spec.name == option }?.key
        }
        let order = command.options.map(\.spec.name)
        var message = Self.recipeWords(error.message, keys: keyed.map { ($0.option.spec.name, $0.key) })
        if message.hasSuffix(".") { message.removeLast() }
        switch error.kind {
        case .invalidValue(let option, let value):
            guard let declared = keyed.first(where: { $0.option.spec.name == option }) else { break }
            let spelling = declared.option.spec.errorSpelling
            let prefix = "Invalid value '\(value)' for '\(spelling)': "
            guard error.message.hasPrefix(prefix) else { break }
            var reason = String(error.message.dropFirst(prefix.count))
            if reason.hasSuffix(".") { reason.removeLast() }
            if reason == "expected \(declared.option.valueExpectation ?? "")" {
                // The declaration's conversion refused it: a whole number out of range says so.
                if let range = declared.option.spec.integerRange, let number = Int(value), !range.contains(number) {
                    return refusal(declared.key, "\(number) is outside \(range.lowerBound)–\(range.upperBound)")
                }
                return refusal(declared.key, reason + ", not " + (values[declared.key]?.shown ?? value))
            }
            return refusal(declared.key, Self.recipeWords(reason, keys: keyed.map { ($0.option.spec.name, $0.key) }))
        case .conflictingOptions(let first, let second):
            let named = [first, second].filter { key($0).map(given.contains) ?? false }
            let latest = named.max { (order.firstIndex(of: $0) ?? 0) < (order.firstIndex(of: $1) ?? 0) }
            return refusal(key(latest ?? first), message)
        case .overLimit(let option):
            // A work limit (`--max-memory`) is not a key: the recipe holds the commands' default, so the
            // size asked is what is over it.
            let limit = #/\(raise it with --[a-z-]+ <[^>]*>, at most [0-9]+\)/#
            return refusal(key(option) ?? (keyed.contains { $0.key == "size" } ? "size" : nil),
                           message.replacing(limit, with: "(the commands' default, which a recipe keeps)"))
        default: break
        }
        return refusal(nil, message)
    }

    /// A job's message with its options as this section's keys: `'--tile-width'` and `--tile-width` as
    /// `"tile_width"`, `'--at best'` as `"at" best`.
    static func recipeWords(_ message: String, keys: [(option: String, key: String)]) -> String {
        var text = message
        for (option, key) in keys.sorted(by: { $0.option.count > $1.option.count }) {
            guard let quoted = try? Regex("'--\(option)( [^']*)?'"), let bare = try? Regex("--\(option)(?![a-z-])") else { continue }
            text = text.replacing(quoted) { match in "\"\(key)\"" + String(match.output[1].substring ?? "") }
            text = text.replacing(bare, with: "\"\(key)\"")
        }
        return text
    }

    /// A window's time in seconds: a percentage is not one a batch's output holds.
    static func seconds(_ time: TimePosition, _ section: String, _ key: String) throws(RecipeRefusal) -> Double {
        guard case .seconds(let seconds) = time else {
            throw RecipeRefusal("\"\(section)\".\"\(key)\": expected seconds (a number, mm:ss or hh:mm:ss.ms), not a percentage (\(time))")
        }
        return seconds
    }
}
