/// The defaults the library's initialisers use, named once so the CLI's options show and use the same.
extension SourceOptions {
    /// Seconds allowed for opening an input, and for each read once open (a stall), by default: 30.
    public static let defaultTimeout = 30.0
}

/// Decoding defaults shared by ``PreviewLoop``, ``FrameSampler``, ``PreviewCard`` and the CLI.
public enum DecodingDefaults {
    /// Decoding threads when none are given: 2 (FFmpeg's own default for a library user is 1; frame
    /// threading beyond a few threads adds latency after each seek).
    public static let threads = 2
}
