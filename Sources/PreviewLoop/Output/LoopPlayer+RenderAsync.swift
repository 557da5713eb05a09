extension LoopPlayer {
    /// Renders one pass of the window as a looping file, off the calling thread; a cancelled render
    /// leaves no file. See ``render(to:format:framesPerSecond:quality:encoderThreads:maxFrames:loopPoint:seam:flashSafety:progress:)-(String,_,_,_,_,_,_,_,_,_)``.
    @discardableResult
    public func render(to path: String, format: AnimationFormat? = nil, framesPerSecond: Int = 15, quality: Int? = nil,
                       encoderThreads: Int = AnimationWriter.defaultThreads, maxFrames: Int = .max, loopPoint: LoopEnd = .length,
                       seam: LoopSeam = .cut, flashSafety: FlashSafety = .off) async throws(PreviewLoopError) -> RenderSummary {
        try await BlockingCall.run("PreviewLoop render") { () throws(PreviewLoopError) in
            try self.render(to: path, format: format, framesPerSecond: framesPerSecond, quality: quality,
                            encoderThreads: encoderThreads, maxFrames: maxFrames, loopPoint: loopPoint, seam: seam,
                            flashSafety: flashSafety)
        }
    }
}

extension LoopPlayer {
    /// Renders one pass of the window to a file or to memory, off the calling thread; a cancelled
    /// render leaves nothing. See the blocking `render(to:format:…)` with an ``AnimationDestination``.
    @discardableResult
    public func render(to destination: AnimationDestination, format: AnimationFormat? = nil, framesPerSecond: Int = 15,
                       quality: Int? = nil, encoderThreads: Int = AnimationWriter.defaultThreads, maxFrames: Int = .max,
                       loopPoint: LoopEnd = .length, seam: LoopSeam = .cut,
                       flashSafety: FlashSafety = .off) async throws(PreviewLoopError) -> RenderSummary {
        try await BlockingCall.run("PreviewLoop render") { () throws(PreviewLoopError) in
            try self.render(to: destination, format: format, framesPerSecond: framesPerSecond, quality: quality,
                            encoderThreads: encoderThreads, maxFrames: maxFrames, loopPoint: loopPoint, seam: seam,
                            flashSafety: flashSafety)
        }
    }
}
