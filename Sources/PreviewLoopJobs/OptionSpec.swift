import PreviewLoop

/// One option's spellings, whether it takes a value, and its help: the part of a ``ValueOption`` or ``FlagOption``
/// declaration that the scanner and the help text read.
///
/// The same declarations drive the scanner (which spellings exist, which take values), the help text
/// and the typed values, so the three cannot drift apart.
package struct OptionSpec: Sendable {
    /// The long name without dashes, for example `size`; also the key the scanner files values under.
    package var name: String
    /// The one-letter alias without its dash, for example `s`.
    package var shortName: Character?
    /// The placeholder shown for the value, for example `WxH`; `nil` for a flag.
    package var valueName: String?
    /// What the option does, one sentence or two.
    package var abstract: String
    /// The default shown in help, if any.
    package var defaultValue: String?
    /// Whether the option must be given.
    var isRequired = false
    /// What a shell's completion offers for the value.
    package var completion = ValueCompletion.none
    /// The whole numbers a numeric option accepts, as declared (from the library's ``ValueRanges`` where
    /// the library has the same limit); `nil` for any other kind of value.
    var integerRange: ClosedRange<Int>?
    /// The name the job's other front ends take the option under (`tile_width`): the image API's query
    /// derives a parameter from it on every route of the job (``PreviewRoute``); `nil` for an option
    /// only the command line has (files, processes, reporting). Set with `.parameter()` where the option
    /// is declared.
    package var parameter: String?
    /// The key the batch recipe's section of the job takes the option under when the option is not a
    /// parameter or its key is spelled otherwise (`at`, `size`, `header`); `nil` for the parameter's
    /// name. Set with `.recipeKey()` where the option is declared (``BatchRecipeSection``).
    package var recipeKey: String?
    /// For a flag with a ``recipeKey``: whether the key's `false` turns the flag on (`"header": false`
    /// gives `--no-header`).
    package var recipeKeyInverts = false

    /// The key a batch recipe's section takes the option under: its ``recipeKey``, else its
    /// ``parameter``; `nil` for an option no front end but the command line has.
    package var recipeName: String? { recipeKey ?? parameter }

    /// Whether the option takes a value.
    package var takesValue: Bool { valueName != nil }

    /// `--name`.
    package var longSpelling: String { "--\(name)" }

    /// `-o, --output <file>`, the label in the OPTIONS section.
    package var helpLabel: String {
        var label = shortName.map { "-\($0), " } ?? ""
        label += longSpelling
        if let valueName { label += " <\(valueName)>" }
        return label
    }

    /// `-o <file>` when required (short form, as scripts write it), else `[--at <time>]`.
    package var usageSpelling: String {
        let name = isRequired ? (shortName.map { "-\($0)" } ?? longSpelling) : longSpelling
        let spelling = valueName.map { "\(name) <\($0)>" } ?? name
        return isRequired ? spelling : "[\(spelling)]"
    }

    /// `--size <WxH>`, how error messages name the option.
    package var errorSpelling: String {
        valueName.map { "\(longSpelling) <\($0)>" } ?? longSpelling
    }
}

/// What a shell's completion offers for an option's value or a positional argument.
package enum ValueCompletion: Equatable, Sendable {
    /// Nothing to offer: a number, a time, a size.
    case none
    /// One of these words.
    case choices([String])
    /// A path to a file (folders are offered on the way).
    case path
    /// A path to a folder.
    case directory
}

/// Options every subcommand has.
package enum CommonOptions {
    /// `-h, --help`.
    package static let help = FlagOption("help", short: "h", help: "Show help information.")
}
