// libcurl from Debian's libcurl4-openssl-dev: the HTTP client under remote range reads (s3:// inputs).
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: each wrapper below
// passes one argument type, so the compiler checks what the variadic call cannot.
#include <curl/curl.h>

// A number option (CURLOPT_NOBODY, CURLOPT_FOLLOWLOCATION, timeouts…): curl reads a `long`.
static inline CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

// A large number option (CURLOPT_MAX_RECV_SPEED_LARGE…): curl reads a `curl_off_t`.
static inline CURLcode ccurl_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

// A text option (CURLOPT_URL, CURLOPT_RANGE, CURLOPT_PROTOCOLS_STR, CURLOPT_CAINFO): curl copies it.
static inline CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

// A pointer option (CURLOPT_WRITEDATA, CURLOPT_HEADERDATA, CURLOPT_XFERINFODATA): curl keeps it as given.
static inline CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

// CURLOPT_HTTPHEADER: a header list the caller owns until the transfer ends.
static inline CURLcode ccurl_setopt_headers(CURL *handle, struct curl_slist *list) {
    return curl_easy_setopt(handle, CURLOPT_HTTPHEADER, list);
}

// CURLOPT_WRITEFUNCTION / CURLOPT_HEADERFUNCTION take a function pointer through the variadic call.
typedef size_t (*ccurl_data_callback)(char *data, size_t size, size_t count, void *context);
static inline CURLcode ccurl_setopt_write(CURL *handle, CURLoption option, ccurl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

// CURLOPT_XFERINFOFUNCTION: polled during a transfer; a nonzero return aborts it (timeouts, cancellation).
static inline CURLcode ccurl_setopt_progress(CURL *handle, curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

// CURLINFO_RESPONSE_CODE and other `long` results.
static inline CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
