import Foundation
import Glibc
import Testing
import PreviewLoopCLI
import PreviewLoopJobs
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// File names that are not UTF-8 (Linux names are bytes): read, written and walked with their exact
/// bytes, shown as `\xff` in messages and as `\uf7ff` in JSON.
@Suite("Non-UTF-8 file names, end to end", .timeLimit(.minutes(10)))
struct NonUTF8PathTests {
    static let fixture = TestPaths.fixture("landscape.mp4")

    /// `text` with one raw byte appended, then `suffix`: `name("bad", 0xFF, ".mp4")` is `bad\xff.mp4`.
    static func name(_ text: String, _ byte: UInt8, _ suffix: String = "") -> [UInt8] {
        Array(text.utf8) + [byte] + Array(suffix.utf8)
    }

    /// A new folder holding a copy of the fixture named `bad\xff.mp4`, made with raw bytes (POSIX calls).
    static func folderWithBadName() throws -> String {
        let directory = TestPaths.temporaryDirectory()
        let bytes = try #require(FileManager.default.contents(atPath: fixture))
        let path = Array(directory.utf8) + [UInt8(ascii: "/")] + name("bad", 0xFF, ".mp4")
        let descriptor = (path.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        try #require(written == bytes.count)
        return directory
    }

    /// The names in `directory` as the raw bytes on disk.
    static func rawNames(_ directory: String) -> Set<[UInt8]> {
        guard let folder = opendir(directory) else { return [] }
        defer { closedir(folder) }
        var names: Set<[UInt8]> = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name != Array(".".utf8) && name != Array("..".utf8) { names.insert(name) }
        }
        return names
    }

    /// Runs the CLI in `directory` with arguments given as bytes. Foundation's `Process` takes Strings,
    /// which cannot carry a byte that is not UTF-8, so the shell makes each argument with `printf`.
    static func run(in directory: String, _ arguments: [[UInt8]]) throws -> ChildResult {
        let words = arguments.map { bytes in
            "\"$(printf '" + bytes.map { "\\" + String($0, radix: 8) }.joined() + "')\""
        }
        let script = #"cd "$1" && exec "$0" "# + words.joined(separator: " ")
        return try Child.run("/bin/sh", ["-c", script, TestPaths.cliBinary, directory])
    }

    static func errorLines(_ result: ChildResult) -> [Substring] {
        result.errorLines.filter { $0.hasPrefix("Error:") }
    }

    @Test("probe reads bad\\xff.mp4; thumb -o out\\xff.jpg writes exactly that name, shown as \\xff")
    func probeAndThumb() throws {
        let directory = try Self.folderWithBadName()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = Self.name("bad", 0xFF, ".mp4")
        let probe = try Self.run(in: directory, [Array("probe".utf8), input])
        #expect(probe.status == 0, "\(probe.stderr)")
        #expect(String(decoding: probe.stdout, as: UTF8.self).contains("duration:"))

        let output = Self.name("out", 0xFF, ".jpg")
        let thumb = try Self.run(in: directory, [Array("thumb".utf8), input, Array("-o".utf8), output])
        #expect(thumb.status == 0, "\(thumb.stderr)")
        let names = Self.rawNames(directory)
        #expect(names.contains(output), "\(names)")
        #expect(!names.contains(Array("out\u{FFFD}.jpg".utf8)), "no name with U+FFFD in place of the byte")
        #expect(names.count == 2, "the input and the output only (no temporary left): \(names)")
        #expect(String(decoding: thumb.stdout, as: UTF8.self).contains(#"wrote out\xff.jpg"#), "\(String(decoding: thumb.stdout, as: UTF8.self))")
    }

    @Test("--json names the input and the output with the \\uf7ff escape")
    func jsonReport() throws {
        let directory = try Self.folderWithBadName()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Self.run(in: directory, [Array("thumb".utf8), Self.name("bad", 0xFF, ".mp4"), Array("-o".utf8),
                                                  Self.name("o", 0xFE, ".png"), Array("--json".utf8)])
        #expect(result.status == 0, "\(result.stderr)")
        let text = String(decoding: result.stdout, as: UTF8.self)
        #expect(text.contains(#""input":"bad\uf7ff.mp4""#) && text.contains(#""path":"o\uf7fe.png""#), "\(text)")
        #expect(Self.rawNames(directory).contains(Self.name("o", 0xFE, ".png")))
    }

    @Test("sprites -o dir\\xfe makes the folder with that byte, its files inside")
    func spritesFolder() throws {
        let directory = try Self.folderWithBadName()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let folder = Self.name("dir", 0xFE)
        let result = try Self.run(in: directory, [Array("sprites".utf8), Self.name("bad", 0xFF, ".mp4"), Array("-o".utf8), folder])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.rawNames(directory) == [Self.name("bad", 0xFF, ".mp4"), folder], "\(Self.rawNames(directory))")
        // The folder's content, read by its raw bytes through the shell.
        let listing = try Child.run("/bin/sh", ["-c", #"cd "$0" && ls "$(printf 'dir\376')""#, directory])
        #expect(listing.status == 0, "\(listing.stderr)")
        let files = String(decoding: listing.stdout, as: UTF8.self).split(separator: "\n")
        #expect(files.contains("thumbnails.vtt") && files.contains { $0.hasPrefix("sprites-") }, "\(files)")
    }

    @Test("A missing miss\\xff.mp4 is named with \\xff in the one Error line; the usual exit status 1")
    func missingFile() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Self.run(in: directory, [Array("thumb".utf8), Self.name("miss", 0xFF, ".mp4"), Array("-o".utf8), Array("x.jpg".utf8)])
        #expect(result.status == 1, "\(result.stderr)")
        let errors = Self.errorLines(result)
        #expect(errors.count == 1 && errors.first?.contains(#"miss\xff.mp4"#) == true, "\(result.stderr)")
        #expect(Self.rawNames(directory).isEmpty)
    }

    @Test("batch over a folder holding bad\\xff.mp4 writes its outputs; the record names it with \\uf7ff; a rerun skips it")
    func batchFolder() throws {
        let directory = try Self.folderWithBadName()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let out = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let first = try Self.run(in: directory, [Array("batch".utf8), Array(".".utf8), Array("-o".utf8), Array(out.utf8), Array("--quiet".utf8)])
        #expect(first.status == 0, "\(first.stderr)")
        let results = try String(contentsOfFile: out + "/results.jsonl", encoding: .utf8)
        let record = try #require(results.split(separator: "\n").first { $0.contains(#""type":"clip""#) })
        #expect(record.contains(#"bad\uf7ff.mp4""#) && record.contains(#""status":"ok""#), "\(record)")
        let clipFolders = (try? FileManager.default.contentsOfDirectory(atPath: out))?.filter { !$0.hasPrefix(".") && !$0.hasSuffix(".jsonl") } ?? []
        #expect(clipFolders.count == 1, "\(clipFolders)")
        let outputs = clipFolders.first.map { (try? FileManager.default.contentsOfDirectory(atPath: out + "/" + $0)) ?? [] } ?? []
        #expect(outputs.contains("poster.jpg") && outputs.contains("thumbnails.vtt"), "\(outputs)")

        let second = try Self.run(in: directory, [Array("batch".utf8), Array(".".utf8), Array("-o".utf8), Array(out.utf8), Array("--quiet".utf8)])
        #expect(second.status == 0, "\(second.stderr)")
        let again = try String(contentsOfFile: out + "/results.jsonl", encoding: .utf8)
        let summaries = again.split(separator: "\n").filter { $0.contains(#""type":"summary""#) }
        #expect(summaries.last?.contains(#""skipped":1"#) == true, "the rerun finds the clip done: \(summaries)")
    }

    @Test("A manifest's input written with \\uf7ff reaches the file whose name has the byte 0xFF")
    func manifestEscape() throws {
        let directory = try Self.folderWithBadName()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try (#"{"id":"clip","input":"bad\uf7ff.mp4"}"# + "\n").write(toFile: directory + "/m.jsonl", atomically: true, encoding: .utf8)
        let result = try Child.run(TestPaths.cliBinary, ["batch", directory + "/m.jsonl", "-o", directory + "/out", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory + "/out/clip/poster.jpg"))
    }

    @Test("--ca-file with a name that is not UTF-8 is a usage error (FFmpeg takes it as text), shown with \\xff")
    func caFileRefused() throws {
        let directory = try Self.folderWithBadName()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Self.run(in: directory, [Array("probe".utf8), Self.name("bad", 0xFF, ".mp4"), Array("--ca-file".utf8),
                                                  Self.name("bad", 0xFF, ".mp4")])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(#"--ca-file bad\xff.mp4"#) && result.stderr.contains("not UTF-8"), "\(result.stderr)")
    }

    @Test("serve: %FF in a request path reaches the file whose name has the byte 0xFF; query values stay UTF-8 only")
    func servePercentEscapedByte() throws {
        let root = try Self.folderWithBadName()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var options = ServeCommand(root: root)
        options.workers = 1
        let server = try PreviewServer(options: options, accessLog: nil)
        defer { server.stop(grace: 5) }
        let base = "http://127.0.0.1:\(server.port)"
        let found = try ServeTests.fetch(base + "/bad%FF.mp4/thumbnail.jpg?width=64")
        #expect(found.status == 200 && found.headers["content-type"] == "image/jpeg", "\(found.text)")
        #expect(try ServeTests.fetch(base + "/bad%ff.mp4/probe.json").status == 200)
        #expect(try ServeTests.fetch(base + "/bad%FE.mp4/thumbnail.jpg").status == 404)
        #expect(SourcePath.split("/bad%FF.mp4/thumbnail.jpg")?.source == ["bad\u{F7FF}.mp4"])
        #expect(SourcePath.decode("%FF", plusIsSpace: true) == nil, "a query value is text: bytes that are not UTF-8 are refused")
    }
}
