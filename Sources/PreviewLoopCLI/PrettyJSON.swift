/// A JSON value written as Foundation's `JSONSerialization` writes with `.prettyPrinted` and
/// `.sortedKeys` — `"key" : value`, two-space indents, keys in order, whole numbers without `.0` — so
/// that `timing --json` prints byte for byte what it printed when it used `JSONSerialization`.
enum PrettyJSON: Equatable {
    /// A whole number.
    case integer(Int)
    /// A number, in its shortest round-trip spelling (`0.3`, `1e-07`), whole ones without `.0`.
    case number(Double)
    /// `null`.
    case null
    /// A string, escaped as `probe` escapes it.
    case string(String)
    /// An array, one element a line.
    case array([PrettyJSON])
    /// An object, one member a line, keys sorted.
    case object([String: PrettyJSON])

    /// Whether every number in it is finite (JSON has no spelling for NaN or infinity).
    var isFinite: Bool {
        switch self {
        case .integer, .null, .string: true
        case .number(let value): value.isFinite
        case .array(let elements): elements.allSatisfy(\.isFinite)
        case .object(let members): members.values.allSatisfy(\.isFinite)
        }
    }

    /// The value as text, its inner lines indented by `level` steps of two spaces more than its own.
    func text(level: Int = 0) -> String {
        let inner = String(repeating: "  ", count: level + 1), closing = String(repeating: "  ", count: level)
        switch self {
        case .integer(let value):
            return String(value)
        case .number(let value):
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            return text
        case .null:
            return "null"
        case .string(let value):
            return JSONValue.string(value).text
        case .array(let elements):
            let lines = elements.map { inner + $0.text(level: level + 1) }
            return "[\n" + lines.joined(separator: ",\n") + "\n" + closing + "]"
        case .object(let members):
            let lines = members.sorted { $0.key < $1.key }.map { key, value in
                inner + JSONValue.string(key).text + " : " + value.text(level: level + 1)
            }
            return "{\n" + lines.joined(separator: ",\n") + "\n" + closing + "}"
        }
    }
}
