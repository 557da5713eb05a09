/// Building a delivered frame from a decoded one, in one place for the samplers and the loop.
extension VideoFrame {
    /// `timed` converted by `scaler`, with its decode time, the conversion's time, and the wall time
    /// since `started` (no lateness; the loop sets the hand-over timings when it delivers the frame).
    init(converting timed: TimedFrame, with scaler: FrameScaler, sampleAspectRatio: Rational, presentationTime: Duration,
         loopIndex: Int = 0, index: Int, since started: ContinuousClock.Instant) throws(PreviewLoopError) {
        let clock = ContinuousClock()
        let converted = clock.now
        let image = try scaler.image(from: timed.frame, sampleAspectRatio: sampleAspectRatio)
        let conversion = clock.now - converted
        self.init(image: image, presentationTime: presentationTime, sourceTime: timed.time, loopIndex: loopIndex, index: index,
                  timings: FrameTimings(decode: timed.decodeTime, conversion: conversion,
                                        wallTime: started.duration(to: clock.now), lateness: nil),
                  isKeyframe: timed.isKeyframe)
        uprightCrop = scaler.lastLayout?.uprightCrop
        smartCrop = scaler.lastSmartCrop
    }
}
