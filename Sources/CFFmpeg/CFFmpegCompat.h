#ifndef PREVIEWLOOP_CFFMPEG_COMPAT_H
#define PREVIEWLOOP_CFFMPEG_COMPAT_H

// Every FFmpeg field and function PreviewLoop uses that FFmpeg deprecated after 5.1, in one place,
// each with its replacement. The installed headers choose: FFmpeg's version macros
// (LIBAVUTIL_VERSION_INT, LIBAVCODEC_VERSION_INT) are computed with AV_VERSION_INT, which Swift cannot
// import, so the choice is made here, in C, and the Swift side (FFmpegCompat) calls one function.
// The thresholds are FFmpeg 6.1's library versions, the first release with every replacement below:
// libavutil 58.29.100, libavcodec 60.31.100. Older libraries (Debian 12's 5.1: libavutil 57.28.100,
// libavcodec 59.37.100) compile only the first branch, newer ones (7.0 removed the old names) only the
// second. `Scripts/check-layers.sh` fails when a deprecated name appears anywhere else.

#include <libavutil/frame.h>
#include <libavutil/version.h>
#include <libavcodec/version.h>
#include <libavformat/avformat.h>

#define CFFMPEG_FRAME_FLAGS (LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(58, 29, 100))
#define CFFMPEG_CODED_SIDE_DATA (LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 31, 100))

/// A frame's duration in its stream's time base, or 0 when unknown:
/// `AVFrame.pkt_duration` before 6.1, `AVFrame.duration` from then on.
static inline int64_t cffmpeg_frame_duration(const AVFrame *frame) {
#if CFFMPEG_FRAME_FLAGS
    return frame->duration;
#else
    return frame->pkt_duration;
#endif
}

/// Whether a decoded frame is a keyframe: `AVFrame.key_frame`, or `AV_FRAME_FLAG_KEY` in `flags`.
static inline int cffmpeg_frame_is_keyframe(const AVFrame *frame) {
#if CFFMPEG_FRAME_FLAGS
    return (frame->flags & AV_FRAME_FLAG_KEY) != 0;
#else
    return frame->key_frame != 0;
#endif
}

/// Whether a frame holds two interlaced fields: `AVFrame.interlaced_frame`, or
/// `AV_FRAME_FLAG_INTERLACED` in `flags`.
static inline int cffmpeg_frame_is_interlaced(const AVFrame *frame) {
#if CFFMPEG_FRAME_FLAGS
    return (frame->flags & AV_FRAME_FLAG_INTERLACED) != 0;
#else
    return frame->interlaced_frame != 0;
#endif
}

/// Marks a frame progressive (after deinterlacing).
static inline void cffmpeg_frame_clear_interlaced(AVFrame *frame) {
#if CFFMPEG_FRAME_FLAGS
    frame->flags &= ~AV_FRAME_FLAG_INTERLACED;
#else
    frame->interlaced_frame = 0;
#endif
}

/// Whether an interlaced frame's top field is displayed first: `AVFrame.top_field_first`, or
/// `AV_FRAME_FLAG_TOP_FIELD_FIRST` in `flags`.
static inline int cffmpeg_frame_is_top_field_first(const AVFrame *frame) {
#if CFFMPEG_FRAME_FLAGS
    return (frame->flags & AV_FRAME_FLAG_TOP_FIELD_FIRST) != 0;
#else
    return frame->top_field_first != 0;
#endif
}

/// One kind of a stream's side data, borrowed from the stream (valid while it lives), or NULL with
/// `*size` 0: `av_stream_get_side_data` before 6.1 (removed in 7.0), the codec parameters'
/// `coded_side_data` through `av_packet_side_data_get` from then on.
static inline const uint8_t *cffmpeg_stream_side_data(const AVStream *stream, enum AVPacketSideDataType type,
                                                      size_t *size) {
    *size = 0;
#if CFFMPEG_CODED_SIDE_DATA
    const AVCodecParameters *parameters = stream->codecpar;
    const AVPacketSideData *side = av_packet_side_data_get(parameters->coded_side_data,
                                                           parameters->nb_coded_side_data, type);
    if (side == NULL || side->data == NULL) return NULL;
    *size = side->size;
    return side->data;
#else
    const uint8_t *data = av_stream_get_side_data(stream, type, size);
    if (data == NULL) *size = 0;
    return data;
#endif
}

#endif
