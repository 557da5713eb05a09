import Glibc

/// A folder read as a batch's clip list: every video file under it, recursively, in a stable order,
/// with ids from the files' relative paths.
public struct BatchFolderScan: Sendable, Hashable {
    /// The clips found, ordered by relative path.
    public var clips: [BatchClip]
    /// What was passed over, by reason (`not a video`, `hidden`, `excluded`, `not included`,
    /// `unreadable`), counting files and folders.
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
/// Rules: entries whose name starts with `.` are hidden and skipped (a hidden folder is not entered);
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
