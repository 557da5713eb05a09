import Foundation
import Glibc
import Testing
import PreviewLoopCLI
import PreviewLoopJobs
@testable import PreviewLoopServer
import PreviewLoopTestSupport

/// The feed page without a browser: `GET /` on a live server, read back by Python's `html.parser` (an
/// HTML parser that is not ours), its URLs fetched from the server; signed URLs, the page's query and
/// its problems, manifest titles and odd file names; and `batch export-page`'s files. The page's
/// behaviour in a real browser is `make feed-check` (Scripts/feed-check.py).
@Suite("feed: the page on serve and its static export", .serialized, .timeLimit(.minutes(10)))
struct FeedTests {
    /// What Python's `html.parser` reads from a page: the cards' attributes, poster attributes and
    /// captions, the buttons' names, and the page's `<body>` attributes.
    struct ParsedPage: Decodable {
        struct Card: Decodable {
            var attributes: [String: String]
            var poster: [String: String]
            var link: String?
            var caption: String
            var buttons: [String]
        }
        var body: [String: String]
        var cards: [Card]
        var scripts: Int
        /// The text of each `<script type="application/json">` element.
        var data: [String]
    }

    static let parser = """
    import html.parser, json, sys
    class Reader(html.parser.HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.body, self.cards, self.scripts, self.caption, self.data, self.inData = {}, [], 0, None, [], None
        def handle_starttag(self, tag, attrs):
            a = {k: (v if v is not None else "") for k, v in attrs}
            classes = a.get("class", "").split()
            if tag == "body": self.body = a
            if tag == "script": self.scripts += 1
            if tag == "script" and a.get("type") == "application/json": self.inData = ""
            if "pl-card" in classes: self.cards.append({"attributes": a, "poster": {}, "link": None, "caption": "", "buttons": []})
            if tag == "img" and self.cards: self.cards[-1]["poster"] = a
            if tag == "a" and self.cards and "pl-poster-link" in classes: self.cards[-1]["link"] = a.get("href")
            if tag == "button" and self.cards: self.cards[-1]["buttons"].append(a.get("aria-label", ""))
            if "pl-title" in classes: self.caption = ""
        def handle_data(self, data):
            if self.caption is not None: self.caption += data
            if self.inData is not None: self.inData += data
        def handle_endtag(self, tag):
            if tag == "script" and self.inData is not None:
                self.data.append(self.inData)
                self.inData = None
            if tag == "p" and self.caption is not None and self.cards:
                self.cards[-1]["caption"] = self.caption
                self.caption = None
    reader = Reader()
    reader.feed(sys.stdin.read())
    print(json.dumps({"body": reader.body, "cards": reader.cards, "scripts": reader.scripts, "data": reader.data}))
    """

    static func parse(_ page: String) throws -> ParsedPage {
        let result = try Child.tool("python3", ["-c", parser], input: .piped(Data(page.utf8)))
        return try JSONDecoder().decode(ParsedPage.self, from: Data(result.stdoutText.utf8))
    }

    /// The path a page URL names, without its query (`/sub%20dir/clip.mp4/thumbnail.jpg`).
    static func path(_ url: String) -> String { String(url.split(separator: "?", maxSplits: 1).first ?? "") }

    @Test("GET / lists the root's videos as cards whose URLs the server answers; names and odd bytes are escaped")
    func pageOfRoot() throws {
        try ServeTests.withServer { base, root in
            // A name with markup and quotes, and one with a byte that is not UTF-8.
            let odd = root + "/<b>\"Tom & 'Jerry'\".mp4"
            try FileManager.default.copyItem(atPath: root + "/landscape.mp4", toPath: odd)
            let badName = Array((root + "/bad").utf8) + [0xFF] + Array(".mp4".utf8) + [0]
            #expect(badName.withUnsafeBufferPointer { link(root + "/landscape.mp4", UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self)) } == 0)
            let reply = try ServeTests.fetch(base + "/")
            #expect(reply.status == 200)
            #expect(reply.headers["content-type"] == "text/html; charset=utf-8")
            let page = try Self.parse(reply.text)
            let captions = page.cards.map(\.caption)
            // Videos only (notes.mp4 is listed by its name, as batch lists it; the link out of the root is not).
            #expect(captions.contains("<b>\"Tom & 'Jerry'\".mp4"), "\(captions)")
            #expect(captions.contains("bad\\xff.mp4"), "\(captions)")
            #expect(captions.contains("clip é.mp4") && captions.contains("landscape.mp4"), "\(captions)")
            #expect(!captions.contains("outside.mp4"))
            #expect(!reply.text.contains("<b>\""), "markup in a name is escaped")
            #expect(page.scripts == 1 && page.body["data-preview-length"] == "15" && page.body["data-max-playing"] == "3")
            for card in page.cards {
                #expect(card.poster["alt"] == card.caption)
                #expect(card.poster["loading"] == "lazy")
                #expect(card.buttons == ["Play video", "Close video", "Capture still"])
                #expect((card.poster["srcset"] ?? "").hasSuffix(" 3x"))
            }
            // Each URL of the landscape card and of the odd names is served.
            for caption in ["landscape.mp4", "clip é.mp4", "bad\\xff.mp4", "<b>\"Tom & 'Jerry'\".mp4"] {
                let card = try #require(page.cards.first { $0.caption == caption })
                for url in [card.poster["src"], card.attributes["data-storyboard"], card.attributes["data-probe"]].compactMap({ $0 }) {
                    let served = try ServeTests.fetch(base + url)
                    #expect(served.status == 200, "\(url): \(served.text)")
                }
                #expect(card.link == card.attributes["data-video"])
            }
            let landscape = try #require(page.cards.first { $0.caption == "landscape.mp4" })
            #expect(Self.path(landscape.poster["src"] ?? "") == "/landscape.mp4/thumbnail.jpg")
            let poster = try ServeTests.fetch(base + (landscape.poster["src"] ?? ""))
            #expect(poster.headers["content-type"] == "image/jpeg")
            let video = try ServeTests.fetch(base + (landscape.attributes["data-video"] ?? ""))
            #expect(video.status == 200 && video.headers["content-type"] == "video/mp4", "\(video.text)")
            let clip = try #require(page.cards.first { $0.caption == "clip é.mp4" })
            #expect(Self.path(clip.poster["src"] ?? "") == "/sub%20dir/clip%20%C3%A9.mp4/thumbnail.jpg")
        }
    }

    @Test("A file no URL can name gets no card; every card listed loads; bidi controls in titles are neutralised, the file still served")
    func unservableNames() throws {
        try ServeTests.withServer { base, root in
            let manager = FileManager.default
            // A newline, a tab and a backslash in a name; a 1.5 KB path of accented letters (4.5 KB encoded).
            for name in ["new\nline.mp4", "tab\tname.mp4", "back\\slash.mp4", "evil\u{202E}4pm.mp4"] {
                try manager.copyItem(atPath: root + "/landscape.mp4", toPath: root + "/" + name)
            }
            var deep = root
            for _ in 0..<6 { deep += "/" + String(repeating: "é", count: 125) }
            try manager.createDirectory(atPath: deep, withIntermediateDirectories: true)
            try manager.copyItem(atPath: root + "/landscape.mp4", toPath: deep + "/deep.mp4")
            #expect(String(deep.dropFirst(root.count)).utf8.count > 1500)

            let reply = try ServeTests.fetch(base + "/")
            #expect(reply.status == 200)
            let page = try Self.parse(reply.text)
            let captions = page.cards.map(\.caption)
            for gone in ["new", "tab", "back", "deep"] {
                #expect(!captions.contains { $0.hasPrefix(gone) }, "\(gone): \(captions)")
            }
            #expect(captions.contains("landscape.mp4"), "\(captions)")
            // Every card listed loads (notes.mp4 is text: its card is there and its poster is a 415, as batch would fail it).
            for card in page.cards where card.caption != "notes.mp4" {
                let poster = try #require(card.poster["src"])
                #expect(poster.utf8.count < 4096)
                let served = try ServeTests.fetch(base + poster)
                #expect(served.status == 200, "\(card.caption): \(poster): \(served.text)")
            }
            // The right-to-left override is shown as U+FFFD, nowhere as itself; its URL names the file.
            #expect(!reply.text.unicodeScalars.contains { FeedPage.isBidiControl($0) }, "a bidi control on the page")
            let evil = try #require(page.cards.first { $0.caption == "evil\u{FFFD}4pm.mp4" }, "\(captions)")
            #expect(evil.poster["alt"] == "evil\u{FFFD}4pm.mp4")
            #expect(Self.path(evil.poster["src"] ?? "") == "/evil%E2%80%AE4pm.mp4/thumbnail.jpg")
            #expect(try ServeTests.fetch(base + (evil.attributes["data-probe"] ?? "")).status == 200)
        }
        // A manifest naming such a path stops the start, naming the line.
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let manifest = folder + "/feed.jsonl"
        for (line, expected) in [(#"{"path": "a\u0000.mp4"}"#, "U+0000"), (#"{"path": "new\nline.mp4"}"#, "U+000A"),
                                 (#"{"preview_length": "3"}"#, "no \"path\"")] {
            try Data("{\"path\": \"landscape.mp4\"}\n\(line)\n".utf8).write(to: URL(fileURLWithPath: manifest))
            var options = ServeCommand(root: folder)
            options.feedManifest = manifest
            #expect { _ = try PreviewServer(options: options, accessLog: nil) } throws: { error in
                let message = (error as? ServerStartError)?.message ?? ""
                return message.contains("feed.jsonl: line 2: ") && message.contains(expected) && !message.contains("\n")
            }
        }
    }

    @Test("The page's query: preview_length, aspect and max_playing set the page; a bad or unknown one is a 400 problem")
    func pageQuery() throws {
        try ServeTests.withServer({ $0.feed.previewLength = 7 }) { base, _ in
            let page = try Self.parse(try ServeTests.fetch(base + "/").text)
            #expect(page.body["data-preview-length"] == "7")
            let video = try #require(page.cards.first?.attributes["data-video"])
            #expect(video.contains("length=7&"), "\(video)")
            let custom = try Self.parse(try ServeTests.fetch(base + "/?preview_length=3&aspect=4:3&max_playing=2").text)
            #expect(custom.body["data-preview-length"] == "3" && custom.body["data-max-playing"] == "2")
            #expect(custom.body["style"] == "--pl-aspect: 480 / 360")
            let card = try #require(custom.cards.first)
            #expect(card.poster["width"] == "480" && card.poster["height"] == "360")
            #expect(card.attributes["data-video"]?.contains("length=3&width=480&height=360") == true, "\(card.attributes)")
            // Past the animation cap (10 s) the file is 10 s long; the page still seeks back every 30 s.
            let long = try Self.parse(try ServeTests.fetch(base + "/?preview_length=30").text)
            #expect(long.body["data-preview-length"] == "30" && long.cards.first?.attributes["data-video"]?.contains("length=10&") == true)
            let bad: [(query: String, parameter: String)] = [
                ("preview_length=0", "preview_length"), ("preview_length=abc", "preview_length"), ("preview_length=-3", "preview_length"),
                ("preview_length=99999", "preview_length"), ("preview_length=nan", "preview_length"),
                ("preview_length=3&preview_length=4", "preview_length"), ("aspect=0:9", "aspect"), ("aspect=100", "aspect"),
                ("max_playing=0", "max_playing"), ("max_playing=17", "max_playing"), ("width=3", "width"),
            ]
            for (query, parameter) in bad {
                let reply = try ServeTests.fetch(base + "/?" + query)
                #expect(reply.status == 400 && reply.headers["content-type"] == "application/problem+json", "\(query): \(reply.text)")
                let problem = try JSONSerialization.jsonObject(with: reply.body) as? [String: Any]
                #expect(problem?["parameter"] as? String == parameter, "\(query): \(reply.text)")
            }
        }
        try ServeTests.withServer({ $0.isFeedEnabled = false }) { base, _ in
            let reply = try ServeTests.fetch(base + "/")
            #expect(reply.status == 404 && reply.headers["content-type"] == "application/problem+json")
        }
    }

    @Test("A manifest sets the cards, their order, titles and preview lengths; a clip missing or outside the root is left out")
    func manifestTitles() throws {
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let manifest = folder + "/feed.jsonl"
        try Data("""
        {"path": "sub dir/clip é.mp4", "title": "Clip <é> & \\"friends\\"", "preview_length": 4.5}
        {"path": "missing.mp4", "title": "Gone"}
        {"path": "outside.mp4"}
        {"path": "landscape.mp4"}

        """.utf8).write(to: URL(fileURLWithPath: manifest))
        try ServeTests.withServer({ $0.feedManifest = manifest }) { base, _ in
            let page = try Self.parse(try ServeTests.fetch(base + "/").text)
            #expect(page.cards.map(\.caption) == ["Clip <é> & \"friends\"", "landscape.mp4"])
            #expect(page.cards.first?.attributes["data-preview-length"] == "4.5")
            #expect(page.cards.first?.attributes["data-video"]?.contains("length=4.5&") == true)
        }
        // A manifest that cannot be read or parsed stops the start with one line naming it.
        try Data("{\"path\": \"../x.mp4\"}\n".utf8).write(to: URL(fileURLWithPath: manifest))
        var options = ServeCommand(root: folder)
        options.feedManifest = manifest
        #expect { _ = try PreviewServer(options: options, accessLog: nil) } throws: { error in
            "\((error as? ServerStartError)?.message ?? "")".contains("feed.jsonl: line 1")
        }
    }

    @Test("Signed URLs: / needs a signature, and every URL on the page is signed with the page's expiry and served")
    func signedPage() throws {
        let keyFolder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: keyFolder) }
        let keyFile = keyFolder + "/key.txt"
        try Data("correct horse battery staple\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        try ServeTests.withServer({ $0.signingKeyFile = keyFile }) { base, _ in
            #expect(try ServeTests.fetch(base + "/").status == 403)
            let expires = Int(Date().timeIntervalSince1970) + 600
            let query = "expires=\(expires)&preview_length=3"
            // Python's hmac, as Docs/serve.md signs.
            let script = """
            import hashlib, hmac, sys
            key = open(sys.argv[1], "rb").read().removesuffix(b"\\n")
            print(hmac.new(key, f"/?{sys.argv[2]}".encode(), hashlib.sha256).hexdigest())
            """
            let signature = try Child.tool("python3", ["-c", script, keyFile, query]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
            let reply = try ServeTests.fetch("\(base)/?\(query)&signature=\(signature)")
            #expect(reply.status == 200, "\(reply.text)")
            let page = try Self.parse(reply.text)
            #expect(!page.cards.isEmpty)
            for card in page.cards {
                #expect(card.buttons == ["Play video", "Close video"], "no capture: its URLs could not be signed")
                #expect(card.attributes["data-still"] == nil && card.attributes["data-record"] == nil)
                for url in [card.poster["src"], card.attributes["data-video"], card.attributes["data-storyboard"]].compactMap({ $0 }) {
                    #expect(url.contains("expires=\(expires)&signature="), "\(url)")
                }
            }
            let landscape = try #require(page.cards.first { $0.caption == "landscape.mp4" })
            for url in [landscape.poster["src"], landscape.attributes["data-storyboard"]].compactMap({ $0 }) {
                let served = try ServeTests.fetch(base + url)
                #expect(served.status == 200, "\(url): \(served.text)")
            }
            let srcset = landscape.poster["srcset"] ?? ""
            let twice = try #require(srcset.split(separator: ",").dropFirst().first?.split(separator: " ").first)
            #expect(try ServeTests.fetch(base + twice).status == 200)
        }
    }

    /// A video's display size by the ffmpeg CLI's ffprobe: the coded size, turned by its rotation.
    static func displaySize(_ path: String) throws -> (width: Int, height: Int) {
        let out = try Child.tool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                             "stream=width,height:stream_side_data=rotation", "-of", "default=nw=1", path]).stdoutText
        var values: [String: Int] = [:]
        for line in out.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Int(parts[1]) { values[String(parts[0])] = value }
        }
        let width = values["width"] ?? 0, height = values["height"] ?? 0
        return (values["rotation"] ?? 0) % 180 == 0 ? (width, height) : (height, width)
    }

    @Test("Each card takes its clip's shape (ffprobe's display size) within min_aspect and max_aspect; aspect gives all one shape")
    func cardShapes() throws {
        try ServeTests.withServer { base, root in
            try FileManager.default.copyItem(atPath: TestPaths.fixture("portrait-phone.mp4"), toPath: root + "/portrait-phone.mp4")
            let page = try Self.parse(try ServeTests.fetch(base + "/").text)
            for name in ["portrait-phone.mp4", "landscape.mp4"] {
                let clip = try Self.displaySize(root + "/" + name)
                let card = try #require(page.cards.first { $0.caption == name })
                let width = try #require(Int(card.poster["width"] ?? "")), height = try #require(Int(card.poster["height"] ?? ""))
                #expect((height > width) == (clip.height > clip.width), "\(name): a \(width)x\(height) card for a \(clip) clip")
                #expect(abs(Double(width) / Double(height) / (Double(clip.width) / Double(clip.height)) - 1) < 0.02, "\(name)")
                #expect(max(width, height) == FeedPage.cardWidth)
                // The poster the page asks for is that shape: nothing of the picture cut off.
                let poster = try ServeTests.fetch(base + (card.poster["src"] ?? ""))
                #expect(poster.status == 200)
                let file = TestPaths.temporaryDirectory() + "/poster.jpg"
                defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
                try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try poster.body.write(to: URL(fileURLWithPath: file))
                let made = try WebOracle.probe(file)
                #expect(made.width == width && made.height == height, "\(name): poster \(made.width)x\(made.height)")
                // Its render is cached now: the next page paints the poster's colour in the card at once.
                let colour = try #require(poster.headers["dominant-color"])
                let again = try Self.parse(try ServeTests.fetch(base + "/").text)
                #expect(again.cards.first { $0.caption == name }?.attributes["style"] == "background-color: \(colour)")
                #expect(again.cards.allSatisfy { $0.attributes["data-placeholder"] == nil }, "no second request a card")
            }
            let fixed = try Self.parse(try ServeTests.fetch(base + "/?aspect=16:9").text)
            #expect(fixed.cards.allSatisfy { $0.poster["width"] == "480" && $0.poster["height"] == "270" })
            let square = try Self.parse(try ServeTests.fetch(base + "/?max_aspect=1&min_aspect=1").text)
            #expect(square.cards.allSatisfy { $0.poster["width"] == "480" && $0.poster["height"] == "480" })
            let wrong = try ServeTests.fetch(base + "/?min_aspect=2&max_aspect=1")
            #expect(wrong.status == 400 && wrong.text.contains("min_aspect"))
        }
    }

    @Test("A default batch exports posters at twice their card with a 2x srcset and a hover MP4; a lesser recipe is named")
    func defaultExport() throws {
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clips = folder + "/clips"
        try FileManager.default.createDirectory(atPath: clips, withIntermediateDirectories: true)
        for name in ["portrait-phone.mp4", "landscape.mp4"] {
            try FileManager.default.copyItem(atPath: TestPaths.fixture(name), toPath: clips + "/" + name)
        }
        let out = folder + "/out"
        let batch = try Child.cli(["batch", clips, "--out", out, "--quiet"])
        #expect(batch.status == 0, "\(batch.stderr)")
        let export = try Child.cli(["batch", "export-page", out])
        #expect(export.status == 0 && export.stderr.isEmpty, "\(export.stderr)")
        let page = try Self.parse(try String(contentsOfFile: out + "/index.html", encoding: .utf8))
        #expect(page.cards.count == 2)
        for card in page.cards {
            let source = try #require(card.poster["src"])
            #expect(card.poster["srcset"] == source + " 2x", "\(card.poster)")
            let width = try #require(Int(card.poster["width"] ?? "")), height = try #require(Int(card.poster["height"] ?? ""))
            let made = try WebOracle.probe(out + "/" + source)
            #expect(made.width >= 2 * width && made.height >= 2 * height - 2, "\(card.caption): \(made.width)x\(made.height) for \(width)x\(height)")
            let clip = try Self.displaySize(clips + "/" + card.caption + ".mp4")
            #expect((height > width) == (clip.height > clip.width), "\(card.caption)")
            let video = try #require(card.attributes["data-video"])
            let hover = try WebOracle.probe(out + "/" + video)
            #expect(video.hasSuffix("hover.mp4") && hover.codec == "h264")
            #expect(card.buttons.first == "Play video")
        }
        // Made with a recipe of a small poster and no hover: the export says which keys to add.
        let recipe = folder + "/recipe.json"
        try Data(#"{"poster": {}}"#.utf8).write(to: URL(fileURLWithPath: recipe))
        let small = folder + "/small"
        #expect(try Child.cli(["batch", clips, "--out", small, "--recipe", recipe, "--quiet"]).status == 0)
        let lesser = try Child.cli(["batch", "export-page", small])
        #expect(lesser.status == 0)
        let lines = lesser.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains(#""poster": {"size": "960x540"}"#) && lines[0].contains(#""hover": {}"#),
                "\(lesser.stderr)")
    }

    @Test("batch export-page writes index.html, feed.css and feed.js whose relative URLs name batch's files")
    func staticExport() throws {
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recipe = folder + "/recipe.json"
        try Data(#"{"poster": {}, "sprites": {"every": 1}, "hover": {"length": 2}}"#.utf8).write(to: URL(fileURLWithPath: recipe))
        try Data("\(TestPaths.fixture("landscape.mp4"))\n\(TestPaths.fixture("card.mp4"))\n".utf8)
            .write(to: URL(fileURLWithPath: folder + "/clips.txt"))
        let out = folder + "/out"
        let batch = try Child.cli(["batch", folder + "/clips.txt", "--out", out, "--recipe", recipe, "--quiet"])
        #expect(batch.status == 0, "\(batch.stderr)")
        let export = try Child.cli(["batch", "export-page", out])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdoutText.contains("index.html (2 clips)"))
        let html = try String(contentsOfFile: out + "/index.html", encoding: .utf8)
        let page = try Self.parse(html)
        #expect(page.cards.map(\.caption) == ["card", "landscape"])
        for card in page.cards {
            for url in [card.poster["src"], card.attributes["data-video"], card.attributes["data-storyboard"]] {
                let relative = try #require(url)
                #expect(!relative.hasPrefix("/") && !relative.contains("://"), "\(relative)")
                #expect(FileManager.default.fileExists(atPath: out + "/" + relative), "\(relative)")
            }
            #expect(card.buttons == ["Play video", "Close video"], "no capture without a server")
            #expect((card.attributes["style"] ?? "").hasPrefix("background-color: #"), "the poster's dominant colour")
        }
        #expect(try String(contentsOfFile: out + "/feed.js", encoding: .utf8) == FeedPage.script)
        #expect(try String(contentsOfFile: out + "/feed.css", encoding: .utf8) == FeedPage.styleSheet)
        #expect(html.contains("<script src=\"feed.js\"></script>") && html.contains("href=\"feed.css\""))
        // The page carries each card's storyboard track, the file's text, so that no fetch is needed.
        #expect(page.scripts == 2 && page.data.count == 1)
        let carried = try JSONDecoder().decode([String: String].self, from: Data((page.data.first ?? "").utf8))
        for card in page.cards {
            let storyboard = try #require(card.attributes["data-storyboard"])
            #expect(carried[storyboard] == (try String(contentsOfFile: out + "/" + storyboard, encoding: .utf8)), "\(storyboard)")
        }
        // Again: its own files are replaced. A user's index.html is never touched.
        #expect(try Child.cli(["batch", "export-page", out]).status == 0)
        try Data("<p>mine</p>\n".utf8).write(to: URL(fileURLWithPath: out + "/index.html"))
        let refused = try Child.cli(["batch", "export-page", out])
        #expect(refused.status == 1 && refused.stderr.contains("index.html: a file this command did not write"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: out + "/index.html", encoding: .utf8) == "<p>mine</p>\n")
        // Usage errors.
        #expect(try Child.cli(["batch", "export-page"]).status == 64)
        #expect(try Child.cli(["batch", "export-page", out, "--jobs", "2"]).status == 64)
        let empty = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let nothing = try Child.cli(["batch", "export-page", empty])
        #expect(nothing.status == 1 && nothing.stderr.hasPrefix("Error: "), "\(nothing.stderr)")
    }

    @Test("The export carries a storyboard track as JSON that markup in it cannot break out of; an unusable track is left out with a warning")
    func carriedStoryboards() throws {
        let folder = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recipe = folder + "/recipe.json"
        try Data(#"{"poster": {}, "sprites": {"every": 1}}"#.utf8).write(to: URL(fileURLWithPath: recipe))
        try Data("\(TestPaths.fixture("landscape.mp4"))\n\(TestPaths.fixture("card.mp4"))\n".utf8)
            .write(to: URL(fileURLWithPath: folder + "/clips.txt"))
        let out = folder + "/out"
        let batch = try Child.cli(["batch", folder + "/clips.txt", "--out", out, "--recipe", recipe, "--quiet"])
        #expect(batch.status == 0, "\(batch.stderr)")
        // A track whose cue would end the script element, open a comment and start a script of its own.
        let hostile = "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n</script><script>alert(1)</script><!--<script>x & y\u{2028}\"\\é"
            + "#xywh=0,0,160,90\n"
        let tracks = try FileManager.default.subpathsOfDirectory(atPath: out).filter { $0.hasSuffix("thumbnails.vtt") }.sorted()
        #expect(tracks.count == 2, "\(tracks)")
        try Data(hostile.utf8).write(to: URL(fileURLWithPath: out + "/" + tracks[0]))
        try Data("not a track\n".utf8).write(to: URL(fileURLWithPath: out + "/" + tracks[1]))
        let export = try Child.cli(["batch", "export-page", out])
        #expect(export.status == 0, "\(export.stderr)")
        // Its one warning about tracks (the other line names what this recipe lacks for the page).
        #expect(export.stderr.split(separator: "\n").filter { !$0.contains("to the recipe") }
                    == ["Warning: \(out)/\(tracks[1]): not a WebVTT file; the page does not carry that storyboard "
                        + "(scrubbing it works on a host, not from file://)"], "\(export.stderr)")
        let html = try String(contentsOfFile: out + "/index.html", encoding: .utf8)
        let page = try Self.parse(html)
        #expect(page.scripts == 2, "the data and feed.js, no script from the track")
        let carried = try JSONDecoder().decode([String: String].self, from: Data((page.data.first ?? "").utf8))
        #expect(carried == [tracks[0]: hostile], "the hostile track reads back whole; the other is not carried")
        #expect(page.cards.allSatisfy { $0.attributes["data-storyboard"] != nil }, "both keep their track's URL")
    }
}
