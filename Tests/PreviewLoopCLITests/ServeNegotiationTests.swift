import Foundation
import PreviewLoop
import Testing
@testable import PreviewLoopJobs
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// `thumbnail` without an extension answers the format the request's `Accept` prefers, byte for byte the
/// file name it chose, and varies by `Accept`.
@Suite("serve: thumbnail negotiates its format by Accept", .serialized, .timeLimit(.minutes(10)))
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

    @Test("AVIF > WebP > JPEG by q-values; AVIF only when named outright, never through a wildcard")
    func avifPreference() {
        let offered = PreviewRequests.negotiable["thumbnail"]!.map(\.mediaType)
        #expect(offered == ["image/avif", "image/webp", "image/jpeg"])
        func pick(_ accept: String?) -> String? { PreviewRequests.preferred(offered, accept: accept, namedOnly: PreviewRequests.namedOnly) }
        // Chromium, Firefox, Safari 16+.
        #expect(pick("image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8") == "image/avif")
        #expect(pick("image/avif,image/webp,*/*") == "image/avif")
        #expect(pick("image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5")
            == "image/avif")
        // Edge before 121 and Safari 14–15 decode WebP, not AVIF, and say image/* too.
        #expect(pick("image/webp,image/apng,image/*,*/*;q=0.8") == "image/webp")
        #expect(pick("image/webp,image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5") == "image/webp")
        #expect(pick("*/*") == "image/webp" && pick(nil) == "image/webp" && pick("image/*") == "image/webp")
        // q-values decide; equal ones go to the smaller format.
        #expect(pick("image/avif;q=0.5, image/webp;q=0.9, image/jpeg") == "image/jpeg")
        #expect(pick("image/avif;q=0.6, image/webp;q=0.7, */*;q=0.1") == "image/webp")
        #expect(pick("image/avif;q=0.9, image/webp;q=0.9, image/jpeg;q=0.9") == "image/avif")
        #expect(pick("image/avif;q=0, image/webp;q=0, */*") == "image/jpeg")
        #expect(pick("image/avif") == "image/avif")
        #expect(pick("image/avif;q=0") == nil)
    }

    @Test("thumbnail answers the chosen file's bytes and validators with Vary: Accept; format forces one; 406 and 400")
    func negotiated() throws {
        try ServeInProcessTests.withServer { server, _ in
            let avif = try server.fetch("/landscape.mp4/thumbnail.avif?width=160")
            let webp = try server.fetch("/landscape.mp4/thumbnail.webp?width=160")
            let jpeg = try server.fetch("/landscape.mp4/thumbnail.jpg?width=160")
            #expect(avif.status == 200 && avif.headers["content-type"] == "image/avif")
            let chrome = try server.fetch("/landscape.mp4/thumbnail?width=160", headers: ["Accept: image/avif,image/webp,*/*;q=0.8"])
            #expect(chrome.status == 200 && chrome.body == avif.body && chrome.headers["content-type"] == "image/avif")
            #expect(chrome.headers["etag"] == avif.headers["etag"] && chrome.headers["vary"] == "Accept")
            #expect(webp.headers["vary"] == nil && avif.headers["vary"] == nil, "a named format does not vary")
            let edge = try server.fetch("/landscape.mp4/thumbnail?width=160", headers: ["Accept: image/webp,image/apng,image/*,*/*;q=0.8"])
            #expect(edge.status == 200 && edge.body == webp.body && edge.headers["content-type"] == "image/webp")
            #expect(edge.headers["etag"] == webp.headers["etag"] && edge.headers["vary"] == "Accept")
            let old = try server.fetch("/landscape.mp4/thumbnail?width=160", headers: ["Accept: image/jpeg,*/*;q=0.1"])
            #expect(old.status == 200 && old.body == jpeg.body && old.headers["content-type"] == "image/jpeg")
            #expect(Set([chrome.headers["etag"], edge.headers["etag"], old.headers["etag"]]).count == 3,
                    "each choice has its own validator and cache entry")
            let file = TestPaths.temporaryDirectory() + "/served.avif"
            try Data(avif.body).write(to: URL(fileURLWithPath: file))
            #expect(try WebOracle.avifFrame(of: file, size: Size(width: 160, height: 120)).info["Format"] == "YUV444")
            let forcedAVIF = try server.fetch("/landscape.mp4/thumbnail?width=160&format=avif", headers: ["Accept: image/jpeg"])
            #expect(forcedAVIF.status == 200 && forcedAVIF.body == avif.body)
            let revalidated = try server.fetch("/landscape.mp4/thumbnail?width=160",
                                               headers: ["Accept: image/webp", "If-None-Match: \(webp.headers["etag"]!)"])
            #expect(revalidated.status == 304 && revalidated.headers["vary"] == "Accept")
            let forced = try server.fetch("/landscape.mp4/thumbnail?width=160&format=jpg", headers: ["Accept: image/webp"])
            #expect(forced.status == 200 && forced.body == jpeg.body)
            let refused = try server.fetch("/landscape.mp4/thumbnail?width=160", headers: ["Accept: text/html"])
            #expect(refused.status == 406 && refused.text.contains("image/avif, image/webp, image/jpeg"))
            let bad = try server.fetch("/landscape.mp4/thumbnail?format=gif")
            #expect(bad.status == 400 && bad.text.contains("\"parameter\":\"format\""))
        }
    }

    @Test("Over a real socket: Accept picks AVIF with Vary: Accept; with --client-hints, Save-Data picks quality 50 and varies")
    func overSocket() throws {
        try ServeTests.withServer({ $0.usesClientHints = true }) { base, _ in
            let avif = try ServeTests.fetch("\(base)/landscape.mp4/thumbnail.avif?width=160")
            let chrome = try ServeTests.fetch("\(base)/landscape.mp4/thumbnail?width=160",
                                              headers: ["Accept: image/avif,image/webp,image/apng,image/*,*/*;q=0.8"])
            #expect(chrome.status == 200 && chrome.body == avif.body && chrome.headers["content-type"] == "image/avif")
            #expect(chrome.headers["vary"] == "Accept, Save-Data" && chrome.headers["etag"] == avif.headers["etag"])
            let light = try ServeTests.fetch("\(base)/landscape.mp4/thumbnail.avif?width=160&quality=50")
            let saving = try ServeTests.fetch("\(base)/landscape.mp4/thumbnail?width=160", headers: ["Accept: image/avif", "Save-Data: on"])
            #expect(saving.body == light.body && saving.body.count < avif.body.count && saving.headers["etag"] == light.headers["etag"])
            let page = try ServeTests.fetch("\(base)/")
            #expect(page.headers["critical-ch"] == "Sec-CH-Prefers-Reduced-Motion"
                        && page.headers["vary"] == "Sec-CH-Prefers-Reduced-Motion, Save-Data")
        }
    }

    @Test("--client-hints: Sec-CH-DPR and Sec-CH-Width size a picture the query does not, and the response varies by them")
    func clientHints() throws {
        try ServeInProcessTests.withServer({ $0.usesClientHints = true }) { server, _ in
            let doubled = try server.fetch("/landscape.mp4/thumbnail.jpg?dpr=2")
            let hinted = try server.fetch("/landscape.mp4/thumbnail.jpg", headers: ["Sec-CH-DPR: 2"])
            #expect(hinted.status == 200 && hinted.body == doubled.body && hinted.headers["vary"] == "Sec-CH-DPR, Save-Data")
            let wide = try server.fetch("/landscape.mp4/thumbnail.jpg?width=300")
            let widthHinted = try server.fetch("/landscape.mp4/thumbnail.jpg", headers: ["Sec-CH-Width: 300", "Sec-CH-DPR: 3"])
            #expect(widthHinted.body == wide.body && widthHinted.headers["vary"] == "Sec-CH-DPR, Sec-CH-Width, Save-Data")
            // The query wins over a hint; a hint out of range is advice, kept within dpr's range.
            let asked = try server.fetch("/landscape.mp4/thumbnail.jpg?width=300", headers: ["Sec-CH-Width: 900"])
            #expect(asked.body == wide.body)
            let huge = try server.fetch("/landscape.mp4/thumbnail.jpg", headers: ["DPR: 40"])
            let four = try server.fetch("/landscape.mp4/thumbnail.jpg?dpr=4")
            #expect(huge.status == 200 && huge.body == four.body)
            let page = try server.fetch("/")
            #expect(page.headers["accept-ch"] == "Sec-CH-DPR, Sec-CH-Width, Sec-CH-Prefers-Reduced-Motion")
        }
        try ServeInProcessTests.withServer { server, _ in
            let plain = try server.fetch("/landscape.mp4/thumbnail.jpg")
            let ignored = try server.fetch("/landscape.mp4/thumbnail.jpg", headers: ["Sec-CH-DPR: 2"])
            #expect(ignored.body == plain.body && ignored.headers["vary"] == nil, "without --client-hints hints change nothing")
            #expect(try server.fetch("/").headers["accept-ch"] == "Sec-CH-Prefers-Reduced-Motion")
        }
    }

    @Test("--client-hints: Save-Data: on answers quality 50 in CSS pixels and varies by Save-Data; the query's own values win")
    func saveData() throws {
        try ServeInProcessTests.withServer({ $0.usesClientHints = true }) { server, _ in
            let light = try server.fetch("/landscape.mp4/thumbnail.jpg?width=320&quality=50")
            let saved = try server.fetch("/landscape.mp4/thumbnail.jpg?width=320", headers: ["Save-Data: on"])
            #expect(saved.status == 200 && saved.body == light.body && saved.headers["etag"] == light.headers["etag"])
            #expect(saved.headers["vary"] == "Save-Data")
            let full = try server.fetch("/landscape.mp4/thumbnail.jpg?width=320", headers: ["Save-Data: off"])
            #expect(full.headers["vary"] == "Save-Data" && full.body.count > saved.body.count && full.headers["etag"] != saved.headers["etag"])
            // The query's own quality wins, and then the header changes nothing.
            let ninety = try server.fetch("/landscape.mp4/thumbnail.jpg?width=320&quality=90")
            let asked = try server.fetch("/landscape.mp4/thumbnail.jpg?width=320&quality=90", headers: ["Save-Data: on"])
            #expect(asked.body == ninety.body && asked.headers["vary"] == nil)
            // A DPR hint counts as 1 (CSS pixels); a width hint, in device pixels, is divided by it.
            let plain = try server.fetch("/landscape.mp4/thumbnail.webp?quality=80")
            let css = try server.fetch("/landscape.mp4/thumbnail.webp?quality=80", headers: ["Sec-CH-DPR: 2", "SAVE-DATA: On"])
            #expect(css.body == plain.body && css.headers["vary"] == "Sec-CH-DPR, Save-Data")
            let narrow = try server.fetch("/landscape.mp4/thumbnail.webp?quality=80&width=300")
            let hinted = try server.fetch("/landscape.mp4/thumbnail.webp?quality=80", headers: ["Sec-CH-Width: 600", "Sec-CH-DPR: 2", "Save-Data: on"])
            #expect(hinted.body == narrow.body)
            // A lossless picture with no hint has nothing lighter to give.
            let png = try server.fetch("/landscape.mp4/thumbnail.png", headers: ["Save-Data: on"])
            #expect(png.status == 200 && png.headers["vary"] == nil)
            // Negotiated and saving: the AVIF at quality 50, varying by both.
            let avif = try server.fetch("/landscape.mp4/thumbnail.avif?width=160&quality=50")
            let negotiated = try server.fetch("/landscape.mp4/thumbnail?width=160", headers: ["Accept: image/avif", "Save-Data: on"])
            #expect(negotiated.body == avif.body && negotiated.headers["vary"] == "Accept, Save-Data")
            // Animations too (the lossy ones).
            let webp = try server.fetch("/landscape.mp4/animated.webp?width=160&length=1&quality=50")
            let savedWebP = try server.fetch("/landscape.mp4/animated.webp?width=160&length=1", headers: ["Save-Data: on"])
            #expect(savedWebP.body == webp.body && savedWebP.headers["vary"] == "Sec-CH-Prefers-Reduced-Motion, Save-Data")
        }
        try ServeInProcessTests.withServer { server, _ in
            let plain = try server.fetch("/landscape.mp4/thumbnail.jpg?width=320")
            let ignored = try server.fetch("/landscape.mp4/thumbnail.jpg?width=320", headers: ["Save-Data: on"])
            #expect(ignored.body == plain.body && ignored.headers["vary"] == nil, "without --client-hints Save-Data changes nothing")
        }
    }

    @Test("The feed page asks for the hints (Accept-CH), names reduced motion critical (Critical-CH) and varies by what shapes it")
    func feedHints() throws {
        try ServeInProcessTests.withServer({ $0.usesClientHints = true }) { server, _ in
            let page = try server.fetch("/")
            #expect(page.headers["accept-ch"] == "Sec-CH-DPR, Sec-CH-Width, Sec-CH-Prefers-Reduced-Motion")
            #expect(page.headers["critical-ch"] == "Sec-CH-Prefers-Reduced-Motion")
            #expect(page.headers["vary"] == "Sec-CH-Prefers-Reduced-Motion, Save-Data")
            #expect(page.text.contains(" 3x\"") && page.text.contains("data-video="))
            // Saving data: each poster at 1x only.
            let saving = try server.fetch("/", headers: ["Save-Data: on"])
            #expect(saving.status == 200 && !saving.text.contains(" srcset=\"") && saving.text.contains("data-video="))
            // Reduced motion: no moving previews (posters and storyboards stay).
            let still = try server.fetch("/", headers: ["Sec-CH-Prefers-Reduced-Motion: reduce"])
            #expect(still.status == 200 && !still.text.contains("data-video=") && still.text.contains("data-storyboard="))
            #expect(still.text.contains(" 3x\""))
        }
        try ServeInProcessTests.withServer { server, _ in
            let page = try server.fetch("/", headers: ["Save-Data: on"])
            #expect(page.headers["accept-ch"] == "Sec-CH-Prefers-Reduced-Motion" && page.headers["critical-ch"] == "Sec-CH-Prefers-Reduced-Motion")
            #expect(page.headers["vary"] == "Sec-CH-Prefers-Reduced-Motion" && page.text.contains(" 3x\""), "Save-Data is --client-hints' only")
        }
    }

    @Test("animated.* asked with Sec-CH-Prefers-Reduced-Motion: reduce is the poster as a still of the same family")
    func reducedMotion() throws {
        try ServeInProcessTests.withServer { server, _ in
            let moving = try server.fetch("/landscape.mp4/animated.webp?width=160&length=1")
            #expect(moving.status == 200 && moving.headers["vary"] == "Sec-CH-Prefers-Reduced-Motion")
            let still = try server.fetch("/landscape.mp4/thumbnail.webp?width=160")
            let reduced = try server.fetch("/landscape.mp4/animated.webp?width=160&length=1",
                                           headers: ["Sec-CH-Prefers-Reduced-Motion: reduce"])
            #expect(reduced.status == 200 && reduced.body == still.body && reduced.body != moving.body)
            #expect(reduced.headers["vary"] == "Sec-CH-Prefers-Reduced-Motion" && reduced.headers["content-type"] == "image/webp")
            let at = try server.fetch("/landscape.mp4/thumbnail.png?width=160&time=1")
            let gif = try server.fetch("/landscape.mp4/animated.gif?width=160&start=1", headers: ["Sec-CH-Prefers-Reduced-Motion: reduce"])
            #expect(gif.body == at.body && gif.headers["content-type"] == "image/png")
            let mp4 = try server.fetch("/landscape.mp4/animated.mp4", headers: ["Sec-CH-Prefers-Reduced-Motion: reduce"])
            #expect(mp4.headers["content-type"] == "image/jpeg")
            let noPreference = try server.fetch("/landscape.mp4/animated.webp?width=160&length=1",
                                                headers: ["Sec-CH-Prefers-Reduced-Motion: no-preference"])
            #expect(noPreference.body == moving.body)
        }
    }

    @Test("--presets: ?preset=NAME sets what the query does not; a preset a route refuses stops the server at start")
    func presets() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("presets-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/presets.json"
        try Data(#"{"card": {"width": 240, "fit_mode": "pad", "quality": 60, "rotate": 90}, "tiles": {"count": 3, "gap": 2}}"#.utf8)
            .write(to: URL(fileURLWithPath: file))
        try ServeInProcessTests.withServer({ $0.presetsFile = file }) { server, _ in
            let spelled = try server.fetch("/landscape.mp4/thumbnail.jpg?width=240&fit_mode=pad&quality=60&rotate=90")
            let preset = try server.fetch("/landscape.mp4/thumbnail.jpg?preset=card")
            #expect(preset.status == 200 && preset.body == spelled.body && preset.headers["etag"] == spelled.headers["etag"])
            let narrower = try server.fetch("/landscape.mp4/thumbnail.jpg?width=100&fit_mode=pad&quality=60&rotate=90")
            let overridden = try server.fetch("/landscape.mp4/thumbnail.jpg?preset=card&width=100")
            #expect(overridden.body == narrower.body, "the query wins")
            let png = try server.fetch("/landscape.mp4/thumbnail.png?preset=card")
            #expect(png.status == 200, "a lossless file leaves the preset's quality out")
            // A route takes the preset's parameters it has: strip takes count and gap, not the card's.
            let strip = try server.fetch("/landscape.mp4/strip.jpg?preset=tiles")
            let stripSpelled = try server.fetch("/landscape.mp4/strip.jpg?count=3&gap=2")
            #expect(strip.status == 200 && strip.body == stripSpelled.body)
            let unknown = try server.fetch("/landscape.mp4/thumbnail.jpg?preset=nope")
            #expect(unknown.status == 400 && unknown.text.contains("\"parameter\":\"preset\""))
        }
        for (json, words) in [(#"{"bad": {"width": 0}}"#, "preset bad: thumbnail.jpg refuses it (width)"),
                              (#"{"bad": {"colour": "red"}}"#, "preset bad: no route takes colour"),
                              (#"{"bad": {"count": 3, "grid": "2x2"}}"#, "no route takes all of count, grid"),
                              (#"{"b a d": {}}"#, "preset names are"), (#"[1]"#, "expected a JSON object")] {
            try Data(json.utf8).write(to: URL(fileURLWithPath: file))
            var options = ServeCommand(root: folder)
            options.presetsFile = file
            do {
                _ = try PreviewServer.inProcess(options: options)
                Issue.record("\(json) was taken")
            } catch {
                #expect(error.message.hasPrefix("--presets \(file): ") && error.message.contains(words), "\(error.message)")
            }
        }
    }
}
