import PreviewLoop
import Foundation
import Testing
import PreviewLoopTestSupport
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// The feed page's pure parts: HTML escaping, URL paths of odd file names, the page's query and serve's
/// options, the manifest, the card sizes and the reveal's CSS against the card's formula.
@Suite("feed page: escaping, settings, manifest")
struct FeedPageTests {
    @Test("Text is escaped for HTML; control characters and undecodable bytes become U+FFFD")
    func escaping() {
        #expect(FeedPage.escaped(#"<script>alert("x") & 'y'</script>"#)
            == "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;")
        #expect(FeedPage.escaped("a\u{0}b\u{1b}c\u{7f}\u{85}") == "a\u{FFFD}b\u{FFFD}c\u{FFFD}\u{FFFD}")
        #expect(FeedPage.escaped(FilePathBytes.decode(Array("bad".utf8) + [0xFF])) == "bad\u{FFFD}")
        #expect(FeedPage.escaped("line\nbreak\ttab") == "line break tab")
        #expect(FeedPage.escaped("é 日本 🎬") == "é 日本 🎬")
    }

    @Test("Bidirectional controls in shown text become U+FFFD; right-to-left letters stay")
    func bidiControls() {
        #expect(FeedPage.escaped("clip\u{202E}4pm.exe") == "clip\u{FFFD}4pm.exe")
        for value: UInt32 in [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C] {
            let scalar = Unicode.Scalar(value)!
            #expect(FeedPage.escaped("a\(Character(scalar))b") == "a\u{FFFD}b", "U+\(String(value, radix: 16))")
        }
        #expect(FeedPage.escaped("שלום عربي") == "שלום عربي")
        var page = FeedPage(title: "x\u{2067}y", cards: [FeedPage.Card(title: "evil\u{202E}4pm.mp4", name: "evil\u{202E}4pm", posters: ["a.jpg"])])
        page.assets = .files
        let html = page.html()
        #expect(!html.unicodeScalars.contains { FeedPage.isBidiControl($0) }, "\(html)")
    }

    @Test("Paths no serve URL can name: control characters, a backslash, an encoded path past 4096 bytes")
    func unservablePaths() {
        #expect(FeedPage.unservableReason("sub dir/clip é.mp4") == nil)
        #expect(FeedPage.unservableReason(FilePathBytes.decode(Array("bad".utf8) + [0xFF])) == nil)
        #expect(FeedPage.unservableReason("clip\u{202E}4pm.mp4") == nil, "shown neutralised, served as it is")
        #expect(FeedPage.unservableReason("line\nbreak.mp4")?.contains("U+000A") == true)
        #expect(FeedPage.unservableReason("nul\u{0}.mp4")?.contains("U+0000") == true)
        #expect(FeedPage.unservableReason("tab\t.mp4")?.contains("control character") == true)
        #expect(FeedPage.unservableReason("back\\slash.mp4")?.contains("backslash") == true)
        // 1.5 KB of path: 4.5 KB once its é are percent-encoded.
        let long = (0..<6).map { _ in String(repeating: "é", count: 125) }.joined(separator: "/") + "/clip.mp4"
        #expect(long.utf8.count < 1600)
        #expect(FeedPage.unservableReason(long)?.contains("at most 4096") == true)
        let longest = PreviewRequests.routeNames.map(\.utf8.count).max()!
        let fits = String(repeating: "a", count: 4096 - 2 - longest)
        #expect(FeedPage.unservableReason(fits) == nil)
        #expect(FeedPage.unservableReason(fits + "a") != nil)
    }

    @Test("File paths become URL paths byte by byte: unreserved characters and / kept, the rest percent-encoded")
    func urlPaths() {
        #expect(FeedPage.urlPath("sub dir/clip é.mp4") == "sub%20dir/clip%20%C3%A9.mp4")
        #expect(FeedPage.urlPath(FilePathBytes.decode(Array("bad".utf8) + [0xFF] + Array(".mp4".utf8))) == "bad%FF.mp4")
        #expect(FeedPage.urlPath("a?b#c&d=e%f\"g'h<i>.mp4") == "a%3Fb%23c%26d%3De%25f%22g%27h%3Ci%3E.mp4")
        #expect(FeedPage.urlPath("A-z_0.9~") == "A-z_0.9~")
    }

    @Test("A query component keeps only unreserved characters; every byte survives decoding, + and / too")
    func queryComponents() {
        #expect(PercentEncoding.queryComponent("https://cdn.example/a b+c.mp4?x=1&y=%41")
            == "https%3A%2F%2Fcdn.example%2Fa%20b%2Bc.mp4%3Fx%3D1%26y%3D%2541")
        #expect(PercentEncoding.queryComponent("A-z_0.9~") == "A-z_0.9~")
        #expect(PercentEncoding.queryComponent("é") == "%C3%A9")
        let every = (0...255).map { UInt8($0) }
        #expect(PercentEncoding.decode(PercentEncoding.encode(every)) == every)
        #expect(PercentEncoding.decode(PercentEncoding.encode(every), plusIsSpace: true) == every)
        #expect(PercentEncoding.encode(Array("a/b c".utf8), keeping: "/") == "a/b%20c")
    }

    @Test("The page's query: each parameter in range is taken, anything else is a 400 naming it")
    func query() throws {
        let defaults = FeedSettings()
        let page = try defaults.applying(query: [("preview_length", "2.5"), ("aspect", "4:3"), ("max_playing", "5")])
        #expect(page.previewLength == 2.5 && page.aspectRatio == 4.0 / 3 && page.maxPlaying == 5)
        #expect(try defaults.applying(query: [("preview_length", "01:00")]).previewLength == 60)
        #expect(try defaults.applying(query: []) == defaults)
        let bad: [(String, String, String?)] = [
            ("preview_length", "0", "preview_length"), ("preview_length", "0.4", "preview_length"),
            ("preview_length", "3601", "preview_length"), ("preview_length", "inf", "preview_length"),
            ("preview_length", "", "preview_length"), ("aspect", "0", "aspect"), ("aspect", "17:1", "aspect"),
            ("aspect", "a:b", "aspect"), ("max_playing", "0", "max_playing"), ("max_playing", "1e3", "max_playing"),
            ("time", "1", "time"), ("bad name!", "1", nil),
        ]
        for (name, value, parameter) in bad {
            #expect { _ = try defaults.applying(query: [(name, value)]) } throws: { error in
                let problem = error as? PreviewRequestError
                return problem?.status == 400 && problem?.parameter == parameter
            }
        }
        // A time, as every time parameter reads it: no exponent, and the message says what a time is.
        #expect { _ = try defaults.applying(query: [("preview_length", "1e3")]) } throws: { error in
            (error as? PreviewRequestError)?.detail.contains("seconds (1.5), mm:ss or hh:mm:ss.ms") == true
        }
        #expect { _ = try defaults.applying(query: [("aspect", "1"), ("aspect", "2")]) } throws: { error in
            (error as? PreviewRequestError)?.detail == "The parameter is given twice."
        }
    }

    @Test("serve's feed options: --preview-length, --feed-manifest, --no-feed, and what conflicts")
    func serveOptions() throws {
        func serve(_ arguments: [String]) throws -> ServeCommand? {
            guard case .command(let command) = try CommandLineParser.parse(["serve", "--root", "/srv"] + arguments) else { return nil }
            return command as? ServeCommand
        }
        let options = try #require(try serve(["--preview-length", "4.5", "--feed-manifest", "feed.jsonl"]))
        #expect(options.feed.previewLength == 4.5 && options.feedManifest == "feed.jsonl" && options.isFeedEnabled)
        let plain = try #require(try serve([]))
        #expect(plain.feed.previewLength == 15 && plain.feedManifest == nil && plain.isFeedEnabled)
        #expect(try serve(["--no-feed"])?.isFeedEnabled == false)
        for arguments in [["--preview-length", "0"], ["--preview-length", "4000"], ["--preview-length", "x"],
                          ["--no-feed", "--preview-length", "3"], ["--no-feed", "--feed-manifest", "f"]] {
            #expect(usageError(["serve", "--root", "/srv"] + arguments) != nil, "\(arguments)")
        }
        let help = HelpText.help(for: Subcommand(ServeCommand.self))
        #expect(help.contains("--preview-length <time>") && help.contains("--feed-manifest <file>") && help.contains("--no-feed"))
    }

    @Test("The manifest: JSON Lines with optional title and preview_length, or a list of paths; bad lines are named")
    func manifest() throws {
        let parsed = try FeedManifest.parse("""
        {"path": "a/b.mp4", "title": "B <1>", "preview_length": 5}
        {"path": "c.mp4"}

        """, name: "feed.jsonl")
        #expect(parsed.entries == [FeedManifest.Entry(path: "a/b.mp4", title: "B <1>", previewLength: 5),
                                   FeedManifest.Entry(path: "c.mp4")])
        #expect(try FeedManifest.parse("# clips\nx y.mp4\r\nz.mp4\n", name: "list").entries.map(\.path) == ["x y.mp4", "z.mp4"])
        let bad: [(String, String)] = [
            (#"{"path": "../x.mp4"}"#, "line 1: the path must be relative"), (#"{"path": "/etc/x.mp4"}"#, "relative"),
            (#"{"path": "a//b.mp4"}"#, "relative"), (#"{"path": "a/./b.mp4"}"#, "relative"),
            (#"{"path": "a.mp4", "id": "x"}"#, "unknown key \"id\""), (#"{"title": "x"}"#, "line 1: no \"path\""),
            (#"{"path": 3}"#, "line 1: \"path\" must be a string"), (#"{"path": "a.mp4", "preview_length": 0}"#, "preview_length"),
            (#"{"preview_length":"3"}"#, "line 1: no \"path\" (the clip's path under --root); \"preview_length\" must be a number"),
            (#"{"path": "a.mp4", "title": 7}"#, "line 1: \"title\" must be a string"), (#"{"path": "a.mp4"}"# + "\n[1]", "line 2: not a JSON object"),
            (#"{"path": "a.mp4"}"# + "\n" + #"{"path": "x\u0000.mp4"}"#, "line 2: the path holds a control character (U+0000)"),
            (#"{"path": "new\nline.mp4"}"#, "line 1: the path holds a control character (U+000A)"),
            (#"{"path": "a\\b.mp4"}"#, "line 1: the path holds a backslash"),
            ("{\"path\": \"\((0..<6).map { _ in String(repeating: "é", count: 125) }.joined(separator: "/"))/c.mp4\"}",
             "line 1: the path is "),
            ("{\"path\": \"a.mp4\", \"title\": \"\(String(repeating: "x", count: 301))\"}", "at most 300"),
            ("{\"path\": \"a.mp4\"}\n{oops", "line 2"),
        ]
        for (text, message) in bad {
            #expect("\(text)") { _ = try FeedManifest.parse(text, name: "feed.jsonl") } throws: { error in
                (error as? PreviewLoopError)?.message.contains(message) == true && (error as? PreviewLoopError)?.message.hasPrefix("feed.jsonl: ") == true
                    && (error as? PreviewLoopError)?.message.contains("\n") == false
            }
        }
        // A plain list: a line holding a NUL or a tab is refused the same way.
        #expect { _ = try FeedManifest.parse("a.mp4\nb\u{0}.mp4\n", name: "list") } throws: { error in
            (error as? PreviewLoopError)?.message.hasPrefix("list: line 2: the path holds a control character (U+0000)") == true
        }
        let many = (0...FeedPage.maxCards).map { "c\($0).mp4" }.joined(separator: "\n")
        #expect(throws: PreviewLoopError.self) { _ = try FeedManifest.parse(many, name: "list") }
    }

    @Test("Card sizes: 480 wide at the aspect, even, within the animation cap")
    func cardSizes() {
        #expect(FeedPage.cardSize(aspectRatio: 16.0 / 9) == Size(width: 480, height: 270))
        #expect(FeedPage.cardSize(aspectRatio: 4.0 / 3) == Size(width: 480, height: 360))
        #expect(FeedPage.cardSize(aspectRatio: 9.0 / 16, maxSide: 640) == Size(width: 360, height: 640))
        #expect(FeedPage.cardSize(aspectRatio: .nan) == Size(width: 480, height: 270))
        let tall = FeedPage.cardSize(aspectRatio: 1.0 / 16, maxSide: 640)
        #expect(tall.height <= 640 && tall.width % 2 == 0 && tall.height % 2 == 0 && tall.width >= 2)
    }

    @Test("Card boxes: 480 on the long side at the clip's shape, kept within the page's limits")
    func cardBoxes() throws {
        #expect(FeedPage.cardBox(aspectRatio: 16.0 / 9) == Size(width: 480, height: 270))
        #expect(FeedPage.cardBox(aspectRatio: 9.0 / 16) == Size(width: 270, height: 480))
        #expect(FeedPage.cardBox(aspectRatio: 3.0 / 4) == Size(width: 360, height: 480))
        #expect(FeedPage.cardBox(longSide: 160, aspectRatio: 9.0 / 16, maxSide: 320) == Size(width: 90, height: 160))
        let settings = FeedSettings()
        #expect(settings.cardAspect(display: Size(width: 1080, height: 1920)) == 9.0 / 16)
        #expect(settings.cardAspect(display: Size(width: 1920, height: 800)) == 16.0 / 9, "a scope clip is cropped at 16:9")
        #expect(settings.cardAspect(display: Size(width: 720, height: 1920)) == 9.0 / 16, "a taller clip is kept at 9:16")
        #expect(settings.cardAspect(display: nil) == 16.0 / 9)
        let fixed = try settings.applying(query: [("aspect", "4:3")])
        #expect(!fixed.fitsClips && fixed.cardAspect(display: Size(width: 1080, height: 1920)) == 4.0 / 3)
        let limited = try settings.applying(query: [("min_aspect", "1"), ("max_aspect", "2")])
        #expect(limited.cardAspect(display: Size(width: 1080, height: 1920)) == 1 && limited.cardAspect(display: Size(width: 1920, height: 800)) == 2)
        #expect(try settings.applying(query: [("max_aspect", "1:2")]).aspectRange == (0.5)...(0.5))
        #expect { _ = try settings.applying(query: [("min_aspect", "2"), ("max_aspect", "1")]) } throws: { error in
            (error as? PreviewRequestError).map { $0.status == 400 && $0.parameter == "min_aspect" } ?? false
        }
    }

    @Test("A card of its own shape carries its size; a poster at twice the card is its 2x source")
    func cardShapeInPage() {
        var portrait = FeedPage.Card(title: "P", name: "p", posters: ["p/poster.jpg"], video: "p/hover.mp4")
        portrait.aspectRatio = 9.0 / 16
        portrait.posterDensity = 2
        let landscape = FeedPage.Card(title: "L", name: "l", posters: ["l/poster.jpg"])
        let html = FeedPage(title: "T", cards: [portrait, landscape]).html()
        #expect(html.contains("<li class=\"pl-item\" style=\"--pl-aspect: 270 / 480; --pl-width: 270px\">"))
        #expect(html.contains("src=\"p/poster.jpg\" srcset=\"p/poster.jpg 2x\" width=\"270\" height=\"480\""))
        #expect(html.contains("<li class=\"pl-item\">\n<div class=\"pl-card\" data-state=\"poster\" data-name=\"l\">"))
        #expect(html.contains("src=\"l/poster.jpg\" width=\"480\" height=\"270\""))
    }

    @Test("The reveal's CSS radii are the card formula's: 5 % and 100 % of the half-diagonal in circle()'s percent")
    func revealRadii() throws {
        // circle()'s percentage is of sqrt(w² + h²) / sqrt(2) (CSS Shapes 1, "reference box").
        let size = Size(width: 480, height: 270)
        let reference = (480.0 * 480 + 270 * 270).squareRoot() / 2.0.squareRoot()
        let css = FeedPage.styleSheet
        for (progress, percent) in [(0.0, "3.5355%"), (1.0, "70.7107%")] {
            #expect(css.contains("circle(\(percent) at 50% 50%)"))
            let value = try #require(Double(percent.dropLast()))
            #expect(abs(value / 100 * reference - CardGeometry.revealRadius(progress: progress, size: size)) < 0.01)
        }
        // The same curve: CSS's cubic-bezier(0.42, 0, 0.58, 1) is the card's ease-in-out, and the same 0.6 s.
        #expect(css.contains("--pl-ease: cubic-bezier(0.42, 0, 0.58, 1)") && css.contains("--pl-reveal: 0.6s"))
        #expect(CardStyle().easing == .easeInOut && CardStyle().revealDuration == 0.6)
    }

    @Test("The page: one card per clip, buttons named, the no-JS links, assets inline or as files")
    func page() {
        var page = FeedPage(title: "T & <t>", cards: [
            FeedPage.Card(title: "A \"1\"", name: "a", posters: ["/a.mp4/thumbnail.jpg?width=480&height=270", "/2x", "/3x"],
                          video: "/a.mp4/animated.mp4?length=15&width=480&height=270", storyboard: "/s.vtt", still: "/still",
                          color: "#12ab34"),
            FeedPage.Card(title: "B", name: "b", posters: ["b/poster.jpg"], color: "red;x:y"),
        ])
        let html = page.html()
        #expect(html.contains("<title>T &amp; &lt;t&gt;</title>"))
        #expect(html.contains("src=\"/a.mp4/thumbnail.jpg?width=480&amp;height=270\" srcset=\"/a.mp4/thumbnail.jpg?width=480&amp;height=270 1x, /2x 2x, /3x 3x\""))
        #expect(html.contains("<a class=\"pl-poster-link\" href=\"/a.mp4/animated.mp4?length=15&amp;width=480&amp;height=270\">"))
        #expect(html.contains("alt=\"A &quot;1&quot;\""))
        #expect(html.contains("style=\"background-color: #12ab34\"") && !html.contains("red;x:y"))
        #expect(html.components(separatedBy: "aria-label=\"Play video\"").count == 2)
        #expect(html.contains("aria-label=\"Capture still\""))
        #expect(html.contains("<style>") && html.contains("<script>") && !html.contains("feed.js"))
        page.assets = .files
        let files = page.html()
        #expect(files.contains("<link rel=\"stylesheet\" href=\"feed.css\">") && files.contains("<script src=\"feed.js\"></script>"))
        #expect(!files.contains("<style>"))
        #expect(!files.contains(FeedPage.storyboardsID), "no track carried, no data element")
    }

    @Test("Carried storyboard tracks are JSON in a script element that no name or cue can end or comment out")
    func carriedTracks() throws {
        let hostile = "</script><script>alert(1)</script><!--<script>--> & \u{2028}\u{2029} \"q\" \\ é \u{1}"
        let track = "WEBVTT\n\n00:00:00.000 --> 00:00:02.000\n" + hostile + "#xywh=0,0,160,90\n"
        var page = FeedPage(title: hostile, cards: [
            FeedPage.Card(title: hostile, name: hostile, posters: ["a/poster.jpg"], video: "a/hover.mp4",
                          storyboard: "a/</SCRIPT ><!--.vtt", storyboardTrack: track),
            FeedPage.Card(title: "B", name: "b", posters: ["b/poster.jpg"], storyboard: "b/thumbnails.vtt"),
        ])
        page.assets = .files
        let html = page.html()
        let open = "<script type=\"application/json\" id=\"\(FeedPage.storyboardsID)\">"
        let start = try #require(html.range(of: open)).upperBound
        let end = try #require(html[start...].range(of: "</script>")).lowerBound
        let data = String(html[start..<end])
        // No `<` at all: nothing in it can end the element, in any case, or start a comment or a tag.
        #expect(!data.contains("<") && !data.contains(">") && !data.contains("&"), "\(data)")
        #expect(!data.unicodeScalars.contains("\u{2028}") && !data.unicodeScalars.contains("\u{2029}"))
        let decoded = try JSONDecoder().decode([String: String].self, from: Data(data.utf8))
        #expect(decoded == ["a/</SCRIPT ><!--.vtt": track], "the carried track reads back whole; a card without one is not there")
        // The rest of the page: the data element, then feed.js, the only two script elements.
        #expect(html.components(separatedBy: "<script").count == 3)
        #expect(html[end...].hasPrefix("</script>\n<script src=\"feed.js\"></script>"))
        #expect(FeedPage.scriptData(.string("</script><!--&\u{2028}")) == #""\u003c/script\u003e\u003c!--\u0026\u2028""#)
    }
}
