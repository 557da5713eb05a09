/// `%XX` escapes, as URLs carry them: read and written.
package enum PercentEncoding {
    /// The bytes of `text` with each `%XX` escape decoded (and, with `plusIsSpace`, each `+` a space, as
    /// in a form-encoded query); `nil` for a `%` not followed by two hex digits.
    package static func decode(_ text: some StringProtocol, plusIsSpace: Bool = false) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return bytes
    }

    /// `bytes` with every byte but RFC 3986's unreserved characters (`A`–`Z`, `a`–`z`, `0`–`9`, `-`, `.`,
    /// `_`, `~`) and the ASCII characters in `kept` written as `%XX`, upper-case hexadecimal.
    package static func encode(_ bytes: some Sequence<UInt8>, keeping kept: String = "") -> String {
        let keptBytes = Array(kept.utf8)
        var result = ""
        for byte in bytes {
            if isUnreserved(byte) || keptBytes.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result.unicodeScalars.append("%")
                result.unicodeScalars.append(Unicode.Scalar(hexDigits[Int(byte >> 4)]))
                result.unicodeScalars.append(Unicode.Scalar(hexDigits[Int(byte & 15)]))
            }
        }
        return result
    }

    /// A query component (a parameter's name or value): its UTF-8 with everything but the unreserved
    /// characters percent-encoded, so `+`, `&`, `=` and `%` in it survive the round trip.
    package static func queryComponent(_ text: String) -> String { encode(text.utf8) }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Whether `byte` is one of RFC 3986's unreserved characters, which are never escaped.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// The value of one hex digit.
    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
