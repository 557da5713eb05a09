#ifndef PREVIEWLOOP_CFFMPEGLOG_H
#define PREVIEWLOOP_CFFMPEGLOG_H

/// Swift cannot take a C `va_list` callback, so FFmpeg's log callback is a C trampoline (log.c): it
/// formats the line (only for lines at the current level or errors) and hands it to this handler.
typedef void (*cffmpeg_log_line_handler)(int level, const char *line);

/// Installs `handler` as the one process-wide receiver of FFmpeg's log lines (`av_log_set_callback`).
void cffmpeg_install_log_handler(cffmpeg_log_line_handler handler);

#endif
