// Fixed-arity wrappers for libcurl's variadic setopt/getinfo calls, which Swift cannot call.
// They only forward; the Curl module owns every handle and decides what is set.
#ifndef IMGBAKE_CURL_SHIM_H
#define IMGBAKE_CURL_SHIM_H
#include <curl/curl.h>

CURLcode imgbake_curl_setopt_long(CURL *h, CURLoption opt, long value);
CURLcode imgbake_curl_setopt_off(CURL *h, CURLoption opt, curl_off_t value);
/// Strings are copied by libcurl; other pointers (slists, user data) must outlive the transfer.
CURLcode imgbake_curl_setopt_pointer(CURL *h, CURLoption opt, const void *value);
CURLcode imgbake_curl_setopt_write(CURL *h, curl_write_callback fn, void *userdata);
CURLcode imgbake_curl_setopt_header(CURL *h, curl_write_callback fn, void *userdata);
CURLcode imgbake_curl_setopt_opensocket(CURL *h, curl_opensocket_callback fn, void *userdata);
/// Called once the connection is made (or reused), before the request is sent.
CURLcode imgbake_curl_setopt_prereq(CURL *h, curl_prereq_callback fn, void *userdata);

CURLcode imgbake_curl_getinfo_long(CURL *h, CURLINFO info, long *out);
CURLcode imgbake_curl_getinfo_off(CURL *h, CURLINFO info, curl_off_t *out);
CURLcode imgbake_curl_getinfo_string(CURL *h, CURLINFO info, const char **out);
CURLcode imgbake_curl_getinfo_pointer(CURL *h, CURLINFO info, void **out);

CURLMcode imgbake_curl_multi_setopt_long(CURLM *m, CURLMoption opt, long value);

/// curl_version_info(CURLVERSION_NOW): the struct's age says which fields the running libcurl filled.
static inline const curl_version_info_data *imgbake_curl_version_info(void) { return curl_version_info(CURLVERSION_NOW); }

/// CURL_SOCKET_BAD is a macro; the open-socket callback returns it to refuse a connection.
static inline curl_socket_t imgbake_curl_socket_bad(void) { return CURL_SOCKET_BAD; }
#endif
