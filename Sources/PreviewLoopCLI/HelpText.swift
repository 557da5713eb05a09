/// The help texts, laid out as swift-argument-parser lays them out: OVERVIEW, USAGE, ARGUMENTS,
/// OPTIONS (and SUBCOMMANDS for the tool), 80 columns, every option with its default.
///
/// Built from the option tables in ``OptionSpec``, so help always matches what the parser accepts.
enum HelpText {
    /// The program name as users type it.
    static let toolName = "preview-loop"
    /// The version `--version` prints.
    static let version = "0.2.0"
    /// The line width help is wrapped to.
    static let width = 80
    /// Where option descriptions start (the label column's width, indent included).
    static let labelColumn = 26

    /// What the tool does, one sentence.
    static let overview = "Make preview loops, stills, contact strips, web hover previews and scrub-bar thumbnails from videos."

    /// The exit statuses, one line each, as help and the manual page list them.
    static let exitStatuses = [
        ("0", "Success."),
        ("1", "Failure: the message names the input."),
        ("64", "Usage error: the command line or a request over a limit."),
        ("65", "batch: some clips failed permanently."),
        ("75", "batch: some clips failed transiently (run it again to retry them)."),
    ]

    /// `preview-loop <subcommand>`.
    static var rootUsage: String { "\(toolName) <subcommand>" }

    /// The tool's help: `preview-loop --help`.
    static var root: String {
        var text = wrap(overview, prefix: "OVERVIEW: ", hangingIndent: 2) + "\n\n"
        text += wrap(rootUsage, prefix: "USAGE: ") + "\n\n"
        text += "OPTIONS:\n"
        text += entry("--version", "Show the version.") + "\n"
        text += entry(CommonOptions.help.spec.helpLabel, CommonOptions.help.spec.abstract) + "\n\n"
        text += "SUBCOMMANDS:\n"
        for subcommand in Subcommand.allCases {
            text += entry(subcommand.rawValue, subcommand.abstract) + "\n"
        }
        for command in MetaCommand.allCases {
            text += entry(command.rawValue, command.abstract) + "\n"
        }
        text += "\n"
        text += "  See '\(toolName) help <subcommand>' for detailed help.\n"
        text += "  Exit status: 0 success, 1 failure (the message names the input), 64 usage error;\n"
        text += "  batch: 65 some clips failed permanently, 75 some failed transiently (retry)."
        return text
    }

    /// A subcommand's help: `preview-loop <subcommand> --help`; a command with subcommands of its own
    /// (`batch`) lists them after its options, each with its own help (`preview-loop batch report --help`).
    static func help(for subcommand: Subcommand) -> String {
        var text = wrap(subcommand.abstract, prefix: "OVERVIEW: ", hangingIndent: 2) + "\n\n"
        text += wrap(usagePieces(for: subcommand), prefix: "USAGE: ") + "\n\n"
        if !subcommand.arguments.isEmpty {
            text += "ARGUMENTS:\n"
            text += subcommand.arguments.map { entry($0.label, $0.abstract) }.joined(separator: "\n") + "\n\n"
        }
        text += "OPTIONS:\n"
        text += subcommand.options.map { option in
            var abstract = option.abstract
            // A no-break space keeps "(default: x)" on one line; entry(_:_:) turns it back into a space.
            if let defaultValue = option.defaultValue { abstract += " (default:\u{A0}\(defaultValue))" }
            return entry(option.helpLabel, abstract)
        }.joined(separator: "\n")
        if !subcommand.children.isEmpty {
            text += "\n\nSUBCOMMANDS:\n"
            text += subcommand.children.map { entry($0.name, $0.abstract) }.joined(separator: "\n") + "\n\n"
            text += "  See '\(toolName) help \(subcommand) <subcommand>' for detailed help."
        }
        return text
    }

    /// The one-line usage of a subcommand, as the error hint shows it (before wrapping).
    static func usage(for subcommand: Subcommand) -> String {
        usagePieces(for: subcommand).joined(separator: " ")
    }

    /// `preview-loop thumb`, `<input>`, `-o <file>`, `[--at <time>]`… (`preview-loop batch report`, … for a
    /// subcommand's own): the usage's unbreakable pieces.
    static func usagePieces(for subcommand: Subcommand) -> [String] {
        ["\(toolName) \(subcommand.rawValue)"] + subcommand.arguments.map(\.label)
            + subcommand.options.filter { $0.name != "help" }.map(\.usageSpelling)
    }

    /// One ARGUMENTS/OPTIONS/SUBCOMMANDS entry: the label indented by two, the text in the second
    /// column, wrapped; a label too wide for its column puts the text on the next line.
    static func entry(_ label: String, _ text: String) -> String {
        let indent = String(repeating: " ", count: labelColumn)
        let wrapped = wrapWords(text, width: width - labelColumn)
        let head = "  " + label
        var lines: [String]
        if head.count <= labelColumn - 2 {
            lines = [head.padding(to: labelColumn) + (wrapped.first ?? "")]
            lines += wrapped.dropFirst().map { indent + $0 }
        } else {
            lines = [head] + wrapped.map { indent + $0 }
        }
        return lines.joined(separator: "\n").replacingNoBreakSpaces()
    }

    /// Wraps space-separated text after a prefix (`Usage: `), continuation lines indented to the
    /// first word after the prefix's first word (the tool name), or by `hangingIndent` when given.
    static func wrap(_ text: String, prefix: String, hangingIndent: Int? = nil) -> String {
        wrap(text.split(separator: " ").map(String.init), prefix: prefix, hangingIndent: hangingIndent)
    }

    /// Wraps unbreakable pieces (such as `[--at <time>]`) after a prefix, as the text version does.
    static func wrap(_ pieces: [String], prefix: String, hangingIndent: Int? = nil) -> String {
        let indentWidth = hangingIndent ?? (prefix.count + (pieces.first.map { $0.count + 1 } ?? 0))
        let indent = String(repeating: " ", count: min(indentWidth, width / 2))
        var lines: [String] = []
        var line = prefix
        var lineHasPiece = false
        for piece in pieces {
            if lineHasPiece && line.count + 1 + piece.count > width {
                lines.append(line)
                line = indent + piece
            } else {
                line += (lineHasPiece ? " " : "") + piece
            }
            lineHasPiece = true
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }

    /// Splits text into lines of at most `width` characters at spaces (a longer word gets its own line).
    static func wrapWords(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = String(word)
            } else {
                line += (line.isEmpty ? "" : " ") + word
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}

private extension String {
    /// The string with no-break spaces (used to keep words together while wrapping) made plain.
    func replacingNoBreakSpaces() -> String {
        String(map { $0 == "\u{A0}" ? " " : $0 })
    }

    /// The string padded with spaces on the right to `length` characters (never truncated).
    func padding(to length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}
