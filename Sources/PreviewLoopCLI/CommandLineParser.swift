import PreviewLoop
import PreviewLoopJobs

/// Turns the command line into a ``ParsedCommand``: a pure function of the arguments, with no I/O.
///
/// Rules, as swift-argument-parser applies them:
/// - `preview-loop <subcommand> [options] <input>`; the input may come anywhere among the options.
/// - A subcommand's own subcommand comes right after its name (`batch report OUT`), and then the
///   arguments are that one's alone.
/// - Options take their value as the next argument (`--size 320x180`) or after `=` (`--size=320x180`);
///   one-letter aliases the same way (`-s 320x180`, `-s=320x180`).
/// - A value cannot look like an option: `--log --json` is a missing value. `-` alone and negative
///   numbers are values.
/// - `--` ends the options: everything after it is positional, so `-- -odd-name.mp4` is an input.
/// - An option given twice keeps its last value, so wrapper scripts can override defaults.
/// - `-h`/`--help` anywhere before `--` wins over every other error and asks for the subcommand's help.
enum CommandLineParser {
    /// Parses the arguments that follow the program name.
    ///
    /// - Parameter arguments: `CommandLine.arguments` without its first element.
    /// - Throws: ``UsageError`` naming the subcommand, for the usage hint.
    static func parse(_ arguments: [String]) throws(UsageError) -> ParsedCommand {
        guard let first = arguments.first else {
            throw UsageError(.missingSubcommand, subcommand: nil,
                             "Missing subcommand; expected one of: \(subcommandList).")
        }
        switch first {
        case "-h", "--help":
            return .help(HelpText.root)
        case "--version":
            if let extra = arguments.dropFirst().first {
                throw UsageError(.unexpectedArgument(extra), subcommand: nil, "Unexpected argument '\(extra)' after --version.")
            }
            return .version
        case MetaCommand.help.rawValue:
            return try parseHelpRequest(arguments.dropFirst())
        case MetaCommand.completions.rawValue:
            return try parseCompletionsRequest(arguments.dropFirst())
        case MetaCommand.man.rawValue:
            if let extra = arguments.dropFirst().first {
                throw UsageError(.unexpectedArgument(extra), subcommand: nil, "Unexpected argument '\(extra)' after 'man'.")
            }
            return .generated(ManualPage.text)
        default:
            break
        }
        guard var subcommand = Subcommand.allCases.first(where: { $0.rawValue == first }) else {
            if first.hasPrefix("-") && first != "-" {
                throw UsageError(.unknownOption(first), subcommand: nil,
                                 "Unknown option '\(first)'; a subcommand comes first: \(subcommandList).")
            }
            throw UsageError(.unknownSubcommand(first), subcommand: nil,
                             "Unknown subcommand '\(first)'\(suggestion(for: first, among: Subcommand.allCases.map(\.rawValue)))"
                                + "; expected one of: \(subcommandList).")
        }
        var rest = arguments.dropFirst()
        while let name = rest.first, let child = subcommand.child(named: name) {
            subcommand = child
            rest = rest.dropFirst()
        }
        if asksForHelp(rest) {
            return .help(HelpText.help(for: subcommand))
        }
        let scanned = try ArgumentScanner.scan(rest, for: subcommand)
        return .command(try subcommand.command.init(scanned))
    }

    /// `preview-loop help [subcommand [subcommand…]]` (`help batch report`).
    private static func parseHelpRequest(_ arguments: ArraySlice<String>) throws(UsageError) -> ParsedCommand {
        guard let name = arguments.first else { return .help(HelpText.root) }
        guard var subcommand = Subcommand.allCases.first(where: { $0.rawValue == name }) else {
            throw UsageError(.unknownSubcommand(name), subcommand: nil,
                             "Unknown subcommand '\(name)'; expected one of: \(subcommandList).")
        }
        for extra in arguments.dropFirst() {
            if let child = subcommand.child(named: extra) {
                subcommand = child
            } else if !subcommand.children.isEmpty {
                throw UsageError(.unknownSubcommand("\(subcommand) \(extra)"), subcommand: nil,
                                 "Unknown subcommand '\(subcommand) \(extra)'; '\(subcommand)' has: "
                                    + subcommand.children.map(\.name).joined(separator: ", ") + ".")
            } else {
                throw UsageError(.unexpectedArgument(extra), subcommand: nil, "Unexpected argument '\(extra)' after 'help \(subcommand)'.")
            }
        }
        return .help(HelpText.help(for: subcommand))
    }

    /// `preview-loop completions bash|zsh|fish`.
    private static func parseCompletionsRequest(_ arguments: ArraySlice<String>) throws(UsageError) -> ParsedCommand {
        let shells = CompletionShell.allCases.map(\.rawValue).joined(separator: ", ")
        guard let name = arguments.first else {
            throw UsageError(.missingArgument("shell"), subcommand: nil, "Missing shell after 'completions'; expected one of: \(shells).")
        }
        guard let shell = CompletionShell(rawValue: name) else {
            throw UsageError(.invalidValue(option: "shell", value: name), subcommand: nil,
                             "Unknown shell '\(name)' after 'completions'; expected one of: \(shells).")
        }
        if let extra = arguments.dropFirst().first {
            throw UsageError(.unexpectedArgument(extra), subcommand: nil, "Unexpected argument '\(extra)' after 'completions \(name)'.")
        }
        return .generated(shell.script)
    }

    /// Whether `-h` or `--help` appears before any `--`.
    private static func asksForHelp(_ arguments: ArraySlice<String>) -> Bool {
        arguments.prefix { $0 != "--" }.contains { $0 == "-h" || $0 == "--help" }
    }

    /// `probe, thumb, strip, loop`.
    static var subcommandList: String {
        Subcommand.allCases.map(\.rawValue).joined(separator: ", ")
    }

    /// ` (did you mean 'X'?)` for the closest candidate within two edits, or an empty string.
    static func suggestion(for typed: String, among candidates: [String]) -> String {
        let scored = candidates.map { (candidate: $0, distance: editDistance(typed, $0)) }
        guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= 2,
              best.distance < typed.count else { return "" }
        return " (did you mean '\(best.candidate)'?)"
    }

    /// The Levenshtein distance between two strings, in characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// Sorts a subcommand's arguments by the subcommand's option table; knows nothing of value types.
enum ArgumentScanner {
    /// Scans the arguments after the subcommand's name.
    ///
    /// - Throws: ``UsageError`` for an unknown option, a missing value or a value given to a flag.
    static func scan(_ arguments: ArraySlice<String>, for subcommand: Subcommand) throws(UsageError) -> ScannedArguments {
        var scanned = ScannedArguments(subcommand: subcommand)
        var index = arguments.startIndex
        var optionsEnded = false
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !looksLikeOption(argument) {
                scanned.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            let (spelling, inlineValue) = split(argument)
            guard let spec = subcommand.option(spelled: spelling) else {
                let spellings = subcommand.options.map(\.longSpelling)
                throw UsageError(.unknownOption(spelling), subcommand: subcommand,
                                 "Unknown option '\(spelling)'\(CommandLineParser.suggestion(for: spelling, among: spellings))"
                                    + "\(relativeHint(for: spelling, of: subcommand)).")
            }
            if !spec.takesValue {
                if inlineValue != nil {
                    throw UsageError(.unexpectedValue(option: spec.name), subcommand: subcommand,
                                     "The flag '\(spec.longSpelling)' does not take a value.")
                }
                scanned.flags.insert(spec.name)
            } else if let inlineValue {
                scanned.give(spec.name, inlineValue)
            } else if index < arguments.endIndex, !looksLikeOption(arguments[index]) {
                scanned.give(spec.name, arguments[index])
                index += 1
            } else {
                throw UsageError(.missingValue(option: spec.name), subcommand: subcommand,
                                 "Missing value for '\(spec.errorSpelling)'.")
            }
        }
        return scanned
    }

    /// ` (an option of 'batch report')` when a command of the same family (`batch` and the commands typed
    /// after it) takes the spelling, or an empty string.
    static func relativeHint(for spelling: String, of subcommand: Subcommand) -> String {
        var root = subcommand
        while let parent = root.parent { root = parent }
        func family(_ command: Subcommand) -> [Subcommand] { [command] + command.children.flatMap(family) }
        let owners = family(root).filter { $0 != subcommand && $0.option(spelled: spelling) != nil }
        guard !owners.isEmpty else { return "" }
        return " (an option of " + owners.map { "'\($0)'" }.joined(separator: " and ") + ")"
    }

    /// Whether an argument is an option (or `--`) rather than a value: it starts with `-` and is
    /// neither `-` alone nor a negative number such as `-5` or `-.5`.
    static func looksLikeOption(_ argument: String) -> Bool {
        guard argument.hasPrefix("-"), argument.count > 1 else { return false }
        let second = argument[argument.index(after: argument.startIndex)]
        return !(second.isASCII && (second.isNumber || second == "."))
    }

    /// `--size=320x180` → (`--size`, `320x180`); `--size` → (`--size`, nil). Splits at the first `=`.
    static func split(_ argument: String) -> (spelling: String, value: String?) {
        guard let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}

/// What the command line asks for: the result of parsing, before anything runs.
enum ParsedCommand: Equatable, Sendable {
    /// A subcommand with its typed options.
    case command(any ParsableCommand)
    /// `--help`, `-h` or `help`: the text to print on standard output.
    case help(String)
    /// `--version`.
    case version
    /// `man` or `completions <shell>`: a generated text to print on standard output as it is.
    case generated(String)

    static func == (lhs: ParsedCommand, rhs: ParsedCommand) -> Bool {
        switch (lhs, rhs) {
        case (.command(let a), .command(let b)): a.isEqual(to: b)
        case (.help(let a), .help(let b)): a == b
        case (.version, .version): true
        case (.generated(let a), .generated(let b)): a == b
        default: false
        }
    }

    /// The command's `--progress` and `--quiet`, for those that have them.
    var reporting: ReportingOptions? {
        if case .command(let command) = self { (command as? any ReportsProgress)?.reporting } else { nil }
    }

    /// The command's input as given, for error lines; `nil` for help and version.
    var input: String? {
        if case .command(let command) = self { command.input } else { nil }
    }
}

