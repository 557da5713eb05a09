import PreviewLoop

/// What a loop's CSV timing log says, summarised: `preview-loop timing <log.csv>`.
///
/// Pure: built from the log's text, printed as aligned lines or one JSON object.
struct TimingSummary: Equatable {
    /// Nearest-rank percentiles of a list of milliseconds.
    struct Percentiles: Equatable {
        var p50: Double, p95: Double, p99: Double, maximum: Double

        init(_ values: [Double]) {
            let sorted = values.sorted()
            func rank(_ q: Double) -> Double {
                guard !sorted.isEmpty else { return 0 }
                return sorted[min(sorted.count - 1, max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))]
            }
            p50 = rank(0.50); p95 = rank(0.95); p99 = rank(0.99); maximum = sorted.last ?? 0
        }
    }

    /// Rows in the log.
    var frames: Int
    /// Distinct passes.
    var passes: Int
    /// Frames per second of wall time, first to last hand-over.
    var framesPerSecond: Double
    /// Decode time per frame, milliseconds.
    var decode: Percentiles
    /// Conversion (crop, scale, colour) time per frame, milliseconds.
    var scale: Percentiles
    /// Lateness against the due time, milliseconds; `nil` for an offline log.
    var lateness: Percentiles?
    /// Lateness of each pass's first frame from the second pass on (the seam), milliseconds.
    var seamLateness: [Double]
    /// Frames skipped because they would have been shown more than a frame interval late.
    var dropped: Int

    /// Why a log cannot be summarised.
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads a log with the loop's header (`pass,index,presentation_time,wall_time,decode_ms,scale_ms,
    /// lateness_ms[,dropped]`).
    init(csv text: String) throws(Malformed) {
        var lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map(String.init)
        guard let header = lines.first?.split(separator: ",").map(String.init),
              Array(header.prefix(7)) == ["pass", "index", "presentation_time", "wall_time", "decode_ms", "scale_ms", "lateness_ms"] else {
            throw Malformed(description: "not a preview-loop timing log (the header differs)")
        }
        lines.removeFirst()
        guard !lines.isEmpty else { throw Malformed(description: "the log has no frames") }
        var passes = Set<Int>(), walls: [Double] = [], decodes: [Double] = [], scales: [Double] = []
        var latenesses: [Double] = [], seams: [Double] = [], dropped = 0
        for (number, line) in lines.enumerated() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            // Finite decimal numbers only: a NaN or an infinity would make every statistic meaningless.
            guard fields.count >= 7, let pass = Int(fields[0]), let index = Int(fields[1]), let wall = DecimalText.number(fields[3]),
                  let decode = DecimalText.number(fields[4]), let scale = DecimalText.number(fields[5]),
                  fields[6].isEmpty || DecimalText.number(fields[6]) != nil,
                  fields.count == 7 || fields[7].isEmpty || Int(fields[7]).map({ $0 >= 0 }) == true else {
                throw Malformed(description: "line \(number + 2) is not a timing row (finite decimal numbers expected): \(line)")
            }
            passes.insert(pass)
            walls.append(wall); decodes.append(decode); scales.append(scale)
            if let late = DecimalText.number(fields[6]) {
                latenesses.append(late)
                if index == 1 && pass > 1 { seams.append(late) }
            }
            if fields.count > 7, let skipped = Int(fields[7]) {
                let (sum, overflow) = dropped.addingReportingOverflow(skipped)
                guard !overflow else {
                    throw Malformed(description: "line \(number + 2): the dropped counts add up to more than \(Int.max)")
                }
                dropped = sum
            }
        }
        frames = lines.count
        self.passes = passes.count
        let span = (walls.max() ?? 0) - (walls.min() ?? 0)
        framesPerSecond = span > 0 ? Double(frames - 1) / span : 0
        decode = Percentiles(decodes)
        scale = Percentiles(scales)
        lateness = latenesses.isEmpty ? nil : Percentiles(latenesses)
        seamLateness = seams
        self.dropped = dropped
    }

    /// Aligned lines for a person.
    var text: String {
        func ms(_ p: Percentiles, _ keys: [KeyPath<Percentiles, Double>], _ names: [String]) -> String {
            zip(keys, names).map { "\($1) \(Format.fixed(p[keyPath: $0], 3))" }.joined(separator: "  ")
        }
        var lines = [
            "frames:        \(frames)",
            "passes:        \(passes)",
            "fps delivered: \(Format.fixed(framesPerSecond, 2))",
            "decode ms:     " + ms(decode, [\.p50, \.p95, \.p99], ["p50", "p95", "p99"]),
            "scale ms:      " + ms(scale, [\.p50, \.p95, \.p99], ["p50", "p95", "p99"]),
        ]
        if let lateness {
            lines.append("lateness ms:   " + ms(lateness, [\.p50, \.p99, \.maximum], ["p50", "p99", "max"]))
            lines.append("seam ms:       " + (seamLateness.isEmpty ? "-" : seamLateness.map { Format.fixed($0, 3) }.joined(separator: " ")))
        } else {
            lines.append("lateness ms:   - (offline clock)")
        }
        lines.append("dropped:       \(dropped)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// One JSON object with sorted keys; `{}` when a number is not finite (a log with `nan` in it).
    var json: String {
        func object(_ p: Percentiles) -> JSONValue {
            .object(["p50": .number(p.p50), "p95": .number(p.p95), "p99": .number(p.p99), "max": .number(p.maximum)])
        }
        let value = JSONValue.object([
            "frames": .integer(frames), "passes": .integer(passes), "fps": .number((framesPerSecond * 100).rounded() / 100),
            "decode_ms": object(decode), "scale_ms": object(scale), "seam_lateness_ms": .array(seamLateness.map(JSONValue.number)),
            "dropped": .integer(dropped), "lateness_ms": lateness.map(object) ?? .null,
        ])
        return (value.isFinite ? value.text(.pretty) : "{}") + "\n"
    }
}
