import Foundation
import PreviewLoop
import PreviewLoopTestSupport
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs
import Testing

@Suite("serve's routes are documented from their declarations")
struct ServeRouteDocsTests {
    @Test("The manual page lists every route and each of its parameters with the option it sets and its values")
    func manualPage() throws {
        let manual = ManualPage.text
        let routes = try #require(manual.firstRange(of: ".SH SERVE ROUTES\n"))
        let section = String(manual[routes.upperBound...]).components(separatedBy: "\n.SH ")[0]
        for route in PreviewRequests.routes {
            let heading = ".SS " + ManualPage.escape(route.fileNames.joined(separator: ", "))
            let body = try #require(section.components(separatedBy: heading + "\n").dropFirst().first?
                .components(separatedBy: "\n.SS ").first, "no \(heading)")
            #expect(body.contains("Rendered by \(route.subcommand)"))
            for parameter in route.parameters {
                let entry = try #require(body.components(separatedBy: "\\fB\(ManualPage.escape(parameter.name))\\fR=").dropFirst().first?
                    .components(separatedBy: "\n.TP").first, "\(route.stem): no \(parameter.name)")
                #expect(entry.contains(ManualPage.escape(parameter.option.longSpelling)), "\(route.stem) \(parameter.name)")
                #expect(entry.contains(ManualPage.escape(parameter.expectation)), "\(route.stem) \(parameter.name)")
            }
        }
        for parameter in FeedSettings.parameters {
            #expect(section.contains("\\fB\(ManualPage.escape(parameter.name))\\fR=\\fIvalue\\fR\n" + ManualPage.escape(parameter.help)))
        }
        // A range the server checks is the option's, in words: strip's count is the library's strip count.
        #expect(section.contains(ManualPage.escape("How many frames. Sets --count; takes a whole number from \(ValueRanges.stripCount.inWords).")))
    }

    @Test("The serve guide names every parameter of every route and of the feed page")
    func guide() throws {
        let guide = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("Docs/serve.md"), encoding: .utf8)
        let feed = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("Docs/feed.md"), encoding: .utf8)
        for route in PreviewRequests.routes {
            for parameter in route.parameters {
                #expect(guide.contains("`\(parameter.name)`"), "Docs/serve.md does not name \(route.stem)'s \(parameter.name)")
            }
        }
        for name in FeedSettings.parameterNames {
            #expect(feed.contains("`\(name)`") || guide.contains("`\(name)`"), "the guides do not name the feed page's \(name)")
        }
    }

    @Test("The Mux / imgproxy / Cloudflare table lists every Mux parameter and maps only to parameters, routes and options that exist")
    func compatibilityTable() throws {
        let guide = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("Docs/serve.md"), encoding: .utf8)
        let heading = try #require(guide.range(of: "### Mux / imgproxy / Cloudflare parameter → PreviewLoop\n"))
        let section = String(guide[heading.upperBound...]).components(separatedBy: "\n## ")[0]
        let rows = section.split(separator: "\n").map(String.init)
            .filter { $0.hasPrefix("| ") && !$0.hasPrefix("| Service ") && !$0.hasPrefix("| --- ") }
        #expect(rows.count > 40)
        /// The text between backticks in `cell`.
        func quoted(_ cell: String) -> [String] {
            cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
        }
        let parameters = Set(PreviewRequests.routes.flatMap { $0.parameters.map(\.name) })
            .union(["preset", "format", "expires", "signature", "url"])
        let stems = Set(PreviewRequests.routes.map(\.stem))
        let extensions = Set(PreviewRequests.routes.flatMap { $0.formats.map { "." + $0.fileExtension } })
        let serveOptions = Set(Subcommand.serve.options.map { "--" + $0.name })
        var services: [String] = [], mux: [String] = []
        for row in rows {
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            try #require(cells.count == 6, "not four cells: \(row)")
            if !services.contains(cells[1]) { services.append(cells[1]) }
            if cells[1] == "Mux" { mux += quoted(cells[2]) }
            // `fit_mode=crop`, `preserve`: the words after a `name=value` are more values of that name.
            var assigned: String?
            for token in quoted(cells[3]) {
                if token.first?.isUppercase == true { continue }  // a request header (`Save-Data: on`)
                let name = String(token.split(separator: "=", maxSplits: 1)[0])
                let stem = String(token.split(separator: ".", maxSplits: 1)[0])
                if token.contains("=") { assigned = name }
                if !token.contains("="), assigned == "fit_mode" {
                    #expect(PreviewRequests.fitModes[token] != nil, "\(token) in \(row)")
                    continue
                }
                let known = parameters.contains(name) || PreviewRequests.routeNames.contains(token) || extensions.contains(token)
                    || stems.contains(token) || (token.hasSuffix(".*") && stems.contains(stem)) || serveOptions.contains(token)
                #expect(known, "\(token) in \(row)")
                if name == "fit_mode", token.contains("=") {
                    #expect(PreviewRequests.fitModes[String(token.dropFirst(name.count + 1))] != nil, "\(token)")
                }
            }
        }
        #expect(services == ["Mux", "imgproxy", "Cloudflare Stream", "Cloudflare"])
        // Every parameter of Mux's thumbnail, animated and storyboard routes.
        for name in ["time", "width", "height", "rotate", "fit_mode", "flip_v", "flip_h", "latest", "program_time", "token", "start", "end",
                     "fps", "format"] {
            #expect(mux.contains { $0.hasPrefix(name) }, "Mux's \(name) is not in the table")
        }
    }
}
