import Foundation
import Testing
@testable import PreviewLoopJobs
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// `thumbnail` without an extension answers the format the request's `Accept` prefers, byte for byte the
/// file name it chose, and varies by `Accept`.
@Suite("serve: thumbnail negotiates its format by Accept", .serialized, .timeLimit(.minutes(4)))
struct ServeNegotiationTests {
    @Test("Accept as browsers send it picks WebP or JPEG; q=0 and equal qualities are honoured")
    func preference() {
        let offered = ["image/webp", "image/jpeg"]
        func pick(_ accept: String?) -> String? { PreviewRequests.preferred(offered, accept: accept) }
        // Chromium, Firefox, Safari 14+, an old Safari, curl, none.
        #expect(pick("image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8") == "image/webp")
        #expect(pick("image/avif,image/webp,*/*") == "image/webp")
        #expect(pick("image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5")
            == "image/webp")
        #expect(pick("image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5") == "image/webp")
        #expect(pick("*/*") == "image/webp")
        #expect(pick(nil) == "image/webp")
        #expect(pick("image/jpeg") == "image/jpeg")
        #expect(pick("image/*;q=0.5, image/jpeg") == "image/jpeg")
        #expect(pick("image/webp;q=0, */*") == "image/jpeg")
        #expect(pick("image/webp;q=0.5, image/jpeg;q=0.9") == "image/jpeg")
        #expect(pick("text/html") == nil)
        #expect(pick("image/webp;q=2, garbage") == nil)
    }

    @Test("thumbnail answers the chosen file's bytes and validators with Vary: Accept; format forces one; 406 and 400")
    func negotiated() throws {
        try ServeInProcessTests.withServer { server, _ in
            let webp = try server.fetch("/landscape.mp4/thumbnail.webp?width=160")
            let jpeg = try server.fetch("/landscape.mp4/thumbnail.jpg?width=160")
            let chrome = try server.fetch("/landscape.mp4/thumbnail?width=160", headers: ["Accept: image/avif,image/webp,*/*;q=0.8"])
            #expect(chrome.status == 200 && chrome.body == webp.body && chrome.headers["content-type"] == "image/webp")
            #expect(chrome.headers["etag"] == webp.headers["etag"] && chrome.headers["vary"] == "Accept")
            #expect(webp.headers["vary"] == nil, "a named format does not vary")
            let old = try server.fetch("/landscape.mp4/thumbnail?width=160", headers: ["Accept: image/jpeg,*/*;q=0.1"])
            #expect(old.status == 200 && old.body == jpeg.body && old.headers["content-type"] == "image/jpeg")
            #expect(old.headers["etag"] != chrome.headers["etag"], "each choice has its own validator and cache entry")
            let revalidated = try server.fetch("/landscape.mp4/thumbnail?width=160",
                                               headers: ["Accept: image/webp", "If-None-Match: \(webp.headers["etag"]!)"])
            #expect(revalidated.status == 304 && revalidated.headers["vary"] == "Accept")
            let forced = try server.fetch("/landscape.mp4/thumbnail?width=160&format=jpg", headers: ["Accept: image/webp"])
            #expect(forced.status == 200 && forced.body == jpeg.body)
            let refused = try server.fetch("/landscape.mp4/thumbnail?width=160", headers: ["Accept: text/html"])
            #expect(refused.status == 406 && refused.text.contains("image/webp, image/jpeg"))
            let bad = try server.fetch("/landscape.mp4/thumbnail?format=gif")
            #expect(bad.status == 400 && bad.text.contains("\"parameter\":\"format\""))
        }
    }
}
