import FoundationEssentials
import Glibc
import Synchronization

/// A batch's outputs in a bucket (`batch --out s3://BUCKET/PREFIX/`): each clip is made in a local
/// working folder exactly as for a local `--out`, then uploaded to `PREFIX/<id>/` — its outputs first,
/// its record `PREFIX/<id>/.complete.json` last — before the local folder is committed (and then
/// removed). So a clip's objects are complete (its record there) or absent: when an upload fails, the
/// objects this run made for the clip are deleted again and the clip fails (retried when transient). A
/// permanent failure is kept as `PREFIX/.failures/<id>.json`.
///
/// What is in the bucket is read once, at the start (one paged listing of the prefix): a rerun skips a
/// clip whose record object is there for the same fingerprint with every output it lists at its size,
/// and uploads nothing for it. An object at a clip's key that the clip's record does not account for is
/// never replaced (`If-None-Match: *`), so a user's object fails that clip instead of being lost.
final class BatchObjectOutput: Sendable {
    /// `s3://BUCKET/PREFIX/`, one trailing slash.
    let prefix: String
    /// Sizes of the objects under the prefix when the run started, by name relative to it.
    private let existing: [String: Int64]

    /// Lists the prefix.
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` naming the prefix and the store's reason
    ///   (a missing bucket, refused credentials).
    init(prefix url: String) throws(PreviewLoopError) {
        prefix = try ObjectOutput.prefixURL(url)
        var existing: [String: Int64] = [:]
        for object in try ObjectOutput.list(prefix) { existing[String(object.url.dropFirst(prefix.count))] = object.size }
        self.existing = existing
    }

    /// Whether an object of that name (relative to the prefix) was there at the start.
    func has(_ name: String) -> Bool { existing[name] != nil }

    /// The record object of a clip when it is there for `fingerprint` and every output it lists is
    /// there at its size.
    func completedRecord(id: String, fingerprint: String) -> BatchRecord? {
        guard has(id + "/.complete.json"), let bytes = try? ObjectOutput.get(prefix + id + "/.complete.json", limit: 16 << 20),
              let record = try? JSONDecoder().decode(BatchRecord.self, from: Data(bytes)),
              record.status == .ok, record.fingerprint == fingerprint, !record.outputs.isEmpty,
              record.outputs.allSatisfy({ $0.bytes > 0 && existing[$0.path] == Int64($0.bytes) })
        else { return nil }
        return record
    }

    /// A failure kept for the clip with this fingerprint, if permanent.
    func permanentFailure(id: String, fingerprint: String) -> BatchRecord? {
        guard has(".failures/" + id + ".json"), let bytes = try? ObjectOutput.get(prefix + ".failures/" + id + ".json", limit: 16 << 20),
              let record = try? JSONDecoder().decode(BatchRecord.self, from: Data(bytes)),
              record.fingerprint == fingerprint, record.permanence == .permanent else { return nil }
        return record
    }

    /// Uploads a clip's staged folder: the outputs its record lists (paths `<id>/<name>`), then the
    /// record. Objects of the clip's earlier complete run are replaced; any other existing object is
    /// not (the upload fails). On failure the objects this call made are deleted and the error thrown.
    func upload(_ record: BatchRecord, from staging: String) throws(PreviewLoopError) {
        let id = record.id
        // The clip's earlier objects are batch's own only when its record object is there.
        let owned = has(id + "/.complete.json")
        var made: [String] = []
        do throws(PreviewLoopError) {
            let names = record.outputs.map { String($0.path.dropFirst(id.count + 1)) } + [".complete.json"]
            for name in names {
                let key = id + "/" + name
                let replaces = owned && has(key)
                try ObjectOutput.upload(file: staging + "/" + name, to: prefix + key, ifAbsent: !replaces)
                if !has(key) { made.append(prefix + key) }
            }
        } catch {
            for url in made { try? ObjectOutput.deleteCreated(url) }
            throw error
        }
    }

    /// Keeps a permanent failure's record as `.failures/<id>.json` (batch's own object: replaced).
    func keepFailure(_ record: BatchRecord) {
        try? ObjectOutput.upload(Array(record.jsonLine().utf8), to: prefix + ".failures/" + record.id + ".json")
    }
}
