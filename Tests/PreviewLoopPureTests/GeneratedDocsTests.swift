import Testing
@testable import PreviewLoopCLI

/// The part of a generated text that belongs to one subcommand: from `start` to the first `end` after it.
private func section(of text: String, from start: String, to end: String) -> String? {
    guard let head = text.firstRange(of: start) else { return nil }
    let rest = text[head.upperBound...]
    guard let tail = rest.firstRange(of: end) else { return String(rest) }
    return String(rest[..<tail.lowerBound])
}

@Suite("Help, manual page and completions come from one list of declarations")
struct GeneratedDocsTests {
    @Test("Every option and argument of every subcommand is in help, the manual page and all three completions",
          arguments: Subcommand.allCases)
    func everyOptionEverywhere(subcommand: Subcommand) throws {
        let name = subcommand.rawValue
        let help = HelpText.help(for: subcommand)
        let manual = try #require(section(of: ManualPage.text, from: ".SS \(name)\n", to: "\n.SS "))
        let bash = try #require(section(of: CompletionScript.bash, from: "        \(name))\n", to: " ;;\n        "
            + (Subcommand.allCases.drop { $0 != subcommand }.dropFirst().first?.rawValue ?? MetaCommand.help.rawValue) + ")"))
        let zsh = try #require(section(of: CompletionScript.zsh, from: "        (\(name))\n", to: "          ;;\n"))
        let fish = CompletionScript.fish.split(separator: "\n").filter { $0.contains("'__fish_seen_subcommand_from \(name)'") }
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
        #expect(spec("thumb", "fit")?.completion == .choices(["fill", "fit", "stretch"]))
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
            #expect(CompletionScript.fish.contains("'__fish_seen_subcommand_from \(name)'"), "fish lacks \(name)")
            // The parser reaches the registered type: its help, and its usage hint on a bad option.
            #expect(try CommandLineParser.parse([name, "--help"]) == .help(HelpText.help(for: subcommand)))
            #expect(UsageError(checking: [name, "--no-such-option"])?.subcommand == subcommand)
        }
    }

    @Test("Each subcommand declares an option's long name and short alias once", arguments: Subcommand.allCases)
    func declaredOnce(subcommand: Subcommand) {
        let longNames = subcommand.options.map(\.name)
        #expect(Set(longNames).count == longNames.count, "\(subcommand): \(longNames)")
        let shortNames = subcommand.options.compactMap(\.shortName)
        #expect(Set(shortNames).count == shortNames.count, "\(subcommand): \(shortNames)")
        #expect(longNames.last == "help")
    }

    @Test("A bound option sets its property: a value other than the default reaches the parsed command")
    func boundOptionsAssign() throws {
        let strip = try CommandLineParser.parse(["strip", "c.mp4", "-o", "s.png", "--gap", "7", "--timestamps", "--span", "all"])
        guard case .command(let options as StripOptions) = strip else { Issue.record("not strip"); return }
        #expect(options.gap == 7 && options.showsTimestamps && options.span == .all)
        let sheet = try CommandLineParser.parse(["sheet", "c.mp4", "-o", "s.png", "--background", "white", "--margin", "3"])
        guard case .command(let sheetOptions as SheetOptions) = sheet else { Issue.record("not sheet"); return }
        #expect(sheetOptions.margin == 3 && sheetOptions.style.background == SheetOptions.background.convert("white"))
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
