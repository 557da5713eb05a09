import CFFmpeg

/// Every field and function PreviewLoop uses that FFmpeg deprecated after 5.1, in one place: the C
/// shim `Sources/CFFmpeg/CFFmpegCompat.h` picks the old name or its replacement with FFmpeg's own
/// version macros (computed macros Swift cannot read), so a build against FFmpeg 6.1 or later takes
/// the replacements with no flag to set. `Scripts/check-layers.sh` fails when one of the deprecated
/// names appears anywhere else.
package enum FFmpegCompat {
    /// A frame's duration in its stream's time base, or 0 when unknown.
    ///
    /// `AVFrame.pkt_duration` (5.1); `AVFrame.duration` from 6.1 (`pkt_duration` deprecated in 6.0).
    static func duration(of frame: UnsafePointer<AVFrame>) -> Int64 {
        cffmpeg_frame_duration(frame)
    }

    /// Whether a decoded frame is a keyframe.
    ///
    /// `AVFrame.key_frame` (5.1); `AVFrame.flags & AV_FRAME_FLAG_KEY` from 6.1 (`key_frame` deprecated).
    static func isKeyframe(_ frame: UnsafePointer<AVFrame>) -> Bool {
        cffmpeg_frame_is_keyframe(frame) != 0
    }

    /// Whether a decoded frame holds two interlaced fields.
    ///
    /// `AVFrame.interlaced_frame` (5.1); `AVFrame.flags & AV_FRAME_FLAG_INTERLACED` from 6.1.
    static func isInterlaced(_ frame: UnsafePointer<AVFrame>) -> Bool {
        cffmpeg_frame_is_interlaced(frame) != 0
    }

    /// Marks a frame progressive (after deinterlacing).
    static func clearInterlaced(_ frame: UnsafeMutablePointer<AVFrame>) {
        cffmpeg_frame_clear_interlaced(frame)
    }

    /// Whether an interlaced frame's top field is displayed first.
    ///
    /// `AVFrame.top_field_first` (5.1); `AVFrame.flags & AV_FRAME_FLAG_TOP_FIELD_FIRST` from 6.1.
    static func isTopFieldFirst(_ frame: UnsafePointer<AVFrame>) -> Bool {
        cffmpeg_frame_is_top_field_first(frame) != 0
    }

    /// The bytes of one kind of a stream's side data, borrowed from the stream (valid while it lives).
    ///
    /// `av_stream_get_side_data` (5.1); `av_packet_side_data_get(codecpar->coded_side_data, …)` from 6.1
    /// (the function deprecated in 6.1, removed in 7.0).
    static func streamSideData(_ stream: UnsafeMutablePointer<AVStream>, _ type: AVPacketSideDataType) -> UnsafeBufferPointer<UInt8>? {
        var size = 0
        guard let data = cffmpeg_stream_side_data(stream, type, &size) else { return nil }
        return UnsafeBufferPointer(start: data, count: size)
    }
}
