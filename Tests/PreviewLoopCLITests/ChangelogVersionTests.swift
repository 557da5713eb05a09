import Foundation
import Testing
import PreviewLoopTestSupport

/// One release in CHANGELOG.md: `## 0.2.0 — 2026-12-06`.
private struct Release: Equatable, CustomStringConvertible {
    var version: [Int]
    var date: String
    var description: String { "\(version.map(String.init).joined(separator: ".")) — \(date)" }
}

/// CHANGELOG.md's second-level headings, in order.
private func changelogHeadings() throws -> [String] {
    let path = TestPaths.packageRoot.appendingPathComponent("CHANGELOG.md").path
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return text.split(separator: "\n", omittingEmptySubsequences: false)
        .filter { $0.hasPrefix("## ") }
        .map { String($0.dropFirst(3)) }
}

/// A heading read as a release (`MAJOR.MINOR.PATCH — YYYY-MM-DD`, an em dash between), or nil.
private func release(_ heading: String) -> Release? {
    let parts = heading.components(separatedBy: " — ")
    guard parts.count == 2 else { return nil }
    let numbers = parts[0].split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
    let date = parts[1].split(separator: "-", omittingEmptySubsequences: false)
    guard numbers.count == 3, numbers.allSatisfy({ $0 != nil }),
          parts[0].allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
          date.count == 3, date.map(\.count) == [4, 2, 2],
          date.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }) else { return nil }
    return Release(version: numbers.compactMap { $0 }, date: parts[1])
}

/// CHANGELOG.md is versioned: `## Unreleased` on top, then one dated section per release, newest
/// first; `preview-loop --version` and the manual page name the newest release.
@Suite("Changelog and --version", .timeLimit(.minutes(10)))
struct ChangelogVersionTests {
    @Test("CHANGELOG.md: Unreleased on top, then releases, newest first")
    func sections() throws {
        let headings = try changelogHeadings()
        #expect(headings.first == "Unreleased", "the first section is \(headings.first ?? "missing")")
        let rest = headings.dropFirst()
        for heading in rest {
            #expect(release(heading) != nil, "'## \(heading)' is not '## MAJOR.MINOR.PATCH — YYYY-MM-DD'")
        }
        let releases = rest.compactMap(release)
        #expect(!releases.isEmpty, "no release section")
        for (newer, older) in zip(releases, releases.dropFirst()) {
            #expect(older.version.lexicographicallyPrecedes(newer.version), "\(newer) is listed above \(older)")
            #expect(newer.date >= older.date, "\(newer) is dated before \(older)")
        }
    }

    @Test("--version and the manual page name the newest release in CHANGELOG.md")
    func versionAgrees() throws {
        let newest = try #require(try changelogHeadings().dropFirst().compactMap(release).first)
        let version = newest.version.map(String.init).joined(separator: ".")
        let printed = try Child.run(TestPaths.cliBinary, ["--version"])
        #expect(printed.status == 0 && printed.stderr.isEmpty, "\(printed.stderr)")
        #expect(printed.stdoutText == "preview-loop \(version)\n")
        let manual = try Child.run(TestPaths.cliBinary, ["man"])
        #expect(manual.status == 0, "\(manual.stderr)")
        let header = manual.stdoutText.split(separator: "\n").first { $0.hasPrefix(".TH ") }
        // roff escapes the hyphen: `.TH "PREVIEW\-LOOP" 1 "" "preview\-loop 0.2.0" "User Commands"`.
        #expect(header?.contains("\"preview\\-loop \(version)\"") == true, "\(header ?? "no .TH line")")
    }
}
