import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// The escape that carries file names which are not UTF-8 in a `String`, and the path helpers over it.
@Suite("File names as bytes")
struct FilePathBytesTests {
    @Test("Every byte but NUL and / survives decode then encode, alone and between ASCII")
    func everySingleByte() {
        for byte in UInt8(1)...UInt8(255) where byte != UInt8(ascii: "/") {
            for bytes in [[byte], Array("bad".utf8) + [byte] + Array(".mp4".utf8), [byte, byte, byte]] {
                #expect(FilePathBytes.encode(FilePathBytes.decode(bytes)) == bytes, "\(bytes)")
            }
        }
    }

    @Test("Every pair of bytes 0x80…0xFF with one more byte after survives the round trip")
    func pairsOfHighBytes() {
        for first in UInt8(0x80)...UInt8(0xFF) {
            for second in UInt8(0x80)...UInt8(0xFF) {
                let bytes: [UInt8] = [first, second, 0x41]
                #expect(FilePathBytes.encode(FilePathBytes.decode(bytes)) == bytes)
                let three: [UInt8] = [0xEF, first, second]
                #expect(FilePathBytes.encode(FilePathBytes.decode(three)) == three)
            }
        }
    }

    @Test("Random byte strings (no NUL, no /) survive the round trip")
    func randomByteStrings() {
        var generator = SeededGenerator(state: 0xF7FF)
        for _ in 0..<20_000 {
            let count = Int.random(in: 1...24, using: &generator)
            let bytes = (0..<count).map { _ -> UInt8 in
                // Weighted towards the bytes that build UTF-8 sequences, so valid and broken ones both occur.
                let byte = Int.random(in: 0..<4, using: &generator) == 0 ? UInt8.random(in: 1...0x7F, using: &generator)
                    : [0xC3, 0xE2, 0xEF, 0xF0, 0x9E, 0x9F, 0x80, 0xBF, 0xA9, 0xFF].randomElement(using: &generator)!
                return byte == UInt8(ascii: "/") ? 0x2E : byte
            }
            #expect(FilePathBytes.encode(FilePathBytes.decode(bytes)) == bytes, "\(bytes)")
        }
    }

    @Test("Valid UTF-8 decodes to the same text, and a String without escapes encodes to its UTF-8")
    func validUTF8Unchanged() {
        for name in ["plain.mp4", "été/clip.mkv", "日本語.webm", "emoji 🎬.mp4", "\u{E000}private.mp4", "\u{F77F}edge.mp4", "\u{F800}edge.mp4"] {
            #expect(FilePathBytes.decode(Array(name.utf8)) == name)
            #expect(FilePathBytes.encode(name) == Array(name.utf8))
            #expect(FilePathBytes.displayed(name) == name)
        }
    }

    @Test("A byte that is not UTF-8 becomes U+F700 + the byte, shown as \\xff")
    func escapeCodePoints() {
        let decoded = FilePathBytes.decode(Array("bad".utf8) + [0xFF] + Array(".mp4".utf8))
        #expect(decoded == "bad\u{F7FF}.mp4")
        #expect(FilePathBytes.displayed(decoded) == "bad\\xff.mp4")
        // A truncated sequence: each of its bytes is escaped on its own, the valid text after it kept.
        #expect(FilePathBytes.decode([0xE2, 0x82, 0x41]) == "\u{F7E2}\u{F782}A")
        // Overlong and surrogate encodings are not UTF-8.
        #expect(FilePathBytes.decode([0xC0, 0xAF]) == "\u{F7C0}\u{F7AF}")
        #expect(FilePathBytes.decode([0xED, 0xA0, 0x80]) == "\u{F7ED}\u{F7A0}\u{F780}")
        #expect(FilePathBytes.encode("out\u{F7FF}.jpg") == Array("out".utf8) + [0xFF] + Array(".jpg".utf8))
    }

    @Test("A name that really holds U+F780…U+F7FF is escaped byte by byte, so its bytes come back unchanged")
    func realEscapeCodePointsInNames() {
        let bytes = Array("a\u{F7FF}b".utf8)   // EF 9F BF
        let decoded = FilePathBytes.decode(bytes)
        #expect(decoded == "a\u{F7EF}\u{F79F}\u{F7BF}b")
        #expect(FilePathBytes.encode(decoded) == bytes)
        #expect(FilePathBytes.displayed(decoded) == "a\\xef\\x9f\\xbfb")
        // The documented ambiguity: the code point written in Swift (or JSON) means the raw byte.
        #expect(FilePathBytes.encode("a\u{F7FF}b") == [0x61, 0xFF, 0x62])
    }

    @Test("withCString hands C the encoded bytes, NUL-terminated")
    func cString() {
        let path = "dir\u{F7FE}/out\u{F7FF}.jpg"
        let seen = FilePathBytes.withCString(path) { pointer in
            Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer)))
        }
        #expect(seen == FilePathBytes.encode(path))
        #expect(FilePathBytes.cString(path).last == 0)
        #expect(FilePathBytes.withCString("plain") { String(cString: $0) } == "plain")
    }

    @Test("JSON writes the escape code point as \\uf7XX, which reads back as the same path")
    func jsonEscape() throws {
        let line = JSONValue.line(["input": "bad\u{F7FF}.mp4"])
        #expect(line.contains(#""bad\uf7ff.mp4""#), "\(line)")
        let decoded = try JSONDecoder().decode([String: String].self, from: Data(line.utf8))
        #expect(decoded["input"] == "bad\u{F7FF}.mp4")
    }

    @Test("split(_:) gives the directory and the last component, as the temporary beside a file needs them")
    func split() {
        func parts(_ path: String) -> [String] { let (directory, name) = FileSystem.split(path); return [directory, name] }
        #expect(parts("/a/b.jpg") == ["/a", "b.jpg"])
        #expect(parts("/b.jpg") == ["/", "b.jpg"])
        #expect(parts("a/b/") == ["a", "b"])
        #expect(parts("b.jpg") == [FileSystem.currentDirectory, "b.jpg"])
    }

    @Test("Directory entries, made and removed through the funnel, keep their bytes")
    func directoryEntries() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { FileSystem.removeTree(directory) }
        let folder = directory + "/sub\u{F7FE}/deeper"
        #expect(FileSystem.makeDirectories(folder) == 0)
        let file = folder + "/f\u{F7FF}.bin"
        let descriptor = FileSystem.open(file, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        #expect(descriptor >= 0)
        close(descriptor)
        #expect(FileSystem.names(inDirectory: folder) == ["f\u{F7FF}.bin"])
        #expect(FileSystem.names(inDirectory: directory) == ["sub\u{F7FE}"])
        // The bytes on disk, read without the escape: 0xFE and 0xFF themselves.
        let raw = directory.withCString { opendir($0) }
        defer { if let raw { closedir(raw) } }
        var rawNames: [[UInt8]] = []
        while let raw, let entry = readdir(raw) {
            rawNames.append(withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) })
        }
        #expect(rawNames.contains(Array("sub".utf8) + [0xFE]))
        #expect(FileSystem.resolvedPath(file)?.hasSuffix("/sub\u{F7FE}/deeper/f\u{F7FF}.bin") == true)
        // The engine's own readers reach the file by its bytes too.
        #expect(FileSystem.prefix(ofFileAt: file, count: 4) == [])
        #expect(try FileSystem.readRegularFile(file, limit: 16, what: "test file") == [])
        #expect(FileSystem.contents(of: file) == [])
        #expect(FileSystem.contents(of: folder + "/f\u{FFFD}.bin") == nil, "the repaired name is another name")
        FileSystem.removeTree(directory + "/sub\u{F7FE}")
        #expect(FileSystem.names(inDirectory: directory) == [])
    }
}
