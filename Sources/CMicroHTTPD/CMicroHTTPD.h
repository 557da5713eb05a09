// GNU libmicrohttpd from Debian's libmicrohttpd-dev: the HTTP server under `preview-loop serve`.
// MHD_start_daemon is variadic, which Swift cannot call; `cmhd_start` calls it with the options the
// server uses. The unescape callback keeps percent escapes, so the server decodes paths and query
// values itself and can refuse `%00`, bad escapes and bad UTF-8 instead of seeing them truncated.
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

static size_t cmhd_keep_escapes(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls;
    (void)connection;
    return strlen(text);
}

// What the request-line hook receives: the whole request target, before libmicrohttpd splits its query.
typedef void *(*cmhd_target_hook)(void *cls, const char *uri, struct MHD_Connection *connection);

static inline struct MHD_Daemon *cmhd_start(unsigned int flags, int listen_socket, unsigned int threads,
                                            unsigned int connection_limit,
                                            unsigned int per_address_limit, unsigned int connection_timeout,
                                            MHD_AccessHandlerCallback handler, MHD_RequestCompletedCallback completed,
                                            MHD_NotifyConnectionCallback connections, cmhd_target_hook target,
                                            void *context) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, context,
                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_socket,
                            MHD_OPTION_THREAD_POOL_SIZE, threads,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, context,
                            MHD_OPTION_UNESCAPE_CALLBACK, cmhd_keep_escapes, context,
                            MHD_OPTION_NOTIFY_CONNECTION, connections, context,
                            MHD_OPTION_URI_LOG_CALLBACK, target, context,
                            MHD_OPTION_END);
}

// The connection's socket (MHD_get_connection_info is variadic): the server peeks at it while the
// connection is suspended, to notice a client that went away.
static inline int cmhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : (int)info->connect_fd;
}

// The client's address (MHD_get_connection_info is variadic), for the request's peer.
static inline const struct sockaddr *cmhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

// Empties the query libmicrohttpd is about to split: the hook above is called with the whole request
// target after libmicrohttpd has found its '?' but before it splits what follows into its
// per-connection memory pool (32 KiB), where a few hundred short parameters ran out of room and left
// the request unanswered. The server copies the target in the hook and splits the query in Swift; a NUL
// right after the '?' leaves libmicrohttpd an empty query. The buffer is libmicrohttpd's own writable
// copy of the request line (it writes a NUL over the '?' itself right after the hook returns).
static inline void cmhd_empty_query(const char *uri) {
    char *query = strchr((char *)uri, '?');
    if (query != NULL) query[1] = '\0';
}
