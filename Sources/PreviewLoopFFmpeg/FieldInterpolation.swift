/// The pure part of the deinterlacer: one plane's rows, motion-adaptive.
///
/// The rows of the kept field are copied. Each sample of the other field's rows is either kept as it
/// is (woven: full vertical detail where nothing moves) or rebuilt from the kept rows above and below
/// (interpolated: no combing where something moves), decided sample by sample from the evidence at
/// hand:
/// - With the previous frame of the stream (``Neighbours/previous``), the decision is temporal: the
///   missing row at the kept field's instant is estimated as the mean of the other field's row in the
///   previous frame (half a frame interval earlier) and in this one (half an interval later). How far
///   that estimate can be trusted is the larger of half the change of the other field's sample between
///   the two frames and the mean change of the kept samples above and below. The result is the
///   spatial interpolation clamped to the estimate plus or minus that trust interval: where nothing
///   changed the estimate itself (the woven detail), where things move the interpolation.
/// - From the frame alone (after a seek, on a keyframe sample, at a loop's wrap), the combing test
///   decides: a sample of the other field is interpolated when it lies outside the range of the kept
///   samples above and below by more than ``singleFrameThreshold`` (the two fields disagree) while it
///   agrees, within the threshold, with the other field's sample two rows above or below (its own
///   field is smooth there: the pattern of a moving edge, not of fine still detail); otherwise it is
///   woven. Still detail of rows alternating one by one (the other field uniform, the kept field
///   different) is indistinguishable from combing in one picture and is interpolated; finer or
///   thicker still detail is kept.
///
/// The spatial interpolation is edge-directed: among the vertical and four diagonal directions (one and
/// two samples to either side), the one whose three-sample windows above and below differ least gives
/// the mean of its two samples; the vertical mean when none is clearly better.
package enum FieldInterpolation {
    /// The single-frame combing threshold for 8-bit samples (scaled to the sample's range for deeper
    /// ones): how far outside its kept neighbours' range a woven sample may lie before it counts as combed.
    package static let singleFrameThreshold = 10

    /// A plane's samples: its first row and the distance between rows, in bytes.
    package struct Plane {
        package var base: UnsafePointer<UInt8>
        package var stride: Int
        package init(base: UnsafePointer<UInt8>, stride: Int) {
            self.base = base
            self.stride = stride
        }
    }

    /// How one plane is laid out for the rebuild.
    package struct Layout {
        /// Rows in the plane.
        package var rows: Int
        /// Bytes of samples in a row.
        package var rowBytes: Int
        /// Whether the kept field is the even rows (0, 2, …: the top field).
        package var keepsEvenRows: Bool
        /// 1 for 8-bit samples, 2 for 16-bit little-endian ones.
        package var bytesPerComponent: Int
        /// Samples between horizontally adjacent samples of the same component (1 on a planar plane, 2 on
        /// NV12's interleaved chroma, 3 on packed RGB); 0 when components of different spacing share the
        /// plane (packed 4:2:2), which limits the interpolation to the vertical direction.
        package var step: Int
        /// The largest sample value's bit length as stored (depth plus shift: 8, 10, 12, 16).
        package var significantBits: Int
        package init(rows: Int, rowBytes: Int, keepsEvenRows: Bool, bytesPerComponent: Int, step: Int, significantBits: Int) {
            self.rows = rows
            self.rowBytes = rowBytes
            self.keepsEvenRows = keepsEvenRows
            self.bytesPerComponent = bytesPerComponent
            self.step = step
            self.significantBits = significantBits
        }
    }

    /// Rebuilds one plane of `current` into `destination`; `previous` is the same plane of the stream's
    /// previous frame (same size, format and field order), `nil` when there is none to trust.
    package static func rebuild(current: Plane, previous: Plane?, into destination: UnsafeMutablePointer<UInt8>,
                                destinationStride: Int, layout: Layout) {
        let rows = layout.rows
        let keptParity = layout.keepsEvenRows ? 0 : 1
        for row in 0..<rows {
            let output = destination + row * destinationStride
            if row % 2 == keptParity || rows < 2 {
                output.update(from: current.base + row * current.stride, count: layout.rowBytes)
                continue
            }
            // The kept rows above and below (the nearest kept row at the top and bottom edges).
            let above = row - 1 >= 0 ? row - 1 : row + 1
            let below = row + 1 < rows ? row + 1 : row - 1
            if layout.bytesPerComponent == 1 {
                rebuildRow(UInt8.self, current: current, previous: previous, row: row, above: above, below: below,
                           output: output, layout: layout)
            } else {
                rebuildRow(UInt16.self, current: current, previous: previous, row: row, above: above, below: below,
                           output: output, layout: layout)
            }
        }
    }

    @inline(__always)
    private static func samples<Sample>(_ plane: Plane, _ row: Int, as: Sample.Type) -> UnsafePointer<Sample> {
        // FFmpeg's planes and row strides are aligned far beyond two bytes; 16-bit samples are
        // little-endian, as this (little-endian) host reads them.
        UnsafeRawPointer(plane.base + row * plane.stride).assumingMemoryBound(to: Sample.self)
    }

    private static func rebuildRow<Sample: FixedWidthInteger & UnsignedInteger>(
        _ type: Sample.Type, current: Plane, previous: Plane?, row: Int, above: Int, below: Int,
        output: UnsafeMutablePointer<UInt8>, layout: Layout
    ) {
        let count = layout.rowBytes / layout.bytesPerComponent
        let a = samples(current, above, as: Sample.self), b = samples(current, below, as: Sample.self)
        let w = samples(current, row, as: Sample.self)
        let out = UnsafeMutableRawPointer(output).assumingMemoryBound(to: Sample.self)
        let step = layout.step
        if let previous {
            let pa = samples(previous, above, as: Sample.self), pb = samples(previous, below, as: Sample.self)
            let pw = samples(previous, row, as: Sample.self)
            for x in 0..<count {
                let c = Int(a[x]), e = Int(b[x]), woven = Int(w[x]), earlier = Int(pw[x])
                let estimate = (earlier + woven + 1) >> 1
                let fieldChange = abs(earlier - woven) >> 1
                let keptChange = (abs(Int(pa[x]) - c) + abs(Int(pb[x]) - e) + 1) >> 1
                let trust = max(fieldChange, keptChange)
                if trust == 0 {
                    out[x] = Sample(truncatingIfNeeded: estimate)     // nothing changed: no need to look around
                    continue
                }
                let spatial = interpolate(a, b, x, count: count, step: step)
                out[x] = Sample(truncatingIfNeeded: min(max(spatial, estimate - trust), estimate + trust))
            }
        } else {
            let threshold = singleFrameThreshold << max(0, layout.significantBits - 8)
            // The other field's rows two above and below (at an edge the one on the other side; the row
            // itself when it is the only row of its field).
            let up = row - 2 >= 0 ? row - 2 : row + 2 < layout.rows ? row + 2 : row
            let down = row + 2 < layout.rows ? row + 2 : row - 2 >= 0 ? row - 2 : row
            let u = samples(current, up, as: Sample.self), d = samples(current, down, as: Sample.self)
            for x in 0..<count {
                let c = Int(a[x]), e = Int(b[x]), woven = Int(w[x])
                let outside = woven < min(c, e) - threshold || woven > max(c, e) + threshold
                let agrees = abs(woven - Int(u[x])) <= threshold || abs(woven - Int(d[x])) <= threshold
                if !outside || !agrees {
                    out[x] = w[x]
                } else {
                    out[x] = Sample(truncatingIfNeeded: interpolate(a, b, x, count: count, step: step))
                }
            }
        }
    }

    /// The edge-directed interpolation at `x` between rows `a` (above) and `b` (below).
    @inline(__always)
    private static func interpolate<Sample: FixedWidthInteger & UnsignedInteger>(
        _ a: UnsafePointer<Sample>, _ b: UnsafePointer<Sample>, _ x: Int, count: Int, step: Int
    ) -> Int {
        let vertical = (Int(a[x]) + Int(b[x]) + 1) >> 1
        // The farthest direction's windows reach three steps to either side; nearer the row's ends, vertical.
        guard step > 0, x >= 3 * step, x + 3 * step < count else { return vertical }
        @inline(__always) func cost(_ k: Int) -> Int {
            // Three-sample windows centred on x + k steps (above) and x − k steps (below).
            let up = x + k * step, down = x - k * step
            return abs(Int(a[up - step]) - Int(b[down - step])) + abs(Int(a[up]) - Int(b[down]))
                + abs(Int(a[up + step]) - Int(b[down + step]))
        }
        var best = cost(0)
        var result = vertical
        // A diagonal must beat the vertical; the two-sample one is tried only where the one-sample one did.
        var sign = -1
        while sign <= 1 {
            var k = sign
            while abs(k) <= 2 {
                let candidate = cost(k)
                guard candidate < best else { break }
                best = candidate
                result = (Int(a[x + k * step]) + Int(b[x - k * step]) + 1) >> 1
                k += sign
            }
            sign += 2
        }
        return result
    }
}
