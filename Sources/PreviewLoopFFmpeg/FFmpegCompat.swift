import CFFmpeg

/// Every field and function PreviewLoop uses that FFmpeg deprecated after 5.1, in one place: a port
/// to FFmpeg 6 or 7 changes these accessors (each names its replacement) and nothing else.
/// `Scripts/check-layers.sh` fails when one of these names appears anywhere else.
///
/// The `#if` branches are ready for the version check; FFmpeg's version macros are computed, so the
/// condition is a compilation flag (`-D FFMPEG_6_1` for 6.1 and later, where the replacements exist).
package enum FFmpegCompat {
    /// A frame's duration in its stream's time base, or 0 when unknown.
    ///
    /// `AVFrame.pkt_duration` (5.1); `AVFrame.duration` from 6.0 (`pkt_duration` deprecated in 6.0).
    static func duration(of frame: UnsafePointer<AVFrame>) -> Int64 {
#if FFMPEG_6_1
        frame.pointee.duration
#else
        frame.pointee.pkt_duration
#endif
    }

    /// Whether a decoded frame is a keyframe.
    ///
    /// `AVFrame.key_frame` (5.1); `AVFrame.flags & AV_FRAME_FLAG_KEY` from 6.1 (`key_frame` deprecated).
    static func isKeyframe(_ frame: UnsafePointer<AVFrame>) -> Bool {
#if FFMPEG_6_1
        frame.pointee.flags & AV_FRAME_FLAG_KEY != 0
#else
        frame.pointee.key_frame != 0
#endif
    }

    /// Whether a decoded frame holds two interlaced fields.
    ///
    /// `AVFrame.interlaced_frame` (5.1); `AVFrame.flags & AV_FRAME_FLAG_INTERLACED` from 6.1.
    static func isInterlaced(_ frame: UnsafePointer<AVFrame>) -> Bool {
#if FFMPEG_6_1
        frame.pointee.flags & AV_FRAME_FLAG_INTERLACED != 0
#else
        frame.pointee.interlaced_frame != 0
#endif
    }

    /// Marks a frame progressive (after deinterlacing).
    static func clearInterlaced(_ frame: UnsafeMutablePointer<AVFrame>) {
#if FFMPEG_6_1
        frame.pointee.flags &= ~AV_FRAME_FLAG_INTERLACED
#else
        frame.pointee.interlaced_frame = 0
#endif
    }

    /// Whether an interlaced frame's top field is displayed first.
    ///
    /// `AVFrame.top_field_first` (5.1); `AVFrame.flags & AV_FRAME_FLAG_TOP_FIELD_FIRST` from 6.1.
    static func isTopFieldFirst(_ frame: UnsafePointer<AVFrame>) -> Bool {
#if FFMPEG_6_1
        frame.pointee.flags & AV_FRAME_FLAG_TOP_FIELD_FIRST != 0
#else
        frame.pointee.top_field_first != 0
#endif
    }

    /// The bytes of one kind of a stream's side data, borrowed from the stream (valid while it lives).
    ///
    /// `av_stream_get_side_data` (5.1); `av_packet_side_data_get(codecpar->coded_side_data, …)` from 6.1
    /// (the function deprecated in 6.1, removed in 7.0).
    static func streamSideData(_ stream: UnsafeMutablePointer<AVStream>, _ type: AVPacketSideDataType) -> UnsafeBufferPointer<UInt8>? {
#if FFMPEG_6_1
        let parameters = stream.pointee.codecpar.pointee
        guard let side = av_packet_side_data_get(parameters.coded_side_data, parameters.nb_coded_side_data, type),
              let data = side.pointee.data else { return nil }
        return UnsafeBufferPointer(start: data, count: Int(side.pointee.size))
#else
        var size = 0
        guard let data = av_stream_get_side_data(stream, type, &size) else { return nil }
        return UnsafeBufferPointer(start: data, count: size)
#endif
    }
}
