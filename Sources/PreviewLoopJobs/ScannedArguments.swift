/// A subcommand's arguments sorted into option values, flags and positionals, before any is typed.
package struct ScannedArguments: Sendable {
    /// The subcommand the arguments belong to.
    package var subcommand: Subcommand
    /// The last value given to each option, by long name.
    package var values: [String: String] = [:]
    /// The flags given, by long name.
    package var flags: Set<String> = []
    /// The positional arguments, in order.
    package var positionals: [String] = []
    /// Every value of each option, in order, for the options that may be given more than once.
    package var everyValue: [String: [String]] = [:]

    /// Arguments of `subcommand` with nothing given yet.
    package init(subcommand: Subcommand) {
        self.subcommand = subcommand
    }

    /// Records a value given to the option named `option`: its last value, and one more of its values.
    package mutating func give(_ option: String, _ value: String) {
        values[option] = value
        everyValue[option, default: []].append(value)
    }
}

