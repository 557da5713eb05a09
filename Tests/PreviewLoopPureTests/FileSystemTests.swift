import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoop

/// The file helpers below `FileManager`.
@Suite("FileSystem helpers")
struct FileSystemTests {
    @Test("prefix(ofFileAt:count:) reads at most count bytes; nil for a missing file")
    func prefix() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/bytes"
        try Data((0..<100).map { UInt8($0) }).write(to: URL(fileURLWithPath: path))
        #expect(FileSystem.prefix(ofFileAt: path, count: 10) == Array(0..<10))
        #expect(FileSystem.prefix(ofFileAt: path, count: 1000) == Array(0..<100))
        #expect(FileSystem.prefix(ofFileAt: directory + "/missing", count: 10) == nil)
    }

    @Test("appending(_:to:) joins as NSString.appendingPathComponent did")
    func appending() {
        for directory in ["out", "out/", "/tmp/a/b", "/", ""] {
            #expect(FileSystem.appending("card-00001.png", to: directory)
                    == (directory as NSString).appendingPathComponent("card-00001.png"), "\(directory)")
        }
    }

    @Test("A failed directory creation is explained in the system's words")
    func reason() throws {
        let directory = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = FileManager.default.createFile(atPath: directory + "/file", contents: Data())
        let error = #expect(throws: PreviewLoopError.self) { try AtomicFile.createDirectory(directory + "/file/sub") }
        #expect(error?.code == .outputNotWritable)
        #expect(error?.message == "cannot create the directory \(directory)/file/sub: Not a directory")
    }
}
