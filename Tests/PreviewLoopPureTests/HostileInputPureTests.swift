import Foundation
import Testing
import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// The pure pieces: decimal numbers, interval counts, the timing rule's constants.
@Suite("Hostile input: pure checks")
struct HostileInputPureTests {
    @Test("Decimal numbers only", arguments: [
        ("12.5", 12.5), ("0", 0), ("-3", -3), ("+2", 2), (".5", 0.5), ("5.", 5), ("1e3", 1000), ("2E-2", 0.02),
    ])
    func decimals(text: String, value: Double) {
        #expect(DecimalText.number(text) == value)
    }

    @Test("Not decimal numbers", arguments: [
        "0x10", "0x1p4", "nan", "NaN", "inf", "-inf", "infinity", "", " 5", "5 ", "1e", "e5", "1e400", "1.2.3", "--1",
        "1-", "٣", "1_000", ".", "-",
    ])
    func notDecimals(text: String) {
        #expect(DecimalText.number(text) == nil)
    }

    @Test("Thumbnail interval counts never trap, however small the interval")
    func intervalCounts() {
        #expect(ThumbnailTrack.thumbnailCount(duration: 5, every: 1e-301) > 1e300)
        #expect(ThumbnailTrack.thumbnailCount(duration: 5, every: .leastNonzeroMagnitude) == .infinity)
        #expect(PreviewCard.frameCount(duration: 1e300, framesPerSecond: 120) == 1_000_000_000_000_000)
        #expect(ThumbnailTrack.timestamp(.infinity) == "00:00:00.000")
    }

    @Test("The timing rule's bounds are the documented ones")
    func timingRule() {
        #expect(TimingRule.maxGap == 600)
        #expect(TimingRule.maxDuration == 10_000_000)
        #expect(TimingRule.minBytesPerSecond == 1)
    }
}
