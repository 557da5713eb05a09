/// What the decoding thread hands to the converting thread.
enum LoopEvent {
    /// A decoded frame of a pass, with its index in the pass and its time from the window start.
    case frame(TimedFrame, pass: Int, index: Int, presentation: Duration)
    /// A pass ended; `length` is how long it plays (the window, or less where the clip ends first).
    case passEnd(pass: Int, length: Duration)
    /// Decoding stopped after the first pass because its frames all fit in the frame cache.
    case replayFirstPass
    /// Decoding failed.
    case failed(PreviewLoopError)
}

/// Decides which decoded frames make up each pass of the loop, on the decoding thread.
///
/// A pass starts with the frame displayed at the window's start (the last one at or before it) and
/// holds every frame whose presentation time lies in `[start, start + length)`; it ends at the window's
/// end or at the clip's real end, whichever comes first.
final class LoopSchedule {
    private let decoder: VideoDecoder
    private let windowStart: Double
    private let windowEnd: Double
    private let windowLength: Duration
    private let loops: Int?
    private let cacheableFrames: Int

    init(decoder: VideoDecoder, windowStart: Duration, windowLength: Duration, loops: Int?, cacheableFrames: Int) {
        self.decoder = decoder
        self.windowStart = windowStart.seconds
        self.windowEnd = windowStart.seconds + windowLength.seconds
        self.windowLength = windowLength
        self.loops = loops
        self.cacheableFrames = cacheableFrames
    }

    /// Decodes the passes into `pipe` until done, stopped (the pipe closed) or failed; closes the pipe.
    func produce(into pipe: FramePipe<LoopEvent>) {
        defer { pipe.close() }
        do throws(PreviewLoopError) {
            var pass = 0
            while loops.map({ pass < $0 }) ?? true {
                var timed = try decoder.firstFrame(at: windowStart, windowStart: windowStart, windowEnd: windowEnd, isFirstPass: pass == 0)
                var index = 0
                var length = Duration.zero
                while true {
                    let presentation = Duration.fromSeconds(max(0, timed.time - windowStart))
                    length = presentation + Duration.fromSeconds(timed.duration)
                    guard pipe.put(.frame(timed, pass: pass, index: index, presentation: presentation)) else { return }
                    index += 1
                    guard let next = try decoder.nextFrame(), next.time < windowEnd - 1e-9 else { break }
                    timed = next
                }
                guard pipe.put(.passEnd(pass: pass, length: min(length, windowLength))) else { return }
                let morePasses = loops.map { pass + 1 < $0 } ?? true
                if pass == 0 && morePasses && index <= cacheableFrames {
                    _ = pipe.put(.replayFirstPass)
                    return
                }
                pass += 1
            }
        } catch {
            _ = pipe.put(.failed(error))
        }
    }
}
