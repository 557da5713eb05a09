import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// `thumb --at best --candidates N`: the ranked candidates the search compared, as a table and in
/// `--json`; the chosen one is the top one and the frame written; the numbers follow the documented
/// rules; bad counts are refused before any work.
@Suite("thumb --candidates: explainable poster picks")
struct PosterCandidatesTests {
    /// One row of the text table.
    struct Row {
        var isChosen: Bool
        var rank: Int
        var time: Double
        var brightness: Double, contrast: Double, sharpness: Double, uniformity: Double
        var colourfulness: Double, exposure: Double
        var typicality: Double?
        var score: Double?
        var rejection: String?
    }

    static func rows(_ text: String) -> [Row] {
        text.split(separator: "\n").compactMap { line -> Row? in
            guard line.first == "*" || line.first == " " else { return nil }
            let isChosen = line.first == "*"
            let fields = line.dropFirst().split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard fields.count >= 9, let rank = Int(fields[0]) else { return nil }
            let numbers = fields[1...7].compactMap(Double.init)
            guard numbers.count == 7 else { return nil }
            var row = Row(isChosen: isChosen, rank: rank, time: numbers[0], brightness: numbers[1], contrast: numbers[2],
                          sharpness: numbers[3], uniformity: numbers[4], colourfulness: numbers[5], exposure: numbers[6])
            if fields[8] == "-" {
                row.rejection = line.components(separatedBy: "rejected: ").last
            } else {
                row.typicality = Double(fields[8])
                row.score = fields.count > 9 ? Double(fields[9]) : nil
            }
            return row
        }
    }

    @Test("The table lists the top N, best first, the chosen one on top and the frame written; rejections follow the rules",
          arguments: ["title-card.mp4", "landscape.mp4", "black-start.mp4"])
    func table(fixture: String) throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Child.cli(["thumb", TestPaths.fixture(fixture), "-o", directory + "/best.png", "--at", "best",
                                    "--candidates", "9"], killAfter: 120)
        #expect(result.status == 0, "\(result.stderr)")
        let text = result.stdoutText
        let rows = Self.rows(text)
        #expect(!rows.isEmpty && rows.count <= 9, "\(text)")
        #expect(rows.map(\.rank) == Array(1...rows.count))
        // The chosen candidate is the first, and it is the frame written.
        #expect(rows.first?.isChosen == true && rows.dropFirst().allSatisfy { !$0.isChosen }, "\(text)")
        let summary = try #require(text.split(separator: "\n").first.map(String.init))
        let written = try #require(summary.range(of: "frame at ").map { summary[$0.upperBound...].prefix { $0 != " " } })
        #expect(Double(written) == rows.first?.time, "\(summary)")
        // Good candidates by score, highest first, then rejected ones.
        let scored = rows.prefix { $0.score != nil }
        #expect(rows.dropFirst(scored.count).allSatisfy { $0.score == nil && $0.rejection != nil }, "\(text)")
        #expect(zip(scored, scored.dropFirst()).allSatisfy { $0.score! >= $1.score! }, "\(text)")
        for row in rows {
            // Exposure as documented: 1 at brightness 0.45, 0 at 0 and from 0.9.
            #expect(abs(row.exposure - max(0, 1 - abs(row.brightness - 0.45) / 0.45)) <= 0.003, "\(row)")
            if let score = row.score, let typicality = row.typicality {
                #expect(row.contrast >= PosterRules.flatContrast && row.uniformity < PosterRules.titleCardUniformity, "\(row)")
                let product = (row.contrast * row.sharpness).squareRoot() * (0.25 + row.colourfulness) * (0.5 + 0.5 * row.exposure)
                    * (0.5 + 0.5 * max(0, typicality))
                // The table's numbers are rounded to 3–4 decimals.
                #expect(abs(product - score) <= 0.03 * score + 1e-4, "\(row): \(product)")
            } else {
                switch row.rejection {
                case "black": #expect(row.brightness <= 0.101 && (row.contrast <= 0.02 || row.sharpness <= 0.0015), "\(row)")
                case "white": #expect(row.brightness >= 0.899, "\(row)")
                case "title card": #expect(row.uniformity >= 0.849, "\(row)")
                case "flat": #expect(row.contrast <= 0.02 || row.sharpness <= 0.0015, "\(row)")
                default: Issue.record("unexpected rejection in \(row)")
                }
            }
        }
        if fixture == "title-card.mp4" {
            // The leader and the credits are title cards; the footage between is ranked.
            #expect(rows.contains { $0.rejection == "title card" }, "\(text)")
            #expect(rows.filter { $0.score != nil }.allSatisfy { (1.2..<2.8).contains($0.time) }, "\(text)")
        }
        // --candidates 2 lists the same first two rows, and says how many more there are.
        let two = try Child.cli(["thumb", TestPaths.fixture(fixture), "-o", directory + "/two.png", "--at", "best",
                                 "--candidates", "2"], killAfter: 120)
        let twoRows = Self.rows(two.stdoutText)
        #expect(twoRows.map(\.time) == rows.prefix(2).map(\.time))
        if rows.count > 2 { #expect(two.stdoutText.contains("(\(rows.count - 2) more)")) }
    }

    @Test("Absurd or misplaced --candidates is a usage error before any work, naming the range")
    func refusals() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clip = TestPaths.fixture("landscape.mp4")
        for value in ["0", "10", "-1", "abc", "1e3", "99999999999999999999999", "", "2.5"] {
            let output = directory + "/x.png"
            let result = try Child.cli(["thumb", clip, "-o", output, "--at", "best", "--candidates=" + value], killAfter: 30)
            #expect(result.status == 64, "\(value): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.first?.hasPrefix("Error:") == true && lines.first?.contains("--candidates") == true, "\(value): \(result.stderr)")
            #expect(lines.first?.contains("1 to \(FrameSampler.bestPosterCandidates)") == true || value.isEmpty, "\(value): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
        for at in [[], ["--at", "auto"], ["--at", "2"]] {
            let result = try Child.cli(["thumb", clip, "-o", directory + "/y.png", "--candidates", "3"] + at, killAfter: 30)
            #expect(result.status == 64 && result.stderr.contains("--at best"), "\(at): \(result.stderr)")
        }
    }
}
