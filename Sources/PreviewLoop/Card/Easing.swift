/// Timing curves for transitions: map the elapsed fraction of a transition (0–1) to its progress (0–1).
public enum Easing: String, Hashable, Sendable, CaseIterable {
    /// Progress equals elapsed time.
    case linear
    /// Slow start, slow end: the cubic Bézier through (0.42, 0) and (0.58, 1), CSS's `ease-in-out` and
    /// Core Animation's `easeInEaseOut`.
    case easeInOut

    /// The progress after `fraction` (clamped to 0–1) of the transition's time.
    public func progress(_ fraction: Double) -> Double {
        guard fraction > 0 else { return 0 }   // also NaN
        guard fraction < 1 else { return 1 }
        let x = fraction
        switch self {
        case .linear:
            return x
        case .easeInOut:
            // x(t) is increasing on [0, 1]: bisection finds t to double precision in 60 halvings.
            let (x1, y1, x2, y2) = (0.42, 0.0, 0.58, 1.0)
            func bezier(_ t: Double, _ p1: Double, _ p2: Double) -> Double {
                let u = 1 - t
                return 3 * u * u * t * p1 + 3 * u * t * t * p2 + t * t * t
            }
            var low = 0.0, high = 1.0
            for _ in 0..<60 {
                let middle = (low + high) / 2
                if bezier(middle, x1, x2) < x { low = middle } else { high = middle }
            }
            return bezier((low + high) / 2, y1, y2)
        }
    }
}
