/// Finds the loop window nearest a requested start whose frames, played on repeat through their seam,
/// stay below an extended failure: the search behind ``FlashSafety/avoid``.
///
/// Frames arrive one at a time, in order, on a constant-rate grid (frame `i` shows at `i / fps` from the
/// search's start), each reduced to its analysis cells. Candidate windows start every `stride` frames
/// on both sides of the requested start, at most `reach` frames away, and hold `windowFrames` frames.
/// They are judged as soon as their frames are in, in time order, so the search stops as early as the
/// answer is known and keeps only the cells it may still need:
/// - a safe candidate at or before the requested start is the best so far (a later one is nearer);
/// - the requested start itself, when safe, ends the search;
/// - after it, the first safe candidate nearer than the best one before ends the search, and so does
///   reaching candidates no nearer than that best one (without waiting for their frames).
///
/// A candidate after the requested start whose window the clip's end cuts short is not considered (it
/// is shorter than one asked for); at or before it, it is judged on the frames there are, as a render
/// from that start would write them.
struct SafeWindowSearch {
    /// The grid's frame rate.
    let framesPerSecond: Int
    /// Frames in a window.
    let windowFrames: Int
    /// The frame index of the requested start.
    let requested: Int
    /// Frames between candidate starts.
    let stride: Int
    /// The furthest a candidate may lie from the requested start, in frames.
    let reach: Int

    /// The cells of the frames from ``keptFrom`` on.
    private var samples: [FlashSample] = []
    /// The index of `samples[0]`: frames before it are no longer needed.
    private(set) var keptFrom = 0
    /// Frames added.
    private(set) var frameCount = 0
    /// The next candidate to judge.
    private var next: Int
    /// The nearest safe candidate at or before the requested start, so far.
    private var bestBefore: Int?
    /// The answer, once known: a frame index, or `nil` inside `.some` when there is none.
    private(set) var outcome: Int??
    /// Candidates judged.
    private(set) var windowsChecked = 0
    /// The verdict of the requested window, once judged.
    private(set) var requestedVerdict: FlashVerdict?

    /// A search around frame `requested` of the grid.
    init(framesPerSecond: Int, windowFrames: Int, requested: Int, stride: Int, reach: Int) {
        self.framesPerSecond = max(1, framesPerSecond)
        self.windowFrames = max(1, windowFrames)
        self.requested = max(0, requested)
        self.stride = max(1, stride)
        self.reach = max(0, reach)
        let before = min(self.requested, self.reach) / self.stride
        next = self.requested - before * self.stride
    }

    /// Whether the answer is known.
    var isDecided: Bool { outcome != nil }

    /// The chosen window's first frame; `nil` before the answer is known or when no window is safe.
    var chosen: Int? { outcome ?? nil }

    /// The next frame of the grid.
    mutating func add(_ sample: FlashSample) {
        samples.append(sample)
        frameCount += 1
        while !isDecided, next + windowFrames <= frameCount {
            judge(next, end: next + windowFrames)
        }
    }

    /// The clip ended: the candidates left at or before the requested start are judged on the frames
    /// there are; the answer is then known.
    mutating func finish() {
        while !isDecided, next < frameCount, next <= requested {
            judge(next, end: frameCount)
        }
        if !isDecided { outcome = .some(bestBefore) }
    }

    /// Judges the candidate starting at frame `start`, its window ending before frame `end`.
    private mutating func judge(_ start: Int, end: Int) {
        if start > requested {
            if let best = bestBefore, start - requested >= requested - best {
                outcome = .some(best)
                return
            }
            if start - requested > reach {
                outcome = .some(bestBefore)
                return
            }
        }
        let safe = isSafe(from: start, to: end)
        if start == requested { requestedVerdict = lastVerdict }
        next = start + stride
        if start <= requested {
            if safe { bestBefore = start }
            if safe && start == requested { outcome = .some(start) }
        } else if safe {
            outcome = .some(start)
        }
        // No later candidate can be nearer than the best one before.
        if !isDecided, next > requested, let best = bestBefore, next - requested >= requested - best {
            outcome = .some(best)
        }
        drop(before: min(bestBefore ?? next, next))
    }

    private var lastVerdict: FlashVerdict = .pass

    /// Whether frames `start..<end`, as a loop played on repeat, stay below an extended failure.
    private mutating func isSafe(from start: Int, to end: Int) -> Bool {
        var check = LoopFlashCheck(framesPerSecond: framesPerSecond)
        for index in start..<end { check.add(samples[index - keptFrom]) }
        windowsChecked += 1
        lastVerdict = check.report(playTime: Double(end - start) / Double(framesPerSecond)).verdict
        return lastVerdict < .extendedFailure
    }

    /// Forgets the cells of frames before `index`.
    private mutating func drop(before index: Int) {
        let count = min(samples.count, index - keptFrom)
        guard count > 0 else { return }
        samples.removeFirst(count)
        keptFrom += count
    }
}
