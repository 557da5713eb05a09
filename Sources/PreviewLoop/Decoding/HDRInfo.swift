/// The kind of dynamic range a video stream carries.
public enum HDRFormat: String, Sendable, Hashable, CaseIterable {
    /// Standard dynamic range (any transfer other than PQ or HLG).
    case sdr = "SDR"
    /// PQ (SMPTE ST 2084), with or without static metadata (mastering display, content light level).
    case hdr10 = "HDR10"
    /// PQ with SMPTE ST 2094-40 dynamic metadata (HDR10+) on its frames.
    case hdr10Plus = "HDR10+"
    /// Hybrid log-gamma (ARIB STD-B67, BT.2100).
    case hlg = "HLG"
    /// Dolby Vision (see ``VideoInfo/dolbyVision`` for its profile and base layer).
    case dolbyVision = "Dolby Vision"
}

/// The mastering display's colour volume (SMPTE ST 2086), as an HDR10 stream declares it.
public struct MasteringDisplay: Sendable, Hashable {
    /// CIE 1931 x, y of the red, green and blue primaries: `[rx, ry, gx, gy, bx, by]`; empty if not given.
    public var primaries: [Double]
    /// CIE 1931 x, y of the white point: `[x, y]`; empty if not given.
    public var whitePoint: [Double]
    /// The display's minimum luminance in cd/m², if given.
    public var minLuminance: Double?
    /// The display's maximum luminance in cd/m², if given.
    public var maxLuminance: Double?
}

/// Content light levels (CTA-861.3), in cd/m².
public struct ContentLightLevel: Sendable, Hashable {
    /// MaxCLL: the brightest pixel of the whole stream.
    public var maxContentLightLevel: Int
    /// MaxFALL: the brightest frame average.
    public var maxFrameAverageLightLevel: Int
}

/// A Dolby Vision decoder configuration record (`dvcC`/`dvvC`), and what a decoder without Dolby Vision
/// (FFmpeg 5.1, so PreviewLoop) can show of the stream.
public struct DolbyVisionConfiguration: Sendable, Hashable {
    /// The profile: 5 (no compatible base layer), 7, 8 (8.1 HDR10, 8.2 SDR, 8.4 HLG base layer), 9 …
    public var profile: Int
    /// The level (picture size and rate class).
    public var level: Int
    /// The base layer's signal compatibility: 0 none, 1 HDR10, 2 SDR, 4 HLG, 6 HDR10 (Blu-ray).
    public var compatibilityID: Int
    /// Whether the stream has a base layer, an enhancement layer and reshaping metadata (RPU).
    public var hasBaseLayer: Bool, hasEnhancementLayer: Bool, hasRPU: Bool

    /// What the base layer shows on its own: HDR10, SDR or HLG; `nil` when it has no compatible
    /// signal (profile 5: IPTPQc2 code values that look green and purple unless reshaped).
    public var baseLayer: HDRFormat? {
        guard hasBaseLayer else { return nil }
        switch compatibilityID {
        case 1, 6: return .hdr10
        case 2: return .sdr
        case 4: return .hlg
        default: return nil
        }
    }

    /// `profile 8.1` style name: the profile, and the compatibility ID after a dot when there is one.
    public var profileName: String { compatibilityID == 0 ? "\(profile)" : "\(profile).\(compatibilityID)" }

    /// One line for people: `profile 8.4, level 6, shown from its HLG base layer`, or for profile 5
    /// `profile 5, level 6, no compatible base layer: cannot be shown correctly (FFmpeg 5.1 cannot reshape it)`.
    public var summary: String {
        let head = "profile \(profileName), level \(level)"
        if let baseLayer { return head + ", shown from its \(baseLayer.rawValue) base layer" }
        return head + ", no compatible base layer: colours cannot be reconstructed (FFmpeg 5.1 has no Dolby Vision reshaping)"
    }
}

extension VideoInfo {
    /// The peak the stream declares in cd/m²: MaxCLL when given, else the mastering display's maximum luminance.
    public var declaredPeakLuminance: Double? {
        if let level = contentLightLevel?.maxContentLightLevel, level > 0 { return Double(level) }
        if let peak = masteringDisplay?.maxLuminance, peak > 0 { return peak }
        return nil
    }

    /// Whether frames of this stream are tone mapped by ``ToneMapping/auto`` (PQ or HLG transfer).
    public var isHDR: Bool { colorTransfer == "smpte2084" || colorTransfer == "arib-std-b67" }

    /// A warning for people when the picture cannot be shown correctly (Dolby Vision profile 5), else `nil`.
    public var colorWarning: String? {
        guard let dolbyVision, dolbyVision.baseLayer == nil else { return nil }
        return "Dolby Vision \(dolbyVision.summary); frames will show wrong (green/purple) colours"
    }
}
