import Glibc
import Synchronization

/// Where a clip's files are made and how they take their place in `OUT/<id>`: each clip is written in
/// its own staging folder (`OUT/.staging/<shard>/<id>`), then put in place in one rename, so a killed
/// run leaves a clip's outputs complete or absent. It never writes over what batch did not make.
final class BatchPublisher: Sendable {
    /// The batch's output folder.
    let outputDirectory: String
    /// This shard's staging folder.
    let stagingDirectory: String
    /// The run's local inputs (as given), checked against a clip's folder before it is written.
    private let inputs: [String]
    /// The run's local inputs, resolved and sorted, found the first time a clip's folder already exists.
    private let resolvedInputs = Mutex<[String]?>(nil)

    /// Clears the shard's staging folder (left by a killed run) and makes the batch's folders.
    init(outputDirectory out: String, shardName: String, inputs: [String]) throws(PreviewLoopError) {
        outputDirectory = out
        stagingDirectory = out + "/.staging/" + shardName
        self.inputs = inputs
        BatchFiles.remove(stagingDirectory)
        try BatchFiles.makeDirectory(stagingDirectory)
        try BatchFiles.makeDirectory(out + "/.failures")
    }

    /// The clip's staging folder, made empty.
    func emptyStaging(for id: String) throws(PreviewLoopError) -> String {
        let staging = stagingDirectory + "/" + id
        BatchFiles.remove(staging)
        try BatchFiles.makeDirectory(staging)
        return staging
    }

    /// Makes a clip's files in an empty staging folder with `body`, then puts the folder in place of
    /// `OUT/<id>`; the staging folder is removed when `body` or the publishing throws.
    func publish<Result>(_ id: String, _ body: (_ staging: String) throws -> Result) throws -> Result {
        let staging = try emptyStaging(for: id)
        var isPublished = false
        defer { if !isPublished { BatchFiles.remove(staging) } }
        let result = try body(staging)
        try move(staging, to: id)
        isPublished = true
        return result
    }

    /// Puts a finished staging folder in place of `OUT/<id>`: the old folder (incomplete, or redone
    /// with --force) goes aside, the new one takes its place, the old one is removed.
    private func move(_ staging: String, to id: String) throws(PreviewLoopError) {
        let destination = outputDirectory + "/" + id
        let old = staging + ".old"
        // Checked again: something may have appeared there while the clip was made.
        if let conflict = ownershipConflict(for: id) { throw PreviewLoopError(.refusedByPolicy, conflict) }
        if BatchFiles.exists(destination) {
            BatchFiles.remove(old)
            try BatchFiles.rename(destination, old)
        }
        try BatchFiles.rename(staging, destination)
        BatchFiles.remove(old)
    }

    /// Why the folder `OUT/<id>` must not be written, if it must not: something is there that batch
    /// did not make (anything but a folder holding its `.complete.json` — a user's file or folder, a
    /// symbolic link), or an input of this run lies there.
    func ownershipConflict(for id: String) -> String? {
        let destination = outputDirectory + "/" + id
        var status = stat()
        guard FileSystem.lstat(destination, &status) == 0 else { return nil }
        let type = status.st_mode & S_IFMT
        guard type == S_IFDIR, BatchFiles.fileSize(destination + "/.complete.json") != nil else {
            let what = type == S_IFDIR ? "a folder batch did not make (no .complete.json)"
                : type == S_IFLNK ? "a symbolic link" : "a file"
            return "\(destination) is \(what): batch leaves it as it is and does not make clip '\(id)'; "
                + "move it away, or give the clip another id or the batch another --out"
        }
        if let input = input(inside: destination) {
            return "\(destination) holds \(input), an input of this run: batch leaves it as it is and does not make clip '\(id)'"
        }
        return nil
    }

    /// An input of the run at or inside `folder` (both resolved), if any.
    private func input(inside folder: String) -> String? {
        guard let resolved = FileSystem.resolvedPath(folder) else { return nil }
        let inputs = resolvedInputs.withLock { cached -> [String] in
            if let cached { return cached }
            let all = self.inputs.compactMap { input -> String? in
                guard case .file(let path) = Source(argument: input) else { return nil }
                return FileSystem.resolvedPath(path)
            }.sorted()
            cached = all
            return all
        }
        // Sorted: the paths at or under `resolved` follow it directly.
        var low = 0, high = inputs.count
        while low < high {
            let middle = (low + high) / 2
            if inputs[middle] < resolved { low = middle + 1 } else { high = middle }
        }
        guard low < inputs.count else { return nil }
        let found = inputs[low]
        return found == resolved || found.hasPrefix(resolved + "/") ? found : nil
    }
}
