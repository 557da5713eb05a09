import Foundation
import Testing
import PreviewLoopTestSupport

/// Whether `/usr/bin/<name>` is there (zsh and fish are optional here; `make install-check` installs them).
private func hasShell(_ name: String) -> Bool {
    FileManager.default.isExecutableFile(atPath: "/usr/bin/" + name)
}

/// The scripts `preview-loop completions bash|zsh|fish` prints, loaded into the shells themselves: what
/// each offers after `batch`, `batch report` and `batch export-page`. bash and fish complete as they
/// would at a prompt; zsh's completion system needs a terminal, so its function runs with `_arguments`
/// standing in, printing the specs the function hands it.
@Suite("Completions in the shells: batch's subcommands have their own options", .serialized, .timeLimit(.minutes(10)))
struct CompletionShellTests {
    /// An empty folder to complete in (paths offered are its entries) and the script for `shell` in it.
    private static func setUp(_ shell: String) throws -> (folder: String, script: String) {
        let folder = TestPaths.temporaryDirectory()
        let result = try Child.cli(["completions", shell])
        #expect(result.status == 0, "\(result.stderr)")
        let script = folder + "/completion." + shell
        try result.stdout.write(to: URL(fileURLWithPath: script))
        try FileManager.default.createDirectory(atPath: folder + "/work", withIntermediateDirectories: true)
        return (folder, script)
    }

    /// What bash offers for the command line `words` (the last being the word completed), in `folder`/work.
    private static func bashOffers(_ words: [String], script: String, folder: String) throws -> [String] {
        let program = #"cd "$1/work" && source "$2" && shift 2 && COMP_WORDS=("$@") && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) "#
            + #"&& _preview_loop; printf '%s\n' "${COMPREPLY[@]}""#
        let result = try Child.tool("bash", ["--norc", "--noprofile", "-c", program, "_", folder, script] + words)
        #expect(result.status == 0, "\(words): \(result.stderr)")
        return result.stdoutText.split(separator: "\n").map(String.init)
    }

    @Test("bash: batch export-page's and batch report's own options; after batch its subcommands and its options")
    func bash() throws {
        let (folder, script) = try Self.setUp("bash")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func offers(_ words: String...) throws -> [String] { try Self.bashOffers(["preview-loop"] + words, script: script, folder: folder) }
        #expect(try offers("batch", "export-page", "--") == ["--help"])
        let report = try offers("batch", "report", "--")
        #expect(Set(report) == ["--json", "--duplicates", "--hamming", "--help"], "\(report)")
        #expect(try offers("batch", "report", "OUT", "--duplicates", "--ham") == ["--hamming"])
        let batch = try offers("batch", "--")
        #expect(batch.contains("--shard") && batch.contains("--recipe") && !batch.contains("--json"), "\(batch)")
        #expect(try offers("batch", "") == ["report", "export-page"])
        #expect(try offers("batch", "ex") == ["export-page"])
        #expect(try offers("batch", "m.txt", "--sh") == ["--shard", "--shard-count"])
        // A subcommand name later on is an ordinary word: the run's options still apply.
        #expect(try offers("batch", "m.txt", "-o", "report", "--sh") == ["--shard", "--shard-count"])
        #expect(try offers("help", "batch", "") == ["report", "export-page"])
        #expect(try offers("thumb", "--si") == ["--size"])
    }

    @Test("fish: batch export-page's and batch report's own options; after batch its subcommands and its options",
          .enabled(if: hasShell("fish"), "fish is not installed"))
    func fish() throws {
        let (folder, script) = try Self.setUp("fish")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func offers(_ line: String) throws -> [String] {
            let result = try Child.tool("fish", ["--no-config", "-c", "cd $argv[1]/work; source $argv[2]; complete -C $argv[3]",
                                                 folder, script, line])
            #expect(result.status == 0, "\(line): \(result.stderr)")
            return result.stdoutText.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        }
        let exportPage = try offers("preview-loop batch export-page --")
        #expect(exportPage == ["--help"], "\(exportPage)")
        let report = try offers("preview-loop batch report --")
        #expect(Set(report) == ["--json", "--duplicates", "--hamming", "--help"], "\(report)")
        let batch = try offers("preview-loop batch --")
        #expect(batch.contains("--shard") && batch.contains("--recipe") && !batch.contains("--json"), "\(batch)")
        let names = try offers("preview-loop batch ")
        #expect(names.contains("report") && names.contains("export-page"), "\(names)")
        #expect(!(try offers("preview-loop batch report ")).contains("export-page"))
        #expect(try offers("preview-loop thumb --si") == ["--size"])
    }

    @Test("zsh: the branch for batch export-page hands _arguments its own options; batch's offers its subcommands",
          .enabled(if: hasShell("zsh"), "zsh is not installed"))
    func zsh() throws {
        let (folder, script) = try Self.setUp("zsh")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // `_arguments -C` (the top level) picks the argument state and drops the tool's name, as the real
        // one does for `*::argument:->argument`; any other call prints what it was given.
        let program = """
            _arguments() {
              if [[ $1 == -C ]]; then state=argument; shift words; (( CURRENT-- )); return 1; fi
              print -rl -- "$@"
            }
            compdef() { :; }
            source $1; shift
            words=("$@"); CURRENT=$#words
            _preview-loop
            """
        func specs(_ words: String...) throws -> [String] {
            let result = try Child.tool("zsh", ["-f", "-c", program, "_", script, "preview-loop"] + words)
            #expect(result.status == 0, "\(words): \(result.stderr)")
            return result.stdoutText.split(separator: "\n").map(String.init)
        }
        let exportPage = try specs("batch", "export-page", "--")
        #expect(exportPage.contains { $0.contains("--help[") } && exportPage.contains("1:out:_files -/"), "\(exportPage)")
        #expect(!exportPage.contains { $0.contains("--shard") }, "\(exportPage)")
        let report = try specs("batch", "report", "--")
        #expect(report.contains { $0.hasPrefix("--json[") } && report.contains { $0.hasPrefix("--hamming=[") }, "\(report)")
        #expect(!report.contains { $0.contains("--jobs") }, "\(report)")
        let batch = try specs("batch", "")
        #expect(batch.contains { $0.hasPrefix("--shard=[") } && !batch.contains { $0.hasPrefix("--json") }, "\(batch)")
        #expect(batch.contains { $0.hasPrefix("1:manifest:_alternative") && $0.contains("(report export-page)") }, "\(batch)")
    }
}
