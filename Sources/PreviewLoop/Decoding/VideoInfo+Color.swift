internal import PreviewLoopFFmpeg

/// The colour fields of ``VideoInfo`` from what the FFmpeg layer read: the stream's parameters and
/// side data, then the first decoded frame's side data (x265 writes its metadata as SEI; HDR10+
/// travels with frames).
extension VideoInfo {
    /// Fills the colour fields from the stream's parameters and side data.
    mutating func describeColor(of stream: StreamDescription) {
        colorTransfer = stream.colorTransferName
        colorPrimaries = stream.colorPrimariesName
        if let depth = stream.bitDepth { bitDepth = depth }
        masteringDisplay = stream.hdr.masteringDisplay.map(MasteringDisplay.init)
        contentLightLevel = stream.hdr.contentLightLevel.map(ContentLightLevel.init)
        dolbyVision = stream.hdr.dolbyVision.map(DolbyVisionConfiguration.init)
        hdrFormat = Self.hdrFormat(transfer: colorTransfer, dolbyVision: dolbyVision, hasDynamicMetadata: false)
    }

    /// Adds what the first decoded frame's side data says (x265's SEI, HDR10+).
    mutating func describeColor(ofFirstFrame frame: DecodedFrame) {
        let side = HDRColor.sideData(of: frame)
        if masteringDisplay == nil { masteringDisplay = side.masteringDisplay.map(MasteringDisplay.init) }
        if contentLightLevel == nil { contentLightLevel = side.contentLightLevel.map(ContentLightLevel.init) }
        if colorTransfer == "unknown" { colorTransfer = HDRColor.transferName(of: frame) }
        hdrFormat = Self.hdrFormat(transfer: colorTransfer, dolbyVision: dolbyVision, hasDynamicMetadata: side.hasDynamicMetadata)
    }

    static func hdrFormat(transfer: String, dolbyVision: DolbyVisionConfiguration?, hasDynamicMetadata: Bool) -> HDRFormat {
        if dolbyVision != nil { return .dolbyVision }
        switch transfer {
        case "smpte2084": return hasDynamicMetadata ? .hdr10Plus : .hdr10
        case "arib-std-b67": return .hlg
        default: return .sdr
        }
    }
}

extension MasteringDisplay {
    init(_ values: MasteringDisplayValues) {
        self.init(primaries: values.primaries, whitePoint: values.whitePoint, minLuminance: values.minLuminance,
                  maxLuminance: values.maxLuminance)
    }
}

extension ContentLightLevel {
    init(_ values: LightLevelValues) {
        self.init(maxContentLightLevel: values.maxContentLightLevel, maxFrameAverageLightLevel: values.maxFrameAverageLightLevel)
    }
}

extension DolbyVisionConfiguration {
    init(_ record: DolbyVisionRecord) {
        self.init(profile: record.profile, level: record.level, compatibilityID: record.compatibilityID,
                  hasBaseLayer: record.hasBaseLayer, hasEnhancementLayer: record.hasEnhancementLayer, hasRPU: record.hasRPU)
    }
}
