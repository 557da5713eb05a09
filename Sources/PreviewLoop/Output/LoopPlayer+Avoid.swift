extension LoopPlayer {
    /// `render(…, flashSafety: .avoid)`: one read of the clip around the window asked for, turned into
    /// output frames at `framesPerSecond` and searched for the nearest safe window
    /// (``SafeWindowSearch``), whose frames are then written and checked as with ``FlashSafety/check``.
    ///
    /// The frames a candidate may still become are held in memory, as output pictures (at most the
    /// search's reach on both sides plus a window, usually a window and a step); they count against
    /// `maxFrames`.
    func renderAvoidingFlashes(to destination: AnimationDestination, format: AnimationFormat, framesPerSecond: Int, quality: Int?,
                               encoderThreads: Int, maxFrames: Int, loopPoint: LoopEnd, fade: Double,
                               progress: (_ completed: Int, _ total: Int) -> Void) throws(PreviewLoopError) -> RenderSummary {
        try ValueRanges.check(framesPerSecond: framesPerSecond)
        let path = destination.name(format: format)
        let fps = Double(framesPerSecond)
        let window = windowLength.seconds
        let requestedStart = windowStart.seconds
        // The grid runs from a whole number of frames before the start asked for, so that it holds that start.
        let reach = Int((FlashAvoidance.searchReach * fps).rounded(.down))
        let before = min(reach, Int((requestedStart * fps + 1e-6).rounded(.down)))
        let searchStart = max(0, requestedStart - Double(before) / fps)
        let windowFrames = max(1, Int((window * fps - 1e-6).rounded(.up)))
        // What the chosen window's render needs after its start: past the out point for a seam.
        let decodeLength = window * (loopPoint == .auto ? 1 + LoopEnd.searchFraction : 1) + fade
        let decodeFrames = max(windowFrames, Int((decodeLength * fps - 1e-6).rounded(.up)))
        var search = SafeWindowSearch(framesPerSecond: framesPerSecond, windowFrames: windowFrames, requested: before,
                                      stride: max(1, Int((FlashAvoidance.searchStep * fps).rounded())), reach: reach)
        let rangeLength = Double(before + reach) / fps + decodeLength
        let expectedLength = info.duration.map { min(rangeLength, max(0, $0 - searchStart)) } ?? rangeLength
        let expected = max(1, Int((expectedLength * fps).rounded(.up)))

        // Output frames from `heldFrom` on; `made` counts every one made.
        var held: [RGBImage] = []
        var heldFrom = 0
        var made = 0
        var resampler = ConstantRateResampler(framesPerSecond: framesPerSecond)
        var current: RGBImage?
        var times: [Double] = []
        let control = LoopControl()
        // Whether the search stopped the read itself, its answer known: `control.isStopped` cannot tell,
        // as a run that reaches the clip's end cancels its control's I/O too.
        var stoppedEarly = false
        func emit(_ image: RGBImage) throws(PreviewLoopError) {
            made += 1
            held.append(image)
            if !search.isDecided { search.add(FlashSample(image)) }
            // Keep what the search may still choose, or, once it has chosen, the chosen window's frames.
            let keep = search.isDecided ? (search.chosen ?? made) : search.keptFrom
            if keep > heldFrom {
                held.removeFirst(min(held.count, keep - heldFrom))
                heldFrom = keep
            }
            guard held.count <= maxFrames else {
                throw PreviewLoopError(.tooLarge, "\(path): more than \(maxFrames) frames would be held to find a window free of flashes")
            }
            if search.isDecided && (search.chosen.map { made >= $0 + decodeFrames } ?? true) {
                stoppedEarly = true
                control.stop()
            }
        }
        do throws(PreviewLoopError) {
            try run(loops: 1, control: control, windowStart: .fromSeconds(searchStart),
                    windowLength: .fromSeconds(rangeLength)) { frame throws(PreviewLoopError) in
                let time = frame.presentationTime.seconds
                for _ in 0..<resampler.advance(to: time) { try emit(current ?? frame.image) }
                current = frame.image
                times.append(time)
                progress(min(made, expected), max(expected, made))
            }
        } catch where error.code == .cancelled && stoppedEarly {
            // The answer was known and its frames held: the rest of the clip is not read.
        }
        guard let last = current, let lastTime = times.last else {
            throw PreviewLoopError(.corruptData, "\(source): no frame could be decoded around the loop window")
        }
        var lastDuration = 1 / fps
        if !stoppedEarly {
            // The clip ended within the range (a clip shorter than the window is one candidate, judged
            // whole here): its last frame fills the instants up to where it stops showing.
            let interval = info.frameInterval(orElse: times.count > 1 ? lastTime - times[times.count - 2] : 1 / fps)
            let (remaining, finalDuration) = resampler.finish(length: min(rangeLength, lastTime + interval))
            for _ in 0..<remaining where !search.isDecided || search.chosen.map({ made < $0 + decodeFrames }) == true {
                try emit(last)
            }
            lastDuration = finalDuration
            search.finish()
        }
        guard let chosen = search.chosen else {
            let verdict = search.requestedVerdict.map { " (the window asked for: \($0.rawValue))" } ?? ""
            throw PreviewLoopError(.unsafeFlashes, "\(source): no \(DecimalText.fixed(window, 3)) s loop within "
                                   + "\(DecimalText.fixed(FlashAvoidance.searchReach, 0)) s of \(DecimalText.fixed(requestedStart, 3)) s "
                                   + "is free of photosensitive flashes\(verdict); \(search.windowsChecked) windows checked, nothing written")
        }
        held.removeFirst(min(held.count, max(0, chosen - heldFrom)))
        let frames = Array(held.prefix(decodeFrames))
        held = []
        // A window that ends before the last frame made lasts whole frames.
        if chosen + frames.count < made { lastDuration = 1 / fps }
        let start = searchStart + Double(chosen) / fps
        let writer = try AnimationWriter(to: destination, format: format, size: configuration.size,
                                         framesPerSecond: framesPerSecond, quality: quality, threads: encoderThreads)
        writer.maxFrames = maxFrames
        var meter = SeamMeter()
        var check = LoopFlashCheck(framesPerSecond: framesPerSecond)
        let plan = LoopSeamPlan.plan(thumbnails: frames.map(SeamThumbnail.init), target: windowFrames, loopPoint: loopPoint,
                                     crossfade: fade > 0 ? max(1, Int((fade * fps).rounded())) : 0)
        for index in 0..<plan.frameCount {
            let image = plan.frame(index, of: frames)
            try writer.append(image)
            meter.add(image)
            check.add(image)
        }
        if plan.frameCount < frames.count { lastDuration = 1 / fps }
        try writer.finish(lastFrameDuration: .fromSeconds(lastDuration))
        progress(writer.frameCount, writer.frameCount)
        let playTime = Double(writer.frameCount - 1) / fps + lastDuration
        var summary = RenderSummary(path: writer.path, format: format, size: configuration.size, framesPerSecond: framesPerSecond,
                                    frameCount: writer.frameCount, duration: .fromSeconds(playTime), sourceFrameCount: times.count,
                                    seam: meter.measure, crossfade: .fromSeconds(Double(plan.crossfadeFrames) / fps))
        summary.bytes = writer.bytes
        summary.flashes = check.report(playTime: playTime)
        summary.flashAvoidance = FlashAvoidance(requestedStart: windowStart, start: chosen == before ? windowStart : .fromSeconds(start),
                                                windowsChecked: search.windowsChecked)
        return summary
    }
}
