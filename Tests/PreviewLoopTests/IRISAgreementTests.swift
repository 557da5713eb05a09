import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// EA's IRIS test videos and the per-frame results IRIS logs for them (Fixtures/iris/, BSD 3-clause:
/// see its LICENSE.txt), read into one verdict per second: the worst of its frames' luminance and red
/// results.
enum IRISExpectations {
    static let videos = ["2Hz_5s", "2Hz_6s", "3Hz_6s", "GradualRedIncrease", "extendedFLONG", "flashStripes", "gray", "intermitentEF"]

    /// The verdict of each second of `name`, per IRIS's log.
    ///
    /// IRIS's current logs give `FlashLuminanceFailedFrame` and `FlashRedFailedFrame` per frame as its
    /// `FlashResult`: 0 pass, 1 pass with warning, 2 extended failure, 3 flash failure. One log
    /// (flashStripes) is in IRIS's earlier format, one `FlashFailedFrames` column that is 0, or 2 from
    /// the frame whose one-second window holds a seventh transition: there 2 is a flash failure.
    static func seconds(_ name: String) throws -> [FlashVerdict] {
        let text = try String(contentsOfFile: TestPaths.fixture("iris/\(name)_RELATIVE.csv"), encoding: .utf8)
        let lines = text.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        guard let header = lines.first?.map({ $0.trimmingCharacters(in: .whitespaces) }) else { return [] }
        let current = ["FlashLuminanceFailedFrame", "FlashRedFailedFrame"].compactMap { header.firstIndex(of: $0) }
        let earlier = header.firstIndex(of: "FlashFailedFrames")
        var worst: [Int: FlashVerdict] = [:]
        for fields in lines.dropFirst() where fields.count == header.count {
            // 00:01.2 or 00:00:01.200000
            let time = fields[1].split(separator: ":").reduce(0.0) { $0 * 60 + (Double($1.trimmingCharacters(in: .whitespaces)) ?? 0) }
            func value(_ index: Int) -> Int {
                Int(Double(fields[index].trimmingCharacters(in: .whitespacesAndNewlines.union(.controlCharacters))) ?? 0)
            }
            let verdict: FlashVerdict
            if !current.isEmpty {
                verdict = [FlashVerdict.pass, .warning, .extendedFailure, .failure][min(3, current.map(value).max() ?? 0)]
            } else if let earlier {
                verdict = value(earlier) >= 2 ? .failure : value(earlier) == 1 ? .warning : .pass
            } else {
                verdict = .pass
            }
            let second = Int((time + 1e-9).rounded(.down))
            worst[second] = max(worst[second] ?? .pass, verdict)
        }
        return worst.keys.sorted().map { worst[$0]! }
    }
}

@Suite("Flash verdicts agree with EA's IRIS on its published test videos")
struct IRISAgreementTests {
    @Test("Per-second verdicts: the same as IRIS's in at least 95 % of the seconds of its eight test videos")
    func agreement() throws {
        var agreeing = 0, total = 0
        var disagreements: [String] = []
        for name in IRISExpectations.videos {
            let expected = try IRISExpectations.seconds(name)
            let report = try FlashClips.analyse(TestPaths.fixture("iris/\(name).mp4")).report
            let ours = report.seconds.map(\.verdict)
            #expect(!expected.isEmpty)
            for (second, verdict) in expected.enumerated() {
                total += 1
                let our = second < ours.count ? ours[second] : nil
                if our == verdict { agreeing += 1 } else {
                    disagreements.append("\(name) s\(second): IRIS \(verdict.rawValue), here \(our?.rawValue ?? "none")")
                }
            }
        }
        let share = Double(agreeing) / Double(max(1, total))
        #expect(total == 38)  // the seconds of the eight logs
        #expect(share >= 0.95, "agree on \(agreeing) of \(total) seconds; \(disagreements.joined(separator: "; "))")
    }

    @Test("Each video's worst verdict is IRIS's", arguments: IRISExpectations.videos)
    func overall(name: String) throws {
        let expected = try IRISExpectations.seconds(name).max() ?? .pass
        let report = try FlashClips.analyse(TestPaths.fixture("iris/\(name).mp4")).report
        #expect(report.verdict == expected)
    }
}
