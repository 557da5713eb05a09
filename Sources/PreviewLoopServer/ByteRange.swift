/// A `Range: bytes=…` request header read against a body's length (RFC 9110 §14): one range is
/// served as 206; a header that is not one well-formed byte range is ignored (the whole body, 200),
/// as the RFC lets a server do; one that starts past the end is 416.
///
/// Several ranges are answered with the whole body: browsers and players ask for one, and a
/// multipart answer to a thousand tiny ranges would cost more than the body.
enum ByteRange: Equatable {
    /// Send the whole body.
    case whole
    /// Send `bounds` (inclusive of both ends, within the body).
    case part(ClosedRange<Int>)
    /// The range starts at or past the end: 416 with `Content-Range: bytes */length`.
    case unsatisfiable

    /// The longest header read; a longer one is ignored.
    static let maximumHeader = 256

    /// Reads `header` for a body of `length` bytes.
    init(header: String?, length: Int) {
        guard let header, header.utf8.count <= Self.maximumHeader else {
            self = .whole
            return
        }
        let text = header.utf8
        guard text.count > 6, String(decoding: text.prefix(6), as: UTF8.self).lowercased() == "bytes=" else {
            self = .whole
            return
        }
        let spec = Array(text.dropFirst(6)).filter { $0 != 0x20 && $0 != 0x09 }
        guard !spec.contains(UInt8(ascii: ",")), let dash = spec.firstIndex(of: UInt8(ascii: "-")) else {
            self = .whole
            return
        }
        let firstDigits = spec[..<dash], lastDigits = spec[(dash + 1)...]
        if firstDigits.isEmpty {
            // The last `suffix` bytes.
            guard let suffix = Self.number(lastDigits) else { self = .whole; return }
            self = suffix > 0 && length > 0 ? .part(max(0, length - suffix)...(length - 1)) : .unsatisfiable
            return
        }
        guard let start = Self.number(firstDigits) else { self = .whole; return }
        if lastDigits.isEmpty {
            self = start < length ? .part(start...(length - 1)) : .unsatisfiable
            return
        }
        guard let end = Self.number(lastDigits), start <= end else { self = .whole; return }
        self = start < length ? .part(start...min(end, length - 1)) : .unsatisfiable
    }

    /// Decimal digits as a number, saturating at `Int.max` (a value past 2^63 is just very large);
    /// `nil` for an empty or non-digit run.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        var value = 0
        for digit in digits {
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(Int(digit - 0x30))
            if overflowTimes || overflowSum { return Int.max }
            value = sum
        }
        return value
    }
}
