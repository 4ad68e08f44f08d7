#include "zlib_shim.h"

#include <stdlib.h>
#include <zlib.h>

int imgbake_gunzip(const unsigned char *in, size_t length, size_t max_out, unsigned char **out, size_t *out_length) {
    z_stream stream = {0};
    // 16 + MAX_WBITS: a gzip header and trailer around the deflate stream.
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) return -3;
    size_t capacity = length * 4 + 1024, used = 0;
    if (capacity > max_out) capacity = max_out > 0 ? max_out : 1;
    unsigned char *buffer = malloc(capacity);
    if (!buffer) { inflateEnd(&stream); return -3; }
    stream.next_in = (unsigned char *)in;
    int status = Z_OK;
    // zlib counts in uInt: the input is handed over in parts no larger than that.
    size_t left = length;
    for (;;) {
        if (stream.avail_in == 0 && left > 0) {
            stream.avail_in = left > 0x40000000 ? 0x40000000 : (uInt)left;
            left -= stream.avail_in;
        }
        if (used == capacity) {
            if (capacity >= max_out) { status = -2; break; }
            size_t grown = capacity * 2 > max_out ? max_out : capacity * 2;
            unsigned char *larger = realloc(buffer, grown);
            if (!larger) { status = -3; break; }
            buffer = larger;
            capacity = grown;
        }
        size_t room = capacity - used;
        stream.next_out = buffer + used;
        stream.avail_out = room > 0x40000000 ? 0x40000000 : (uInt)room;
        uInt before = stream.avail_out;
        int step = inflate(&stream, Z_NO_FLUSH);
        used += before - stream.avail_out;
        // One gzip member, and nothing after it (a page is not sent as several).
        if (step == Z_STREAM_END) { status = stream.avail_in == 0 && left == 0 ? 0 : -1; break; }
        if (step == Z_BUF_ERROR && stream.avail_in == 0 && left == 0) { status = -1; break; }
        if (step != Z_OK && step != Z_BUF_ERROR) { status = -1; break; }
    }
    inflateEnd(&stream);
    if (status != 0) { free(buffer); return status; }
    *out = buffer;
    *out_length = used;
    return 0;
}
