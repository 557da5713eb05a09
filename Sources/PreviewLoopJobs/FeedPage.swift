import PreviewLoop

/// The feed page: a grid of preview cards, each a poster with a play button that opens its muted
/// preview in place through the card's reveal (Feed/feed.css, Feed/feed.js). `serve` answers `/` with
/// one whose URLs are its routes; `batch export-page` writes one over a batch output folder.
///
/// Without JavaScript the page is a grid of posters, each a link to its preview.
package struct FeedPage: Sendable, Equatable {
    /// One card: what it shows and the URLs its script uses (already escaped for a URL; the page
    /// escapes them for HTML).
    package struct Card: Sendable, Equatable {
        /// The poster's `alt` and the caption: shown as text, escaped.
        package var title: String
        /// The stem of a capture's file name.
        package var name: String
        /// The poster at 1x, 2x and 3x the card's size (the first is `src`); one entry for a single size.
        package var posters: [String]
        /// The pixel density of the first of ``posters`` (each next one is 1 more): 2 for a single poster
        /// at twice the card's size, listed in `srcset` as `2x`.
        package var posterDensity = 1
        /// The card's own shape, width ÷ height (its clip's); `nil` for the page's ``FeedPage/aspectRatio``.
        package var aspectRatio: Double?
        /// The preview `<video>` plays and the poster links to; `nil` for a card without one.
        package var video: String?
        /// A WebVTT storyboard track (`#xywh=` cues) for scrubbing.
        package var storyboard: String?
        /// The storyboard track's text, carried in the page so that scrubbing needs no fetch (a static
        /// export: a page opened from `file://` may not fetch); `nil` to fetch ``storyboard``. Its tiles'
        /// URLs stay relative to ``storyboard``.
        package var storyboardTrack: String?
        /// `probe.json`, for a capture's full size.
        package var probe: String?
        /// `thumbnail.jpg` without `time`: a tap on the capture button adds `time` and `accuracy`.
        package var still: String?
        /// `animated.mp4` without `start` and `length`: a held capture adds them.
        package var record: String?
        /// A JSON route whose `dominant_color` paints the card before the poster arrives.
        package var placeholder: String?
        /// The poster's dominant colour, `#rrggbb`, painted behind it while it loads.
        package var color: String?
        /// Seconds between the preview's seeks back to its start, when it differs from the page's.
        package var previewLength: Double?

        package init(title: String, name: String, posters: [String], video: String? = nil, storyboard: String? = nil,
                     storyboardTrack: String? = nil, probe: String? = nil, still: String? = nil, record: String? = nil,
                     placeholder: String? = nil, color: String? = nil, previewLength: Double? = nil) {
            self.title = title
            self.name = name
            self.posters = posters
            self.video = video
            self.storyboard = storyboard
            self.storyboardTrack = storyboardTrack
            self.probe = probe
            self.still = still
            self.record = record
            self.placeholder = placeholder
            self.color = color
            self.previewLength = previewLength
        }
    }

    /// Where the style and the script are: in the page, or files beside it.
    package enum Assets: Sendable, Equatable {
        /// `<style>` and `<script>` in the page (`serve`: one response, nothing more to sign).
        case inline
        /// `feed.css` and `feed.js` beside `index.html` (a static export, cached by the host).
        case files
    }

    /// The page's heading and `<title>`.
    package var title: String
    package var cards: [Card]
    /// The cards' shape, width ÷ height.
    package var aspectRatio = CardStyle.defaultAspectRatio
    /// Seconds between the preview's seeks back to its start (the PlayerView loop).
    package var previewLength = FeedPage.defaultPreviewLength
    /// Previews playing at once at most; starting one more stops the oldest.
    package var maxPlaying = FeedPage.defaultMaxPlaying
    /// The longest recording a held capture asks for, seconds (the server's animation cap).
    package var recordMaxLength = AnimationCaps().seconds
    package var assets = Assets.inline

    /// 15 s, PlayerView's `previewLength`.
    package static let defaultPreviewLength = 15.0
    /// The range `preview_length` and `--preview-length` accept, seconds.
    package static let previewLengthRange = 0.5...3600.0
    /// Three previews at once.
    package static let defaultMaxPlaying = 3
    /// The range `max_playing` accepts.
    package static let maxPlayingRange = 1...16
    /// The most cards one page lists (in path order); a larger library is better served by a manifest.
    package static let maxCards = 2000
    /// The card's long side in CSS pixels at its largest (its width for a landscape card, its height for
    /// a portrait one); posters are made at 1x, 2x and 3x of it.
    package static let cardWidth = 480
    /// Marks a file this page wrote, so that an export replaces only its own files.
    package static let generator = "preview-loop feed"

    package init(title: String, cards: [Card]) {
        self.title = title
        self.cards = cards
    }

    /// The style sheet (Feed/feed.css), as the binary carries it.
    package static let styleSheet = String(decoding: PackageResources.feed_css, as: UTF8.self)
    /// The script (Feed/feed.js), as the binary carries it.
    package static let script = String(decoding: PackageResources.feed_js, as: UTF8.self)

    /// The card's size in pixels at `width` for `aspectRatio`, both sides even (H.264 needs it) and at
    /// most `maxSide`.
    package static func cardSize(width: Int = cardWidth, aspectRatio: Double, maxSide: Int = .max) -> Size {
        let ratio = CardStyle.usableAspectRatio(aspectRatio)
        var size = CardStyle.size(width: width, aspectRatio: ratio, even: true)
        guard max(size.width, size.height) > maxSide else { return size }
        // The long side at the cap, the other from the ratio, each the nearest even number.
        func even(_ value: Double) -> Int { max(2, min(maxSide & ~1, Int((value / 2).rounded()) * 2)) }
        if size.width >= size.height {
            size = Size(width: maxSide & ~1, height: even(Double(maxSide & ~1) / ratio))
        } else {
            size = Size(width: even(Double(maxSide & ~1) * ratio), height: maxSide & ~1)
        }
        return size
    }

    /// The card's size for `aspectRatio`: `longSide` (480) on its long side — 480x270 at 16:9, 270x480
    /// at 9:16, 480x360 at 4:3 — both sides even and at most `maxSide`.
    package static func cardBox(longSide: Int = cardWidth, aspectRatio: Double, maxSide: Int = .max) -> Size {
        let ratio = CardStyle.usableAspectRatio(aspectRatio)
        let width = ratio >= 1 ? longSide : max(2, Int((Double(longSide) * ratio / 2).rounded()) * 2)
        return cardSize(width: width, aspectRatio: ratio, maxSide: maxSide)
    }

    /// The whole page.
    package func html() -> String {
        var page = "<!DOCTYPE html>\n<html lang=\"en\" class=\"pl-nojs\">\n<head>\n<meta charset=\"utf-8\">\n"
        page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        page += "<meta name=\"generator\" content=\"\(Self.generator)\">\n"
        page += "<title>\(Self.escaped(title))</title>\n<link rel=\"icon\" href=\"data:,\">\n"
        switch assets {
        case .inline: page += "<style>\n\(Self.styleSheet)</style>\n"
        case .files: page += "<link rel=\"stylesheet\" href=\"feed.css\">\n"
        }
        page += "</head>\n"
        let size = Self.cardBox(aspectRatio: aspectRatio)
        page += "<body data-preview-length=\"\(Format.limit(previewLength))\" data-max-playing=\"\(maxPlaying)\""
            + " data-record-max-length=\"\(Format.limit(recordMaxLength))\" style=\"--pl-aspect: \(size.width) / \(size.height)"
            + (size.width == Self.cardWidth ? "" : "; --pl-width: \(size.width)px") + "\">\n"
        page += "<header class=\"pl-header\"><h1>\(Self.escaped(title))</h1></header>\n"
        page += "<main>\n<ul class=\"pl-feed\">\n"
        for card in cards { page += item(card, size: card.aspectRatio.map { Self.cardBox(aspectRatio: $0) } ?? size, pageSize: size) }
        page += "</ul>\n</main>\n"
        page += "<noscript><p class=\"pl-header\">Each poster links to its preview.</p></noscript>\n"
        var tracks: [String: JSONValue] = [:]
        for card in cards {
            if let url = card.storyboard, let track = card.storyboardTrack { tracks[url] = .string(track) }
        }
        if !tracks.isEmpty {
            page += "<script type=\"application/json\" id=\"\(Self.storyboardsID)\">\(Self.scriptData(.object(tracks)))</script>\n"
        }
        switch assets {
        case .inline: page += "<script>\n\(Self.script)</script>\n"
        case .files: page += "<script src=\"feed.js\"></script>\n"
        }
        page += "</body>\n</html>\n"
        return page
    }

    private func item(_ card: Card, size: Size, pageSize: Size) -> String {
        var attributes = "class=\"pl-card\" data-state=\"poster\" data-name=\"\(Self.escaped(card.name))\""
        let urls: [(String, String?)] = [
            ("video", card.video), ("storyboard", card.storyboard), ("probe", card.probe), ("still", card.still),
            ("record", card.record), ("placeholder", card.placeholder),
        ]
        for (name, url) in urls {
            if let url { attributes += " data-\(name)=\"\(Self.escaped(url))\"" }
        }
        if let length = card.previewLength { attributes += " data-preview-length=\"\(Format.limit(length))\"" }
        if let color = card.color, Self.isColor(color) { attributes += " style=\"background-color: \(color)\"" }
        // A card of its own shape carries its size (the style sheet's --pl-aspect and --pl-width).
        let shape = size == pageSize ? "" : " style=\"--pl-aspect: \(size.width) / \(size.height); --pl-width: \(size.width)px\""
        var html = "<li class=\"pl-item\"\(shape)>\n<div \(attributes)>\n"
        let source = card.posters.first ?? ""
        var image = "<img class=\"pl-poster\" src=\"\(Self.escaped(source))\""
        if card.posters.count > 1 || card.posterDensity > 1 {
            let set = card.posters.enumerated().map { "\(Self.escaped($0.element)) \($0.offset + card.posterDensity)x" }.joined(separator: ", ")
            image += " srcset=\"\(set)\""
        }
        image += " width=\"\(size.width)\" height=\"\(size.height)\" alt=\"\(Self.escaped(card.title))\" loading=\"lazy\" decoding=\"async\">"
        if let video = card.video {
            html += "<a class=\"pl-poster-link\" href=\"\(Self.escaped(video))\">\(image)</a>\n"
            html += "<div class=\"pl-scrub\"></div>\n<div class=\"pl-stage\"></div>\n"
            html += "<button type=\"button\" class=\"pl-play\" aria-label=\"Play video\">" + Self.playGlyph + "</button>\n"
            html += "<button type=\"button\" class=\"pl-close\" aria-label=\"Close video\" hidden>" + Self.closeGlyph + "</button>\n"
            if card.still != nil || card.record != nil {
                html += "<button type=\"button\" class=\"pl-capture\" aria-label=\"Capture still\" "
                    + "title=\"Tap: save this frame. Hold: record until release.\" hidden></button>\n"
            }
        } else {
            html += image + "\n<div class=\"pl-scrub\"></div>\n"
        }
        html += "</div>\n<p class=\"pl-title\">\(Self.escaped(card.title))</p>\n</li>\n"
        return html
    }

    /// The play glyph of ``PlayButton``: a triangle 0.42 of the 72 px disc tall and 0.36 wide, a
    /// twelfth of its width right of centre.
    static let playGlyph = "<svg viewBox=\"0 0 72 72\" aria-hidden=\"true\" focusable=\"false\"><path d=\"M25.2 20.88 51.12 36 25.2 51.12z\"/></svg>"
    static let closeGlyph = "<svg viewBox=\"0 0 14 14\" aria-hidden=\"true\" focusable=\"false\"><path d=\"M1.4 0 7 5.6 12.6 0 14 1.4 "
        + "8.4 7 14 12.6 12.6 14 7 8.4 1.4 14 0 12.6 5.6 7 0 1.4z\"/></svg>"

    /// Seconds as a URL or an attribute writes them: `15`, `4.5` (at most 3 decimals).
    package static func decimal(_ seconds: Double) -> String { Format.limit(seconds) }

    /// `#rrggbb`.
    static func isColor(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        return utf8.count == 7 && utf8[0] == UInt8(ascii: "#") && utf8.dropFirst().allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0)
        }
    }

    /// `text` for HTML text or a quoted attribute: `&`, `<`, `>`, `"` and `'` as references; a control
    /// character, a bidirectional control (``isBidiControl(_:)``, which could show `clip\u{202E}4pm.exe`
    /// as `clipexe.mp4`) or a file name's undecodable byte (``FilePathBytes``' escape) as U+FFFD.
    package static func escaped(_ text: String) -> String {
        text.replacingScalars { scalar in
            switch scalar {
            case "&": "&amp;"
            case "<": "&lt;"
            case ">": "&gt;"
            case "\"": "&quot;"
            case "'": "&#39;"
            case "\t", "\n": " "
            case _ where scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value) || FilePathBytes.escapeRange.contains(scalar.value)
                    || isBidiControl(scalar):
                "\u{FFFD}"
            default: nil
            }
        }
    }

    /// The `id` of the `<script type="application/json">` element carrying the cards' storyboard tracks:
    /// an object from each card's `data-storyboard` URL to its track's text.
    package static let storyboardsID = "pl-storyboards"

    /// `value` as JSON text for inside a `<script>` element: `<`, `>` and `&` written as `\u003c`,
    /// `\u003e` and `\u0026`, U+2028 and U+2029 as `\u2028` and `\u2029`. No text in it (a file name,
    /// a cue) can then close the element (`</script>`), open a comment (`<!--`) or be read as markup,
    /// and `JSON.parse` of the element's text gives back `value`. (Those characters occur in JSON text
    /// only inside strings, where the escape means the same character.)
    package static func scriptData(_ value: JSONValue) -> String {
        value.text(.compact).replacingScalars { "<>&\u{2028}\u{2029}".unicodeScalars.contains($0) ? "\\u" + $0.hexDigits() : nil }
    }

    /// Whether `scalar` changes the direction text is shown in: the embeddings and overrides U+202A–U+202E,
    /// the isolates U+2066–U+2069, the marks U+200E, U+200F and U+061C.
    package static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
            || scalar.value == 0x200E || scalar.value == 0x200F || scalar.value == 0x061C
    }

    /// The longest request path `serve` reads, in bytes as sent (percent-encoded): a longer one is no source.
    package static let maxRequestPathBytes = 4096

    /// Why no `serve` URL can name the file at `relative` (a `/`-separated path under the root), or `nil`
    /// when every route of it can be asked for: a control character (a newline, a tab, a NUL) or a
    /// backslash in it (a request path may hold neither), or a path so long that its URL passes
    /// ``maxRequestPathBytes`` once percent-encoded.
    package static func unservableReason(_ relative: String) -> String? {
        if let control = relative.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7f }) {
            let code = String(control.value, radix: 16, uppercase: true)
            return "the path holds a control character (U+\(String(repeating: "0", count: 4 - code.count) + code)), "
                + "which no serve URL can name"
        }
        if relative.contains("\\") { return "the path holds a backslash, which no serve URL can name" }
        let longestRoute = PreviewRequests.routeNames.map(\.utf8.count).max() ?? 0
        let bytes = 1 + urlPath(relative).utf8.count + 1 + longestRoute
        if bytes > maxRequestPathBytes {
            return "the path is \(bytes) bytes long in a URL (percent-encoded, with its route); a serve URL's path is at most "
                + "\(maxRequestPathBytes)"
        }
        return nil
    }

    /// A relative file path as a URL path: each byte of the name (``FilePathBytes/encode(_:)``) but
    /// RFC 3986's unreserved characters and `/` percent-encoded (`sub dir/é.mp4` → `sub%20dir/%C3%A9.mp4`).
    package static func urlPath(_ relative: String) -> String {
        PercentEncoding.encode(FilePathBytes.encode(relative), keeping: "/")
    }
}
