/// File names as the bytes they are on disk, carried in a `String`.
///
/// Linux file names are bytes, not text: `bad\xff.mp4` is a valid name although it is not UTF-8, and a
/// Swift `String` cannot hold it (decoding repairs the byte to U+FFFD, so the name no longer reaches
/// the file). The engine therefore reads every name the system hands it (arguments, directory entries,
/// `realpath`, `getcwd`, `readlink`) with ``decode(_:)`` and turns every path back into bytes with
/// ``encode(_:)`` (or `withCString(_:_:)`) before a system or FFmpeg call.
///
/// The escape: a byte 0x80…0xFF that is not part of valid UTF-8 becomes one code point of the Private
/// Use Area, U+F780…U+F7FF (U+F700 + the byte); valid UTF-8 stays as it is. To keep the mapping
/// lossless for names that really contain those code points, a valid sequence that decodes to
/// U+F780…U+F7FF is escaped byte by byte as well (its three bytes become three escape code points).
/// So `encode(decode(bytes)) == bytes` for every byte sequence.
///
/// The one ambiguity is in the other direction: a path made in Swift (from JSON, a literal) holding
/// U+F780…U+F7FF is taken to mean the raw byte, not that character's UTF-8. Those 128 code points have
/// no assigned meaning; a name that needs them literally is reached through a directory walk or the
/// command line, which escape them.
///
/// Messages show an escaped byte as `\xff` (``displayed(_:)``); JSON output writes the escape code
/// point as `\uf7ff`, which reads back as the same path.
public enum FilePathBytes {
    /// The code point standing for the byte 0x00 + offset in the escape (U+F780 stands for 0x80).
    static let escapeBase: UInt32 = 0xF700

    /// The escape code points, U+F780…U+F7FF.
    package static let escapeRange: ClosedRange<UInt32> = 0xF780...0xF7FF

    /// The name `bytes` spell, as a `String`: valid UTF-8 as it is, every other byte (and every byte of
    /// a valid U+F780…U+F7FF) as its escape code point.
    public static func decode(_ bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        if let text = String(validating: bytes, as: UTF8.self), !containsEscape(text) { return text }
        var scalars = String.UnicodeScalarView()
        var index = 0
        while index < bytes.count {
            if let (scalar, length) = scalar(in: bytes, at: index), !escapeRange.contains(scalar.value) {
                scalars.append(scalar)
                index += length
            } else {
                let length = scalar(in: bytes, at: index)?.length ?? 1
                for byte in bytes[index..<index + length] { scalars.append(escape(byte)) }
                index += length
            }
        }
        return String(scalars)
    }

    /// The bytes `path` stands for: every U+F780…U+F7FF as its byte, everything else as UTF-8.
    public static func encode(_ path: String) -> [UInt8] {
        guard containsEscape(path) else { return Array(path.utf8) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(path.utf8.count)
        for scalar in path.unicodeScalars {
            if escapeRange.contains(scalar.value) {
                bytes.append(UInt8(scalar.value - escapeBase))
            } else {
                bytes.append(contentsOf: String(scalar).utf8)
            }
        }
        return bytes
    }

    /// Calls `body` with `path`'s bytes (``encode(_:)``) as a NUL-terminated C string: the one way a
    /// path reaches a system or FFmpeg call.
    package static func withCString<Result, Failure: Error>(_ path: String,
                                                           _ body: (UnsafePointer<CChar>) throws(Failure) -> Result) throws(Failure) -> Result {
        guard containsEscape(path) else {
            // A path without escapes is its UTF-8; `withCString` hands it over without a copy.
            let result: Swift.Result<Result, Failure> = path.withCString { pointer in
                do throws(Failure) { return .success(try body(pointer)) } catch { return .failure(error) }
            }
            return try result.get()
        }
        let characters = cString(path)
        let result: Swift.Result<Result, Failure> = characters.withUnsafeBufferPointer { buffer in
            do throws(Failure) { return .success(try body(buffer.baseAddress!)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// `path`'s bytes (``encode(_:)``) with a NUL at the end, for an API that keeps a C string.
    package static func cString(_ path: String) -> [CChar] {
        encode(path).map { CChar(bitPattern: $0) } + [0]
    }

    /// `path` for a message: every escaped byte written `\xff` (two lowercase hex digits), the rest
    /// as it is. Not reversible (a name may hold a real `\x`); for display only.
    public static func displayed(_ path: String) -> String {
        guard containsEscape(path) else { return path }
        var text = ""
        for scalar in path.unicodeScalars {
            if escapeRange.contains(scalar.value) {
                let byte = scalar.value - escapeBase
                text += "\\x" + String(hexDigit(byte >> 4)) + String(hexDigit(byte & 0xF))
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    /// The name read from a NUL-terminated C string the system returned (`realpath`, `getcwd`, a
    /// directory entry), decoded with the escape.
    package static func decode(cString pointer: UnsafePointer<CChar>) -> String {
        var length = 0
        while pointer[length] != 0 { length += 1 }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) { decode(UnsafeBufferPointer(start: $0, count: length)) }
    }

    /// Whether `text` holds an escape code point (so it is not simply its own UTF-8).
    static func containsEscape(_ text: String) -> Bool {
        // U+F780…U+F7FF are EF 9E 80…EF 9F BF in UTF-8: a quick look at the bytes first.
        guard text.utf8.contains(0xEF) else { return false }
        return text.unicodeScalars.contains { escapeRange.contains($0.value) }
    }

    /// The escape code point for `byte` (0x80…0xFF).
    private static func escape(_ byte: UInt8) -> Unicode.Scalar {
        Unicode.Scalar(escapeBase + UInt32(byte))!
    }

    private static func hexDigit(_ value: UInt32) -> Character {
        Character(Unicode.Scalar(value < 10 ? 0x30 + value : 0x61 + value - 10)!)
    }

    /// The scalar of the well-formed UTF-8 sequence starting at `index` (shortest form, no surrogate,
    /// at most U+10FFFF) and its length in bytes, or `nil` when the bytes there are not one.
    private static func scalar(in bytes: [UInt8], at index: Int) -> (scalar: Unicode.Scalar, length: Int)? {
        let first = bytes[index]
        let length: Int
        let lowest: UInt32
        var value: UInt32
        switch first {
        case 0x00...0x7F: return (Unicode.Scalar(first), 1)
        case 0xC2...0xDF: length = 2; lowest = 0x80; value = UInt32(first & 0x1F)
        case 0xE0...0xEF: length = 3; lowest = 0x800; value = UInt32(first & 0x0F)
        case 0xF0...0xF4: length = 4; lowest = 0x10000; value = UInt32(first & 0x07)
        default: return nil
        }
        guard index + length <= bytes.count else { return nil }
        for offset in 1..<length {
            let byte = bytes[index + offset]
            guard byte & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        guard value >= lowest, value <= 0x10FFFF, let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, length)
    }
}
