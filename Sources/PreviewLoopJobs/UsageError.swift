/// A command line the tool cannot accept: reported as `Error: …` plus a usage hint, exit status 64.
///
/// Tests match ``kind`` and ``subcommand``; ``message`` is for people and may change.
package struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong with the command line.
    package enum Kind: Equatable, Sendable {
        /// No subcommand was given.
        case missingSubcommand
        /// The first argument is not a subcommand.
        case unknownSubcommand(String)
        /// An option the subcommand does not have, as typed (for example `--sise`).
        case unknownOption(String)
        /// An option that needs a value came last or was followed by another option.
        case missingValue(option: String)
        /// A flag was given a value with `=` (for example `--json=yes`).
        case unexpectedValue(option: String)
        /// A value that does not parse or is out of range, for the option's long name.
        case invalidValue(option: String, value: String)
        /// The `<input>` argument is missing.
        case missingInput
        /// A meta command's argument is missing, by name (`shell` after `completions`).
        case missingArgument(String)
        /// A required option is missing, by long name (`output`).
        case missingOption(String)
        /// A second positional argument.
        case unexpectedArgument(String)
        /// The output's extension names no supported image format.
        case unsupportedOutputFormat(String)
        /// Two options that cannot be used together, by long name.
        case conflictingOptions(String, String)
        /// A request over a work or encoder limit (the option that sets it, or the size option).
        case overLimit(String)
    }

    /// What is wrong.
    package var kind: Kind
    /// The subcommand being parsed, for the usage hint; `nil` at the top level.
    package var subcommand: Subcommand?
    /// One line for a person, without the `Error: ` prefix.
    package var message: String

    /// Creates a usage error.
    package init(_ kind: Kind, subcommand: Subcommand?, _ message: String) {
        self.kind = kind
        self.subcommand = subcommand
        self.message = message
    }

    /// The message alone.
    package var description: String { message }
}
