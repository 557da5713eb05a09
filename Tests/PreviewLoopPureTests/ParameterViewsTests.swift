import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs
import Testing

/// A job's parameter is declared once, on its option (`.parameter()`), and every front end is a view of
/// that declaration: for every such option of every job the image API serves, the option is in the
/// command's help, its manual page section and all three completion scripts, and it is a query parameter
/// of each of the job's routes (unless the route leaves it out by name) whose values the option's own
/// conversion judges.
@Suite("jobs: every parameter declared once shows in help, the manual page, completions and the HTTP query")
struct ParameterViewsTests {
    /// The served jobs and their routes.
    private var jobs: [(command: any ServedJob.Type, routes: [PreviewRoute])] {
        var seen: [ObjectIdentifier] = []
        var result: [(command: any ServedJob.Type, routes: [PreviewRoute])] = []
        for route in PreviewRequests.routes where !seen.contains(ObjectIdentifier(route.command)) {
            seen.append(ObjectIdentifier(route.command))
            result.append((route.command, PreviewRequests.routes.filter { ObjectIdentifier($0.command) == ObjectIdentifier(route.command) }))
        }
        return result
    }

    /// What each route leaves out of its job's parameters, and why.
    private let leftOut: [String: Set<String>] = [
        // The overlays' background goes with thumb's corners and play button, which only the command line has.
        "thumbnail": ["background"], "placeholder": ["background", "quality"],
        // The picture's format is its extension's.
        "storyboard.jpg": ["format"],
    ]

    @Test("each parameter of each served job is a view of its one declaration")
    func everyParameter() throws {
        let manual = ManualPage.text, bash = CompletionScript.bash, zsh = CompletionScript.zsh, fish = CompletionScript.fish
        var checked = 0
        for (command, routes) in jobs {
            let subcommand = Subcommand(command)
            let help = HelpText.help(for: subcommand)
            let section = manual.components(separatedBy: ".SS \(subcommand.name)\n").dropFirst().first?
                .components(separatedBy: "\n.SS ").first ?? ""
            for option in command.options {
                guard let name = option.spec.parameter else { continue }
                let spelling = option.spec.longSpelling
                #expect(help.contains(spelling), "\(subcommand) help lacks \(spelling)")
                #expect(section.contains(ManualPage.escape(spelling)), "the manual page's \(subcommand) section lacks \(spelling)")
                #expect(bash.contains(spelling) && zsh.contains(spelling) && fish.contains("-l \(option.spec.name)"),
                        "a completion script lacks \(spelling)")
                for route in routes {
                    let routeKey = route.stem == "storyboard" ? route.fileNames[0] : route.stem
                    if leftOut[routeKey]?.contains(name) ?? false {
                        #expect(!route.parameters.contains { $0.name == name }, "\(route.stem) takes \(name), which it leaves out")
                        continue
                    }
                    let parameter = route.parameters.first { $0.name == name }
                    #expect(parameter?.option.name == option.spec.name, "\(route.fileNames[0]) has no \(name) setting \(spelling)")
                    // The value is judged by the option's declaration: a value no option takes is a 400 naming the parameter.
                    do {
                        _ = try PreviewRequests.job(route: route.fileNames[0], query: [(name: name, value: "\u{7f}bad")], source: "/v/a.mp4")
                        Issue.record("\(route.fileNames[0]) took ?\(name)=bad")
                    } catch {
                        #expect(error.status == 400 && error.parameter == name, "\(route.fileNames[0]) ?\(name)=bad: \(error)")
                    }
                    checked += 1
                }
            }
        }
        // Every route's parameters come from its job's declarations: none sets an option the job does not declare.
        for route in PreviewRequests.routes {
            for parameter in route.parameters {
                #expect(route.command.options.contains { $0.spec.name == parameter.option.name })
            }
        }
        #expect(checked > 50, "the check reached \(checked) route parameters")
    }
}
