import CFFmpeg
internal import PreviewLoopFFmpeg

/// Reads HDR colour facts from FFmpeg 5.1 streams and frames: transfer, static metadata (mastering
/// display, content light level), HDR10+ dynamic metadata and Dolby Vision configuration records.
///
/// Stream side data uses `av_stream_get_side_data` (5.1; `codecpar->coded_side_data` from 6.1). x265
/// writes its metadata as SEI, which FFmpeg only exposes as frame side data, so both are read.
enum HDRColor {
    /// The HDR transfer of a decoded frame, if it is PQ or HLG.
    static func transfer(of frame: UnsafeMutablePointer<AVFrame>) -> HDRTransfer? {
        switch frame.pointee.color_trc {
        case AVCOL_TRC_SMPTE2084: .pq
        case AVCOL_TRC_ARIB_STD_B67: .hlg
        default: nil
        }
    }

    /// The peak a frame's side data declares in cd/m²: MaxCLL, else the mastering display's maximum.
    static func declaredPeak(of frame: UnsafeMutablePointer<AVFrame>) -> Double? {
        let (mastering, light, _) = metadata(of: frame)
        if let level = light?.maxContentLightLevel, level > 0 { return Double(level) }
        if let peak = mastering?.maxLuminance, peak > 0 { return peak }
        return nil
    }

    /// Mastering display, content light level and whether HDR10+ dynamic metadata is attached.
    static func metadata(of frame: UnsafeMutablePointer<AVFrame>) -> (MasteringDisplay?, ContentLightLevel?, Bool) {
        var mastering: MasteringDisplay?
        var light: ContentLightLevel?
        if let data = av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA),
           data.pointee.size >= MemoryLayout<AVMasteringDisplayMetadata>.size {
            mastering = masteringDisplay(UnsafeRawPointer(data.pointee.data).load(as: AVMasteringDisplayMetadata.self))
        }
        if let data = av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL),
           data.pointee.size >= MemoryLayout<AVContentLightMetadata>.size {
            light = contentLightLevel(UnsafeRawPointer(data.pointee.data).load(as: AVContentLightMetadata.self))
        }
        let isHDR10Plus = av_frame_get_side_data(frame, AV_FRAME_DATA_DYNAMIC_HDR_PLUS) != nil
        return (mastering, light, isHDR10Plus)
    }

    /// Mastering display, content light level and Dolby Vision record from a stream's side data.
    static func metadata(of stream: UnsafeMutablePointer<AVStream>) -> (MasteringDisplay?, ContentLightLevel?, DolbyVisionConfiguration?) {
        var size = 0
        var mastering: MasteringDisplay?
        var light: ContentLightLevel?
        var dolbyVision: DolbyVisionConfiguration?
        if let data = av_stream_get_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &size),
           size >= MemoryLayout<AVMasteringDisplayMetadata>.size {
            mastering = masteringDisplay(UnsafeRawPointer(data).load(as: AVMasteringDisplayMetadata.self))
        }
        if let data = av_stream_get_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &size),
           size >= MemoryLayout<AVContentLightMetadata>.size {
            light = contentLightLevel(UnsafeRawPointer(data).load(as: AVContentLightMetadata.self))
        }
        if let data = av_stream_get_side_data(stream, AV_PKT_DATA_DOVI_CONF, &size),
           size >= MemoryLayout<AVDOVIDecoderConfigurationRecord>.size {
            let record = UnsafeRawPointer(data).load(as: AVDOVIDecoderConfigurationRecord.self)
            dolbyVision = DolbyVisionConfiguration(profile: Int(record.dv_profile), level: Int(record.dv_level),
                                                   compatibilityID: Int(record.dv_bl_signal_compatibility_id),
                                                   hasBaseLayer: record.bl_present_flag != 0,
                                                   hasEnhancementLayer: record.el_present_flag != 0,
                                                   hasRPU: record.rpu_present_flag != 0)
        }
        return (mastering, light, dolbyVision)
    }

    private static func masteringDisplay(_ m: AVMasteringDisplayMetadata) -> MasteringDisplay? {
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
        return MasteringDisplay(primaries: primaries, whitePoint: white,
                                minLuminance: m.has_luminance != 0 ? value(m.min_luminance) : nil,
                                maxLuminance: m.has_luminance != 0 ? value(m.max_luminance) : nil)
    }

    private static func contentLightLevel(_ l: AVContentLightMetadata) -> ContentLightLevel {
        ContentLightLevel(maxContentLightLevel: Int(l.MaxCLL), maxFrameAverageLightLevel: Int(l.MaxFALL))
    }

    /// Fills the colour fields of `info` from the stream's parameters and side data.
    static func describe(_ info: inout VideoInfo, stream: UnsafeMutablePointer<AVStream>) {
        let parameters = stream.pointee.codecpar.pointee
        info.colorTransfer = name(av_color_transfer_name(parameters.color_trc))
        info.colorPrimaries = name(av_color_primaries_name(parameters.color_primaries))
        if let descriptor = av_pix_fmt_desc_get(AVPixelFormat(rawValue: parameters.format)) {
            info.bitDepth = Int(descriptor.pointee.comp.0.depth)
        } else if parameters.bits_per_raw_sample > 0 {
            info.bitDepth = Int(parameters.bits_per_raw_sample)
        }
        let (mastering, light, dolbyVision) = metadata(of: stream)
        info.masteringDisplay = mastering
        info.contentLightLevel = light
        info.dolbyVision = dolbyVision
        info.hdrFormat = format(transfer: info.colorTransfer, dolbyVision: dolbyVision, hasDynamicMetadata: false)
    }

    /// Adds what the first decoded frame's side data says (x265's SEI, HDR10+).
    static func describe(_ info: inout VideoInfo, firstFrame frame: UnsafeMutablePointer<AVFrame>) {
        let (mastering, light, isHDR10Plus) = metadata(of: frame)
        if info.masteringDisplay == nil { info.masteringDisplay = mastering }
        if info.contentLightLevel == nil { info.contentLightLevel = light }
        if info.colorTransfer == "unknown" { info.colorTransfer = name(av_color_transfer_name(frame.pointee.color_trc)) }
        info.hdrFormat = format(transfer: info.colorTransfer, dolbyVision: info.dolbyVision, hasDynamicMetadata: isHDR10Plus)
    }

    static func format(transfer: String, dolbyVision: DolbyVisionConfiguration?, hasDynamicMetadata: Bool) -> HDRFormat {
        if dolbyVision != nil { return .dolbyVision }
        switch transfer {
        case "smpte2084": return hasDynamicMetadata ? .hdr10Plus : .hdr10
        case "arib-std-b67": return .hlg
        default: return .sdr
        }
    }

    private static func name(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown" }
        let name = String(cString: text)
        return name == "reserved" || name == "unspecified" ? "unknown" : name
    }
}
