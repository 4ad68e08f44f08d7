// gzip, from the zlib the stack links in (libimgbake-stack.a): `imgbake serve` reads pages a dev
// server sends gzipped. A package for it (CompressNIO) would link the system's shared libz, which the
// artefacts must not need (packaging/dist-check.sh).
#ifndef IMGBAKE_ZLIB_SHIM_H
#define IMGBAKE_ZLIB_SHIM_H

#include <stddef.h>

/// Inflates the gzip stream `in` into a buffer allocated with malloc (`*out`, `*out_length`), the
/// caller frees it. 0: done; -1: not a whole gzip stream; -2: more than `max_out` bytes; -3: no memory.
int imgbake_gunzip(const unsigned char *in, size_t length, size_t max_out, unsigned char **out, size_t *out_length);

#endif
