#ifndef PREVIEWLOOP_CFFMPEG_H
#define PREVIEWLOOP_CFFMPEG_H

#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libavutil/opt.h>
#include <libavutil/error.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/hdr_dynamic_metadata.h>
#include <libavutil/dovi_meta.h>

// Swift cannot import function-like or computed macros; each shim below exists only for that reason.

/// AVERROR(e): negates a POSIX errno (a function-like macro).
static inline int cffmpeg_averror(int posix_error) { return AVERROR(posix_error); }

/// AVERROR_EOF: built by the FFERRTAG macro.
static inline int cffmpeg_averror_eof(void) { return AVERROR_EOF; }

/// AVERROR_EXIT: built by the FFERRTAG macro (returned when the interrupt callback asks to stop).
static inline int cffmpeg_averror_exit(void) { return AVERROR_EXIT; }

/// AVERROR_INVALIDDATA: built by the FFERRTAG macro.
static inline int cffmpeg_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }

/// AVERROR_DECODER_NOT_FOUND / STREAM_NOT_FOUND: built by the FFERRTAG macro.
static inline int cffmpeg_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int cffmpeg_averror_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }
static inline int cffmpeg_averror_protocol_not_found(void) { return AVERROR_PROTOCOL_NOT_FOUND; }

/// AVERROR_HTTP_*: built by the FFERRTAG macro.
static inline int cffmpeg_averror_http_not_found(void) { return AVERROR_HTTP_NOT_FOUND; }
static inline int cffmpeg_averror_http_forbidden(void) { return AVERROR_HTTP_FORBIDDEN; }
static inline int cffmpeg_averror_http_unauthorized(void) { return AVERROR_HTTP_UNAUTHORIZED; }
static inline int cffmpeg_averror_http_bad_request(void) { return AVERROR_HTTP_BAD_REQUEST; }
static inline int cffmpeg_averror_http_other_4xx(void) { return AVERROR_HTTP_OTHER_4XX; }
static inline int cffmpeg_averror_http_server_error(void) { return AVERROR_HTTP_SERVER_ERROR; }

/// AV_NOPTS_VALUE: a casted 64-bit constant macro Swift does not import.
static inline int64_t cffmpeg_nopts_value(void) { return AV_NOPTS_VALUE; }

/// AV_TIME_BASE_Q: a compound-literal macro.
static inline AVRational cffmpeg_time_base_q(void) { return (AVRational){1, AV_TIME_BASE}; }

// The fields and functions FFmpeg deprecated after 5.1, chosen by the installed FFmpeg's version.
#include "CFFmpegCompat.h"

// The log trampoline is a real C target (Sources/CFFmpegLog), so its handler slot exists once.

#endif
