// FFmpeg's log callback for PreviewLoop. A real C file (not a `static inline` in a header), so the
// handler slot exists once per process instead of once per object file that includes the header.
#include "CFFmpegLog.h"
#include <libavutil/log.h>
#include <stdarg.h>
#include <stdio.h>

static cffmpeg_log_line_handler handler_slot;

static void cffmpeg_log_trampoline(void *context, int level, const char *format, va_list arguments) {
    (void)context;
    cffmpeg_log_line_handler handler = handler_slot;
    if (!handler || (level > av_log_get_level() && level > AV_LOG_ERROR)) return;
    char line[1024];
    vsnprintf(line, sizeof line, format, arguments);
    handler(level, line);
}

void cffmpeg_install_log_handler(cffmpeg_log_line_handler handler) {
    handler_slot = handler;
    av_log_set_callback(cffmpeg_log_trampoline);
}
