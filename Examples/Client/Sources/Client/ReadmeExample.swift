import PreviewLoop

// The README's library example, kept here so that it compiles (Scripts/check-client.sh).
func readmeExample() async throws(PreviewLoopError) {
    let loop = try await LoopPlayer(source: .file("clip.mp4"),              // or .url(URL), .data(Data), .standardInput
                                    configuration: .init(size: PreviewLoop.Size(width: 320, height: 180)))
    for try await frame in loop.frames(loops: 2) {                      // cancelling the task throws .cancelled
        _ = frame.pixels            // RGB24, width * 3 bytes per row, top row first
        _ = frame.presentationTime  // Duration from the window start (restarts at 0 each pass)
        _ = (frame.loopIndex, frame.index, frame.timings.decode)        // 0-based
    }
    let sampler = try await FrameSampler(source: .file("clip.mp4"))
    let still = try await sampler.frame(at: 12.5, size: PreviewLoop.Size(width: 640, height: 360))
    let info = try await MediaProbe.probe(.file("clip.mp4"))
    _ = (still, info)

    // A contact strip: 8 frames across the window from 10 % of the clip for 30 s, 4 per row.
    let strip = try await sampler.contactStrip(.init(count: 8, columns: 4, span: .window(start: .percent(10), length: 30)))
    _ = (strip.image, strip.tileTimes, strip.span)  // the RGB24 picture; each tile's time; the span in seconds

    // Windows may be percentages, resolved by the library from the input it opened (stdin too).
    let piped = try await LoopPlayer(source: .standardInput, configuration: .init(windowStart: .percent(10)))
    _ = (piped.windowStart, piped.windowLength)     // Duration, resolved

    // Cancellation: every async call ends with PreviewLoopError(.cancelled), its work stopped.
    let render = Task { () async throws(PreviewLoopError) -> RenderSummary in
        try await loop.render(to: "preview.mp4")
    }
    render.cancel()
    do {
        _ = try await render.value
    } catch let error as PreviewLoopError where error.code == .cancelled {
        // no file was written, no thread or FFmpeg object is left
    } catch {}
}
