import PreviewLoop

/// `batch report --duplicates`: the clips whose pictures look alike — the same video uploaded again
/// under another name, at another bitrate or size — found by the perceptual hashes their records carry
/// (``PerceptualHash``: the poster's `phash`, each strip, sheet or sprite tile's `tile_phashes`).
///
/// Two clips match when they have something to compare and every comparison is within the threshold
/// (Hamming distance, in bits of 64): their posters' hashes, and their tiles' (strips and sheets first,
/// else sprites; compared tile by tile when both have as many, the median distance counting). Matches
/// are grouped transitively (a re-upload of a re-upload joins the group).
struct DuplicateFinder {
    /// The default largest Hamming distance between two hashes of one picture: measured
    /// (`BatchDuplicatesTests`' clips), re-encodes of a clip at other bitrates, sizes and codecs land
    /// 0–2 bits from it (posters and tile medians alike), other clips 16 and more on the poster or
    /// 22 and more on the tiles.
    static let defaultThreshold = 8
    /// The thresholds `--hamming` takes: above 24 unrelated pictures (32 bits apart on average, with a
    /// standard deviation of 4) start to match.
    static let thresholdRange = 0...24

    /// What of a clip is compared.
    struct Fingerprint: Sendable {
        var id: String
        var poster: PerceptualHash?
        /// The tiles of its first strip or sheet, in order.
        var tiles: [PerceptualHash]
        /// The tiles of its sprite sheets, in order.
        var sprites: [PerceptualHash]

        /// The hashes of a clip's `ok` record; `nil` when it carries none.
        init?(_ record: BatchRecord) {
            guard record.status == .ok else { return nil }
            id = record.id
            poster = record.outputs.lazy.filter { $0.kind == "poster" }.compactMap { $0.phash.flatMap(PerceptualHash.init(hex:)) }.first
            let tiled = record.outputs.first { ($0.kind == "strip" || $0.kind == "sheet") && !($0.tilePhashes ?? []).isEmpty }
            tiles = (tiled?.tilePhashes ?? []).compactMap(PerceptualHash.init(hex:))
            sprites = record.outputs.filter { $0.kind == "sprite_sheet" }.flatMap { ($0.tilePhashes ?? []).compactMap(PerceptualHash.init(hex:)) }
            guard poster != nil || !tiles.isEmpty || !sprites.isEmpty else { return nil }
        }
    }

    /// Two clips that look alike, and how far apart their pictures are.
    struct Match: Sendable, Equatable {
        var first: String
        var second: String
        /// The posters' distance, when both have one.
        var posterDistance: Int?
        /// The median distance of their tiles compared in order, when both have as many.
        var tileDistance: Int?
        /// The tiles compared.
        var tiles: Int
    }

    /// Every pair of `prints` that matches within `threshold`, in the order of `prints` (which the
    /// report sorts by id).
    static func matches(_ prints: [Fingerprint], threshold: Int) -> [Match] {
        var found: [Match] = []
        for (index, first) in prints.enumerated() {
            for second in prints[(index + 1)...] {
                var posterDistance: Int?
                if let a = first.poster, let b = second.poster {
                    let distance = a.distance(to: b)
                    guard distance <= threshold else { continue }
                    posterDistance = distance
                }
                var tileDistance: Int?, tiles = 0
                for (a, b) in [(first.tiles, second.tiles), (first.sprites, second.sprites)] where !a.isEmpty && a.count == b.count {
                    let distances = zip(a, b).map { $0.distance(to: $1) }.sorted()
                    tileDistance = distances[distances.count / 2]
                    tiles = distances.count
                    break
                }
                if let tileDistance, tileDistance > threshold { continue }
                guard posterDistance != nil || tileDistance != nil else { continue }
                found.append(Match(first: first.id, second: second.id, posterDistance: posterDistance, tileDistance: tileDistance,
                                   tiles: tiles))
            }
        }
        return found
    }

    /// The matches joined into groups of ids (each sorted, the groups by their first id).
    static func groups(_ matches: [Match]) -> [[String]] {
        var parent: [String: String] = [:]
        func root(_ id: String) -> String {
            var id = id
            while let next = parent[id], next != id { id = next }
            return id
        }
        for match in matches {
            let a = root(match.first), b = root(match.second)
            parent[a] = parent[a] ?? a
            parent[b] = parent[b] ?? b
            if a != b { parent[max(a, b)] = min(a, b) }
        }
        var groups: [String: [String]] = [:]
        for id in parent.keys { groups[root(id), default: []].append(id) }
        return groups.values.map { $0.sorted() }.sorted { $0[0] < $1[0] }
    }
}
