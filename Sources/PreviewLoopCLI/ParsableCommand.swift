import PreviewLoop

// Subcommands declared once, the way swift-argument-parser's `ParsableCommand` works, written by hand:
// a subcommand is one type in one file — its name, summary and positional arguments in a static
// `configuration`, its options as `@Option`/`@Flag` properties and option groups, its positional
// arguments in `takeArguments(_:)`, its cross-option checks in `validate()`, its work in `run(in:)` —
// listed once in `CommandRegistry.commands`, or, for a command typed after another's name (`batch report`),
// once in that command's `configuration.subcommands`. The parser, help, the manual page, the completion
// scripts and the server's query parameters read these declarations; nothing else names a subcommand.

/// One of the tool's jobs: what it accepts (``configuration`` and its option properties), how its
/// arguments become a typed value (`init(_:)`: `init()` inside an ``ArgumentContext``, then
/// ``takeArguments(_:)`` and ``validate()``), and how it runs (``run(in:)``).
protocol ParsableCommand: Sendable {
    /// The subcommand's name, summary and positional arguments.
    static var configuration: CommandConfiguration { get }
    /// The options, in help order, without `--help`.
    static var options: [any OptionDeclaration] { get }
    /// A command with every option at its default, or read from the current ``ArgumentContext``.
    init()
    /// Types and validates the scanned arguments.
    ///
    /// - Throws: ``UsageError`` naming what is wrong, with this subcommand for the usage hint.
    init(_ arguments: ScannedArguments) throws(UsageError)
    /// Takes the positional arguments (`arguments.input()` and the like) and turns folded options into
    /// the properties they become.
    ///
    /// - Throws: ``UsageError`` for a missing or unexpected argument.
    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError)
    /// The checks across options, once every value is typed.
    ///
    /// - Throws: ``UsageError`` naming the options that conflict.
    func validate() throws(UsageError)
    /// Runs the command and returns the exit status; errors are reported by the command itself.
    ///
    /// - Parameter context: what the tool hands every command (the server, when this build has one).
    func run(in context: CommandContext) -> Int32
    /// The input as given, for error lines (`batch`, `wall` and `serve` name themselves).
    var input: String { get }
    /// Whether `other` is this very command value (parsing is tested by comparing values).
    func isEqual(to other: any ParsableCommand) -> Bool
}

extension ParsableCommand {
    /// This command's entry in the registry, for usage errors and reports.
    static var subcommand: Subcommand { Subcommand(Self.self) }

    /// The declaration of the option named `name` (without dashes), for readers that name one option
    /// (the server's query parameters): the command must take it.
    static func option(_ name: String) -> any OptionDeclaration {
        guard let option = options.first(where: { $0.spec.name == name }) else {
            preconditionFailure("\(configuration.name) has no option --\(name)")
        }
        return option
    }
}

extension ParsableCommand where Self: Equatable {
    func isEqual(to other: any ParsableCommand) -> Bool { (other as? Self) == self }
}

/// A subcommand's declarations: what help, the manual page and the completion scripts show, and what
/// the scanner accepts.
struct CommandConfiguration: Sendable {
    /// The name typed after `preview-loop` (`thumb`).
    var name: String
    /// The one-line summary shown in help.
    var abstract: String
    /// The positional arguments, in order.
    var arguments: [PositionalArgument]
    /// The long names of group options the command does not take.
    var hidden: [String]
    /// The commands typed after this one's name (`batch report`), in help order: each has its own
    /// options, arguments, help, manual page section and completions.
    var subcommands: [any ParsableCommand.Type]

    /// Declares a subcommand; its options are its `@Option`/`@Flag` properties and option groups.
    ///
    /// - Parameters:
    ///   - name: the name typed after `preview-loop`.
    ///   - abstract: the one-line summary shown in help.
    ///   - arguments: the positional arguments, in order.
    ///   - hidden: the options of its groups the command does not take.
    ///   - subcommands: the commands typed after this one's name, in help order.
    init(name: String, abstract: String, arguments: [PositionalArgument], hiding hidden: [any OptionDeclaration] = [],
         subcommands: [any ParsableCommand.Type] = []) {
        self.name = name
        self.abstract = abstract
        self.arguments = arguments
        self.hidden = hidden.map(\.spec.name)
        self.subcommands = subcommands
    }
}

/// What the tool hands a command when it runs it.
struct CommandContext {
    /// Runs `preview-loop serve` (the server is a module above this one, handed in by the executable);
    /// `nil` in a build without it.
    var serve: ((ServeOptions) -> Int32)?
}

/// Every subcommand, in the order help lists them: the one list a new subcommand joins (one typed after
/// another's name joins that command's `configuration.subcommands` instead).
enum CommandRegistry {
    /// The top-level subcommands' types.
    static let commands: [any ParsableCommand.Type] = [
        ProbeOptions.self, ThumbOptions.self, StripOptions.self, SheetOptions.self, LoopOptions.self,
        TimingOptions.self, RenderOptions.self, SpritesOptions.self, CardOptions.self, BatchCommandOptions.self,
        WallOptions.self, ServeOptions.self,
    ]
}

/// A subcommand as the parser, help and errors name it: a registered command type, with the commands
/// whose name is typed before its own (`batch` for `batch report`).
struct Subcommand: Hashable, Sendable, CaseIterable, RawRepresentable, CustomStringConvertible {
    /// The command's type.
    let command: any ParsableCommand.Type
    /// The commands typed before it, outermost first; empty for a top-level subcommand.
    let parents: [any ParsableCommand.Type]

    /// The subcommand of a registered type, wherever it is registered.
    init(_ command: any ParsableCommand.Type) {
        self = Self.allCommands.first { ObjectIdentifier($0.command) == ObjectIdentifier(command) }
            ?? Subcommand(command, parents: [])
    }

    private init(_ command: any ParsableCommand.Type, parents: [any ParsableCommand.Type]) {
        self.command = command
        self.parents = parents
    }

    /// The registered subcommand of that name as typed, if any: `thumb`, or `batch report` with the
    /// names separated by one space.
    init?(rawValue: String) {
        guard let subcommand = Self.allCommands.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = subcommand
    }

    /// The top-level subcommands, in help order.
    static var allCases: [Subcommand] { CommandRegistry.commands.map { Subcommand($0, parents: []) } }

    /// Every subcommand, each followed by its own subcommands (`batch`, `batch report`,
    /// `batch export-page`), in help order: what help, the manual page and the completions cover.
    static var allCommands: [Subcommand] {
        func withChildren(_ subcommand: Subcommand) -> [Subcommand] { [subcommand] + subcommand.children.flatMap(withChildren) }
        return allCases.flatMap(withChildren)
    }

    /// The commands typed after this one's name (`report` and `export-page` after `batch`), in help order.
    var children: [Subcommand] {
        command.configuration.subcommands.map { Subcommand($0, parents: parents + [command]) }
    }

    /// The child typed as `name` (`report` after `batch`), if any.
    func child(named name: String) -> Subcommand? {
        children.first { $0.name == name }
    }

    /// The command this one is typed after (`batch` for `batch report`); `nil` for a top-level one.
    var parent: Subcommand? {
        guard let last = parents.last else { return nil }
        return Subcommand(last, parents: Array(parents.dropLast()))
    }

    /// The last name as typed (`report` for `batch report`).
    var name: String { command.configuration.name }
    /// The names as typed, separated by spaces (`thumb`, `batch report`).
    var rawValue: String { (parents.map { $0.configuration.name } + [name]).joined(separator: " ") }
    var description: String { rawValue }

    static func == (lhs: Subcommand, rhs: Subcommand) -> Bool { lhs.rawValue == rhs.rawValue }
    func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// The one-line summary shown in help.
    var abstract: String { command.configuration.abstract }

    /// The positional arguments this subcommand takes, in order.
    var arguments: [PositionalArgument] { command.configuration.arguments }

    /// The options this subcommand accepts, in help order, `--help` last.
    var declarations: [any OptionDeclaration] { command.options + [CommonOptions.help] }

    /// The options' spellings and help, in help order.
    var options: [OptionSpec] { declarations.map(\.spec) }

    /// The spec for a spelling as typed (`--size`, `-s`), if the subcommand has it.
    func option(spelled spelling: String) -> OptionSpec? {
        if spelling.hasPrefix("--") {
            let name = spelling.dropFirst(2)
            return options.first { $0.name == name }
        }
        guard spelling.count == 2, spelling.first == "-", let letter = spelling.last else { return nil }
        return options.first { $0.shortName == letter }
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

/// A command with `--progress` and `--quiet`.
protocol ReportsProgress {
    /// Progress and quiet (`--progress`, `--quiet`).
    var reporting: ReportingOptions { get }
}

/// A command that reads one video: its input group is what the server's requests change.
protocol ClipCommand: ParsableCommand {
    /// The input and how it is read (the input group).
    var source: InputOptions { get set }
}

extension ClipCommand {
    var input: String { source.input }
}

/// The commands that write a file from one clip and can print a `--json` record: they run the same way.
protocol ClipOutputCommand: ClipCommand {
    /// Whether one JSON record replaces the summary line (`--json`).
    var json: Bool { get }
    /// Does the work, filling `report` when there is one.
    func make(report: ClipReport?) throws -> Int32
}

extension ClipOutputCommand {
    func run(in context: CommandContext) -> Int32 {
        let report = json ? ClipReport(command: Self.subcommand, input: source.input) : nil
        return CommandLineTool.reportingErrors(for: source, report: report) {
            try SignalCleanup.run(input: source.input, report: report) { try make(report: report) }
        }
    }
}
