extension StringProtocol {
    /// The text with every Unicode scalar `replacement` gives a replacement for written as that
    /// replacement, and every other as it is: what the escapers for JSON, HTML, roff and the terminal
    /// have in common.
    package func replacingScalars(_ replacement: (Unicode.Scalar) -> String?) -> String {
        var result = ""
        result.reserveCapacity(utf8.count)
        for scalar in unicodeScalars {
            if let replaced = replacement(scalar) {
                result += replaced
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

extension Unicode.Scalar {
    /// The scalar's code point in hexadecimal, at least four digits (`00e9`, `2028`): the `XXXX` of
    /// JSON's `\uXXXX` (lowercase) or roff's `\[uXXXX]` (uppercase).
    package func hexDigits(uppercase: Bool = false) -> String {
        let hex = String(value, radix: 16, uppercase: uppercase)
        return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
