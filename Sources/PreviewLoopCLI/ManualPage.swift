import PreviewLoop
import PreviewLoopJobs

/// The manual page, `preview-loop(1)` in roff (the `man` macros), built from the same declarations as
/// `--help`: every subcommand (and each one typed after another's name, `batch report`, in its own
/// section) with its arguments and options, their defaults, and the exit statuses.
/// `make install` installs it; `preview-loop man | man -l -` reads it without installing.
enum ManualPage {
    /// The whole page.
    static var text: String {
        var lines: [String] = []
        let tool = HelpText.toolName
        lines.append(#".TH "\#(escape(tool.uppercased()))" 1 "" "\#(escape(tool)) \#(Tool.version)" "User Commands""#)
        lines.append(".nh")
        lines.append(".SH NAME")
        lines.append("\(escape(tool)) \\- \(escape(lowercasingFirst(HelpText.overview)))")
        lines.append(".SH SYNOPSIS")
        for subcommand in Subcommand.allCommands {
            lines.append(".B \(escape(tool)) \(escape(subcommand.rawValue))")
            lines.append(subcommand.arguments.map { ".I \(escape($0.label))" }.joined(separator: "\n"))
            lines.append(".RI [ options ]")
            lines.append(".br")
        }
        for command in MetaCommand.allCases {
            lines.append(".B \(escape(tool)) \(escape(command.rawValue))" + (command.usage.isEmpty ? "" : " \(escape(command.usage))"))
            lines.append(".br")
        }
        lines.append(".B \(escape(tool)) \\-\\-version")
        lines.append(".SH DESCRIPTION")
        lines.append(escape(HelpText.overview))
        lines.append(".PP")
        lines.append(escape("An option takes its value as the next argument (--size 320x180) or after = (--size=320x180); "
            + "one-letter aliases the same way. An option given twice keeps its last value. -- ends the options, so "
            + "an input may start with a dash. -h or --help anywhere shows the subcommand's help. A subcommand's own "
            + "subcommand (batch report) comes right after its name and takes its own options."))
        lines.append(".SH SUBCOMMANDS")
        for subcommand in Subcommand.allCommands {
            lines.append(".SS \(escape(subcommand.rawValue))")
            lines.append(escape(subcommand.abstract))
            for argument in subcommand.arguments {
                lines.append(".TP")
                lines.append("\\fI\(escape(argument.label))\\fR")
                lines.append(escape(argument.abstract))
            }
            for option in subcommand.options {
                lines.append(".TP")
                lines.append(label(option))
                lines.append(escape(option.abstract + (option.defaultValue.map { " (default: \($0))" } ?? "")))
            }
        }
        lines += serveRoutes
        lines.append(".SH COMMANDS ABOUT THE TOOL")
        for command in MetaCommand.allCases {
            lines.append(".TP")
            lines.append("\\fB\(escape(command.rawValue))\\fR" + (command.usage.isEmpty ? "" : " \(escape(command.usage))"))
            lines.append(escape(command.abstract))
        }
        lines.append(".TP")
        lines.append("\\fB\\-\\-version\\fR")
        lines.append("Show the version.")
        lines.append(".SH EXIT STATUS")
        for (status, meaning) in HelpText.exitStatuses {
            lines.append(".TP")
            lines.append(".B \(status)")
            lines.append(escape(meaning))
        }
        lines.append(".SH SEE ALSO")
        lines.append(".BR ffmpeg (1),")
        lines.append(".BR ffprobe (1)")
        return lines.filter { !$0.isEmpty }.joined(separator: "\n") + "\n"
    }

    /// The section on `serve`'s routes: each route's file names, the subcommand that renders it and its
    /// query parameters, each with the option it sets and the values it takes, read from the routes'
    /// declarations (which read the subcommands' own), then the feed page's parameters.
    static var serveRoutes: [String] {
        let serve = ServeCommand.configuration.name
        var lines = [".SH SERVE ROUTES"]
        lines.append(escape("\(serve) answers GET and HEAD for /PATH/ROUTE?PARAMETERS, PATH a video under "
            + "\(ServeCommand.root.spec.longSpelling); with \(ServeCommand.allowSource.spec.longSpelling), /ROUTE?url=URL "
            + "serves a remote video instead. Each route "
            + "is rendered by a subcommand and gives the bytes it writes; each parameter sets one of that subcommand's "
            + "options, with the same values, ranges and limits, and an absent one leaves the option at its default. "
            + "An unknown parameter, or one given twice, is a 400 naming it. With "
            + "\(ServeCommand.signingKeyFile.spec.longSpelling), every request also carries expires and signature."))
        for route in PreviewRequests.routes {
            lines.append(".SS \(escape(route.fileNames.joined(separator: ", ")))")
            lines.append(escape("Rendered by \(route.subcommand)" + (route.parameters.isEmpty ? "; no parameters." : ".")))
            for parameter in route.parameters {
                lines += entry(parameter, parameter.help + " Sets \(parameter.option.longSpelling)"
                    + (parameter.expectation.isEmpty ? "." : "; takes \(parameter.expectation)."))
            }
        }
        lines.append(".SS /")
        lines.append(escape("The feed page, unless \(ServeCommand.noFeed.spec.longSpelling). Its parameters override the server's settings for one page."))
        for parameter in FeedSettings.parameters {
            lines += entry(parameter, parameter.help + " Takes \(parameter.expectation).")
        }
        return lines
    }

    /// A query parameter's entry: `name=value` in bold and italic, then `text`.
    private static func entry(_ parameter: QueryParameter, _ text: String) -> [String] {
        [".TP", "\\fB\(escape(parameter.name))\\fR=\\fIvalue\\fR", escape(text)]
    }

    /// `\fB\-o\fR, \fB\-\-output\fR \fIfile\fR`: an option's spellings, bold, and its value, italic.
    static func label(_ option: OptionSpec) -> String {
        var label = option.shortName.map { "\\fB\\-\(escape(String($0)))\\fR, " } ?? ""
        label += "\\fB\(escape(option.longSpelling))\\fR"
        if let valueName = option.valueName { label += " \\fI\(escape(valueName))\\fR" }
        return label
    }

    /// Text made safe for roff: backslashes and dashes escaped (a dash in an option is a minus sign, so
    /// it can be copied), characters outside ASCII as `\[uXXXX]`, and a leading `.` or `'` (which roff
    /// would read as a request) guarded by `\&`.
    static func escape(_ text: String) -> String {
        let escaped = text.replacingScalars { scalar in
            switch scalar {
            case "\\": "\\e"
            case "-": "\\-"
            case "\u{A0}": "\\ "
            case _ where scalar.isASCII: nil
            default: "\\[u" + scalar.hexDigits(uppercase: true) + "]"
            }
        }
        return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
    }

    /// `make preview loops…` from `Make preview loops…`, for the NAME line.
    private static func lowercasingFirst(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.lowercased() + text.dropFirst().dropLast(text.hasSuffix(".") ? 1 : 0)
    }
}
