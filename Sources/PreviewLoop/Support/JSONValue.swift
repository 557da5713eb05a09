/// A JSON value and the one writer of every JSON the package prints: `probe --json`, `timing --json`,
/// the commands' `--json` records, batch results and `batch report --json`.
///
/// Objects are written with their keys sorted (Swift's `<` on `String`, as `JSONEncoder`'s
/// `.sortedKeys` sorts), so the same value is always the same text. Numbers are written the way
/// Foundation's `JSONEncoder` writes them (the shortest spelling that reads back the same, a whole
/// number without `.0`), strings escaped as it escapes them with `.withoutEscapingSlashes`; a
/// `Codable` record becomes a value through ``init(encoding:)``, so a record has one set of key names
/// (its `CodingKeys`) for reading and writing.
package enum JSONValue: Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number.
    case integer(Int)
    /// A number, in its shortest round-trip spelling (`0.3`, `1e-07`), whole ones without `.0`; a
    /// non-finite one is written as the string `"inf"`, `"-inf"` or `"nan"`.
    case number(Double)
    /// A number already spelled (`probe`'s fixed decimals, which keep `4.0`), written as it is.
    case numberText(String)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; its keys are written sorted.
    case object([String: JSONValue])

    /// How the text is laid out; every layout sorts keys.
    package enum Layout: Sendable {
        /// One line, no spaces: `{"a":1,"b":[1,2]}` (`JSONEncoder`'s own layout; JSON Lines records).
        case compact
        /// One line, readable: `{"a": 1, "b": [1, 2]}`.
        case inline
        /// The top-level object's members one a line, two spaces in, each value written `.inline`:
        /// `{\n  "a": 1,\n  "b": [1, 2]\n}` (`probe --json`).
        case memberPerLine
        /// `JSONEncoder`'s (and `JSONSerialization`'s) `.prettyPrinted`: `"key" : value`, every
        /// element and member on its own line, two spaces per level; an empty array is `[`, an empty
        /// line and `]`.
        case pretty
    }

    /// The value on one line, readable (``Layout/inline``).
    package var text: String { text(.inline) }

    /// The value as JSON text in `layout`, without a final newline.
    package func text(_ layout: Layout) -> String {
        var output = ""
        write(to: &output, layout, level: 0)
        return output
    }

    /// Whether every number in it is finite (JSON has no spelling for NaN or infinity).
    package var isFinite: Bool {
        switch self {
        case .null, .bool, .integer, .numberText, .string: true
        case .number(let value): value.isFinite
        case .array(let elements): elements.allSatisfy(\.isFinite)
        case .object(let members): members.values.allSatisfy(\.isFinite)
        }
    }

    private func write(to output: inout String, _ layout: Layout, level: Int) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .integer(let value): output += String(value)
        case .numberText(let text): output += text
        case .number(let value): output += Self.spelling(of: value)
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let elements):
            writeContainer(elements.map { (nil, $0) }, open: "[", close: "]", to: &output, layout, level: level)
        case .object(let members):
            let sorted = members.sorted { $0.key < $1.key }.map { (Optional($0.key), $0.value) }
            writeContainer(sorted, open: "{", close: "}", to: &output, layout, level: level)
        }
    }

    private func writeContainer(_ items: [(key: String?, value: JSONValue)], open: String, close: String,
                                to output: inout String, _ layout: Layout, level: Int) {
        let separator: String, keySeparator: String, childLayout: Layout
        switch layout {
        case .compact: (separator, keySeparator, childLayout) = (",", ":", .compact)
        case .inline: (separator, keySeparator, childLayout) = (", ", ": ", .inline)
        case .memberPerLine: (separator, keySeparator, childLayout) = (",", ": ", .inline)
        case .pretty: (separator, keySeparator, childLayout) = (",", " : ", .pretty)
        }
        let isMultiline = layout == .memberPerLine || layout == .pretty
        let indent = layout == .pretty ? String(repeating: "  ", count: level + 1) : "  "
        output += open
        for (index, item) in items.enumerated() {
            if index > 0 { output += separator }
            if isMultiline { output += "\n" + indent }
            if let key = item.key {
                Self.writeString(key, to: &output)
                output += keySeparator
            }
            item.value.write(to: &output, childLayout, level: level + 1)
        }
        if isMultiline { output += (items.isEmpty ? "\n\n" : "\n") + String(repeating: "  ", count: layout == .pretty ? level : 0) }
        output += close
    }

    /// A finite number's shortest round-trip spelling without a trailing `.0`; `"inf"`, `"-inf"` or
    /// `"nan"` (a string) otherwise, as the batch records always wrote them.
    private static func spelling(of value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "\"nan\"" : value < 0 ? "\"-inf\"" : "\"inf\"" }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    /// `value` quoted, with quotes, backslashes and control characters escaped (`\n`, `\r`, `\t`, `\b`,
    /// `\f`, else `\u00XX`); a file name's byte that is not UTF-8 (``FilePathBytes``' U+F780…U+F7FF)
    /// as `\uf7XX`, so it is visible and reads back as the same path; `/` and everything else from
    /// U+007F on are written as they are.
    private static func writeString(_ value: String, to output: inout String) {
        output += "\""
        output += value.replacingScalars { scalar in
            switch scalar {
            case "\"": "\\\""
            case "\\": "\\\\"
            case "\n": "\\n"
            case "\r": "\\r"
            case "\t": "\\t"
            case "\u{8}": "\\b"
            case "\u{c}": "\\f"
            case _ where scalar.value < 0x20 || FilePathBytes.escapeRange.contains(scalar.value): "\\u" + scalar.hexDigits()
            default: nil
            }
        }
        output += "\""
    }
}
