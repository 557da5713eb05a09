import CFFmpeg

/// The HDR transfer of a picture that the library tone maps.
package enum HDRSignal: Sendable, Equatable {
    /// SMPTE ST 2084 (`AVCOL_TRC_SMPTE2084`).
    case pq
    /// ARIB STD-B67 hybrid log-gamma (`AVCOL_TRC_ARIB_STD_B67`).
    case hlg
}

/// A mastering display's colour volume (SMPTE ST 2086) as FFmpeg carries it, in Swift numbers.
package struct MasteringDisplayValues: Sendable, Equatable {
    /// `[rx, ry, gx, gy, bx, by]`, empty when not given.
    package var primaries: [Double]
    /// `[x, y]`, empty when not given.
    package var whitePoint: [Double]
    package var minLuminance: Double?
    package var maxLuminance: Double?
}

/// Content light levels (CTA-861.3) in cd/m².
package struct LightLevelValues: Sendable, Equatable {
    package var maxContentLightLevel: Int
    package var maxFrameAverageLightLevel: Int
}

/// A Dolby Vision decoder configuration record (`AVDOVIDecoderConfigurationRecord`).
package struct DolbyVisionRecord: Sendable, Equatable {
    package var profile: Int, level: Int, compatibilityID: Int
    package var hasBaseLayer: Bool, hasEnhancementLayer: Bool, hasRPU: Bool
}

/// What a stream's or a frame's side data says about HDR.
package struct HDRSideData: Sendable, Equatable {
    package var masteringDisplay: MasteringDisplayValues?
    package var contentLightLevel: LightLevelValues?
    /// Stream side data only.
    package var dolbyVision: DolbyVisionRecord?
    /// Frame side data only: HDR10+ (SMPTE ST 2094-40) dynamic metadata is attached.
    package var hasDynamicMetadata = false
}

/// Reads HDR colour facts from FFmpeg 5.1 streams and frames: transfer, static metadata (mastering
/// display, content light level), HDR10+ dynamic metadata and Dolby Vision configuration records.
///
/// Stream side data goes through ``FFmpegCompat/streamSideData(_:_:)`` (`av_stream_get_side_data` in
/// 5.1; `codecpar->coded_side_data` from 6.1). x265 writes its metadata as SEI, which FFmpeg only
/// exposes as frame side data, so both are read.
package enum HDRColor {
    /// The HDR transfer of a decoded frame, if it is PQ or HLG.
    package static func transfer(of decoded: DecodedFrame) -> HDRSignal? {
        switch decoded.pointer.pointee.color_trc {
        case AVCOL_TRC_SMPTE2084: .pq
        case AVCOL_TRC_ARIB_STD_B67: .hlg
        default: nil
        }
    }

    /// Whether a decoded frame's primaries are BT.2020 (or unspecified on a non-BT.709 matrix), so a
    /// tone mapper must convert the gamut.
    package static func hasWideGamut(_ decoded: DecodedFrame) -> Bool {
        let frame = decoded.pointer.pointee
        return frame.color_primaries == AVCOL_PRI_BT2020
            || (frame.color_primaries == AVCOL_PRI_UNSPECIFIED && frame.colorspace != AVCOL_SPC_BT709)
    }

    /// The peak a frame's side data declares in cd/m²: MaxCLL, else the mastering display's maximum.
    package static func declaredPeak(of decoded: DecodedFrame) -> Double? {
        let side = sideData(of: decoded)
        if let level = side.contentLightLevel?.maxContentLightLevel, level > 0 { return Double(level) }
        if let peak = side.masteringDisplay?.maxLuminance, peak > 0 { return peak }
        return nil
    }

    /// Mastering display, content light level and whether HDR10+ dynamic metadata is attached.
    package static func sideData(of decoded: DecodedFrame) -> HDRSideData {
        let frame = decoded.pointer
        var result = HDRSideData()
        if let data = av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA),
           data.pointee.size >= MemoryLayout<AVMasteringDisplayMetadata>.size {
            result.masteringDisplay = masteringDisplay(UnsafeRawPointer(data.pointee.data).load(as: AVMasteringDisplayMetadata.self))
        }
        if let data = av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL),
           data.pointee.size >= MemoryLayout<AVContentLightMetadata>.size {
            result.contentLightLevel = contentLightLevel(UnsafeRawPointer(data.pointee.data).load(as: AVContentLightMetadata.self))
        }
        result.hasDynamicMetadata = av_frame_get_side_data(frame, AV_FRAME_DATA_DYNAMIC_HDR_PLUS) != nil
        return result
    }

    /// The name of a frame's transfer characteristic (`smpte2084`), `unknown` when unspecified.
    package static func transferName(of decoded: DecodedFrame) -> String {
        name(av_color_transfer_name(decoded.pointer.pointee.color_trc))
    }

    /// Mastering display, content light level and Dolby Vision record from a stream's side data.
    static func sideData(of stream: UnsafeMutablePointer<AVStream>) -> HDRSideData {
        var result = HDRSideData()
        if let data = FFmpegCompat.streamSideData(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA),
           data.count >= MemoryLayout<AVMasteringDisplayMetadata>.size {
            result.masteringDisplay = masteringDisplay(UnsafeRawPointer(data.baseAddress!).load(as: AVMasteringDisplayMetadata.self))
        }
        if let data = FFmpegCompat.streamSideData(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL),
           data.count >= MemoryLayout<AVContentLightMetadata>.size {
            result.contentLightLevel = contentLightLevel(UnsafeRawPointer(data.baseAddress!).load(as: AVContentLightMetadata.self))
        }
        if let data = FFmpegCompat.streamSideData(stream, AV_PKT_DATA_DOVI_CONF),
           data.count >= MemoryLayout<AVDOVIDecoderConfigurationRecord>.size {
            let record = UnsafeRawPointer(data.baseAddress!).load(as: AVDOVIDecoderConfigurationRecord.self)
            result.dolbyVision = DolbyVisionRecord(profile: Int(record.dv_profile), level: Int(record.dv_level),
                                                   compatibilityID: Int(record.dv_bl_signal_compatibility_id),
                                                   hasBaseLayer: record.bl_present_flag != 0,
                                                   hasEnhancementLayer: record.el_present_flag != 0,
                                                   hasRPU: record.rpu_present_flag != 0)
        }
        return result
    }

    private static func masteringDisplay(_ m: AVMasteringDisplayMetadata) -> MasteringDisplayValues? {
        guard m.has_primaries != 0 || m.has_luminance != 0 else { return nil }
        func value(_ r: AVRational) -> Double { r.den == 0 ? 0 : Double(r.num) / Double(r.den) }
        var primaries: [Double] = []
        var white: [Double] = []
        if m.has_primaries != 0 {
            primaries = [value(m.display_primaries.0.0), value(m.display_primaries.0.1),
                         value(m.display_primaries.1.0), value(m.display_primaries.1.1),
                         value(m.display_primaries.2.0), value(m.display_primaries.2.1)]
            white = [value(m.white_point.0), value(m.white_point.1)]
        }
        return MasteringDisplayValues(primaries: primaries, whitePoint: white,
                                minLuminance: m.has_luminance != 0 ? value(m.min_luminance) : nil,
                                maxLuminance: m.has_luminance != 0 ? value(m.max_luminance) : nil)
    }

    private static func contentLightLevel(_ l: AVContentLightMetadata) -> LightLevelValues {
        LightLevelValues(maxContentLightLevel: Int(l.MaxCLL), maxFrameAverageLightLevel: Int(l.MaxFALL))
    }

    static func name(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown" }
        let name = String(cString: text)
        return name == "reserved" || name == "unspecified" ? "unknown" : name
    }
}
