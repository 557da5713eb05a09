import Testing
@testable import PreviewLoop

/// `TimePosition`: the CLI's spellings of a point in a clip (seconds, `mm:ss`, `hh:mm:ss.ms`, `N%`),
/// what is rejected, and how a position resolves to seconds.
@Suite("Time position")
struct TimePositionTests {
    @Test("Seconds and clock times parse", arguments: [
        ("0", 0.0), ("12.5", 12.5), ("01:30", 90), ("1:02:03.5", 3723.5), ("00:00:00.040", 0.04),
        (" 5 ", 5), ("\t7\n", 7), ("60", 60), ("90:00", 5400), ("1:59.999", 119.999), ("0:0:0", 0),
        ("2:00:00", 7200), ("100:00:00", 360_000), (".5", 0.5), ("5.", 5), ("0:59", 59), ("007", 7),
    ])
    func seconds(text: String, expected: Double) throws {
        let position = try #require(TimePosition(parsing: text))
        guard case .seconds(let value) = position else {
            Issue.record("\(text) parsed as \(position)")
            return
        }
        #expect(abs(value - expected) < 1e-9, "\(text) → \(value)")
    }

    @Test("Percentages parse", arguments: [("10%", 10.0), ("100%", 100), ("0%", 0), ("12.5%", 12.5), (" 50% ", 50)])
    func percent(text: String, expected: Double) {
        #expect(TimePosition(parsing: text) == .percent(expected))
    }

    @Test("Invalid positions are rejected", arguments: [
        "", "   ", "-1", "abc", "1:60", "1:2:3:4", "101%", "-5%", "100.5%", "nan", "inf", "nan%", "inf%",
        "1e3", "1e3%", "12.5.3", ":30", "30:", "1::2", "1.5:30", "1:2.5:30", "-1:30", "1:-30", "%", "5 %",
        "12s", "0x10", "+5", ".", "1:60.0", "1:59:60", "١٢", "1e1%", "5e-1%", "+5%", ".%",
    ])
    func rejects(text: String) {
        #expect(TimePosition(parsing: text) == nil, "\(text) → \(String(describing: TimePosition(parsing: text)))")
    }

    @Test("Resolving to seconds")
    func resolving() {
        #expect(TimePosition.percent(10).seconds(duration: nil) == nil)
        #expect(TimePosition.percent(50).seconds(duration: 4) == 2)
        #expect(TimePosition.percent(0).seconds(duration: 4) == 0)
        #expect(TimePosition.percent(100).seconds(duration: 7.5) == 7.5)
        #expect(TimePosition.seconds(12.5).seconds(duration: nil) == 12.5)
        #expect(TimePosition.seconds(12.5).seconds(duration: 4) == 12.5)
    }

    @Test("The description parses back to the same position",
          arguments: [TimePosition.seconds(0), .seconds(12.5), .seconds(3723.5), .seconds(0.04), .percent(10), .percent(33.5), .percent(100)])
    func roundTrip(position: TimePosition) {
        #expect(TimePosition(parsing: position.description) == position)
    }

    @Test("Seek accuracies are spelled as the CLI spells them")
    func accuracies() {
        #expect(SeekAccuracy.allCases.map(\.rawValue) == ["exact", "keyframe", "auto"])
    }
}

/// Times beyond a billion seconds are refused at parsing, so no later conversion can overflow.
@Test("Seconds beyond 1e9 are refused", arguments: ["1000000001", "99999999999999999999", "277778:00:00"])
func hugeTimesAreRefused(_ text: String) {
    #expect(TimePosition(parsing: text) == nil)
}
