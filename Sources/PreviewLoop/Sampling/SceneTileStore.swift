/// The tiles a scene pick may want, kept at the tile size while the cut search decodes (so a tile at a
/// cut, at the span's start or filling a stretch costs no second decode when the search passed it).
///
/// Kept: the frame displayed at the span's start, each frame whose difference from the frame before
/// reaches the cut threshold (a cut candidate; at most `8·count + 64` of them), every keyframe of the
/// span the search decoded alone (a cut placed on a keyframe, or a fill), and, in the groups the search
/// decodes frame by frame, the first frame at or after each of `4·count` evenly spaced points. A fill
/// takes the nearest grid frame or keyframe within its reach (half its spacing and one frame, or
/// further as the caller allows), else it is decoded exactly. Every frame kept comes from a decode with
/// deblocking on, so it is the frame an exact decode gives.
final class SceneTileStore {
    private let start: Double
    private let end: Double
    private let cutThreshold: Double
    private let frameInterval: Double
    private let scaler: FrameScaler
    private let sampleAspectRatio: Rational
    private let gridStep: Double
    private let maxCandidates: Int
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant

    /// The last frame decoded frame by frame at or before the start, while the next is unknown.
    private var startCandidate: TimedFrame?
    private var startFrame: VideoFrame?
    /// Cut candidates by their time in microseconds.
    private var candidates: [Int: VideoFrame] = [:]
    /// Frames near the grid points, by grid index.
    private var grid: [Int: VideoFrame] = [:]
    /// Keyframes of the span decoded alone, by their time in microseconds.
    private var keyframes: [Int: VideoFrame] = [:]
    private var previousTime: Double?

    init(start: Double, length: Double, count: Int, cutThreshold: Double, frameInterval: Double, scaler: FrameScaler,
         sampleAspectRatio: Rational) {
        self.start = start
        end = start + length
        self.cutThreshold = cutThreshold
        self.frameInterval = frameInterval
        self.scaler = scaler
        self.sampleAspectRatio = sampleAspectRatio
        gridStep = length / Double(max(1, 4 * count))
        maxCandidates = 8 * count + 64
        started = clock.now
    }

    private func convert(_ frame: TimedFrame) throws(PreviewLoopError) -> VideoFrame {
        try VideoFrame(converting: frame, with: scaler, sampleAspectRatio: sampleAspectRatio,
                       presentationTime: .fromSeconds(frame.time), index: 0, since: started)
    }

    private static func key(_ time: Double) -> Int { Int((time * 1e6).rounded()) }

    /// Sees one frame the search decoded (see ``FrameSampler/sceneCuts(start:length:settings:observe:)``).
    func observe(_ frame: TimedFrame, consecutive: Bool, difference: Double?) throws(PreviewLoopError) {
        let startTime = start + 1e-4
        guard consecutive else {
            // A keyframe decoded alone: it is the frame displayed at the start only when it lies on it.
            if startFrame == nil, abs(frame.time - start) < 1e-6 { startFrame = try convert(frame) }
            if frame.time > start + 1e-6, frame.time < end, keyframes.count < maxCandidates {
                keyframes[Self.key(frame.time)] = try convert(frame)
            }
            previousTime = nil
            return
        }
        defer { previousTime = frame.time }
        if startFrame == nil {
            if frame.time <= startTime {
                startCandidate = frame
            } else if let candidate = startCandidate, previousTime.map({ abs($0 - candidate.time) < 1e-9 }) == true {
                // The frame after it is later than the start: the candidate is the frame displayed then.
                startFrame = try convert(candidate)
                startCandidate = nil
            }
        }
        guard frame.time > start + 1e-6, frame.time < end else { return }
        if let difference, difference >= cutThreshold, candidates.count < maxCandidates {
            candidates[Self.key(frame.time)] = try convert(frame)
        }
        // The first frame at or after a grid point (the one before it, in this run, lay before it).
        guard gridStep > 0, let previousTime else { return }
        let point = ((frame.time - start) / gridStep).rounded(.down)
        let pointTime = start + point * gridStep
        if previousTime < pointTime - 1e-9, frame.time >= pointTime - 1e-9, grid[Int(point)] == nil {
            grid[Int(point)] = try convert(frame)
        }
    }

    /// The kept frame for a tile, or `nil` when it must be decoded; a fill may move up to `reach`
    /// seconds (at least half the grid's spacing and one frame).
    func frame(for choice: TileChoice, reach: Double) -> VideoFrame? {
        switch choice.reason {
        case .start:
            return startFrame
        case .cut:
            return candidates[Self.key(choice.time)] ?? keyframes[Self.key(choice.time)]
        case .fill:
            // Two frames equally near (one each side) go to the earlier: the dictionaries' order changes
            // from process to process, so a tie must not be left to it.
            let nearest = (Array(grid.values) + Array(keyframes.values)).min { a, b in
                let (da, db) = (abs(a.sourceTime - choice.time), abs(b.sourceTime - choice.time))
                return da != db ? da < db : a.sourceTime < b.sourceTime
            }
            guard let nearest, abs(nearest.sourceTime - choice.time) <= max(reach, gridStep / 2 + frameInterval) else { return nil }
            return nearest
        case .even, .spread:
            return nil
        }
    }
}
