import Glibc

/// A folder read as a batch's clip list: every video file under it, recursively, in a stable order,
/// with ids from the files' relative paths.
public struct BatchFolderScan: Sendable, Hashable {
    /// The clips found, ordered by relative path.
    public var clips: [BatchClip]
    /// What was passed over, by reason (`not a video`, `hidden`, `excluded`, `not included`,
    /// `unreadable`, `batch output`), counting files and folders.
    public var skipped: [String: Int]

    /// `3 skipped (hidden: 1, not a video: 2)`, or `nothing skipped`.
    public var skippedSummary: String {
        let total = skipped.values.reduce(0, +)
        guard total > 0 else { return "nothing skipped" }
        return "\(total) skipped (" + skipped.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
    }
}

/// Finds the video files of a folder for `batch DIR`.
///
/// Rules: entries whose name starts with `.` are hidden and skipped (a hidden folder is not entered), and
/// so is a batch's output folder (``isBatchOutput(_:)``, not empty);
/// symbolic links to folders are not followed (no loops), links to files are; a file is a video when
/// its extension is one of ``videoExtensions`` (case-insensitive). `include` and `exclude` are shell
/// globs (`fnmatch`, `*` also matching `/`), each tried against the relative path and the base name:
/// with includes, a file must match one; a file or folder matching an exclude is skipped.
public enum BatchFolder {
    /// The extensions taken as video files.
    public static let videoExtensions: Set<String> = [
        "3g2", "3gp", "avi", "flv", "m2ts", "m2v", "m4v", "mkv", "mov", "mp4", "mpeg", "mpg", "mts", "mxf", "ogv", "ts",
        "vob", "webm", "wmv",
    ]
    /// The most files a folder may hold (as a manifest's line limit would be).
    public static let maxFiles = 1_000_000
    /// The deepest folder entered.
    public static let maxDepth = 64

    /// Scans `root` recursively.
    ///
    /// - Throws: ``PreviewLoopError/Code/inputNotFound`` or `.inputNotReadable` for a root that is not a
    ///   readable folder; `.tooLarge` past ``maxFiles`` entries.
    public static func scan(_ root: String, include: [String] = [], exclude: [String] = []) throws(PreviewLoopError) -> BatchFolderScan {
        var trimmedRoot = root
        while trimmedRoot.count > 1 && trimmedRoot.hasSuffix("/") { trimmedRoot.removeLast() }
        var found: [String] = []
        var skipped: [String: Int] = [:]
        var seen = 0
        func matches(_ patterns: [String], _ relative: String, _ name: String) -> Bool {
            patterns.contains { pattern in
                FilePathBytes.withCString(pattern) { pattern in
                    FilePathBytes.withCString(relative) { fnmatch(pattern, $0, 0) == 0 } || FilePathBytes.withCString(name) { fnmatch(pattern, $0, 0) == 0 }
                }
            }
        }
        func walk(_ relative: String, depth: Int) throws(PreviewLoopError) {
            let path = relative.isEmpty ? trimmedRoot : trimmedRoot + "/" + relative
            // Names are decoded with FilePathBytes' escape, so a name that is not UTF-8 reaches its file.
            guard let names = FileSystem.names(inDirectory: path) else {
                if relative.isEmpty {
                    throw PreviewLoopError(errno == ENOENT ? .inputNotFound : .inputNotReadable, "\(root): cannot read the folder")
                }
                skipped["unreadable", default: 0] += 1
                return
            }
            for name in names.sorted() {
                seen += 1
                if seen > maxFiles {
                    throw PreviewLoopError(.tooLarge, "\(root): more than \(maxFiles) entries; split the library or use a manifest")
                }
                let child = relative.isEmpty ? name : relative + "/" + name
                if name.hasPrefix(".") { skipped["hidden", default: 0] += 1; continue }
                if matches(exclude, child, name) { skipped["excluded", default: 0] += 1; continue }
                var status = stat()
                let full = trimmedRoot + "/" + child
                guard FileSystem.lstat(full, &status) == 0 else { skipped["unreadable", default: 0] += 1; continue }
                var kind = status.st_mode & S_IFMT
                if kind == S_IFLNK {
                    // A link to a file is that file; a link to a folder is not followed.
                    guard FileSystem.stat(full, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
                        skipped["link", default: 0] += 1
                        continue
                    }
                    kind = S_IFREG
                }
                if kind == S_IFDIR {
                    guard depth < maxDepth else { skipped["too deep", default: 0] += 1; continue }
                    // A batch's output folder (`-o` inside the folder): its hover.mp4 files are outputs, not inputs.
                    if let inside = FileSystem.names(inDirectory: full), holdsBatchMarkers(inside) {
                        skipped["batch output", default: 0] += 1
                        continue
                    }
                    try walk(child, depth: depth + 1)
                    continue
                }
                guard kind == S_IFREG else { skipped["not a file", default: 0] += 1; continue }
                let fileExtension = name.lastIndex(of: ".").map { String(name[name.index(after: $0)...]).lowercased() } ?? ""
                guard videoExtensions.contains(fileExtension) else { skipped["not a video", default: 0] += 1; continue }
                if !include.isEmpty && !matches(include, child, name) { skipped["not included", default: 0] += 1; continue }
                found.append(child)
            }
        }
        try walk("", depth: 0)
        let ids = ids(for: found)
        let clips = zip(found, ids).map { BatchClip(id: $0.1, input: (trimmedRoot == "/" ? "" : trimmedRoot) + "/" + $0.0) }
        return BatchFolderScan(clips: clips, skipped: skipped)
    }

    /// Ids for relative paths: the path without its extension, `/` and every character an id cannot
    /// hold made `_` (`trailers/Big Buck.mp4` → `trailers_Big_Buck`); paths that would share an id, or
    /// whose id would be too long, get a short hash of the whole path as well, as manifest ids do.
    public static func ids(for relativePaths: [String]) -> [String] {
        let plain = relativePaths.map { path -> String in
            var base = path
            if let dot = base.lastIndex(of: "."), base[..<dot].last != "/", dot != base.startIndex { base = String(base[..<dot]) }
            var safe = String(base.unicodeScalars.map { scalar -> Character in
                scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-"
                                   || scalar == ".") ? Character(scalar) : "_"
            })
            while safe.hasPrefix("_") || safe.hasPrefix("-") || safe.hasPrefix(".") { safe.removeFirst() }
            while safe.hasSuffix(".jsonl") { safe.removeLast(6) }
            return safe
        }
        return BatchManifest.uniqueIDs(names: plain, keys: relativePaths, maxLength: 110)
    }
}

extension BatchFolder {
    /// The suffix of the output folder `batch DIR` uses when none is given (``defaultOutputDirectory(for:)``).
    public static let defaultOutputSuffix = "-previews"

    /// The output folder for a folder batch given no output folder: `DIR-previews`, beside `DIR`.
    ///
    /// Beside, not inside: a folder batch takes every video under `DIR`, and its hover previews
    /// (`hover.mp4`) would be taken as inputs by the next run. Named after `DIR` alone, so a rerun from
    /// another working directory uses the same folder. `.` and `..` are named by the folder they
    /// resolve to (`batch .` in `~/clips` writes `~/clips-previews`).
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` for the root folder (nothing is beside it)
    ///   or a `DIR-previews` that would lie inside `DIR` (through a symbolic link);
    ///   ``PreviewLoopError/Code/refusedByPolicy`` when `DIR-previews` exists and is not a batch's output
    ///   folder (``isBatchOutput(_:)``): batch never writes into a folder of the user's.
    public static func defaultOutputDirectory(for root: String) throws(PreviewLoopError) -> String {
        var base = root
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        let last = base.split(separator: "/").last.map(String.init) ?? ""
        if base == "/" || last.isEmpty || last == "." || last == ".." {
            guard let resolved = FileSystem.resolvedPath(base) else {
                throw PreviewLoopError(.inputNotFound, "\(root): cannot read the folder")
            }
            base = resolved
        }
        guard base != "/" else {
            throw PreviewLoopError(.invalidArgument, "\(root): the root folder has no folder beside it for the outputs; give --out <dir>")
        }
        let output = base + defaultOutputSuffix
        // Beside DIR on paper; a symbolic link on the way could still put it inside, where a rerun would read it.
        if let folder = FileSystem.resolvedPath(root),
           let resolved = FileSystem.resolvedPath(output) ?? FileSystem.resolvedPath(FileSystem.split(output).directory),
           resolved == folder || resolved.hasPrefix(folder == "/" ? "/" : folder + "/") {
            throw PreviewLoopError(.invalidArgument, "\(output): lies inside \(root), where the next run would take its videos as "
                + "inputs; give --out <dir> outside it")
        }
        var status = stat()
        guard FileSystem.lstat(output, &status) == 0 else { return output }
        guard FileSystem.fileExists(output).isDirectory, isBatchOutput(output) else {
            throw PreviewLoopError(.refusedByPolicy, "\(output): exists and is not a batch output folder (it holds no "
                + ".lock.all or .staging); batch writes its outputs there only when it made it: give --out <dir>, or move it")
        }
        return output
    }

    /// Whether `path` is a folder a batch may take as its output folder without writing over anything of
    /// someone else's: an empty folder, or one a batch made (it holds the `.lock.<shard>` file or the
    /// `.staging` folder every run creates first).
    public static func isBatchOutput(_ path: String) -> Bool {
        guard let names = FileSystem.names(inDirectory: path) else { return false }
        return names.isEmpty || holdsBatchMarkers(names)
    }

    /// Whether a folder's names include what every batch run creates first in its output folder.
    static func holdsBatchMarkers(_ names: [String]) -> Bool {
        names.contains { $0 == ".staging" || $0 == ".lock.all" || $0.hasPrefix(".lock.shard-") }
    }
}
