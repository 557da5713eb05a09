import PreviewLoop

// A route named without an extension (`thumbnail`) answers in the format the request's `Accept` prefers
// among those the route serves, as imgproxy and Cloudinary do; the response varies by `Accept`, and its
// validators and cache entries are those of the file name chosen (`thumbnail.avif`).

extension PreviewRequests {
    /// The routes that may be named without an extension, and the formats they choose from, best first
    /// when the request likes them equally: AVIF (smallest), WebP, then JPEG (read everywhere).
    static let negotiable: [String: [(fileExtension: String, mediaType: String)]] = [
        thumbnail.stem: [("avif", "image/avif"), ("webp", "image/webp"), ("jpg", "image/jpeg")],
    ]

    /// The media types chosen only for a request that names them outright, never through `image/*` or
    /// `*/*`: browsers that decode no AVIF (Safari before 16, Edge before 121) send those wildcards too.
    static let namedOnly: Set<String> = ["image/avif"]

    /// The file name a request for `route` asks for: `route` itself, or for a negotiable route the
    /// format its `format` parameter names (`auto`, the default, chooses by `accept`). Removes `format`
    /// from `query`. `nil` when `route` is not negotiable.
    ///
    /// - Throws: 400 for a `format` the route does not serve; 406 when `accept` refuses every format.
    package static func negotiatedRoute(_ route: String, query: inout [(name: String, value: String?)],
                                        accept: String?) throws(PreviewRequestError) -> String? {
        guard let offered = negotiable[route] else { return nil }
        let given = query.filter { $0.name == "format" }
        query.removeAll { $0.name == "format" }
        guard given.count <= 1 else { throw PreviewRequestError(status: 400, parameter: "format", detail: "A parameter is given twice.") }
        let choices = "auto, " + offered.map(\.fileExtension).joined(separator: ", ")
        switch (given.first?.value ?? nil) ?? "auto" {
        case "auto":
            guard let chosen = preferred(offered.map(\.mediaType), accept: accept, namedOnly: namedOnly) else {
                throw PreviewRequestError(status: 406, detail: "The request accepts none of "
                                          + offered.map(\.mediaType).joined(separator: ", ") + ".")
            }
            return route + "." + offered.first { $0.mediaType == chosen }!.fileExtension
        case let format where offered.contains(where: { $0.fileExtension == format }):
            return route + "." + format
        default:
            throw PreviewRequestError(status: 400, parameter: "format", detail: "Expected \(choices).")
        }
    }

    /// The media type of `offered` that `accept` (an `Accept` field value) prefers: the highest quality
    /// value, each type taking the most specific range that matches it (`image/webp`, then `image/*`, then
    /// `*/*`); equal qualities go to a type named outright, then to the first offered. A type in
    /// `namedOnly` counts only when named outright. No `Accept` accepts everything (but `namedOnly`).
    /// `nil` when every type has quality 0.
    static func preferred(_ offered: [String], accept: String?, namedOnly: Set<String> = []) -> String? {
        guard let accept, !accept.trimmingWhitespace().isEmpty else { return offered.first { !namedOnly.contains($0) } }
        // Each range: (type, subtype, quality).
        let ranges: [(String, String, Double)] = accept.split(separator: ",").prefix(64).compactMap { item in
            let parts = item.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingWhitespace().lowercased() }
            let type = parts[0].split(separator: "/", omittingEmptySubsequences: false)
            guard type.count == 2, !type[0].isEmpty, !type[1].isEmpty else { return nil }
            var quality = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                guard let value = Double(parameter.dropFirst(2)), value >= 0, value <= 1 else { return nil }
                quality = value
            }
            return (String(type[0]), String(type[1]), quality)
        }
        var best: (type: String, quality: Double, named: Bool)?
        for type in offered {
            let halves = type.split(separator: "/").map(String.init)
            let exact = ranges.first { $0.0 == halves[0] && $0.1 == halves[1] }
            if exact == nil && namedOnly.contains(type) { continue }
            let quality = exact?.2 ?? ranges.first { $0.0 == halves[0] && $0.1 == "*" }?.2 ?? ranges.first { $0.0 == "*" && $0.1 == "*" }?.2 ?? 0
            guard quality > 0 else { continue }
            let named = exact != nil
            if best.map({ quality > $0.quality || (quality == $0.quality && named && !$0.named) }) ?? true {
                best = (type, quality, named)
            }
        }
        return best?.type
    }
}
