import Testing
@testable import PreviewLoop

/// A playlist object's segment URIs as objects of its bucket (``RemoteDocument/resolveObject(_:against:keyPrefix:)``):
/// relative, from the bucket's top, or `s3://` of the same bucket; never another protocol or bucket, never
/// above the top or outside the prefix.
@Suite struct ObjectSegmentResolutionTests {
    static let base = "s3://videos/clips/live/stream.m3u8"

    @Test("Segments inside the prefix resolve to the object's URL, escaped", arguments: [
        ("stream0.ts", "s3://videos/clips/live/stream0.ts"),
        ("./parts/a%20b.ts?token=1#x", "s3://videos/clips/live/parts/a%20b.ts"),
        ("../other/seg.ts", "s3://videos/clips/other/seg.ts"),
        ("/clips/live/seg.ts", "s3://videos/clips/live/seg.ts"),
        ("s3://videos/clips/live/seg%C3%A9.ts", "s3://videos/clips/live/seg%C3%A9.ts"),
    ])
    func inside(_ item: (reference: String, url: String)) {
        #expect(RemoteDocument.resolveObject(item.reference, against: Self.base, keyPrefix: "clips/") == item.url)
    }

    @Test("Anything else is refused", arguments: [
        "../../private/secret.mp4", "/private/secret.mp4", "s3://videos/private/secret.mp4", "s3://other/clips/live/a.ts",
        "http://127.0.0.1/a.ts", "file:///etc/passwd", "data:,x", "../../../../a.ts", "a//b.ts", "a\\b.ts", "%00.ts", "%FF.ts", "",
    ])
    func refused(_ reference: String) {
        #expect(RemoteDocument.resolveObject(reference, against: Self.base, keyPrefix: "clips/") == nil)
    }

    @Test("Without a prefix any key of the bucket, never above its top")
    func wholeBucket() {
        #expect(RemoteDocument.resolveObject("../../private/a.ts", against: Self.base) == "s3://videos/private/a.ts")
        #expect(RemoteDocument.resolveObject("../../../a.ts", against: Self.base) == nil)
    }
}
