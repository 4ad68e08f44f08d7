// libjxl's encoder and decoder for imgbake's JPEG XL variants (the stack's libvips has no JPEG XL
// saver): the pixels libvips decoded go in, bytes come out, on the calling thread (one transform
// thread per image, as libvips' encoders run), without metadata.
#ifndef IMGBAKE_JXL_SHIM_H
#define IMGBAKE_JXL_SHIM_H
#include <stddef.h>
#include <stdint.h>

/* libjxl's version, as "0.11.2". */
const char *imgbake_jxl_version(void);

/* Encodes `width`×`height` pixels of `bands` interleaved 8-bit samples (1 grey, 2 grey and alpha, 3 sRGB,
   4 sRGB and alpha) as lossy JPEG XL at libjxl's `quality` (0–100: JxlEncoderDistanceFromQuality) and
   `effort` (1–9). 0 and *out (free with imgbake_jxl_free); else -1 and a message in `error`. */
int imgbake_jxl_encode(const uint8_t *pixels, int width, int height, int bands, float quality, int effort,
                       uint8_t **out, size_t *length, char *error, size_t error_size);

/* Decodes JPEG XL to interleaved 8-bit samples, with the bands it holds (1–4, as above). 0 and *pixels
   (free with imgbake_jxl_free); else -1 and a message in `error`. */
int imgbake_jxl_decode(const uint8_t *bytes, size_t length, uint8_t **pixels, int *width, int *height, int *bands,
                       char *error, size_t error_size);

void imgbake_jxl_free(void *pointer);
#endif
