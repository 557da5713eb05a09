/// Numbers spelled as C's `printf` spells them with `%.Nf` and `%0Nd`, in pure Swift: no locale (the
/// decimal separator is always `.`) and no Foundation.
///
/// `package`: shared with the `preview-loop` executable, not part of the library's public API.
package enum DecimalText {
    /// `value` with exactly `digits` decimals, as `%.<digits>f`: `fixed(4, 3)` → `4.000`,
    /// `fixed(2.675, 2)` → `2.67` (the double just below 2.675), `fixed(0.125, 2)` → `0.12` (an exact tie
    /// goes to the even digit), `fixed(-0.0004, 3)` → `-0.000`, `fixed(.nan, 1)` → `nan`.
    ///
    /// Rounding works on the double's exact binary value, so the text is the one `printf` gives.
    /// - Precondition: `digits` is in `0...17`.
    package static func fixed(_ value: Double, _ digits: Int) -> String {
        precondition((0...17).contains(digits), "DecimalText.fixed supports 0 to 17 decimals")
        let sign = value.sign == .minus ? "-" : ""
        if value.isNaN { return sign + "nan" }
        if value.isInfinite { return sign + "inf" }
        let magnitude = value.magnitude
        // Exactly: magnitude = significand * 2^exponent, with an integer significand below 2^53.
        let significand = magnitude.significandBitPattern | (magnitude.isNormal ? 1 << 52 : 0)
        let exponent = (magnitude.isNormal ? Int(magnitude.exponentBitPattern) : 1) - 1075
        var scaledDigits: String
        if magnitude < 0x1p64 {
            // magnitude * 10^digits = significand * 5^digits * 2^(exponent + digits), below 2^121.
            var scaled = UInt128(significand) * power(of: 5, digits)
            let shift = exponent + digits
            if shift >= 0 {
                scaled <<= shift
            } else if -shift >= 128 {
                scaled = 0                          // far below half a unit of the last decimal
            } else {
                let quotient = scaled >> -shift
                let remainder = scaled - (quotient << -shift)
                let half = UInt128(1) << (-shift - 1)
                let roundsUp = remainder > half || (remainder == half && quotient & 1 == 1)
                scaled = quotient + (roundsUp ? 1 : 0)
            }
            scaledDigits = String(scaled)
        } else {
            // From 2^64 on, a double is a whole number (exponent > 0): its digits, then zero decimals.
            scaledDigits = integerDigits(significand: significand, exponent: exponent)
                + String(repeating: "0", count: digits)
        }
        guard digits > 0 else { return sign + scaledDigits }
        if scaledDigits.count <= digits {
            scaledDigits = String(repeating: "0", count: digits + 1 - scaledDigits.count) + scaledDigits
        }
        let point = scaledDigits.index(scaledDigits.endIndex, offsetBy: -digits)
        return sign + String(scaledDigits[..<point]) + "." + String(scaledDigits[point...])
    }

    /// A number written in decimal — an optional sign, digits with an optional `.` fraction, an optional
    /// `e` exponent — as a finite `Double`; `nil` for anything else: hex (`0x10`, `0x1p4`), `nan`, `inf`,
    /// spaces, an empty string, or a value too large for a `Double`. The one number reader for values
    /// from outside (options, logs), so no spelling `Double(_:)` happens to accept slips through.
    package static func number(_ text: some StringProtocol) -> Double? {
        var digits = 0, sawPoint = false, sawExponent = false, exponentDigits = 0, previous: UInt8 = 0
        for (offset, byte) in text.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if sawExponent { exponentDigits += 1 } else { digits += 1 }
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                guard offset == 0 || previous == UInt8(ascii: "e") || previous == UInt8(ascii: "E") else { return nil }
            case UInt8(ascii: "."):
                guard !sawPoint, !sawExponent else { return nil }
                sawPoint = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                guard !sawExponent, digits > 0 else { return nil }
                sawExponent = true
            default:
                return nil
            }
            previous = byte
        }
        guard digits > 0, !sawExponent || exponentDigits > 0, let value = Double(String(text)), value.isFinite else { return nil }
        return value
    }

    /// `value` in decimal, padded with leading zeros to `width` characters (the sign included), as
    /// `%0<width>d`: `zeroPadded(7, 3)` → `007`, `zeroPadded(-7, 3)` → `-07`, `zeroPadded(1234, 2)` → `1234`.
    package static func zeroPadded(_ value: Int, _ width: Int) -> String {
        let sign = value < 0 ? "-" : ""
        let digits = String(value.magnitude)
        return sign + String(repeating: "0", count: max(0, width - sign.count - digits.count)) + digits
    }

    /// `base` to the power `exponent`, for the small powers of five `fixed` scales by.
    private static func power(of base: UInt128, _ exponent: Int) -> UInt128 {
        (0..<exponent).reduce(1) { product, _ in product * base }
    }

    /// The decimal digits of `significand * 2^exponent` for `exponent > 0`, however large (up to
    /// `Double.greatestFiniteMagnitude`), in base-10⁹ limbs.
    private static func integerDigits(significand: UInt64, exponent: Int) -> String {
        let limbBase: UInt64 = 1_000_000_000
        var limbs: [UInt64] = [significand % limbBase, significand / limbBase % limbBase, significand / limbBase / limbBase]
        var remaining = exponent
        while remaining > 0 {
            // Limbs stay below 10^9 < 2^30, so a shift of up to 32 bits plus the carry fits in 64.
            let step = min(remaining, 32)
            var carry: UInt64 = 0
            for index in limbs.indices {
                let shifted = limbs[index] << step + carry
                limbs[index] = shifted % limbBase
                carry = shifted / limbBase
            }
            while carry > 0 {
                limbs.append(carry % limbBase)
                carry /= limbBase
            }
            remaining -= step
        }
        while limbs.count > 1 && limbs.last == 0 { limbs.removeLast() }
        var text = String(limbs.last ?? 0)
        for limb in limbs.dropLast().reversed() {
            let part = String(limb)
            text += String(repeating: "0", count: 9 - part.count) + part
        }
        return text
    }
}
