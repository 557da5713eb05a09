import Synchronization

// Options as properties, the way swift-argument-parser's `@Option`, `@Flag` and `@OptionGroup` work,
// written by hand: a command's stored property carries its option's declaration and holds the typed
// value, so an option is one declaration. Parsing runs the command's `init()` with the scanned arguments
// as the current ``ArgumentContext``: each property wrapper finds its option there by name, converts it
// and records the first conversion error (a wrapper's init cannot throw). Listing reads a default
// instance with `Mirror`: the command's own options in property order, then its groups' options.

/// The scanned arguments the option properties of the command being built read, and the first error met.
final class ArgumentContext: Sendable {
    /// The arguments being typed.
    let arguments: ScannedArguments
    /// The first conversion error, in property order (the order the properties are initialised).
    private let firstError = Mutex<UsageError?>(nil)

    /// The context the option properties being initialised read; `nil` outside parsing, where every
    /// property takes its default.
    @TaskLocal static var current: ArgumentContext?

    init(_ arguments: ScannedArguments) {
        self.arguments = arguments
    }

    /// Keeps `error` unless an earlier one is kept.
    func record(_ error: UsageError) {
        firstError.withLock { if $0 == nil { $0 = error } }
    }

    /// The first error recorded, if any.
    var error: UsageError? { firstError.withLock { $0 } }
}

/// How an option was given on the command line, as `$property` reads it for validation messages.
struct OptionInput: Equatable, Sendable {
    /// Whether the option or flag was given.
    var isGiven = false
    /// The option's text as typed; `nil` when absent or a flag.
    var text: String?
}

/// A stored property that declares an option: what listing reads from a default instance.
protocol OptionProperty {
    /// The option the property declares.
    var declaration: any OptionDeclaration { get }
}

/// A value holding the options several commands share (`InputOptions`, `WorkBudget`, …): a command
/// stores it as a property and its options are listed after the command's own, in property order.
protocol OptionGroup: Sendable {
    /// A group with every option at its default, or read from the current ``ArgumentContext``.
    init()
    /// The checks across the group's options, once every value is typed.
    ///
    /// - Throws: ``UsageError`` naming `subcommand` for the usage hint.
    func validate(for subcommand: Subcommand) throws(UsageError)
}

extension OptionGroup {
    func validate(for subcommand: Subcommand) throws(UsageError) {}
}

/// `@Option(.integer("count", help: …, default: 8, in: 1...64)) var count`: a property typed, checked
/// and defaulted by the declaration it carries. `$count` says whether and how it was given.
@propertyWrapper
struct Option<Value: Sendable>: OptionProperty, Sendable {
    /// The option's declaration: spellings, help, default, conversion.
    let option: ValueOption<Value>
    /// The typed value: the option's when given, else its default.
    var wrappedValue: Value
    /// Whether and how the option was given.
    var projectedValue: OptionInput
    /// Whether the command turns the value into other properties (`-o` into the output and its format):
    /// then the property is left out of comparisons, which look at what it became, and the command
    /// checks the text (a conversion error is not recorded).
    let isFolded: Bool

    var declaration: any OptionDeclaration { option }

    /// A property declared by `option`, read from the current ``ArgumentContext`` when there is one;
    /// `folded` when the command turns it into other properties (in `takeArguments(_:)`).
    init(_ option: ValueOption<Value>, folded: Bool = false) {
        self.option = option
        isFolded = folded
        wrappedValue = option.defaultValue
        projectedValue = OptionInput()
        guard let context = ArgumentContext.current, let text = context.arguments.text(option) else { return }
        projectedValue = OptionInput(isGiven: true, text: text)
        do throws(UsageError) {
            wrappedValue = try context.arguments.value(option)
        } catch {
            // A folded option's text is checked where the command turns it into its properties.
            if !folded { context.record(error) }
        }
    }

    /// A property holding `wrappedValue` (what a memberwise initialiser passes), declared by `option`.
    init(wrappedValue: Value, _ option: ValueOption<Value>, folded: Bool = false) {
        self.init(option, folded: folded)
        if ArgumentContext.current == nil { self.wrappedValue = wrappedValue }
    }
}

extension Option: Equatable where Value: Equatable {
    /// Equal values: commands compare by what they hold, not by how it was typed.
    static func == (lhs: Option, rhs: Option) -> Bool { lhs.isFolded || lhs.wrappedValue == rhs.wrappedValue }
}

/// `@Flag("json", help: …) var isJSON = false`: a property that is true when the flag is given.
@propertyWrapper
struct Flag: OptionProperty, Equatable, Sendable {
    /// The flag's declaration: spellings and help.
    let flag: FlagOption
    /// Whether the flag was given (or the value a memberwise initialiser passed).
    var wrappedValue: Bool
    /// Whether the flag was given.
    var projectedValue: OptionInput { OptionInput(isGiven: wrappedValue) }

    var declaration: any OptionDeclaration { flag }

    /// Whether the command turns the flag into another property (`--no-header` into `showsHeader`):
    /// then the property is left out of comparisons.
    let isFolded: Bool

    /// A property declared by `flag`, set from the current ``ArgumentContext`` when there is one;
    /// `folded` when the command turns it into another property (in `takeArguments(_:)`).
    init(wrappedValue: Bool = false, _ flag: FlagOption, folded: Bool = false) {
        self.flag = flag
        isFolded = folded
        if let context = ArgumentContext.current { self.wrappedValue = context.arguments.isSet(flag) }
        else { self.wrappedValue = wrappedValue }
    }

    /// A property declaring the flag `--name` (`-short`).
    init(wrappedValue: Bool = false, _ name: String, short: Character? = nil, help: String) {
        self.init(wrappedValue: wrappedValue, FlagOption(name, short: short, help: help))
    }

    /// Equal values: commands compare by what they hold.
    static func == (lhs: Flag, rhs: Flag) -> Bool { lhs.isFolded || lhs.wrappedValue == rhs.wrappedValue }
}

extension ParsableCommand {
    package func validate() throws(UsageError) {}

    /// Types the scanned arguments: the properties read their options, the first conversion error is
    /// thrown, then the positional arguments are taken and the command validated.
    package init(_ arguments: ScannedArguments) throws(UsageError) {
        try self.init(typing: arguments)
    }

    /// What `init(_:)` does, for a command that checks something before its options are typed (`batch
    /// report` refuses a run's options by name, whatever their values).
    init(typing arguments: ScannedArguments) throws(UsageError) {
        let context = ArgumentContext(arguments)
        self = ArgumentContext.$current.withValue(context) { Self.init() }
        if let error = context.error { throw error }
        try takeArguments(arguments)
        try DeclaredOptions.validateGroups(in: self, for: arguments.subcommand)
        try validate()
    }

    /// The options, in help order, without `--help`: the properties' options, then the groups', without
    /// those the configuration hides.
    package static var options: [any OptionDeclaration] {
        let hidden = Set(configuration.hidden)
        return DeclaredOptions.cached(for: Self.self) {
            var own: [any OptionDeclaration] = [], groups: [any OptionDeclaration] = []
            for child in Mirror(reflecting: Self.init()).children {
                if let property = child.value as? any OptionProperty { own.append(property.declaration) }
                else if let group = child.value as? any OptionGroup { groups += DeclaredOptions.list(of: group) }
            }
            return own + groups
        }.filter { !hidden.contains($0.spec.name) }
    }
}

/// Listing a value's option properties by `Mirror`, cached per type.
enum DeclaredOptions {
    private static let cache = Mutex<[ObjectIdentifier: [any OptionDeclaration]]>([:])

    /// The options of `type`, computed by `make` the first time.
    static func cached(for type: Any.Type, _ make: () -> [any OptionDeclaration]) -> [any OptionDeclaration] {
        let key = ObjectIdentifier(type)
        if let known = cache.withLock({ $0[key] }) { return known }
        let made = make()
        cache.withLock { $0[key] = made }
        return made
    }

    /// The group's options in property order, a nested group's where it stands.
    static func list(of group: any OptionGroup) -> [any OptionDeclaration] {
        Mirror(reflecting: group).children.flatMap { child -> [any OptionDeclaration] in
            if let property = child.value as? any OptionProperty { return [property.declaration] }
            if let inner = child.value as? any OptionGroup { return list(of: inner) }
            return []
        }
    }

    /// Runs the checks of every group `value` holds (nested groups first), in property order.
    static func validateGroups(in value: Any, for subcommand: Subcommand) throws(UsageError) {
        for child in Mirror(reflecting: value).children {
            guard let group = child.value as? any OptionGroup else { continue }
            try validateGroups(in: group, for: subcommand)
            try group.validate(for: subcommand)
        }
    }
}
