/// A point in a clip, or a length: seconds from the stream's start, or a percentage of the clip's
/// duration, resolved by the call that opens the clip (``LoopPlayer``, ``PreviewCard``,
/// ``FrameSampler/contactStrip(_:)-182tw``) against the video's own duration, once, from the input it
/// already has open — so a window of `10%` works from standard input too.
///
/// `mm:ss` and `hh:mm:ss.ms` are seconds: ``init(parsing:)`` reads them. A number literal is seconds
/// (`windowStart: 12.5`).
public enum TimePosition: Hashable, Sendable, CustomStringConvertible, ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral {
    /// Seconds from the stream's own start (which need not be zero in the container).
    case seconds(Double)
    /// A percentage of the duration, 0 to 100.
    case percent(Double)

    /// Parses `12.5`, `mm:ss`, `hh:mm:ss.ms` (fractions allowed on the last field) or `10%`.
    ///
    /// Every field is ASCII digits with an optional `.` fraction: no sign, no exponent (`1e3`), as
    /// a clock writes times. Minutes and seconds after the first field must be below 60; negative
    /// times, NaN and percentages above 100 are rejected.
    public init?(parsing text: String) {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty else { return nil }
        if trimmed.hasSuffix("%") {
            // Written as the seconds are: digits and one optional `.`, no sign, no exponent.
            let digits = trimmed.dropLast()
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                  let value = DecimalText.number(digits), (0...100).contains(value) else { return nil }
            self = .percent(value)
            return
        }
        let fields = trimmed.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(fields.count) else { return nil }
        var total = 0.0
        for (position, field) in fields.enumerated() {
            let isLast = position == fields.count - 1
            guard !field.isEmpty, field.allSatisfy({ $0.isASCII && ($0.isNumber || (isLast && $0 == ".")) }),
                  let value = DecimalText.number(field) else { return nil }
            if position > 0 && value >= 60 { return nil }
            total = total * 60 + value
        }
        // Beyond a billion seconds (~31.7 years) no clip has frames; refusing it keeps every later
        // conversion (to Duration, to stream ticks) far from overflow.
        guard total <= 1e9 else { return nil }
        self = .seconds(total)
    }

    /// The stream's start (or no length at all).
    public static let zero = TimePosition.seconds(0)

    /// Seconds, from a literal: `12.5`.
    public init(floatLiteral value: Double) { self = .seconds(value) }

    /// Seconds, from a literal: `12`.
    public init(integerLiteral value: Int) { self = .seconds(Double(value)) }

    /// Seconds from a `Duration`.
    public init(_ duration: Duration) { self = .seconds(duration.seconds) }

    /// The position in seconds from the stream's start; a percentage needs the clip's duration.
    ///
    /// - Returns: `nil` for a percentage when the duration is unknown.
    public func seconds(duration: Double?) -> Double? {
        switch self {
        case .seconds(let value): value
        case .percent(let value): duration.map { $0 * value / 100 }
        }
    }

    /// Checks what can be checked without the clip: a finite, non-negative number of seconds, a
    /// percentage from 0 to 100.
    ///
    /// - Parameter what: names the value in the error, for example `the window's start`.
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` otherwise.
    package func validate(_ what: String) throws(PreviewLoopError) {
        switch self {
        case .seconds(let value):
            guard value.isFinite, value >= 0, value <= 1e9 else {
                throw PreviewLoopError(.invalidArgument, "\(what) must be 0 to 1e9 seconds, not \(value)")
            }
        case .percent(let value):
            guard value.isFinite, (0...100).contains(value) else {
                throw PreviewLoopError(.invalidArgument, "\(what) must be 0% to 100%, not \(value)%")
            }
        }
    }

    /// The position in seconds for a clip whose video lasts `duration` seconds (`nil`: unknown).
    ///
    /// - Parameter what: names the value in the error, for example `the window's start`.
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for an invalid value, or a percentage when
    ///   the duration is unknown.
    package func resolved(duration: Double?, _ what: String) throws(PreviewLoopError) -> Double {
        try validate(what)
        guard let seconds = seconds(duration: duration) else {
            throw PreviewLoopError(.invalidArgument, "\(what) \(self) is a share of the clip's duration, which is unknown; "
                + "give it in seconds")
        }
        return seconds
    }

    /// The spelling `init(parsing:)` accepts.
    public var description: String {
        switch self {
        case .seconds(let value): "\(value)"
        case .percent(let value): "\(value)%"
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and newlines.
    package func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}

/// How precisely a requested time is honoured when sampling a still.
public enum SeekAccuracy: String, Sendable, CaseIterable {
    /// The frame displayed at that time: the last frame whose presentation time is at or before it.
    case exact
    /// The nearest keyframe at or before that time; only keyframes are decoded (much faster).
    case keyframe
    /// The nearest keyframe on either side of the time when one lies within half a sampling interval
    /// (the sample still shows its own stretch of the span), otherwise exact.
    case auto
}
