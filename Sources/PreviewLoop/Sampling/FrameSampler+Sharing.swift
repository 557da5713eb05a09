/// Picks, from consecutive decoded frames offered in order, the frame displayed at each of a list of
/// increasing instants: the last frame whose time is at or before the instant, and the first frame
/// for instants before it — the frame ``VideoDecoder/frameDisplayed(at:current:)`` gives when it
/// decodes forward over the same frames.
struct DisplayedFramePicker {
    /// The instants, in seconds from the stream's start, in increasing order.
    let instants: [Double]
    /// How many instants (a prefix) have their frame.
    private(set) var resolved = 0
    private var held: TimedFrame?

    init(instants: [Double]) { self.instants = instants }

    /// Offers the next decoded frame; `take` receives each instant (by index) whose frame is now
    /// known, with that frame, in increasing order.
    mutating func offer(_ frame: TimedFrame,
                        take: (Int, TimedFrame) throws(PreviewLoopError) -> Void) throws(PreviewLoopError) {
        guard let previous = held else {
            held = frame
            // Instants before the first frame show it.
            while resolved < instants.count, instants[resolved] < frame.time - 1e-6 {
                try take(resolved, frame)
                resolved += 1
            }
            return
        }
        while resolved < instants.count, frame.time > instants[resolved] + 1e-6 {
            try take(resolved, previous)
            resolved += 1
        }
        held = frame
    }
}

extension FrameSampler {
    /// ``posterFrame(in:size:mode:)`` that also converts, from the frames its search decodes anyway,
    /// the exact frames displayed at `instants` (increasing, from the window's start on), handing
    /// each to `take` in order; returns the poster and how many instants (a prefix) were served.
    /// The rest are left to ``frames(at:size:mode:accuracy:interval:)``, which goes on decoding
    /// forward from where the search stopped — so a poster and a short preview starting at the same
    /// place decode that stretch once, not twice.
    func posterFrame(in window: Range<Double>, size: Size, mode: ContentMode = .aspectFill,
                     sharing instants: [Double], convertedTo sharedSize: Size,
                     take: (VideoFrame) throws(PreviewLoopError) -> Void) throws(PreviewLoopError) -> (poster: PosterChoice, served: Int) {
        guard sharedSize.width > 0, sharedSize.height > 0 else { throw PreviewLoopError(.invalidArgument, "output size must be positive") }
        let aspect = info.sampleAspectRatio
        let scaler = FrameScaler(outputSize: sharedSize, mode: .aspectFill, for: decoder)
        let started = ContinuousClock.now
        var picker = DisplayedFramePicker(instants: instants)
        // The search decodes its second frame by frame here (no keyframe confirmation): those frames
        // are the preview's first second, needed anyway.
        let poster = try posterFrame(in: window, size: size, mode: mode, retention: decoder.isSeekable ? .likely : .undecided,
                                     confirmsWithKeyframe: false, passing: { (frame: TimedFrame) throws(PreviewLoopError) in
            try picker.offer(frame) { (index: Int, shown: TimedFrame) throws(PreviewLoopError) in
                try take(VideoFrame(converting: shown, with: scaler, sampleAspectRatio: aspect,
                                    presentationTime: .fromSeconds(shown.time), index: index, since: started))
            }
        })
        return (poster, picker.resolved)
    }
}
