/// A positional argument as a subcommand declares it: its name, its help, whether it repeats and what a
/// shell's completion offers. Help, the manual page and the completion scripts read these declarations.
package struct PositionalArgument: Equatable, Sendable {
    /// The name shown in angle brackets (`input`).
    package var name: String
    /// What the argument is.
    package var abstract: String
    /// Whether it may be given more than once (`<inputs…>`).
    package var repeats = false
    /// What a shell's completion offers.
    package var completion = ValueCompletion.path

    /// `<input>` or `<inputs…>`, as usage lines and help write it.
    package var label: String { repeats ? "<\(name)…>" : "<\(name)>" }
}

extension PositionalArgument {
    /// `<input>`: the video a single-clip command reads.
    static let input = PositionalArgument(name: "input", abstract: "The video to read: a file path or an http(s):// URL.")
}
