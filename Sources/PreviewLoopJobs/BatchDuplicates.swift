import PreviewLoop

/// `batch report --duplicates`: the clips whose pictures look alike — the same video uploaded again
/// under another name, at another bitrate or size — found by the perceptual hashes their records carry
/// (``PerceptualHash``: the poster's `phash`, each strip, sheet or sprite tile's `tile_phashes`).
///
/// Two clips match when they have something to compare and every comparison is within the threshold
/// (Hamming distance, in bits of 64): their posters' hashes, and their tiles' (strips and sheets first,
/// else sprites; compared tile by tile when both have as many, the median distance counting). Matches
/// are grouped transitively (a re-upload of a re-upload joins the group).
///
/// A flat picture (one colour: no structure, so every one hashes alike, `8000000000000000`, black
/// `0000000000000000`) says nothing by its hash. Two flat posters are compared by their dominant colours
/// instead (within ``maxColorDistance`` on each channel), and tiles flat in both clips are left out of the
/// tile comparison; a clip whose pictures are all flat and carry no colour has nothing to compare.
struct DuplicateFinder {
    /// The default largest Hamming distance between two hashes of one picture: measured
    /// (`BatchDuplicatesTests`' clips), re-encodes of a clip at other bitrates, sizes and codecs land
    /// 0–2 bits from it (posters and tile medians alike), other clips 16 and more on the poster or
    /// 22 and more on the tiles.
    static let defaultThreshold = 8
    /// The thresholds `--hamming` takes: above 24 unrelated pictures (32 bits apart on average, with a
    /// standard deviation of 4) start to match.
    static let thresholdRange = 0...24
    /// The largest difference, on any of red, green and blue (0–255), between the dominant colours of
    /// two flat posters that match: a re-encode of one colour moves it a few levels, two colours a
    /// viewer tells apart are further.
    static let maxColorDistance = 16

    /// Whether `hash` is a flat picture's: no bit of a frequency above the constant term is set.
    static func isFlat(_ hash: PerceptualHash) -> Bool { hash.bits & ~(1 << 63) == 0 }

    /// What of a clip is compared.
    struct Fingerprint: Sendable {
        var id: String
        var poster: PerceptualHash?
        /// The poster's dominant colour, when its record gives one.
        var posterColor: RGBAColor?
        /// The tiles of its first strip or sheet, in order.
        var tiles: [PerceptualHash]
        /// The tiles of its sprite sheets, in order.
        var sprites: [PerceptualHash]

        /// The hashes of a clip's `ok` record; `nil` when it carries none.
        init?(_ record: BatchRecord) {
            guard record.status == .ok else { return nil }
            id = record.id
            let posterOutput = record.outputs.first { $0.kind == "poster" && $0.phash.flatMap(PerceptualHash.init(hex:)) != nil }
            poster = posterOutput?.phash.flatMap(PerceptualHash.init(hex:))
            posterColor = posterOutput?.dominantColor.flatMap(RGBAColor.init(parsing:))
            let tiled = record.outputs.first { ($0.kind == "strip" || $0.kind == "sheet") && !($0.tilePhashes ?? []).isEmpty }
            tiles = (tiled?.tilePhashes ?? []).compactMap(PerceptualHash.init(hex:))
            sprites = record.outputs.filter { $0.kind == "sprite_sheet" }.flatMap { ($0.tilePhashes ?? []).compactMap(PerceptualHash.init(hex:)) }
            guard poster != nil || !tiles.isEmpty || !sprites.isEmpty else { return nil }
        }

        /// Whether every picture of the clip is flat (``DuplicateFinder/isFlat(_:)``): its hashes cannot
        /// tell it from another flat clip, only its poster's colour can.
        var isFlat: Bool {
            (poster.map(DuplicateFinder.isFlat) ?? true) && tiles.allSatisfy(DuplicateFinder.isFlat)
                && sprites.allSatisfy(DuplicateFinder.isFlat)
        }
    }

    /// Two clips that look alike, and how far apart their pictures are.
    struct Match: Sendable, Equatable {
        var first: String
        var second: String
        /// The posters' distance, when both have one that is not flat (or only one is).
        var posterDistance: Int?
        /// When both posters are flat: the largest difference of their dominant colours on one channel.
        var colorDistance: Int? = nil
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
                var posterDistance: Int?, colorDistance: Int?
                if let a = first.poster, let b = second.poster {
                    if isFlat(a) && isFlat(b) {
                        // Every flat picture hashes alike: only the colours can tell them apart.
                        if let x = first.posterColor, let y = second.posterColor {
                            let distance = x.channelDistance(to: y)
                            guard distance <= maxColorDistance else { continue }
                            colorDistance = distance
                        }
                    } else {
                        let distance = a.distance(to: b)
                        guard distance <= threshold else { continue }
                        posterDistance = distance
                    }
                }
                var tileDistance: Int?, tiles = 0
                for (a, b) in [(first.tiles, second.tiles), (first.sprites, second.sprites)] where !a.isEmpty && a.count == b.count {
                    // Tiles flat in both clips say nothing (their hashes are alike whatever the colour).
                    let distances = zip(a, b).filter { !(isFlat($0) && isFlat($1)) }.map { $0.distance(to: $1) }.sorted()
                    guard !distances.isEmpty else { break }
                    tileDistance = distances[distances.count / 2]
                    tiles = distances.count
                    break
                }
                if let tileDistance, tileDistance > threshold { continue }
                guard posterDistance != nil || tileDistance != nil || colorDistance != nil else { continue }
                found.append(Match(first: first.id, second: second.id, posterDistance: posterDistance, colorDistance: colorDistance,
                                   tileDistance: tileDistance, tiles: tiles))
            }
        }
        return found
    }

    /// The ids of `prints` whose pictures are all flat and whose poster gives no colour: nothing of them
    /// can be compared.
    static func incomparable(_ prints: [Fingerprint]) -> [String] {
        prints.filter { $0.isFlat && ($0.poster == nil || $0.posterColor == nil) }.map(\.id)
    }

    /// The ids of `prints` whose pictures are all flat but whose poster gives a colour: compared by it alone.
    static func flatByColor(_ prints: [Fingerprint]) -> [String] {
        prints.filter { $0.isFlat && $0.poster != nil && $0.posterColor != nil }.map(\.id)
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

extension RGBAColor {
    /// The largest difference of red, green and blue between the two colours (0–255).
    func channelDistance(to other: RGBAColor) -> Int {
        max(abs(Int(red) - Int(other.red)), abs(Int(green) - Int(other.green)), abs(Int(blue) - Int(other.blue)))
    }
}
