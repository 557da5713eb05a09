import FoundationEssentials
import PreviewLoop

/// `preview-loop batch report <OUT or results files…>`: merges per-shard results files into one
/// summary — counts, failures by reason (with their ids), the slowest clips.
struct BatchReport {
    var paths: [String]
    var isJSON: Bool

    func run() throws -> Int32 {
        var files: [String] = []
        for path in paths {
            if BatchReport.isDirectory(path) {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                let found = names.filter { $0.hasPrefix("results") && $0.hasSuffix(".jsonl") }.sorted().map { path + "/" + $0 }
                guard !found.isEmpty else { throw PreviewLoopError(.inputNotFound, "\(path): no results*.jsonl file in it") }
                files += found
            } else {
                files.append(path)
            }
        }
        var byID: [String: BatchRecord] = [:]
        var duplicates = 0, summaries: [BatchSummary] = []
        let decoder = JSONDecoder()
        for file in files {
            let bytes = try BatchFiles.readFile(file, limit: 1 << 30)
            for (number, line) in bytes.split(separator: UInt8(ascii: "\n")).enumerated() where !line.isEmpty {
                let data = Data(line)
                if let record = try? decoder.decode(BatchRecord.self, from: data), record.type == "clip" {
                    if let earlier = byID[record.id] {
                        duplicates += 1
                        if earlier.finishedAt > record.finishedAt { continue }
                    }
                    byID[record.id] = record
                } else if let summary = try? decoder.decode(BatchSummary.self, from: data), summary.type == "summary" {
                    summaries.append(summary)
                } else {
                    throw PreviewLoopError(.invalidArgument, "\(file): line \(number + 1) is not a batch record")
                }
            }
        }
        let records = byID.values.sorted { $0.id < $1.id }
        let ok = records.filter { $0.status == .ok }
        let failed = records.filter { $0.status == .failed }
        var reasons: [String: [String]] = [:]
        for record in failed { reasons[record.reason ?? "unknown", default: []].append(record.id) }
        let slowest = ok.sorted { ($0.timings["total_ms"] ?? 0) > ($1.timings["total_ms"] ?? 0) }.prefix(5)
        let notDone = summaries.map(\.notDone).reduce(0, +)
        let bytes = ok.flatMap(\.outputs).map(\.bytes).reduce(0, +)
        if isJSON {
            let object = ReportJSON(files: files.count, clips: records.count, ok: ok.count, failed: failed.count,
                                    permanent: failed.filter { $0.permanence == .permanent }.count,
                                    transient: failed.filter { $0.permanence == .transient }.count,
                                    notDone: notDone, duplicates: duplicates, outputBytes: bytes,
                                    failuresByReason: reasons,
                                    slowest: slowest.map { ReportJSON.Slow(id: $0.id, totalMs: $0.timings["total_ms"] ?? 0) })
            Console.writeOutput(try JSONValue(encoding: object).text(.pretty) + "\n")
            return ExitStatus.success
        }
        var text = "files:       \(files.count)\n"
        text += "clips:       \(records.count)\n"
        text += "ok:          \(ok.count) (\(Format.byteCount(bytes)) of outputs)\n"
        text += "failed:      \(failed.count) (\(failed.filter { $0.permanence == .permanent }.count) permanent, "
            + "\(failed.filter { $0.permanence == .transient }.count) transient)\n"
        if notDone > 0 { text += "not done:    \(notDone) (a run was stopped)\n" }
        if duplicates > 0 { text += "duplicates:  \(duplicates) (the same clip in several files; the latest record counts)\n" }
        for (reason, ids) in reasons.sorted(by: { $0.key < $1.key }) {
            let shown = ids.prefix(10).joined(separator: ", ") + (ids.count > 10 ? ", …" : "")
            text += "  \(reason): \(ids.count) (\(shown))\n"
        }
        if !slowest.isEmpty {
            text += "slowest:     " + slowest.map { "\($0.id) \(Format.fixed(($0.timings["total_ms"] ?? 0) / 1000, 2)) s" }
                .joined(separator: ", ") + "\n"
        }
        Console.writeOutput(text)
        return ExitStatus.success
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDirectory = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory
    }
}

private struct ReportJSON: Encodable {
    struct Slow: Encodable {
        var id: String
        var totalMs: Double
        enum CodingKeys: String, CodingKey { case id, totalMs = "total_ms" }
    }
    var files, clips, ok, failed, permanent, transient, notDone, duplicates, outputBytes: Int
    var failuresByReason: [String: [String]]
    var slowest: [Slow]
    enum CodingKeys: String, CodingKey {
        case files, clips, ok, failed, permanent, transient, duplicates, slowest
        case notDone = "not_done", outputBytes = "output_bytes", failuresByReason = "failures_by_reason"
    }
}
