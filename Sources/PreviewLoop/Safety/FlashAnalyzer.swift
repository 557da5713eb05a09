/// Finds photosensitive flashes in a sequence of pictures, as WCAG 2.2's success criterion 2.3.1 (Three
/// Flashes or Below Threshold) defines them, with verdicts as EA's IRIS gives them.
///
/// Feed it the frames in the order they are shown, each with the time it appears, then read
/// ``report(duration:)``. It is pure Swift: the engine hands it frames it has already decoded and
/// scaled (``FlashSample`` reduces each to at most 96 cells a side).
///
/// The rules, per cell of the analysis picture:
/// - **luminance transition**: the cell's relative luminance rises or falls by at least 0.1 (10 % of
///   the maximum) from the lowest (or highest) value since its last transition, the darker of the two
///   states below 0.8. A rise and a fall alternate; a slow change counts once it has gone 0.1.
/// - **red transition**: the cell's colour moves to or from a saturated red from its state at its last
///   red transition: one of the two has `R / (R + G + B) ≥ 0.8`, they lie more than 0.2 apart in the CIE
///   1976 UCS chromaticity diagram (WCAG 2.2), and their red excess `(R − G − B) × 320` differs by more
///   than 20 (WCAG 2.0's measure, which keeps near-black noise out); towards the redder state is a rise,
///   away a fall.
///
/// Then per frame: when the cells that make a transition in the same direction at that frame cover at
/// least 25 % of the picture (``areaThreshold``), the picture makes a transition at that frame's time;
/// one in the same direction as the picture's previous transition is part of it, not a new one. A
/// flash is a pair of opposing transitions (light → dark → light is one flash).
///
/// ```swift
/// var analyzer = FlashAnalyzer()
/// for frame in frames { analyzer.add(frame.image, at: frame.presentationTime) }
/// let report = analyzer.report()
/// ```
public struct FlashAnalyzer: Sendable {
    /// A luminance change of at least this much (10 % of the maximum relative luminance) is a transition.
    public static let luminanceStep: Float = 0.1
    /// The darker state of a luminance transition must be below this relative luminance.
    public static let darkerStateLimit: Float = 0.8
    /// The share of the picture whose cells must make the same transition together: WCAG's 25 % of a 10°
    /// visual field, with the whole picture taken as that field, as IRIS applies it.
    public static let areaThreshold = 0.25

    private var width = 0
    private var height = 0
    /// Per cell: the lowest luminance since its last transition.
    private var low: [Float] = []
    /// Per cell: the highest luminance since its last transition.
    private var high: [Float] = []
    /// Per cell: +1 after a rise, −1 after a fall, 0 before its first transition.
    private var luminancePhase: [Int8] = []
    /// Per cell: the colour at its last red transition (or its first).
    private var redReference: [RedState] = []
    private var redPhase: [Int8] = []
    /// The picture's last transition's direction, per kind.
    private var lastLuminanceDirection: Int8 = 0
    private var lastRedDirection: Int8 = 0

    /// Every frame's time, in the order given.
    private(set) var frameTimes: [Double] = []
    /// Per frame, the share of the picture that made one transition together (the larger of the
    /// luminance and red shares, each the larger of its two directions).
    private(set) var frameAreas: [Double] = []
    /// The times of the picture's luminance transitions.
    private(set) var luminanceTransitions: [Double] = []
    /// The times of the picture's red transitions.
    private(set) var redTransitions: [Double] = []

    /// An analyzer with no frame yet.
    public init() {}

    /// How many frames were added.
    public var frameCount: Int { frameTimes.count }

    /// The time of the last frame added (0 before any).
    var lastTime: Double { frameTimes.last ?? 0 }

    /// Adds the next frame shown, at `time` seconds (from any origin, increasing).
    public mutating func add(_ image: RGBImage, at time: Double) {
        add(FlashSample(image), at: time)
    }

    /// Adds the next frame shown, at `time`.
    public mutating func add(_ image: RGBImage, at time: Duration) {
        add(FlashSample(image), at: time.seconds)
    }

    /// Adds the next frame shown, already reduced, at `time` seconds. A frame of another size than the
    /// previous one starts the cells afresh (as after a cut); one at a time that is not finite, or beyond
    /// ±10¹² s, is ignored.
    public mutating func add(_ sample: FlashSample, at time: Double) {
        guard time.isFinite, abs(time) < 1e12 else { return }
        let count = sample.width * sample.height
        frameTimes.append(time)
        guard sample.width == width, sample.height == height else {
            width = sample.width
            height = sample.height
            low = (0..<count).map(sample.luminance)
            high = low
            luminancePhase = [Int8](repeating: 0, count: count)
            redReference = (0..<count).map(sample.redState)
            redPhase = [Int8](repeating: 0, count: count)
            frameAreas.append(0)
            return
        }
        var rises = 0, falls = 0, redRises = 0, redFalls = 0
        for index in 0..<count {
            switch luminanceTransition(index, sample.luminance(index)) {
            case 1: rises += 1
            case -1: falls += 1
            default: break
            }
            let state = sample.redState(index)
            let reference = redReference[index]
            if state.isRedTransition(to: reference) {
                let direction: Int8 = state.proportion > reference.proportion ? 1 : -1
                redReference[index] = state
                if direction != redPhase[index] {
                    redPhase[index] = direction
                    if direction > 0 { redRises += 1 } else { redFalls += 1 }
                }
            }
        }
        let total = Double(count)
        let luminanceArea = Double(max(rises, falls)) / total
        let redArea = Double(max(redRises, redFalls)) / total
        frameAreas.append(max(luminanceArea, redArea))
        if luminanceArea >= Self.areaThreshold {
            let direction: Int8 = rises >= falls ? 1 : -1
            if direction != lastLuminanceDirection {
                lastLuminanceDirection = direction
                luminanceTransitions.append(time)
            }
        }
        if redArea >= Self.areaThreshold {
            let direction: Int8 = redRises >= redFalls ? 1 : -1
            if direction != lastRedDirection {
                lastRedDirection = direction
                redTransitions.append(time)
            }
        }
    }

    /// Moves cell `index` to luminance `value`: +1 when it completes a rise, −1 a fall, 0 otherwise.
    private mutating func luminanceTransition(_ index: Int, _ value: Float) -> Int8 {
        let step = Self.luminanceStep - 1e-6
        switch luminancePhase[index] {
        case 1:
            if value > high[index] { high[index] = value; return 0 }
            guard high[index] - value >= step, value < Self.darkerStateLimit else { return 0 }
            luminancePhase[index] = -1
            low[index] = value
            return -1
        case -1:
            if value < low[index] { low[index] = value; return 0 }
            guard value - low[index] >= step, low[index] < Self.darkerStateLimit else { return 0 }
            luminancePhase[index] = 1
            high[index] = value
            return 1
        default:
            low[index] = min(low[index], value)
            high[index] = max(high[index], value)
            if value == high[index], value - low[index] >= step, low[index] < Self.darkerStateLimit {
                luminancePhase[index] = 1
                return 1
            }
            if value == low[index], high[index] - value >= step, value < Self.darkerStateLimit {
                luminancePhase[index] = -1
                return -1
            }
            return 0
        }
    }

    /// The verdicts over everything added so far.
    ///
    /// - Parameter duration: how long the sequence lasts from the first frame's time; `nil` for the last
    ///   frame's time plus the interval before it (one frame alone: 0, reported as one second).
    public func report(duration: Double? = nil) -> FlashReport {
        let origin = frameTimes.first ?? 0
        let last = frameTimes.last ?? 0
        let interval = frameTimes.count > 1 ? max(0, last - frameTimes[frameTimes.count - 2]) : 0
        let length = duration ?? (last - origin + interval)
        return FlashReport(frameTimes: frameTimes.map { $0 - origin }, frameAreas: frameAreas,
                           luminanceTransitions: luminanceTransitions.map { $0 - origin },
                           redTransitions: redTransitions.map { $0 - origin }, duration: length)
    }
}
