import Foundation
import PreviewLoop
import PreviewLoopTestSupport
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs
import Testing

/// A job's parameter is declared once, on its option (`.parameter()`), and every front end is a view of
/// that declaration: for every such option of every job the image API serves, the option is in the
/// command's help, its manual page section and all three completion scripts, and it is a query parameter
/// of each of the job's routes (unless the route leaves it out by name) whose values the option's own
/// conversion judges; and it is a key of the job's section of a batch recipe, or left out of it by name.
@Suite("jobs: every parameter declared once shows in help, the manual page, completions, the HTTP query and the batch recipe")
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

    /// Values to try for an option that is neither a flag, a choice nor a whole number, by its value name.
    private let recipeSamples: [String: [String]] = [
        "time": ["2", "0:02"], "WxH": ["64x36"], "CxR": ["2x2"], "color": ["#336699"], "auto|time": ["auto", "2"],
        "poster|time": ["1"], "cut|crossfade[=T]": ["crossfade=0.25"], "date": ["2026-12-07T03:00:00Z"], "degrees": ["90"],
        "px": ["4"], "seconds": ["2"],
    ]

    /// JSON values for `option` that its declaration takes: a flag's `true` (`false` for one the key turns
    /// on that way), every choice, a whole number's ends and middle, else ``recipeSamples``.
    private func recipeValues(for option: any OptionDeclaration) -> [String] {
        let spec = option.spec
        guard spec.takesValue else { return [spec.recipeKeyInverts ? "false" : "true"] }
        if case .choices(let names) = spec.completion { return names.map { "\"\($0)\"" } + (recipeSamples[spec.valueName ?? ""] ?? []).map { "\"\($0)\"" } }
        if let range = spec.integerRange {
            return [range.lowerBound, range.lowerBound + 1, range.lowerBound / 2 + range.upperBound / 2, range.upperBound].map { "\($0)" }
        }
        return (recipeSamples[spec.valueName ?? ""] ?? []).map { "\"\($0)\"" }
    }

    @Test("each parameter of each batch recipe section's job is a key of that section, typed and checked by its declaration")
    func everyRecipeKey() throws {
        var checked = 0
        for section in BatchRecipeSection.all {
            func recipe(_ members: String) throws(PreviewLoopError) -> BatchRecipe {
                try BatchRecipe.parse(json: Array("{\"\(section.name)\": {\(members)}}".utf8), name: "r.json")
            }
            let defaults = try recipe("")
            for option in section.command.options {
                guard let key = option.spec.recipeName else { continue }
                if BatchRecipeSection.leftOutEverywhere.contains(key) || section.leftOut.contains(key) {
                    // Left out by name, with why, where the section is declared: refused as unknown.
                    #expect(throws: PreviewLoopError.self, "\(section.name).\(key) is left out") { try recipe("\"\(key)\": true") }
                    continue
                }
                // A value the option's declaration refuses is refused naming the section and the key.
                do {
                    _ = try recipe("\"\(key)\": \"\\u007fbad\"")
                    Issue.record("\(section.name).\(key) took a bad value")
                } catch {
                    #expect(error.message.hasPrefix("r.json: \"\(section.name)\".\"\(key)\": ") && !error.message.contains("\n"),
                            "\(section.name).\(key): \(error.message)")
                }
                // A value it takes is accepted and changes the output the section makes.
                let values = recipeValues(for: option)
                let taken = values.first { value in (try? recipe("\"\(key)\": \(value)")).map { $0 != defaults } ?? false }
                #expect(taken != nil, "\(section.name).\(key): none of \(values) was taken and changed the output")
                checked += 1
            }
        }
        #expect(checked >= 35, "the check reached \(checked) recipe keys")
    }

    @Test("batch's help, its manual page and the batch guide name every key of every recipe section")
    func recipeKeysDocumented() throws {
        let help = try #require(BatchCommand.options.first { $0.spec.name == "recipe" }).spec.abstract
        let manual = ManualPage.text
        for section in BatchRecipeSection.all {
            let entry = "\(section.name) (\(section.commandLine)): " + section.keys.joined(separator: ", ")
            #expect(help.contains(entry) && manual.contains(ManualPage.escape(entry)), "batch --recipe's help lacks \(entry)")
        }
        let guide = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("Docs/batch.md"), encoding: .utf8)
        let recipe = guide.components(separatedBy: "\n## Recipe").dropFirst().first?.components(separatedBy: "\n## ").first ?? ""
        #expect(!recipe.isEmpty)
        for section in BatchRecipeSection.all {
            for key in section.keys {
                #expect(recipe.contains("\"\(key)\"") || recipe.contains("`\(key)`"), "Docs/batch.md's recipe does not name \(section.name).\(key)")
            }
        }
    }
}
