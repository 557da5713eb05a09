/// The hover preview of a batch clip: made from the clip's one decoder (its first frames possibly
/// handed over by the poster's search), or, with a loop point or a seam, by render's own call.
extension BatchClipJob {
    /// The poster as `thumb --at auto`: the first good frame of the window. When the hover preview
    /// starts where the search does, its first frames come from the search's decoding.
    func autoPoster(_ poster: BatchRecipe.Poster, sharingWith hoverPreview: HoverPreview?) throws(PreviewLoopError) -> PosterChoice {
        let duration = info.duration
        var start = clip.overrides.start ?? poster.start
        var end = start + (clip.overrides.length ?? poster.length)
        if let duration {
            guard start < duration else {
                throw PreviewLoopError(.invalidArgument, "\(clip.input): the poster window starts at \(start) s, at or past the end (\(duration) s)")
            }
            end = min(end, duration)
        }
        start = max(0, start)
        if let hover = recipe.hover, let preview = hoverPreview, max(0, preview.start) == start {
            // Timed in poster_ms; the rest of the hover in hover_ms.
            let shared = try sampler.posterFrame(in: start..<end, size: poster.size, sharing: preview.times,
                                                 convertedTo: hover.size) { (frame: VideoFrame) throws(PreviewLoopError) in
                try preview.append(frame)
            }
            return shared.poster
        }
        return try sampler.posterFrame(in: start..<end, size: poster.size)
    }

    /// The hover preview: the exact frame shown at each instant `start + k / fps` of the window, from
    /// the clip's one decoder, encoded as a looping H.264 MP4. Frames the poster's search already
    /// handed over (``HoverPreview/written``) are not decoded again.
    func finishHover(_ preview: HoverPreview, _ hover: BatchRecipe.Hover, entry: BatchRecord.Output) throws -> BatchRecord.Output {
        let fps = Double(hover.framesPerSecond)
        let wanted = preview.times.count
        var next = preview.written
        decoding: while next < wanted {
            try checkStop()
            // A second of instants at a time: one scaler for all of them, forward decoding reused.
            let times = Array(preview.times[next..<min(wanted, next + hover.framesPerSecond)])
            do throws(PreviewLoopError) {
                for frame in try sampler.frames(at: times, size: hover.size, accuracy: .exact, interval: 0) {
                    try preview.append(frame)
                }
            } catch {
                guard error.code == .corruptData && preview.written + times.count > 1 else { throw error }
                // The container's duration ran past the video's last frame: the preview ends there.
                for time in times {
                    guard let frame = try? sampler.frame(at: time, size: hover.size, accuracy: .exact) else {
                        guard preview.written > 0 else { throw error }
                        preview.lastDuration = 1 / fps
                        break decoding
                    }
                    try preview.append(frame)
                }
            }
            next += times.count
        }
        // As render ends a pass: where the clip's last frame stops showing, when that comes before the
        // window's end — the container's duration may say a little more or less than the video holds.
        let interval = sampler.info.frameInterval(orElse: preview.lastStep ?? 1 / fps)
        if var last = preview.lastSourceTime, preview.written > 0,
           sampler.info.duration.map({ preview.start + hover.length > $0 - 2 * interval }) ?? true {
            // The last frame render decodes: the one shown just before the window's end (or the clip's).
            if let frame = try? sampler.frame(at: preview.start + hover.length - 1e-6, size: hover.size, accuracy: .exact) {
                last = max(last, frame.sourceTime)
            }
            let length = min(hover.length, last + interval - preview.start)
            while Double(preview.written) / fps < length - 1e-9 {
                let time = preview.start + Double(preview.written) / fps
                guard let frame = try? sampler.frame(at: time, size: hover.size, accuracy: .exact) else { break }
                try preview.append(frame)
            }
            let shown = Double(preview.written - 1) / fps
            if shown < length { preview.lastDuration = min(1 / fps, length - shown) }
        }
        try preview.writer.finish(lastFrameDuration: .seconds(preview.lastDuration))
        var result = entry
        result.flashes = preview.flashCheck?.report(playTime: Double(preview.written - 1) / fps + preview.lastDuration)
        result.width = hover.size.width
        result.height = hover.size.height
        result.time = preview.start
        result.frames = preview.written
        result.duration = (Double(preview.written - 1) / fps + preview.lastDuration).rounded(toPlaces: 6)
        return result
    }

    /// A hover with a loop point or a seam: made by the call `render --loop-point … --seam …` makes
    /// (``LoopPlayer`` on the clip, opened again, and its ``LoopPlayer/render(to:format:framesPerSecond:quality:encoderThreads:maxFrames:loopPoint:seam:flashSafety:progress:)-(String,_,_,_,_,_,_,_,_,_)``
    /// with render's defaults), so the file is the one `render` writes with the same options. The frames
    /// held to find the seam are bounded by ``BatchRecipe/seamedHoverBytes``.
    func renderHover(_ hover: BatchRecipe.Hover, start: Double, entry: BatchRecord.Output) throws(PreviewLoopError) -> BatchRecord.Output {
        let player = try LoopPlayer(source: Source(argument: clip.input), configuration: .init(
            size: hover.size, windowStart: .seconds(start), windowLength: .seconds(hover.length),
            windowEnd: hover.loopPoint?.windowEnd, threads: min(threads, 16), sourceOptions: sourceOptions))
        let summary = try player.render(to: staging + "/" + hover.fileName, format: hover.format, framesPerSecond: hover.framesPerSecond, quality: hover.quality,
                                        maxFrames: max(1, BatchRecipe.seamedHoverBytes / max(1, hover.size.area * 3)),
                                        loopPoint: hover.loopPoint?.loopPoint ?? .length, seam: hover.seam,
                                        flashSafety: hover.flashSafety)
        try checkStop()
        var result = entry
        let windowStart = summary.flashAvoidance?.start.seconds ?? player.windowStart.seconds
        result.width = summary.size.width
        result.height = summary.size.height
        result.time = windowStart.rounded(toPlaces: 6)
        result.frames = summary.frameCount
        result.duration = summary.duration.seconds.rounded(toPlaces: 6)
        if hover.loopPoint != nil || hover.seam != .cut {
            // The out point: the loop's one play ends there (the frame after its last would be shown then).
            result.loopPoint = (windowStart + summary.duration.seconds).rounded(toPlaces: 6)
            result.seam = SeamReport(summary)
        }
        result.flashes = summary.flashes
        if let avoidance = summary.flashAvoidance {
            result.timeAsked = avoidance.requestedStart.seconds.rounded(toPlaces: 6)
            result.choice = avoidance.isMoved ? "moved clear of flashes" : "window asked for"
        }
        return result
    }
}

/// A hover preview in the making: its instants, its open writer and the frames written so far.
final class HoverPreview {
    let start: Double
    /// `start + k / fps` for each frame of the preview.
    let times: [Double]
    let writer: AnimationWriter
    private(set) var written = 0
    /// How long the last frame is shown (the window may end between two instants).
    var lastDuration: Double
    /// With `flash_safety` `check`: the frames written, for their flash verdicts on repeat.
    private(set) var flashCheck: LoopFlashCheck?

    init(_ hover: BatchRecipe.Hover, start: Double, clip: BatchClip, duration: Double?, path: String) throws(PreviewLoopError) {
        self.start = start
        var length = hover.length
        if let duration {
            guard start < duration else {
                throw PreviewLoopError(.invalidArgument, "\(clip.input): the hover window starts at \(start) s, at or past the end (\(duration) s)")
            }
            length = min(length, duration - start)
        }
        let fps = Double(hover.framesPerSecond)
        let wanted = max(1, Int((length * fps - 1e-6).rounded(.up)))
        times = (0..<wanted).map { start + Double($0) / fps }
        lastDuration = length - Double(wanted - 1) / fps
        writer = try AnimationWriter(path: path, format: hover.format, size: hover.size,
                                     framesPerSecond: hover.framesPerSecond, quality: hover.quality)
        if hover.flashSafety == .check { flashCheck = LoopFlashCheck(framesPerSecond: hover.framesPerSecond) }
    }

    /// The source time of the latest frame written, and the step from the frame before it.
    private(set) var lastSourceTime: Double?
    private(set) var lastStep: Double?

    func append(_ frame: VideoFrame) throws(PreviewLoopError) {
        try writer.append(frame.image)
        flashCheck?.add(frame.image)
        written += 1
        if let last = lastSourceTime, frame.sourceTime > last { lastStep = frame.sourceTime - last }
        lastSourceTime = max(lastSourceTime ?? frame.sourceTime, frame.sourceTime)
    }
}
