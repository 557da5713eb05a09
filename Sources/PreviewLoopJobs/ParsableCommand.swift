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
package protocol ParsableCommand: Sendable {
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
    package static var subcommand: Subcommand { Subcommand(Self.self) }

    /// The declaration of the option named `name` (without dashes), for readers that name one option
    /// (the server's query parameters): the command must take it.
    package static func option(_ name: String) -> any OptionDeclaration {
        guard let option = options.first(where: { $0.spec.name == name }) else {
            preconditionFailure("\(configuration.name) has no option --\(name)")
        }
        return option
    }
}

extension ParsableCommand where Self: Equatable {
    package func isEqual(to other: any ParsableCommand) -> Bool { (other as? Self) == self }
}

/// A subcommand's declarations: what help, the manual page and the completion scripts show, and what
/// the scanner accepts.
package struct CommandConfiguration: Sendable {
    /// The name typed after `preview-loop` (`thumb`).
    package var name: String
    /// The one-line summary shown in help.
    package var abstract: String
    /// The positional arguments, in order.
    package var arguments: [PositionalArgument]
    /// The long names of group options the command does not take.
    package var hidden: [String]
    /// The commands typed after this one's name (`batch report`), in help order: each has its own
    /// options, arguments, help, manual page section and completions.
    package var subcommands: [any ParsableCommand.Type]

    /// Declares a subcommand; its options are its `@Option`/`@Flag` properties and option groups.
    ///
    /// - Parameters:
    ///   - name: the name typed after `preview-loop`.
    ///   - abstract: the one-line summary shown in help.
    ///   - arguments: the positional arguments, in order.
    ///   - hidden: the options of its groups the command does not take.
    ///   - subcommands: the commands typed after this one's name, in help order.
    package init(name: String, abstract: String, arguments: [PositionalArgument], hiding hidden: [any OptionDeclaration] = [],
         subcommands: [any ParsableCommand.Type] = []) {
        self.name = name
        self.abstract = abstract
        self.arguments = arguments
        self.hidden = hidden.map(\.spec.name)
        self.subcommands = subcommands
    }
}

/// What the tool hands a command when it runs it.
package struct CommandContext {
    /// Runs `preview-loop serve` (the server is a module above this one, handed in by the executable);
    /// `nil` in a build without it.
    var serve: ((ServeCommand) -> Int32)?
    /// The report of a usage error for standard error: the error, the usage line and where to find help.
    var usageReport: (UsageError) -> String

    package init(serve: ((ServeCommand) -> Int32)?, usageReport: @escaping (UsageError) -> String) {
        self.serve = serve
        self.usageReport = usageReport
    }
}

/// Every subcommand, in the order help lists them: the one list a new subcommand joins (one typed after
/// another's name joins that command's `configuration.subcommands` instead).
enum CommandRegistry {
    /// The top-level subcommands' types.
    static let commands: [any ParsableCommand.Type] = [
        ProbeCommand.self, ThumbCommand.self, StripCommand.self, SheetCommand.self, LoopCommand.self,
        TimingCommand.self, RenderCommand.self, SpritesCommand.self, CardCommand.self, BatchCommand.self,
        WallCommand.self, ServeCommand.self,
    ]
}

/// A subcommand as the parser, help and errors name it: a registered command type, with the commands
/// whose name is typed before its own (`batch` for `batch report`).
package struct Subcommand: Hashable, Sendable, CaseIterable, RawRepresentable, CustomStringConvertible {
    /// The command's type.
    package let command: any ParsableCommand.Type
    /// The commands typed before it, outermost first; empty for a top-level subcommand.
    package let parents: [any ParsableCommand.Type]

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
    package init?(rawValue: String) {
        guard let subcommand = Self.allCommands.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = subcommand
    }

    /// The top-level subcommands, in help order.
    package static var allCases: [Subcommand] { CommandRegistry.commands.map { Subcommand($0, parents: []) } }

    /// Every subcommand, each followed by its own subcommands (`batch`, `batch report`,
    /// `batch export-page`), in help order: what help, the manual page and the completions cover.
    package static var allCommands: [Subcommand] {
        func withChildren(_ subcommand: Subcommand) -> [Subcommand] { [subcommand] + subcommand.children.flatMap(withChildren) }
        return allCases.flatMap(withChildren)
    }

    /// The commands typed after this one's name (`report` and `export-page` after `batch`), in help order.
    package var children: [Subcommand] {
        command.configuration.subcommands.map { Subcommand($0, parents: parents + [command]) }
    }

    /// The child typed as `name` (`report` after `batch`), if any.
    package func child(named name: String) -> Subcommand? {
        children.first { $0.name == name }
    }

    /// The command this one is typed after (`batch` for `batch report`); `nil` for a top-level one.
    package var parent: Subcommand? {
        guard let last = parents.last else { return nil }
        return Subcommand(last, parents: Array(parents.dropLast()))
    }

    /// The last name as typed (`report` for `batch report`).
    package var name: String { command.configuration.name }
    /// The names as typed, separated by spaces (`thumb`, `batch report`).
    package var rawValue: String { (parents.map { $0.configuration.name } + [name]).joined(separator: " ") }
    package var description: String { rawValue }

    package static func == (lhs: Subcommand, rhs: Subcommand) -> Bool { lhs.rawValue == rhs.rawValue }
    package func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// The one-line summary shown in help.
    package var abstract: String { command.configuration.abstract }

    /// The positional arguments this subcommand takes, in order.
    package var arguments: [PositionalArgument] { command.configuration.arguments }

    /// The options this subcommand accepts, in help order, `--help` last.
    var declarations: [any OptionDeclaration] { command.options + [CommonOptions.help] }

    /// The options' spellings and help, in help order.
    package var options: [OptionSpec] { declarations.map(\.spec) }

    /// The spec for a spelling as typed (`--size`, `-s`), if the subcommand has it.
    package func option(spelled spelling: String) -> OptionSpec? {
        if spelling.hasPrefix("--") {
            let name = spelling.dropFirst(2)
            return options.first { $0.name == name }
        }
        guard spelling.count == 2, spelling.first == "-", let letter = spelling.last else { return nil }
        return options.first { $0.shortName == letter }
    }
}

/// A command with `--progress` and `--quiet`.
package protocol ReportsProgress {
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
        return CommandFailure.reporting(for: source, report: report) {
            try SignalCleanup.run(input: source.input, report: report) { try make(report: report) }
        }
    }
}
