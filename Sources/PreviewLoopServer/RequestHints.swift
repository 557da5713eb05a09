import PreviewLoop
import PreviewLoopJobs

// What a request's headers change about the picture it gets, besides its query: the client hints a
// server that takes them reads (`Sec-CH-DPR`, `Sec-CH-Width`, and `Save-Data: on`, which asks for a
// lighter picture), and a viewer's wish for less motion (`Sec-CH-Prefers-Reduced-Motion: reduce`), which
// turns an animation into its poster. Each header that can change the answer is named in `Vary`, so
// caches keep the answers apart.

/// A request's route and query once its hints are applied, and the headers the response varies by.
struct RequestHints {
    /// The hints a server asks browsers for (`Accept-CH`) when it takes them.
    static let asked = ["Sec-CH-DPR", "Sec-CH-Width", "Sec-CH-Prefers-Reduced-Motion"]
    /// The hint that turns an animation into a still, asked for by every server.
    static let reducedMotion = "Sec-CH-Prefers-Reduced-Motion"
    /// The header a browser sends when its user asked it to save data (`Save-Data: on`); browsers send it
    /// unasked, so it is in no `Accept-CH`.
    static let saveData = "Save-Data"
    /// The quality a lossy picture or animation gets under `Save-Data: on` when its query sets none,
    /// instead of the format's default (85; 75 for MP4 and animated WebP).
    static let saveDataQuality = 50
    /// The extensions whose routes take a `quality`: the lossy formats.
    static let lossyExtensions: Set<String> = ["jpg", "webp", "avif", "mp4"]

    /// Whether `request` asks to save data: `Save-Data: on` (the token, in any case).
    static func savesData(_ request: HTTPRequest) -> Bool {
        request.header(saveData)?.trimmingWhitespace().lowercased() == "on"
    }

    var route: String
    var query: [(name: String, value: String?)]
    /// The request headers the answer depends on, for `Vary`.
    var varyBy: [String] = []

    /// Applies `request`'s hints to `route` and `query`: with `usesSizeHints`, a `dpr` or `width` the
    /// query lacks from `Sec-CH-DPR`/`DPR` and `Sec-CH-Width`/`Width`; and, always, an `animated.*` asked
    /// with reduced motion becomes the poster as a still (`animated.webp` → `thumbnail.webp`,
    /// `animated.gif` → `thumbnail.png`, `animated.mp4` → `thumbnail.jpg`), with the animation's size and
    /// `start` as the still's time. With `usesSizeHints`, `Save-Data: on` asks for a lighter answer: a
    /// lossy format's `quality` the query lacks is ``saveDataQuality``, and the DPR hint counts as 1
    /// (a `Sec-CH-Width`, in device pixels, is divided by it), so the picture is in CSS pixels.
    init(route: String, query: [(name: String, value: String?)], request: HTTPRequest, usesSizeHints: Bool) {
        self.route = route
        self.query = query
        let stem = route.split(separator: ".").first.map(String.init) ?? route
        let sized = PreviewRequests.routes.contains { $0.stem == stem && $0.sizePair != nil }
        if stem == "animated" {
            varyBy.append(Self.reducedMotion)
            if request.header(Self.reducedMotion)?.lowercased() == "reduce" { becomeStill() }
        }
        guard usesSizeHints else { return }
        let savesData = Self.savesData(request)
        var dependsOnSaveData = false
        let sent = Set(self.query.map(\.name))
        let fileExtension = ImageFileFormat.fileExtension(of: self.route) ?? ""
        let takesQuality = PreviewRequests.routes.contains { route in
            route.fileNames.contains(self.route) && route.parameters.contains { $0.name == "quality" }
        }
        if takesQuality, Self.lossyExtensions.contains(fileExtension), !sent.contains("quality") {
            dependsOnSaveData = true
            if savesData { self.query.append(("quality", String(Self.saveDataQuality))) }
        }
        defer { if dependsOnSaveData { varyBy.append(Self.saveData) } }
        guard sized else { return }
        let hintedRatio = Self.number(request, "Sec-CH-DPR", "DPR").map { min(4, max(1, $0)) }
        if !sent.contains("dpr"), let ratio = hintedRatio {
            // Within what `dpr` takes; a hint is advice, never an error. Saving data, pictures are in CSS pixels.
            if !savesData { self.query.append(("dpr", DecimalText.fixed(ratio, 2))) }
            varyBy.append(request.header("Sec-CH-DPR") != nil ? "Sec-CH-DPR" : "DPR")
            dependsOnSaveData = true
        }
        if !sent.contains("width"), !sent.contains("height"), let value = Self.number(request, "Sec-CH-Width", "Width"), value >= 1 {
            // Device pixels: the ratio is in them already (divided out when saving data).
            self.query.removeAll { $0.name == "dpr" }
            let css = savesData ? value / (hintedRatio ?? 1) : value
            let width = min(Double(SizeRequest.maximumSide), max(1, css.rounded(.up)))
            self.query.append(("width", String(Int(width))))
            varyBy.append(request.header("Sec-CH-Width") != nil ? "Sec-CH-Width" : "Width")
            if hintedRatio != nil { dependsOnSaveData = true }
        }
    }

    /// `animated.*` as its poster: the same source, size, fit and transforms (the quality of each
    /// format's own default); `start` (when a time) the still's time, else the poster frame.
    private mutating func becomeStill() {
        let still: String = switch route {
        case "animated.webp": "thumbnail.webp"
        case "animated.gif": "thumbnail.png"
        default: "thumbnail.jpg"
        }
        let kept: Set<String> = ["width", "height", "dpr", "fit_mode", "rotate", "flip_h", "flip_v"]
        var query = self.query.filter { kept.contains($0.name) }
        if let start = self.query.first(where: { $0.name == "start" })?.value, start != "poster" {
            query.append(("time", start))
        }
        route = still
        self.query = query
    }

    /// The first of `names` the request sends as a finite number.
    private static func number(_ request: HTTPRequest, _ names: String...) -> Double? {
        for name in names {
            if let text = request.header(name), text.count <= 16, let value = DecimalText.number(text), value.isFinite {
                return value
            }
        }
        return nil
    }
}
