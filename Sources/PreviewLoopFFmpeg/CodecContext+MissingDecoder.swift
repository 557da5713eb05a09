import CFFmpeg

extension CodecContext {
    /// What the error says when no decoder is found for a stream: the codec by FFmpeg's name, or, when
    /// FFmpeg does not know it (`AV_CODEC_ID_NONE`, which it names `none`), by the stream's codec tag
    /// (the MP4 sample entry, the AVI FourCC), with what would decode it.
    ///
    /// FFmpeg 5.1's MP4 reader knows neither VVC (`vvc1`, `vvi1`: FFmpeg 7.1 reads and decodes them with
    /// its own `vvc` decoder) nor Dolby Vision AV1 (`dav1`: an AV1 base layer, which no FFmpeg reader
    /// takes as AV1 from this sample entry).
    static func missingDecoderReason(codecID: AVCodecID, tag: UInt32) -> String {
        let build = "FFmpeg " + String(cString: av_version_info())
        guard codecID == AV_CODEC_ID_NONE else {
            let name = String(cString: avcodec_get_name(codecID))
            let hint = codecID == AV_CODEC_ID_AV1 ? " (AV1 needs libdav1d or libaom)" : ""
            return "no decoder for the \(name) video codec in this FFmpeg build\(hint)"
        }
        guard let fourcc = Self.fourcc(tag) else {
            return "an unknown video codec that this FFmpeg build (\(build)) cannot read"
        }
        switch fourcc {
        case "vvc1", "vvi1":
            return "VVC (H.266) video (tag \(fourcc)), which this FFmpeg build (\(build)) cannot read; VVC needs "
                + "FFmpeg 7.1 or later with its vvc decoder"
        case "dav1":
            let decoder = avcodec_find_decoder(AV_CODEC_ID_AV1).map { String(cString: $0.pointee.name) }
            let what = decoder.map { "its AV1 base layer would decode with this build's \($0) if the sample entry read av01" }
                ?? "this build has no AV1 decoder either (AV1 needs libdav1d or libaom)"
            return "Dolby Vision AV1 video (tag dav1): FFmpeg's MP4 reader does not take this sample entry as AV1, "
                + "so no decoder is chosen; \(what)"
        case "dvav", "dva1":
            return "Dolby Vision H.264 video (tag \(fourcc)), which this FFmpeg build (\(build)) does not read as H.264"
        case "dvhe", "dvh1":
            return "Dolby Vision HEVC video (tag \(fourcc)), which this FFmpeg build (\(build)) does not read as HEVC"
        default:
            return "an unknown video codec (tag \(fourcc)) that this FFmpeg build (\(build)) cannot read"
        }
    }

    /// A codec tag as its four characters (`vvc1`: the first in the lowest byte, as `MKTAG` packs it),
    /// or `nil` when it is 0 or not printable ASCII (trailing spaces are kept: `rle `).
    static func fourcc(_ tag: UInt32) -> String? {
        guard tag != 0 else { return nil }
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: tag >> (8 * $0)) }
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
