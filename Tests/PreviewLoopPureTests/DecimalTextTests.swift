import Foundation
import Testing
@testable import PreviewLoop

/// `DecimalText` against Foundation's `String(format:)` (C's `printf`), which it replaced.
@Suite("DecimalText spells numbers as printf does")
struct DecimalTextTests {
    /// Values where rounding is delicate: exact ties, doubles just below a tie, negative zero,
    /// subnormals, the 2^64 boundary, huge and non-finite values.
    static let edgeValues: [Double] = [
        0, -0.0, 1, -1, 0.5, 1.5, 2.5, -2.5, 0.125, 0.375, 2.675, 1.005, 0.0005, 0.0015, -0.0004, 9.9995, 9.9999995,
        0.1 + 0.2, 29.97002997002997, 1e-7, .leastNonzeroMagnitude, 2.2250738585072014e-308, 123456.789012345, 0x1p53, 0x1p53 + 2,
        0x1p64, 0x1p64 - 2048, 18446744073709551615.0, 1e20, 1e22, 1.7976931348623157e308, -1e300,
        .nan, -Double.nan, .infinity, -.infinity,
    ]

    @Test("fixed(_:_:) equals %.Nf on edge values", arguments: [0, 1, 2, 3, 6, 9, 17])
    func fixedOnEdges(_ digits: Int) {
        for value in Self.edgeValues {
            #expect(DecimalText.fixed(value, digits) == String(format: "%.\(digits)f", value), "\(value) with \(digits) decimals")
        }
    }

    @Test("fixed(_:_:) equals %.Nf on random doubles of every magnitude")
    func fixedOnRandomValues() {
        var generator = SystemRandomNumberGenerator()
        var mismatches: [String] = []
        for round in 0..<20_000 {
            let digits = round % 8
            let candidates = [
                Double(bitPattern: generator.next()),                        // any double at all
                Double.random(in: -1000...1000, using: &generator),          // times, sizes, rates
                Double(Int.random(in: -99_999...99_999, using: &generator)) / 2000,   // many exact ties
            ]
            for value in candidates where DecimalText.fixed(value, digits) != String(format: "%.\(digits)f", value) {
                mismatches.append("\(value) (\(digits))")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }

    @Test("zeroPadded(_:_:) equals %0Nd")
    func zeroPadded() {
        for value in [0, 1, 7, 42, 999, 1000, 12345, 123456, -7, -42, Int.max, Int.min] {
            for width in [0, 1, 2, 3, 5, 8] {
                #expect(DecimalText.zeroPadded(value, width) == String(format: "%0\(width)ld", value), "\(value) width \(width)")
            }
        }
    }
}
