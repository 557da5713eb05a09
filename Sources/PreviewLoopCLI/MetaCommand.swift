import PreviewLoop
import PreviewLoopJobs

/// The commands about the tool itself rather than about videos: they print text generated from the
/// subcommands' declarations (help, the manual page, completion scripts), so none can disagree with
/// what the parser accepts.
enum MetaCommand: String, CaseIterable, Sendable {
    /// `help [subcommand]`.
    case help
    /// `completions bash|zsh|fish`.
    case completions
    /// `man`.
    case man

    /// The one-line summary shown in help and the manual page.
    var abstract: String {
        switch self {
        case .help: "Show subcommand help information."
        case .completions: "Print the completion script for bash, zsh or fish ('make install' installs all three)."
        case .man: "Print the manual page, preview-loop(1), in roff ('man -l -' reads it)."
        }
    }

    /// What follows the command's name in its usage line.
    var usage: String {
        switch self {
        case .help: "[<subcommand>]"
        case .completions: "bash|zsh|fish"
        case .man: ""
        }
    }
}

/// The shells `completions` writes scripts for.
enum CompletionShell: String, CaseIterable, Sendable {
    /// GNU bash with its programmable completion (`complete -F`).
    case bash
    /// zsh's completion system (`compinit`, `_arguments`).
    case zsh
    /// fish (`complete -c`).
    case fish

    /// The script for this shell.
    var script: String {
        switch self {
        case .bash: CompletionScript.bash
        case .zsh: CompletionScript.zsh
        case .fish: CompletionScript.fish
        }
    }
}
