/// `Encodable` values as ``JSONValue``s: a record's `CodingKeys` name its members for writing as for
/// reading. What `JSONEncoder` would write, `JSONValue(encoding:)` holds: keyed containers become
/// objects, unkeyed ones arrays, `nil` written by `encodeIfPresent` is left out, a `Double` stays a
/// ``JSONValue/number(_:)`` (non-finite ones are written `"inf"`, `"-inf"`, `"nan"`).
extension JSONValue {
    /// The value `value` encodes itself as.
    ///
    /// - Throws: only what `value`'s own `encode(to:)` throws.
    package init(encoding value: some Encodable) throws {
        self = try EncodingSlot.box(value, codingPath: []).value
    }

    /// `value` as one compact line (a JSON Lines record), or `{}` if it fails to encode itself.
    package static func line(_ value: some Encodable) -> String {
        (try? JSONValue(encoding: value))?.text(.compact) ?? "{}"
    }
}

/// A value under construction: a finished scalar, or an object or array whose members may still be
/// filled in through containers that share this slot (containers are structs, the slot a class).
private final class EncodingSlot {
    enum Content {
        case empty
        case scalar(JSONValue)
        case object([String: EncodingSlot])
        case array([EncodingSlot])
    }
    var content = Content.empty

    init() {}
    init(_ scalar: JSONValue) { content = .scalar(scalar) }

    /// The finished value; a value that encoded nothing is an empty object, as `JSONEncoder` writes it.
    var value: JSONValue {
        switch content {
        case .empty: .object([:])
        case .scalar(let scalar): scalar
        case .object(let members): .object(members.mapValues(\.value))
        case .array(let elements): .array(elements.map(\.value))
        }
    }

    /// A scalar for the types JSON spells directly; anything else encodes itself into a new slot.
    static func box(_ value: some Encodable, codingPath: [any CodingKey]) throws -> EncodingSlot {
        switch value {
        case let value as Bool: return EncodingSlot(.bool(value))
        case let value as String: return EncodingSlot(.string(value))
        case let value as Double: return EncodingSlot(.number(value))
        case let value as Float: return EncodingSlot(float(value))
        case let value as Int: return EncodingSlot(.integer(value))
        case let value as Int8: return EncodingSlot(.integer(Int(value)))
        case let value as Int16: return EncodingSlot(.integer(Int(value)))
        case let value as Int32: return EncodingSlot(.integer(Int(value)))
        case let value as Int64: return EncodingSlot(.integer(Int(value)))
        case let value as UInt: return EncodingSlot(.numberText(String(value)))
        case let value as UInt8: return EncodingSlot(.integer(Int(value)))
        case let value as UInt16: return EncodingSlot(.integer(Int(value)))
        case let value as UInt32: return EncodingSlot(.integer(Int(value)))
        case let value as UInt64: return EncodingSlot(.numberText(String(value)))
        default:
            let slot = EncodingSlot()
            try value.encode(to: SlotEncoder(slot: slot, codingPath: codingPath))
            return slot
        }
    }

    /// A `Float` spelled from its own digits (`0.1`, not `0.10000000149011612`), as `JSONEncoder` does.
    private static func float(_ value: Float) -> JSONValue {
        guard value.isFinite else { return .number(Double(value)) }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return .numberText(text)
    }

    /// The members, making this slot an object if it is not one yet.
    func setMember(_ key: String, _ member: EncodingSlot) {
        guard case .object(var members) = content else {
            content = .object([key: member])
            return
        }
        content = .empty  // keeps the dictionary uniquely referenced while it changes
        members[key] = member
        content = .object(members)
    }

    func appendElement(_ element: EncodingSlot) {
        guard case .array(var elements) = content else {
            content = .array([element])
            return
        }
        content = .empty
        elements.append(element)
        content = .array(elements)
    }

    var elementCount: Int {
        if case .array(let elements) = content { elements.count } else { 0 }
    }

    func becomeObject() { if case .object = content {} else { content = .object([:]) } }
    func becomeArray() { if case .array = content {} else { content = .array([]) } }
}

/// A coding key for array positions and `superEncoder`.
private struct IndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) { stringValue = String(intValue); self.intValue = intValue }
}

private struct SlotEncoder: Encoder {
    let slot: EncodingSlot
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        slot.becomeObject()
        return KeyedEncodingContainer(KeyedSlotContainer<Key>(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        slot.becomeArray()
        return UnkeyedSlotContainer(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleSlotContainer(slot: slot, codingPath: codingPath)
    }
}

private struct KeyedSlotContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: EncodingSlot
    var codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { slot.setMember(key.stringValue, EncodingSlot(.null)) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        slot.setMember(key.stringValue, try EncodingSlot.box(value, codingPath: codingPath + [key]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodingSlot()
        slot.setMember(key.stringValue, nested)
        return SlotEncoder(slot: nested, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = EncodingSlot()
        slot.setMember(key.stringValue, nested)
        return SlotEncoder(slot: nested, codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { superEncoder(forKey: Key(stringValue: "super")!) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let nested = EncodingSlot()
        slot.setMember(key.stringValue, nested)
        return SlotEncoder(slot: nested, codingPath: codingPath + [key])
    }
}

private struct UnkeyedSlotContainer: UnkeyedEncodingContainer {
    let slot: EncodingSlot
    var codingPath: [any CodingKey]
    var count: Int { slot.elementCount }

    private var nextKey: IndexKey { IndexKey(intValue: count) }

    mutating func encodeNil() throws { slot.appendElement(EncodingSlot(.null)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        slot.appendElement(try EncodingSlot.box(value, codingPath: codingPath + [nextKey]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let key = nextKey, nested = EncodingSlot()
        slot.appendElement(nested)
        return SlotEncoder(slot: nested, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = nextKey, nested = EncodingSlot()
        slot.appendElement(nested)
        return SlotEncoder(slot: nested, codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let key = nextKey, nested = EncodingSlot()
        slot.appendElement(nested)
        return SlotEncoder(slot: nested, codingPath: codingPath + [key])
    }
}

private struct SingleSlotContainer: SingleValueEncodingContainer {
    let slot: EncodingSlot
    var codingPath: [any CodingKey]

    mutating func encodeNil() throws { slot.content = .scalar(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        slot.content = try EncodingSlot.box(value, codingPath: codingPath).content
    }
}
