import FoundationEssentials
import PreviewLoop

// Named sets of the image API's parameters (imgproxy's and imgix's presets): `serve --presets FILE`
// reads `{"card": {"width": 480, "fit_mode": "crop"}, …}` at start, checks every preset against the
// routes' own parameters, and `?preset=card` then sets those the query does not.

/// The presets a server takes, by name; each checked at start against every route that takes all of
/// its parameters.
package struct ImagePresets: Sendable {
    /// Each preset's parameters, as a query gives them.
    package private(set) var presets: [String: [(name: String, value: String)]] = [:]

    /// The query parameter that names a preset.
    package static let parameter = "preset"
    /// The most presets a file may hold, and the longest file read.
    static let maximumCount = 1024
    package static let maximumBytes = 1 << 20

    package init() {}

    /// Reads a presets file's JSON: an object of names (letters, digits, `_`, `-`, at most 32) to objects
    /// of parameters (strings, numbers or booleans, as a query would spell them).
    ///
    /// - Throws: a one-line message naming the preset and parameter that a route refuses, or what is
    ///   wrong with the JSON.
    package init(json: [UInt8]) throws(PresetError) {
        let decoded: [String: [String: PresetValue]]
        do {
            decoded = try JSONDecoder().decode([String: [String: PresetValue]].self, from: Data(json))
        } catch {
            throw PresetError(message: "expected a JSON object of preset names, each an object of parameters "
                              + "(strings, numbers or true/false)")
        }
        guard decoded.count <= Self.maximumCount else { throw PresetError(message: "at most \(Self.maximumCount) presets") }
        for (name, parameters) in decoded.sorted(by: { $0.key < $1.key }) {
            guard PreviewRequests.printable(name) == name else {
                throw PresetError(message: "preset names are letters, digits, _ and - (at most 32), not \(Format.oneLine(name))")
            }
            let query = parameters.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value.text) }
            try Self.check(name, query)
            presets[name] = query
        }
    }

    /// Refuses a preset with a parameter no route takes, one no route takes all of, or one a route that
    /// takes all of its parameters refuses (checked as a request for that route would be). On a route
    /// that takes only some of them, a request gets a 400 naming the parameter, as for its own query.
    private static func check(_ name: String, _ query: [(name: String, value: String)]) throws(PresetError) {
        for item in query where item.name == parameter || !PreviewRequests.routes.contains(where: { $0.takes(item.name) }) {
            throw PresetError(message: "preset \(name): no route takes \(Format.oneLine(item.name))")
        }
        let routes = PreviewRequests.routes.filter { route in query.allSatisfy { route.takes($0.name) } }
        guard !routes.isEmpty else {
            throw PresetError(message: "preset \(name): no route takes all of " + query.map(\.name).joined(separator: ", "))
        }
        for route in routes {
            do {
                _ = try PreviewRequests.job(route: route.fileNames[0], query: query, source: "/preset-check.mp4")
            } catch {
                throw PresetError(message: "preset \(name): \(route.fileNames[0]) refuses it"
                                  + (error.parameter.map { " (\($0))" } ?? "") + ": \(error.detail)")
            }
        }
    }

    /// `query` with its `preset` replaced by the preset's parameters that `route` takes and the query
    /// does not set.
    ///
    /// - Throws: 400 naming `preset` for an unknown preset, or one given twice.
    package func merged(_ query: [(name: String, value: String?)], route: String) throws(PreviewRequestError) -> [(name: String, value: String?)] {
        let named = query.filter { $0.name == Self.parameter }
        guard !named.isEmpty else { return query }
        guard named.count == 1, let name = named[0].value, let preset = presets[name] else {
            throw PreviewRequestError(status: 400, parameter: Self.parameter,
                                      detail: named.count > 1 ? "A parameter is given twice." : "No such preset on this server.")
        }
        let routeTable = PreviewRequests.routesByName[route]?.route
        var merged = query.filter { $0.name != Self.parameter }
        // A lossless file (`thumbnail.png`) takes no quality: a preset's is for the lossy ones.
        let lossless = ImageFileFormat(path: route).map { !$0.isLossy } ?? false
        for item in preset where !merged.contains(where: { $0.name == item.name }) && (routeTable?.takes(item.name) ?? true)
            && !(lossless && item.name == "quality") {
            merged.append((item.name, PercentEncoding.queryComponent(item.value)))
        }
        return merged
    }
}

/// Why a presets file is refused: one line.
package struct PresetError: Error, Sendable {
    package var message: String
}

/// A parameter's value in a presets file: its text as a query spells it.
private struct PresetValue: Decodable {
    var text: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            text = flag ? "true" : "false"
        } else if let whole = try? container.decode(Int.self) {
            text = String(whole)
        } else if let number = try? container.decode(Double.self), number.isFinite {
            text = DecimalText.fixed(number, 6).replacing(/\.?0+$/, with: "")
        } else {
            text = try container.decode(String.self)
        }
    }
}

extension PreviewRoute {
    /// Whether a query parameter `name` is one of the route's.
    package func takes(_ name: String) -> Bool { parameters.contains { $0.name == name } }
}
