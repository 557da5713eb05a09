/// The `async` forms of the loop's blocking calls: each runs on a thread of its own, and cancelling the
/// awaiting task interrupts its I/O and decoding and throws ``PreviewLoopError/Code/cancelled``.
extension LoopPlayer {
    /// Opens and probes `source` off the calling thread; see ``init(source:configuration:sizeRequest:evenSize:)``.
    public convenience init(source: Source, configuration: Configuration = .init(), sizeRequest: SizeRequest? = nil,
                            evenSize: Bool = false) async throws(PreviewLoopError) {
        let opened = try await BlockingCall.run("PreviewLoop open") { () throws(PreviewLoopError) in
            try LoopPlayer(source: source, configuration: configuration, sizeRequest: sizeRequest, evenSize: evenSize)
        }
        self.init(taking: opened)
    }
}
