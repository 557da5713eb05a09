import Testing
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// The part of a generated text that belongs to one subcommand: from `start` to the first `end` after it.
private func section(of text: String, from start: String, to end: String) -> String? {
    guard let head = text.firstRange(of: start) else { return nil }
    let rest = text[head.upperBound...]
    guard let tail = rest.firstRange(of: end) else { return String(rest) }
    return String(rest[..<tail.lowerBound])
}

/// A subcommand's part of the bash script: its `case` branch, to the end of its options line.
private func bashSection(_ subcommand: Subcommand) -> String? {
    let label = subcommand.parents.isEmpty ? subcommand.rawValue : "\"\(subcommand.rawValue)\""
    return section(of: CompletionScript.bash, from: "        \(label))\n", to: "\" ;;\n").map { $0 + "\"" }
}

/// A subcommand's part of the zsh script: its `case` branch.
private func zshSection(_ subcommand: Subcommand) -> String? {
    let label = subcommand.parents.isEmpty ? subcommand.rawValue : "'\(subcommand.rawValue)'"
    return section(of: CompletionScript.zsh, from: "        (\(label))\n", to: "          ;;\n")
}

/// A subcommand's lines of the fish script: those under its own condition.
private func fishLines(_ subcommand: Subcommand) -> [Substring] {
    CompletionScript.fish.split(separator: "\n").filter { $0.contains("-n '\(CompletionScript.fishCondition(subcommand))' ") }
}

@Suite("Help, manual page and completions come from one list of declarations")
struct GeneratedDocsTests {
    @Test("Every option and argument of every subcommand (and of each one's own, batch report) is in help, the manual page and all three completions",
          arguments: Subcommand.allCommands)
    func everyOptionEverywhere(subcommand: Subcommand) throws {
        let name = subcommand.rawValue
        let help = HelpText.help(for: subcommand)
        let manual = try #require(section(of: ManualPage.text, from: ".SS \(ManualPage.escape(name))\n", to: "\n.SS "))
        let bash = try #require(bashSection(subcommand))
        let zsh = try #require(zshSection(subcommand))
        let fish = fishLines(subcommand)
        #expect(fish.contains { $0.hasSuffix(" -F") }, "fish's \(name) offers no paths")
        #expect(!subcommand.options.isEmpty)
        for option in subcommand.options {
            #expect(help.contains(option.helpLabel), "help of \(name) lacks \(option.longSpelling)")
            #expect(manual.contains(ManualPage.label(option)), "the manual page's \(name) lacks \(option.longSpelling)")
            #expect(bash.contains(" \(option.longSpelling)") || bash.contains("\"\(option.longSpelling)"), "bash's \(name) lacks \(option.longSpelling)")
            #expect(zsh.contains(option.longSpelling + (option.takesValue ? "=" : "")), "zsh's \(name) lacks \(option.longSpelling)")
            let fishLine = fish.first { $0.contains(" -l \(option.name) ") }
            #expect(fishLine != nil, "fish's \(name) lacks \(option.longSpelling)")
            if let short = option.shortName {
                #expect(manual.contains("\\fB\\-\(short)\\fR"), "the manual page's \(name) lacks -\(short)")
                #expect(bash.contains("-\(short)|") || bash.contains(" -\(short) ") || bash.contains(" -\(short)\""))
                #expect(zsh.contains("-\(short)"))
                #expect(fishLine?.contains(" -s \(short) ") == true)
            }
            if case .choices(let words) = option.completion {
                #expect(bash.contains("\"\(words.joined(separator: " "))\""), "bash's \(name) \(option.longSpelling) lacks its values")
                #expect(zsh.contains("(\(words.joined(separator: " ")))"), "zsh's \(name) \(option.longSpelling) lacks its values")
                #expect(fishLine?.contains("-a '\(words.joined(separator: " "))'") == true)
            }
        }
        for argument in subcommand.arguments {
            #expect(help.contains(argument.label))
            #expect(manual.contains(ManualPage.escape(argument.label)))
            #expect(zsh.contains(":\(argument.name):"))
        }
    }

    @Test("Enumerated values and paths are declared for completion where the option has them")
    func completionKinds() {
        func spec(_ subcommand: String, _ name: String) -> OptionSpec? { Subcommand(rawValue: subcommand)?.options.first { $0.name == name } }
        #expect(spec("thumb", "fit")?.completion == .choices(["fill", "smartcrop", "fit", "stretch"]))
        #expect(spec("thumb", "output")?.completion == .path)
        #expect(spec("sprites", "output")?.completion == .directory)
        #expect(spec("batch", "out")?.completion == .directory)
        #expect(spec("thumb", "size")?.completion == ValueCompletion.none)
        if case .choices(let formats)? = spec("thumb", "format")?.completion {
            #expect(formats.contains("png") && formats.contains("jpg") && formats.contains("webp"))
        } else {
            Issue.record("thumb --format has no value list")
        }
    }

    @Test("The meta commands print generated texts; bad requests are usage errors")
    func metaCommands() throws {
        #expect(try CommandLineParser.parse(["man"]) == .generated(ManualPage.text))
        for shell in CompletionShell.allCases {
            #expect(try CommandLineParser.parse(["completions", shell.rawValue]) == .generated(shell.script))
        }
        for (arguments, kind) in [(["completions"], UsageError.Kind.missingArgument("shell")),
                                  (["completions", "tcsh"], .invalidValue(option: "shell", value: "tcsh")),
                                  (["completions", "bash", "x"], .unexpectedArgument("x")),
                                  (["man", "thumb"], .unexpectedArgument("thumb"))] {
            #expect(throws: UsageError.self) { try CommandLineParser.parse(arguments) }
            do { _ = try CommandLineParser.parse(arguments) } catch { #expect(error.kind == kind) }
        }
        let root = HelpText.root
        for command in MetaCommand.allCases { #expect(root.contains("  \(command.rawValue) ")) }
    }

    @Test("The registry is the one list of subcommands: the parser, root help, the manual page and every shell know each")
    func registryIsTheOneList() throws {
        let names = Subcommand.allCases.map(\.rawValue)
        #expect(Set(names).count == names.count, "a name registered twice")
        #expect(names.count == CommandRegistry.commands.count)
        for name in names {
            let subcommand = try #require(Subcommand(rawValue: name))
            #expect(subcommand.rawValue == name)
            #expect(HelpText.root.contains("  \(name) "), "root help lacks \(name)")
            #expect(ManualPage.text.contains(".SS \(name)\n"), "the manual page lacks \(name)")
            #expect(CompletionScript.bash.contains("        \(name))\n"), "bash lacks \(name)")
            #expect(CompletionScript.zsh.contains("        (\(name))\n"), "zsh lacks \(name)")
            #expect(CompletionScript.fish.contains("'\(CompletionScript.fishCondition(subcommand))'"), "fish lacks \(name)")
            // The parser reaches the registered type: its help, and its usage hint on a bad option.
            #expect(try CommandLineParser.parse([name, "--help"]) == .help(HelpText.help(for: subcommand)))
            #expect(UsageError(checking: [name, "--no-such-option"])?.subcommand == subcommand)
        }
    }

    @Test("Each subcommand declares an option's long name and short alias once", arguments: Subcommand.allCommands)
    func declaredOnce(subcommand: Subcommand) {
        let longNames = subcommand.options.map(\.name)
        #expect(Set(longNames).count == longNames.count, "\(subcommand): \(longNames)")
        let shortNames = subcommand.options.compactMap(\.shortName)
        #expect(Set(shortNames).count == shortNames.count, "\(subcommand): \(shortNames)")
        #expect(longNames.last == "help")
    }

    @Test("batch report and batch export-page are commands of their own: their help lists their options alone")
    func ownHelp() throws {
        let batch = try #require(Subcommand(rawValue: "batch"))
        let runOnly = ["--out", "--recipe", "--jobs", "--shard", "--shard-count", "--force", "--include"]
        // Each way of asking gives the same text.
        let exportPage = try CommandLineParser.parse(["batch", "export-page", "--help"])
        #expect(try CommandLineParser.parse(["help", "batch", "export-page"]) == exportPage)
        #expect(try CommandLineParser.parse(["batch", "export-page", "OUT", "-h"]) == exportPage)
        guard case .help(let exportHelp) = exportPage else { Issue.record("no help: \(exportPage)"); return }
        #expect(exportHelp.contains("USAGE: preview-loop batch export-page <out>"), "\(exportHelp)")
        #expect(exportHelp.contains("ARGUMENTS:\n  <out> ") && exportHelp.contains("-h, --help"))
        let exportOptions = try #require(section(of: exportHelp, from: "OPTIONS:\n", to: "\n\n"))
        for option in batch.options where option.name != "help" {
            #expect(!exportOptions.contains(option.longSpelling), "batch export-page --help lists \(option.longSpelling)")
        }
        guard case .help(let reportHelp) = try CommandLineParser.parse(["batch", "report", "--help"]) else {
            Issue.record("no help for batch report"); return
        }
        #expect(try CommandLineParser.parse(["help", "batch", "report"]) == .help(reportHelp))
        #expect(reportHelp.contains("USAGE: preview-loop batch report <results…> [--json] [--duplicates]"), "\(reportHelp)")
        let reportOptions = try #require(section(of: reportHelp, from: "OPTIONS:\n", to: "\n\n"))
        for spelling in runOnly { #expect(!reportOptions.contains(spelling), "batch report --help lists \(spelling)") }
        // batch's own help lists its subcommands and no longer the report's options.
        let batchHelp = HelpText.help(for: batch)
        #expect(batchHelp.contains("SUBCOMMANDS:\n  report ") && batchHelp.contains("\n  export-page "), "\(batchHelp)")
        #expect(batchHelp.contains("preview-loop help batch <subcommand>"))
        let batchOptions = try #require(section(of: batchHelp, from: "OPTIONS:\n", to: "\n\nSUBCOMMANDS:"))
        #expect(batchOptions.contains("--shard <I/N>"))
        for spelling in ["--json", "--duplicates", "--hamming"] { #expect(!batchOptions.contains(spelling), "batch --help lists \(spelling)") }
        // The manual page has a section each, with their own arguments and options.
        let manual = ManualPage.text
        let exportSection = try #require(section(of: manual, from: ".SS batch export\\-page\n", to: "\n.SS "))
        #expect(exportSection.contains("\\fI<out>\\fR") && !exportSection.contains("shard"))
        let reportSection = try #require(section(of: manual, from: ".SS batch report\n", to: "\n.SS "))
        #expect(reportSection.contains("\\-\\-duplicates") && !reportSection.contains("\\-\\-jobs"))
        #expect(manual.contains(".B preview\\-loop batch report\n.I <results\\[u2026]>"))
        // Help and usage errors name them: a wrong option is reported against the command typed.
        let error = try #require(UsageError(checking: ["batch", "export-page", "OUT", "--shard", "1/2"]))
        #expect(error.kind == .unknownOption("--shard") && error.subcommand?.rawValue == "batch export-page")
        #expect(error.message.contains("'batch'") && error.report.contains("See 'preview-loop batch export-page --help'."), "\(error.report)")
        #expect(UsageError(checking: ["help", "batch", "nope"])?.kind == .unknownSubcommand("batch nope"))
        #expect(UsageError(checking: ["help", "thumb", "x"])?.kind == .unexpectedArgument("x"))
    }

    @Test("The completions offer batch export-page's and batch report's options after their names, and batch's after batch")
    func ownCompletions() throws {
        let batch = try #require(Subcommand(rawValue: "batch"))
        let exportPage = try #require(Subcommand(rawValue: "batch export-page"))
        let report = try #require(Subcommand(rawValue: "batch report"))
        #expect(batch.children == [report, exportPage])
        #expect(Subcommand.allCommands.map(\.rawValue).filter { $0.hasPrefix("batch") } == ["batch", "batch report", "batch export-page"])
        // bash: the words after `batch` choose the branch; each branch's options are its own.
        let bash = CompletionScript.bash
        #expect(bash.contains("report|export-page) command=\"$command ${COMP_WORDS[2]}\""))
        #expect(bash.contains("names=\"report export-page\""))
        #expect(try #require(bashSection(exportPage)).hasSuffix("options=\"--help -h\""))
        let reportOptions = try #require(bashSection(report))
        #expect(reportOptions.contains("--json") && reportOptions.contains("--hamming) return") && !reportOptions.contains("--shard"))
        let batchOptions = try #require(bashSection(batch))
        #expect(batchOptions.contains("--shard") && !batchOptions.contains("--json"))
        // zsh: the same dispatch; batch's first argument offers its subcommands beside the manifest.
        let zsh = CompletionScript.zsh
        #expect(zsh.contains("if [[ $command == 'batch' ]] && (( CURRENT > 2 )) && [[ $words[2] == (report|export-page) ]]; then"))
        let zshExport = try #require(zshSection(exportPage))
        #expect(zshExport.contains("--help") && !zshExport.contains("--shard") && zshExport.contains("'1:out:_files -/'"))
        let zshBatch = try #require(zshSection(batch))
        #expect(zshBatch.contains("--shard=") && zshBatch.contains("(report export-page)") && !zshBatch.contains("--json"))
        // fish: batch's options only until a subcommand of its own is typed.
        let fishExport = fishLines(exportPage)
        #expect(fishExport.contains { $0.contains(" -l help ") } && !fishExport.contains { $0.contains(" -l shard ") })
        #expect(fishLines(batch).contains { $0.contains(" -l shard ") } && !fishLines(batch).contains { $0.contains(" -l json ") })
        #expect(CompletionScript.fishCondition(batch)
            == "__fish_seen_subcommand_from batch; and not __preview_loop_using batch report; and not __preview_loop_using batch export-page")
        #expect(CompletionScript.fish.contains(" -a export-page -d "))
    }

    @Test("A bound option sets its property: a value other than the default reaches the parsed command")
    func boundOptionsAssign() throws {
        let strip = try CommandLineParser.parse(["strip", "c.mp4", "-o", "s.png", "--gap", "7", "--timestamps", "--span", "all"])
        guard case .command(let options as StripCommand) = strip else { Issue.record("not strip"); return }
        #expect(options.gap == 7 && options.showsTimestamps && options.span == .all)
        let sheet = try CommandLineParser.parse(["sheet", "c.mp4", "-o", "s.png", "--background", "white", "--margin", "3"])
        guard case .command(let sheetOptions as SheetCommand) = sheet else { Issue.record("not sheet"); return }
        #expect(sheetOptions.margin == 3 && sheetOptions.style.background == SheetCommand.background.convert("white"))
    }

    @Test("roff escaping: dashes, backslashes, leading dots and non-ASCII characters")
    func roffEscaping() {
        #expect(ManualPage.escape("--size") == "\\-\\-size")
        #expect(ManualPage.escape(".hidden") == "\\&.hidden")
        #expect(ManualPage.escape("a\\b") == "a\\eb")
        #expect(ManualPage.escape("<inputs…>") == "<inputs\\[u2026]>")
        #expect(!ManualPage.text.split(separator: "\n").contains { $0.hasPrefix("'") })
    }
}
