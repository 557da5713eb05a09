/// Where an animation is written: a file, or memory.
///
/// ```swift
/// let summary = try player.render(to: .memory, format: .mp4)
/// let bytes = summary.bytes ?? []      // what render(to: "preview.mp4") writes, byte for byte
/// ```
public enum AnimationDestination: Sendable, Hashable {
    /// The file at this path, written under a temporary name beside it and renamed into place when
    /// complete; its directory must exist.
    case file(String)
    /// A file in memory, handed back when complete (``AnimationWriter/bytes``, ``RenderSummary/bytes``,
    /// ``CardSummary/bytes``): the same bytes a file gets, with no file written. It grows up to
    /// ``AnimationWriter/maxBytes`` (``OutputLimits/defaultAnimationBytes`` unless set).
    case memory
}

extension AnimationDestination {
    /// How errors name the output: the file's path, or `the mp4 animation in memory`.
    func name(format: AnimationFormat) -> String {
        switch self {
        case .file(let path): path
        case .memory: "the \(format.rawValue) animation in memory"
        }
    }
}
