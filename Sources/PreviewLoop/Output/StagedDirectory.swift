import FoundationEssentials
import Glibc

/// A directory output (sprite sheets, a card's frames) built in a hidden sibling directory and swapped
/// in only when complete: readers see the old contents or the new, never a mix, and a failure (a full
/// disk, a signal) leaves the old contents as they were.
///
/// The rule for an existing directory: it is replaced only when everything in it is a regular file with
/// a name this kind of output writes (`ownsName`, e.g. `sprites-N.jpg` and `thumbnails.vtt`); a directory holding anything
/// else is refused before any work, so no user file is ever deleted. A symbolic link is refused too.
/// The new directory keeps the old one's permission bits. The swap is one `renameat2(RENAME_EXCHANGE)`
/// where the file system has it (else rename aside, rename in, rename back on failure); then the old
/// contents are removed file by file (only names `ownsName` accepts). Used from one thread.
package final class StagedDirectory {
    /// Where the finished directory goes.
    package let path: String
    /// Where it is built meanwhile: `.NAME.PID.RANDOM.tmp` beside it.
    package let stagingPath: String
    /// Whether a name is one this output writes.
    private let ownsName: (String) -> Bool
    /// Set once committed or discarded.
    private var isDone = false

    /// Checks the destination and creates the staging directory (and any missing parents of `path`).
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when `path` is a file or a symbolic link, holds
    ///   files this output does not write, or the staging directory cannot be made.
    package init(replacing path: String, ownsName: @escaping (String) -> Bool) throws(PreviewLoopError) {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        self.path = trimmed
        self.ownsName = ownsName
        var status = stat()
        var mode: mode_t?
        if FileSystem.lstat(trimmed, &status) == 0 {
            if status.st_mode & S_IFMT == S_IFLNK {
                throw PreviewLoopError(.outputNotWritable, "\(trimmed): is a symbolic link; name the directory itself")
            }
            guard status.st_mode & S_IFMT == S_IFDIR else {
                throw PreviewLoopError(.outputNotWritable, "\(trimmed): is a file, not a directory")
            }
            guard let names = FileSystem.names(inDirectory: trimmed) else {
                throw PreviewLoopError(.outputNotWritable, "\(trimmed): cannot be read (\(FileSystem.errorText(errno)))")
            }
            // Only regular files with the output's own names (a directory named card-00001.png is not ours).
            let isOwnFile = { (name: String) -> Bool in
                var entry = stat()
                return ownsName(name) && FileSystem.lstat(trimmed + "/" + name, &entry) == 0 && entry.st_mode & S_IFMT == S_IFREG
            }
            if let foreign = names.sorted().first(where: { !isOwnFile($0) }) {
                throw PreviewLoopError(.outputNotWritable, "\(trimmed): holds files this command did not write ('\(foreign)'); "
                    + "it replaces a directory only when all it holds is its own output: choose a new or empty directory")
            }
            mode = status.st_mode & 0o7777
        }
        let (parent, name) = FileSystem.split(trimmed)
        try AtomicFile.createDirectory(parent)
        stagingPath = FileSystem.appending(".\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp", to: parent)
        let path = stagingPath
        let made = TemporaryFiles.register(path, creatingWith: { FileSystem.mkdir(path, 0o777) == 0 ? 0 : errno }, created: { $0 == 0 })
        guard made == 0 else {
            throw PreviewLoopError(.outputNotWritable, "cannot create a directory beside \(trimmed): \(FileSystem.errorText(made))")
        }
        if let mode { FileSystem.chmod(stagingPath, mode) }
    }

    deinit {
        if !isDone { discard() }
    }

    /// The path of `name` inside the staging directory, where the output's files are written.
    package func file(_ name: String) -> String {
        stagingPath + "/" + name
    }

    /// Writes the file `name` into the staging directory (atomically); an error names it under ``path``,
    /// where it was meant to appear.
    package func write(_ bytes: [UInt8], named name: String) throws(PreviewLoopError) {
        do {
            try AtomicFile.write(bytes, to: file(name))
        } catch {
            var error = error
            error.message = error.message.replacing(stagingPath, with: path)
            throw error
        }
    }

    /// Swaps the finished directory into place and removes the old contents.
    ///
    /// - Throws: ``PreviewLoopError/Code/outputNotWritable`` when the swap fails (the old contents stay).
    package func commit() throws(PreviewLoopError) {
        precondition(!isDone, "committed or discarded already")
        var status = stat()
        let replaces = FileSystem.lstat(path, &status) == 0
        var failure: Int32 = 0
        var old: String?
        TemporaryFiles.whileHolding {
            if !replaces {
                if FileSystem.rename(stagingPath, path) != 0 { failure = errno }
            } else if Self.exchange(stagingPath, path) {
                old = stagingPath               // the staging path now holds the old contents
            } else {
                let aside = stagingPath + ".old"
                if FileSystem.rename(path, aside) != 0 {
                    failure = errno
                } else if FileSystem.rename(stagingPath, path) != 0 {
                    failure = errno
                    FileSystem.rename(aside, path)
                } else {
                    old = aside
                }
            }
        }
        guard failure == 0 else {
            discard()
            throw PreviewLoopError(.outputNotWritable, "\(path): cannot replace the directory (\(FileSystem.errorText(failure)))")
        }
        isDone = true
        TemporaryFiles.unregister(stagingPath)
        if let old {
            // Only this output's own names go; a file that appeared meanwhile keeps the old directory.
            for name in FileSystem.names(inDirectory: old) ?? [] where ownsName(name) {
                FileSystem.unlink(old + "/" + name)
            }
            FileSystem.rmdir(old)
        }
    }

    /// Removes the staging directory and what was written into it; the destination is untouched.
    package func discard() {
        guard !isDone else { return }
        isDone = true
        FileSystem.removeTree(stagingPath)
        TemporaryFiles.unregister(stagingPath)
    }

    /// `renameat2(from, to, RENAME_EXCHANGE)`: swaps two paths atomically; `false` when the system or
    /// the file system cannot (the caller then renames in steps).
    private static func exchange(_ from: String, _ to: String) -> Bool {
        guard let renameat2 = renameat2 else { return false }
        return FilePathBytes.withCString(from) { old in
            FilePathBytes.withCString(to) { renameat2(AT_FDCWD, old, AT_FDCWD, $0, 1 << 1) == 0 }      // RENAME_EXCHANGE
        }
    }

    private typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32

    /// glibc's `renameat2` (since 2.28), looked up at run time: Swift's Glibc module does not import it.
    private static let renameat2: RenameAt2? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "renameat2") else { return nil }
        return unsafeBitCast(symbol, to: RenameAt2.self)
    }()
}

extension StagedDirectory {
    /// Whether `name` is `prefix` + decimal digits + `suffix` (`sprites-12.jpg`, `card-00001.png`).
    package static func isNumbered(_ name: String, prefix: String, suffix: String) -> Bool {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count > prefix.count + suffix.count else { return false }
        return name.dropFirst(prefix.count).dropLast(suffix.count).allSatisfy { $0 >= "0" && $0 <= "9" }
    }
}
