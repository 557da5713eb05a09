import PreviewLoop
import PreviewLoopJobs
import Synchronization

/// The bytes of one decoded frame of each source, read from its container (no frame decoded, except the
/// first of an HDR stream) on the worker before a render takes its share of the memory budget, so a 4K
/// or 8K source is counted at its size and a small one is not counted as 4K. Remembered by the source's
/// version, at most `limit` sources (then forgotten at once).
///
/// Invariant: `known` is touched only under its lock.
final class SourceSizes: Sendable {
    private let known = Mutex<[String: Int]>([:])
    static let limit = 4096

    /// A file as a source resolved under its own folder (for tests).
    static func resolve(_ path: String) -> ResolvedSource? {
        guard let real = SourcePath.realPath(path), let slash = real.lastIndex(of: "/") else { return nil }
        return SourcePath.resolve([String(real[real.index(after: slash)...])], under: String(real[..<slash]))
    }

    /// The frame bytes of `source` (a file under the root), or `nil` when it cannot be probed (the render
    /// will say why).
    func frameBytes(of source: ResolvedSource) -> Int? {
        if let bytes = known.withLock({ $0[source.version] }) { return bytes }
        guard let info = try? MediaProbe.probe(.file(source.path)) else { return nil }
        let bytes = PreviewJob.frameBytes(width: info.width, height: info.height, bitDepth: info.bitDepth)
        known.withLock { known in
            if known.count >= Self.limit { known.removeAll(keepingCapacity: true) }
            known[source.version] = bytes
        }
        return bytes
    }
}
