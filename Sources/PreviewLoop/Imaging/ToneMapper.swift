import Glibc

/// Tone maps a scaled HDR picture — planar 16-bit full-range R′G′B′ in BT.2020 (or BT.709) primaries,
/// as swscale writes it — into RGB24 SDR BT.709 (BT.1886 gamma 2.4), with lookup tables:
/// code value → linear light (65 536 entries), HLG OOTF gain, the roll-off, linear → 8-bit code.
///
/// Per pixel: EOTF (PQ) or inverse OETF + OOTF (HLG; see `toLinear`), BT.2020 → BT.709 matrix, the roll-off
/// driven by the largest channel and applied to all three (hue and saturation kept), colours outside
/// BT.709 desaturated toward their luminance until they fit, then the SDR encoding. One thread at a time.
final class ToneMapper {
    let transfer: HDRTransfer
    let mode: ToneMapping
    let convertsGamut: Bool
    /// 16-bit code → display light relative to reference white. HLG: the inverse OETF, then the OOTF of
    /// the nominal 1000 cd/m² display (system gamma 1.2) applied to each channel, as zimg (`zscale`)
    /// does; BT.2100 applies it to the luminance, which gives the same greys and, measured on colour
    /// bars made by zscale, desaturated colours (yellow's blue channel 0 → 56 of 255) — see README.
    private let toLinear: [Float]
    /// Linear 0…1 (indexed by its square root) → 8-bit BT.1886 code.
    private let toCode: [UInt8]
    private static let codeSteps = 8192
    private static let shoulderSteps = 1024
    /// The roll-off for the last peak (quantised), as output linear by sqrt(input / peak).
    private var shoulder: (peak: Double, knee: Float, table: [Float])?

    init(transfer: HDRTransfer, mode: ToneMapping, convertsGamut: Bool) {
        self.transfer = transfer
        self.mode = mode
        self.convertsGamut = convertsGamut
        toLinear = (0..<65536).map { code in
            let signal = Double(code) / 65535
            switch transfer {
            case .pq: return Float(ToneCurve.pqToNits(signal) / ToneCurve.referenceWhite)
            case .hlg:
                let gamma = ToneCurve.hlgGamma(peak: ToneCurve.nominalPeak)
                return Float(ToneCurve.nominalPeak / ToneCurve.referenceWhite * pow(ToneCurve.hlgToScene(signal), gamma))
            }
        }
        toCode = (0...Self.codeSteps).map { index in
            let root = Double(index) / Double(Self.codeSteps)
            return UInt8((ToneCurve.sdrSignal(root * root) * 255).rounded())
        }
    }

    /// The brightest light in the picture, relative to reference white, from its largest code value.
    func peak(ofLargestCode code: UInt16) -> Double { Double(toLinear[Int(code)]) }

    /// The peak the roll-off aims at, relative to reference white: the frame's own peak, at most the
    /// declared one, rounded up to a sixteenth of a stop (so tables are rebuilt only when it moves).
    func effectivePeak(measured: Double, declaredNits: Double) -> Double {
        let declared = max(declaredNits, 1) / ToneCurve.referenceWhite
        let peak = min(measured, declared)
        guard peak > 1 else { return 1 }
        return min(declared, pow(2, (log2(peak) * 16).rounded(.up) / 16))
    }

    /// Maps `size` pixels of three 16-bit planes (`planeStride` samples per row) into RGB24 rows of
    /// `stride` bytes at `destination`. `declaredNits` is the stream's declared peak in cd/m².
    func map(red: UnsafePointer<UInt16>, green: UnsafePointer<UInt16>, blue: UnsafePointer<UInt16>, planeStride: Int,
             size: Size, declaredNits: Double, into destination: UnsafeMutablePointer<UInt8>, stride: Int) {
        var largest: UInt16 = 0
        if mode == .auto { largest = Self.brightCode(red: red, green: green, blue: blue, planeStride: planeStride, size: size) }
        let peak = mode == .auto ? effectivePeak(measured: peak(ofLargestCode: largest), declaredNits: declaredNits) : 1
        if shoulder?.peak != peak { shoulder = Self.makeShoulder(peak: peak) }
        let knee = shoulder!.knee
        let peakF = Float(peak)
        let clips = mode == .clip || peak <= 1
        let gamut = convertsGamut
        let m = ToneCurve.bt2020ToBT709
        let (m0, m1, m2, m3, m4, m5, m6, m7, m8) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
        toLinear.withUnsafeBufferPointer { lin in
        toCode.withUnsafeBufferPointer { code in
        shoulder!.table.withUnsafeBufferPointer { roll in
            let codeScale = Float(Self.codeSteps)
            let rollScale = Float(Self.shoulderSteps)
            for y in 0..<size.height {
                let offset = y * planeStride
                let row = destination + y * stride
                for x in 0..<size.width {
                    var r = lin[Int(red[offset + x])], g = lin[Int(green[offset + x])], b = lin[Int(blue[offset + x])]
                    if gamut {
                        let r2 = m0 * r + m1 * g + m2 * b
                        let g2 = m3 * r + m4 * g + m5 * b
                        let b2 = m6 * r + m7 * g + m8 * b
                        r = r2; g = g2; b = b2
                    }
                    let largest = max(r, g, b)
                    if clips {
                        r = min(r, 1); g = min(g, 1); b = min(b, 1)
                    } else if largest > knee {
                        let position = min(largest / peakF, 1).squareRoot() * rollScale
                        let index = min(Int(position), Self.shoulderSteps - 1)
                        let fraction = position - Float(index)
                        let mapped = roll[index] + (roll[index + 1] - roll[index]) * fraction
                        let gain = mapped / largest
                        r *= gain; g *= gain; b *= gain
                    }
                    let smallest = min(r, g, b)
                    if smallest < 0 {
                        // Outside BT.709: move toward the luminance until the smallest channel reaches 0.
                        let luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
                        if luminance <= 0 {
                            r = 0; g = 0; b = 0
                        } else {
                            let keep = luminance / (luminance - smallest)
                            r = luminance + (r - luminance) * keep
                            g = luminance + (g - luminance) * keep
                            b = luminance + (b - luminance) * keep
                        }
                    }
                    let pixel = row + 3 * x
                    pixel[0] = code[Int(min(max(r, 0), 1).squareRoot() * codeScale + 0.5)]
                    pixel[1] = code[Int(min(max(g, 0), 1).squareRoot() * codeScale + 0.5)]
                    pixel[2] = code[Int(min(max(b, 0), 1).squareRoot() * codeScale + 0.5)]
                }
            }
        }
        }
        }
    }

    /// Fraction of the picture's pixels allowed above the measured peak: isolated overshoots (ringing of
    /// 4:2:0 chroma and compression at saturated edges, a few specular pixels) do not set the peak.
    static let peakOutlierFraction = 0.005

    /// The largest code value (of each pixel's largest channel) once the brightest 0.5 % of pixels are
    /// set aside, from a 4096-bin histogram.
    private static func brightCode(red: UnsafePointer<UInt16>, green: UnsafePointer<UInt16>, blue: UnsafePointer<UInt16>,
                                   planeStride: Int, size: Size) -> UInt16 {
        var histogram = [Int](repeating: 0, count: 4096)
        histogram.withUnsafeMutableBufferPointer { bins in
            for y in 0..<size.height {
                let offset = y * planeStride
                for x in 0..<size.width {
                    bins[Int(max(red[offset + x], green[offset + x], blue[offset + x]) >> 4)] += 1
                }
            }
        }
        let allowed = Int(Double(size.area) * peakOutlierFraction)
        var seen = 0
        for bin in stride(from: 4095, through: 0, by: -1) {
            seen += histogram[bin]
            if seen > allowed { return UInt16(bin << 4 | 15) }
        }
        return 0
    }

    /// The roll-off table for `peak`: output linear light at sqrt(input / peak) steps.
    private static func makeShoulder(peak: Double) -> (peak: Double, knee: Float, table: [Float]) {
        let curve = ToneCurve.Shoulder(peak: peak)
        let table = (0...shoulderSteps).map { index -> Float in
            let root = Double(index) / Double(shoulderSteps)
            return Float(curve.linear(of: root * root * peak))
        }
        // Below the knee (in linear light) the curve is the identity: skip the table there.
        let knee = curve.knee >= 1 ? Float.greatestFiniteMagnitude : Float(pow(curve.knee, 2.4))
        return (peak, knee, table)
    }
}
