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
}
