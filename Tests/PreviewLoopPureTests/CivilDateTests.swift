import Glibc
import PreviewLoopRemote
import Testing

/// The calendar arithmetic under `x-amz-date` and `#EXT-X-PROGRAM-DATE-TIME`, checked against the C
/// library's `gmtime_r`, `timegm` and its calendar rules, from 1600 to 2400 and around each leap day.
@Suite("Civil dates from and to days since 1970")
struct CivilDateTests {
    /// Every third day from 1600-01-01 to 2400-01-01 (both kinds of century years, leap and not), and
    /// every day of the years around 1900, 1970, 2000 and 2100.
    static let days: [Int] = Array(stride(from: -135_140, through: 157_054, by: 3))
        + [-25_567, -365, 10_957, 47_482].flatMap { start in start - 400..<start + 400 }

    @Test("A count of days gives gmtime_r's date, and the date gives the count back")
    func againstGlibc() {
        var mismatches: [String] = []
        for days in Self.days {
            var seconds = time_t(days * 86_400)
            var parts = tm()
            guard gmtime_r(&seconds, &parts) != nil else {
                mismatches.append("gmtime_r refused day \(days)")
                continue
            }
            let expected = (year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday))
            let date = CivilDate.date(daysSince1970: days)
            if date != expected { mismatches.append("day \(days): \(date), gmtime_r \(expected)") }
            let back = CivilDate.daysSince1970(year: expected.year, month: expected.month, day: expected.day)
            if back * 86_400 != Int(timegm(&parts)) { mismatches.append("\(expected): \(back) days, timegm \(timegm(&parts)) s") }
            if mismatches.count > 5 { break }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
    }

    @Test("A date is valid when timegm keeps it as given (no day rolled into the next month)")
    func validity() {
        var mismatches: [String] = []
        for year in [1900, 1999, 2000, 2023, 2024, 2100] {
            for month in 0...13 {
                for day in 0...32 {
                    var parts = tm()
                    parts.tm_year = Int32(year - 1900)
                    parts.tm_mon = Int32(month - 1)
                    parts.tm_mday = Int32(day)
                    _ = timegm(&parts)
                    let kept = parts.tm_year == Int32(year - 1900) && parts.tm_mon == Int32(month - 1) && parts.tm_mday == Int32(day)
                    if CivilDate.isValid(year: year, month: month, day: day) != kept { mismatches.append("\(year)-\(month)-\(day)") }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
    }
}
