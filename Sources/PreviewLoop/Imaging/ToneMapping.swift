import Glibc

/// How HDR pictures (PQ / SMPTE ST 2084 and HLG / ARIB STD-B67) become SDR BT.709 pictures.
///
/// SDR input is never touched by any of these: only frames whose transfer is PQ or HLG are tone mapped.
public enum ToneMapping: String, Sendable, Hashable, CaseIterable {
    /// HDR reference white (203 cd/m², ITU-R BT.2408) placed at SDR white when the picture's peak is no
    /// brighter than it, tones below a knee unchanged and the highlights rolled off smoothly up to the
    /// picture's peak, BT.2020 colours mapped into BT.709 by desaturating toward the luminance (no hue shift).
    /// With a 1000 cd/m² peak, reference white sits at 80 % of the SDR code range, leaving the top fifth
    /// for highlights. The peak is the frame's brightest pixel, at most the peak the stream declares
    /// (MaxCLL, else the mastering display's maximum, else 1000 cd/m²; HLG: its nominal 1000 cd/m² display).
    case auto
    /// No tone mapping: HDR code values are converted as if they were SDR (the washed-out picture).
    case none
    /// Reference white at SDR white and everything brighter clipped, channel by channel: the naive
    /// conversion, for comparison.
    case clip
}

/// The transfer function of an HDR picture.
enum HDRTransfer: Equatable, Sendable {
    /// SMPTE ST 2084: absolute display light up to 10 000 cd/m².
    case pq
    /// ARIB STD-B67 (BT.2100 HLG): relative scene light, shown on a nominal 1000 cd/m² display.
    case hlg
}

/// The colour maths of tone mapping, in Swift, with lookup tables built once per transfer and peak.
///
/// Units: linear light relative to HDR reference white (1.0 = 203 cd/m², which is also SDR white).
enum ToneCurve {
    /// HDR reference white, ITU-R BT.2408.
    static let referenceWhite = 203.0
    /// The nominal peak of an HLG display (BT.2100), and the PQ peak assumed without metadata.
    static let nominalPeak = 1000.0
    /// Where reference white sits in the SDR code range (BT.1886 gamma 2.4) once the peak reaches
    /// `nominalPeak` or more: 0.8 leaves 51 of 255 levels for the highlights above it.
    static let referenceWhiteCodeAtNominalPeak = 0.8

    /// PQ (SMPTE ST 2084) electrical signal 0…1 → display light in cd/m².
    static func pqToNits(_ signal: Double) -> Double {
        let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128
        let c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
        let p = pow(max(signal, 0), 1 / m2)
        return 10000 * pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
    }

    /// Display light in cd/m² → PQ signal 0…1.
    static func nitsToPQ(_ nits: Double) -> Double {
        let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128
        let c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
        let y = pow(max(nits, 0) / 10000, m1)
        return pow((c1 + c2 * y) / (1 + c3 * y), m2)
    }

    /// HLG (BT.2100) signal 0…1 → normalised scene light 0…1 (the inverse OETF).
    static func hlgToScene(_ signal: Double) -> Double {
        let a = 0.17883277, b = 1 - 4 * a, c = 0.5 - a * log(4 * a)
        let e = max(signal, 0)
        return e <= 0.5 ? e * e / 3 : (exp((e - c) / a) + b) / 12
    }

    /// The HLG OOTF's system gamma for a display of `peak` cd/m² (1.2 at 1000).
    static func hlgGamma(peak: Double) -> Double { 1.2 + 0.42 * log10(peak / 1000) }

    /// SDR signal 0…1 for linear light relative to SDR white (the inverse of BT.1886 with a black level
    /// of 0, which is what zimg/`zscale` use for `bt709` — measured: SDR 128 → PQ 27297 at npl=203).
    static func sdrSignal(_ linear: Double) -> Double { pow(min(max(linear, 0), 1), 1 / 2.4) }

    /// The code value (0…1) at which reference white lands for a picture whose peak is `peak` (relative):
    /// 1 at or below reference white, falling with the logarithm of the peak to 0.8 at 1000 cd/m².
    static func referenceWhiteCode(peak: Double) -> Double {
        guard peak > 1 else { return 1 }
        let span = log(peak) / log(nominalPeak / referenceWhite)
        return 1 - (1 - referenceWhiteCodeAtNominalPeak) * min(1, span)
    }

    /// The roll-off for a picture with `peak` (relative): identity below the knee (in SDR code values,
    /// BT.1886), then a rational shoulder whose slope matches at the knee, reaching SDR white exactly at
    /// the peak, strictly increasing all the way; the knee is chosen so reference white lands at
    /// `referenceWhiteCode(peak:)`.
    struct Shoulder: Equatable {
        /// The peak in SDR code units (relative peak ^ (1/2.4)).
        let peakCode: Double
        /// The knee in SDR code units; at or above 1 means no roll-off.
        let knee: Double

        init(peak: Double) {
            peakCode = pow(max(peak, 1), 1 / 2.4)
            guard peak > 1.0001 else { knee = 1; return }
            let target = ToneCurve.referenceWhiteCode(peak: peak)
            let xp = peakCode
            // Reference white's code for a knee k (see `code(of:)` at x = 1), increasing in k.
            func whiteCode(_ k: Double) -> Double { k + (1 - k) / (2 - (1 - k) / (xp - k)) }
            var low = 0.0, high = 1.0
            if whiteCode(0) >= target { knee = 0; return }
            for _ in 0..<60 {
                let mid = (low + high) / 2
                if whiteCode(mid) < target { low = mid } else { high = mid }
            }
            knee = low
        }

        /// Output SDR code (0…1) for an input in SDR code units (linear ^ (1/2.4), unbounded above 1).
        func code(of x: Double) -> Double {
            guard knee < 1 else { return min(x, 1) }
            guard x > knee else { return x }
            let t = min((x - knee) / (peakCode - knee), 1)
            let a = (peakCode - knee) / (1 - knee) - 1
            return knee + (1 - knee) * t * (1 + a) / (1 + a * t)
        }

        /// Output linear light (relative to SDR white) for input linear light (relative to reference white).
        func linear(of value: Double) -> Double {
            guard knee < 1 else { return min(value, 1) }
            let out = code(of: pow(max(value, 0), 1 / 2.4))
            return pow(out, 2.4)
        }
    }

    /// BT.2020 → BT.709 for linear RGB (rows: R, G, B), from the two sets of primaries and D65.
    static let bt2020ToBT709: [Float] = [
        1.660491, -0.587641, -0.072850,
        -0.124550, 1.132900, -0.008349,
        -0.018151, -0.100579, 1.118730,
    ]
}
