/// Where recorded frames go: every frame presented between `startRecording` and `stopRecording`.
///
/// `write(_:)` is called on the loop's thread, in presentation order; `finish()` once, when recording
/// stops (by `stopRecording()`, by a new `startRecording`, or when the loop ends).
public protocol FrameSink: AnyObject, Sendable {
    /// Takes one presented frame.
    func write(_ frame: VideoFrame) throws(PreviewLoopError)
    /// Completes the output (closes files, writes indexes).
    func finish() throws(PreviewLoopError)
}
