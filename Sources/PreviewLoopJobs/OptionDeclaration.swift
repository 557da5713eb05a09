import PreviewLoop

// Options declared once, the way swift-argument-parser's `@Option`/`@Flag` work, written by hand: one
// value holds an option's spellings, value name, help, default, conversion and validation. A command
// carries it on the property it fills (`@Option(…) var count`, OptionProperty.swift); the scanner and
// the help text read its ``OptionSpec``, the property its typed value with ``ScannedArguments/value(_:)``.

/// An option or flag as a subcommand's table lists it.
package protocol OptionDeclaration: Sendable {
    /// Its spellings and help, for the scanner and the help text.
    var spec: OptionSpec { get set }
    /// What a valid value looks like, for errors; `nil` for a flag.
    var valueExpectation: String? { get }
}

/// An option that takes a value: how the value is typed and checked, and what it is when absent.
package struct ValueOption<Value: Sendable>: OptionDeclaration {
    package var spec: OptionSpec
    /// The value when the option is absent.
    package var defaultValue: Value
    /// What a valid value looks like, for the error message (`a whole number from 1 to 64`).
    package var expectation: String
    /// Types and validates the text given; `nil` rejects it.
    package var convert: @Sendable (String) -> Value?

    package var valueExpectation: String? { expectation }

    /// Declares an option.
    ///
    /// - Parameters:
    ///   - name: the long name without dashes (`size`).
    ///   - short: the one-letter alias (`s`).
    ///   - valueName: the placeholder in help (`WxH`).
    ///   - help: what the option does.
    ///   - defaultValue: the value when absent.
    ///   - defaultText: the default as help shows it (`(default: …)`); `nil` shows none.
    ///   - isRequired: whether the command refuses to run without it (shown in the usage line as such).
    ///   - expectation: what a valid value looks like, for errors.
    ///   - completion: what a shell's completion offers for the value.
    ///   - convert: the conversion and validation; `nil` for an invalid value.
    package init(_ name: String, short: Character? = nil, value valueName: String, help: String,
         default defaultValue: Value, showing defaultText: String?, required isRequired: Bool = false,
         expecting expectation: String, completing completion: ValueCompletion = .none,
         _ convert: @escaping @Sendable (String) -> Value?) {
        spec = OptionSpec(name: name, shortName: short, valueName: valueName, abstract: help,
                          defaultValue: defaultText, isRequired: isRequired, completion: completion)
        self.defaultValue = defaultValue
        self.expectation = expectation
        self.convert = convert
    }
}

/// An option that takes no value: present or not.
package struct FlagOption: OptionDeclaration {
    package var spec: OptionSpec
    package var valueExpectation: String? { nil }

    /// Declares a flag.
    package init(_ name: String, short: Character? = nil, help: String) {
        spec = OptionSpec(name: name, shortName: short, valueName: nil, abstract: help)
    }
}

extension OptionDeclaration {
    /// The option as a parameter of its job as well: the image API's routes of the job take it as
    /// `name` (by default ``OptionSpec/keyName``), with this declaration's conversion and checks (a
    /// flag's `true` turns it on, `false` leaves it off).
    package func parameter(_ name: String? = nil) -> Self {
        changingSpec { $0.parameter = name ?? $0.keyName }
    }

    /// A copy of the declaration with `change` made to its spec.
    func changingSpec(_ change: (inout OptionSpec) -> Void) -> Self {
        var option = self
        change(&option.spec)
        return option
    }
}

extension OptionSpec {
    /// The name the image API's parameters and a batch recipe's keys take an option under unless its
    /// declaration names another: the long name with `_` for `-`.
    var keyName: String { name.replacing("-", with: "_") }
}

extension ValueOption {
    /// The option as a key of its job's section of a batch recipe as well (a parameter is one already):
    /// `name`, by default ``OptionSpec/keyName``, with this declaration's conversion and checks.
    package func recipeKey(_ name: String? = nil) -> Self {
        changingSpec { $0.recipeKey = name ?? $0.keyName }
    }
}

extension FlagOption {
    /// The flag as a key of its job's section of a batch recipe, `true` turning it on, or with
    /// `inverted`, `false` (`"header": false` for `--no-header`).
    package func recipeKey(_ name: String, inverted: Bool = false) -> Self {
        changingSpec {
            $0.recipeKey = name
            $0.recipeKeyInverts = inverted
        }
    }
}

extension ValueOption where Value == Int {
    /// A decimal integer within `range`; help shows the default unless `showing` says otherwise.
    static func integer(_ name: String, short: Character? = nil, value valueName: String = "n", help: String,
                        default defaultValue: Int, in range: ClosedRange<Int>, showing: String? = nil) -> ValueOption<Int> {
        var option = ValueOption(name, short: short, value: valueName, help: help, default: defaultValue,
                            showing: showing ?? String(defaultValue), expecting: integerExpectation(range)) { text in
            Int(text).flatMap { range.contains($0) ? $0 : nil }
        }
        option.spec.integerRange = range
        return option
    }

    /// A size in bytes with a binary unit (`512K`, `300M`, `10G`, `1T`; `KiB`, `MiB`, … too) within `range`.
    static func byteSize(_ name: String, help: String, default defaultValue: Int, showing: String,
                         in range: ClosedRange<Int>) -> ValueOption<Int> {
        ValueOption(name, value: "size", help: help, default: defaultValue, showing: showing,
               expecting: "a size such as 512M, 10G or 1T (binary units) from \(ByteSize.text(range.lowerBound)) to "
                   + ByteSize.text(range.upperBound)) { text in
            ByteSize.parse(text).flatMap { range.contains($0) ? $0 : nil }
        }
    }
}

/// Sizes as options write them: a whole number and a binary unit.
package enum ByteSize {
    private static let units: [(letter: Character, shift: Int)] = [("K", 10), ("M", 20), ("G", 30), ("T", 40), ("P", 50)]

    /// `10G` → 10 × 2^30; `nil` for anything else than digits and one unit (`K`, `M`, `G`, `T`, `P`,
    /// optionally followed by `iB` or `B`), or a size past 2^62.
    package static func parse(_ text: String) -> Int? {
        var rest = Substring(text.uppercased())
        if rest.hasSuffix("IB") { rest = rest.dropLast(2) } else if rest.hasSuffix("B") { rest = rest.dropLast() }
        guard let letter = rest.last, let unit = units.first(where: { $0.letter == letter }) else { return nil }
        let digits = rest.dropLast()
        guard !digits.isEmpty, digits.count <= 12, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let number = Int(digits), number <= (1 << 62) >> unit.shift else { return nil }
        return number << unit.shift
    }

    /// The largest unit that writes `bytes` whole: `10G`, `1536M`.
    package static func text(_ bytes: Int) -> String {
        for unit in units.reversed() where bytes >= 1 << unit.shift && bytes % (1 << unit.shift) == 0 {
            return "\(bytes >> unit.shift)\(unit.letter)"
        }
        return "\(bytes)"
    }
}

extension ValueOption where Value == Int? {
    /// A decimal integer within `range`, or `nil` when absent.
    static func optionalInteger(_ name: String, short: Character? = nil, value valueName: String = "n", help: String,
                                in range: ClosedRange<Int>, showing: String? = nil) -> ValueOption<Int?> {
        var option = ValueOption(name, short: short, value: valueName, help: help, default: nil, showing: showing,
                            expecting: integerExpectation(range)) { text in
            Int(text).flatMap { range.contains($0) ? .some($0) : nil }
        }
        option.spec.integerRange = range
        return option
    }
}

/// `a whole number from 1 to 64`, or `of at least 1` for an open range.
func integerExpectation(_ range: ClosedRange<Int>) -> String {
    range.upperBound == Int.max ? "a whole number of at least \(range.lowerBound)" : "a whole number from \(range.inWords)"
}

extension ValueOption where Value: RawRepresentable & CaseIterable & Equatable, Value.RawValue == String {
    /// One of an enumeration's raw values, limited to `allowed`; help shows the default's raw value.
    static func choice(_ name: String, value valueName: String, help: String, default defaultValue: Value,
                       among allowed: [Value] = Array(Value.allCases)) -> ValueOption<Value> {
        let names = allowed.map(\.rawValue)
        return ValueOption(name, value: valueName, help: help, default: defaultValue, showing: defaultValue.rawValue,
                      expecting: names.dropLast().joined(separator: ", ") + " or " + names.last!,
                      completing: .choices(names)) { text in
            Value(rawValue: text).flatMap { allowed.contains($0) ? $0 : nil }
        }
    }
}

extension ValueOption where Value == String? {
    /// A path that must not be empty, or `nil` when absent; completed as a file path, or as a folder
    /// when `completing` says `.directory`.
    static func path(_ name: String, short: Character? = nil, value valueName: String, help: String,
                     showing: String? = nil, required: Bool = false,
                     completing completion: ValueCompletion = .path) -> ValueOption<String?> {
        ValueOption(name, short: short, value: valueName, help: help, default: nil, showing: showing, required: required,
               expecting: "a non-empty path", completing: completion) { $0.isEmpty ? nil : .some($0) }
    }
}

extension ValueOption where Value == TimePosition {
    /// A time: seconds, `mm:ss`, `hh:mm:ss.ms` or a percentage; above zero when `positive`.
    static func time(_ name: String, short: Character? = nil, help: String, default defaultValue: TimePosition,
                     showing: String, positive: Bool = false) -> ValueOption<TimePosition> {
        let expectation = positive ? "a time above 0: seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage (10%)"
            : "seconds (12.5), mm:ss, hh:mm:ss.ms or a percentage from 0 to 100 (10%)"
        return ValueOption(name, short: short, value: "time", help: help, default: defaultValue, showing: showing,
                      expecting: expectation) { text in
            guard let position = TimePosition(parsing: text) else { return nil }
            guard positive else { return position }
            switch position {
            case .seconds(let value) where value > 0: return .seconds(value)
            case .percent(let value) where value > 0: return .percent(value)
            default: return nil
            }
        }
    }
}

extension ValueOption where Value == Double {
    /// A duration in seconds (seconds, mm:ss or hh:mm:ss.ms; no percentage), above 0 or, when
    /// `allowsZero`, 0 or more.
    static func seconds(_ name: String, short: Character? = nil, help: String, default defaultValue: Double,
                        showing: String, allowsZero: Bool) -> ValueOption<Double> {
        ValueOption(name, short: short, value: "time", help: help, default: defaultValue, showing: showing,
               expecting: "a time \(allowsZero ? "of 0 or more" : "above 0"): seconds (1.5), mm:ss or hh:mm:ss.ms") { text in
            if case .seconds(let value)? = TimePosition(parsing: text), allowsZero ? value >= 0 : value > 0 { value } else { nil }
        }
    }
}

extension ScannedArguments {
    /// The option's typed value, or its default when absent.
    ///
    /// - Throws: ``UsageError`` `.invalidValue` naming the option and what it expects.
    func value<Value>(_ option: ValueOption<Value>) throws(UsageError) -> Value {
        guard let text = values[option.spec.name] else { return option.defaultValue }
        guard let value = option.convert(text) else {
            throw UsageError(.invalidValue(option: option.spec.name, value: text), subcommand: subcommand,
                             "Invalid value '\(text)' for '\(option.spec.errorSpelling)': expected \(option.expectation).")
        }
        return value
    }

    /// Every value given for an option that may be repeated (`--include a --include b`), typed, in order.
    ///
    /// - Throws: ``UsageError`` `.invalidValue` for the first value that does not convert.
    func all<Value>(_ option: ValueOption<Value?>) throws(UsageError) -> [Value] {
        var typed: [Value] = []
        for text in everyValue[option.spec.name] ?? [] {
            guard let value = option.convert(text).flatMap({ $0 }) else {
                throw UsageError(.invalidValue(option: option.spec.name, value: text), subcommand: subcommand,
                                 "Invalid value '\(text)' for '\(option.spec.errorSpelling)': expected \(option.expectation).")
            }
            typed.append(value)
        }
        return typed
    }

    /// Whether the option or flag was given.
    func isGiven(_ option: any OptionDeclaration) -> Bool {
        option.spec.takesValue ? values[option.spec.name] != nil : flags.contains(option.spec.name)
    }

    /// Whether the flag was given.
    func isSet(_ flag: FlagOption) -> Bool {
        flags.contains(flag.spec.name)
    }

    /// The option's text as typed, or `nil` when absent.
    func text(_ option: any OptionDeclaration) -> String? {
        values[option.spec.name]
    }
}
