#include "curl_shim.h"

CURLcode imgbake_curl_setopt_long(CURL *h, CURLoption opt, long value) { return curl_easy_setopt(h, opt, value); }
CURLcode imgbake_curl_setopt_off(CURL *h, CURLoption opt, curl_off_t value) { return curl_easy_setopt(h, opt, value); }
CURLcode imgbake_curl_setopt_pointer(CURL *h, CURLoption opt, const void *value) { return curl_easy_setopt(h, opt, value); }

CURLcode imgbake_curl_setopt_write(CURL *h, curl_write_callback fn, void *userdata) {
    CURLcode rc = curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, fn);
    return rc != CURLE_OK ? rc : curl_easy_setopt(h, CURLOPT_WRITEDATA, userdata);
}

CURLcode imgbake_curl_setopt_header(CURL *h, curl_write_callback fn, void *userdata) {
    CURLcode rc = curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, fn);
    return rc != CURLE_OK ? rc : curl_easy_setopt(h, CURLOPT_HEADERDATA, userdata);
}

CURLcode imgbake_curl_setopt_opensocket(CURL *h, curl_opensocket_callback fn, void *userdata) {
    CURLcode rc = curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, fn);
    return rc != CURLE_OK ? rc : curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, userdata);
}

CURLcode imgbake_curl_setopt_prereq(CURL *h, curl_prereq_callback fn, void *userdata) {
    CURLcode rc = curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, fn);
    return rc != CURLE_OK ? rc : curl_easy_setopt(h, CURLOPT_PREREQDATA, userdata);
}

CURLcode imgbake_curl_getinfo_long(CURL *h, CURLINFO info, long *out) { return curl_easy_getinfo(h, info, out); }
CURLcode imgbake_curl_getinfo_off(CURL *h, CURLINFO info, curl_off_t *out) { return curl_easy_getinfo(h, info, out); }
CURLcode imgbake_curl_getinfo_string(CURL *h, CURLINFO info, const char **out) { return curl_easy_getinfo(h, info, out); }
CURLcode imgbake_curl_getinfo_pointer(CURL *h, CURLINFO info, void **out) { return curl_easy_getinfo(h, info, out); }

CURLMcode imgbake_curl_multi_setopt_long(CURLM *m, CURLMoption opt, long value) { return curl_multi_setopt(m, opt, value); }
