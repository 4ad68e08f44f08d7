// Fixed-arity wrappers for the variadic libvips calls and the VIPS_INIT macro, which Swift cannot call.
// Ownership: every `VipsImage **out` receives a new reference that the caller must g_object_unref;
// every `void **buf` receives a g_malloc'd buffer that the caller must g_free. All return 0 on success
// and -1 on failure, with the reason in vips_error_buffer().
#ifndef IMGBAKE_VIPS_SHIM_H
#define IMGBAKE_VIPS_SHIM_H
#include <vips/vips.h>

/// VIPS_INIT, then the process-wide settings a batch tool wants: warnings silenced (failures come back
/// as errors), no operation cache (every image is
/// seen once), `threads` worker threads per pipeline, and every loader blocked except the formats
/// imgbake decodes (JPEG, PNG, GIF, WebP, HEIF/AVIF).
int imgbake_vips_start(const char *argv0, int threads);

/// Opens an image lazily: only the header is read until pixels are needed.
/// `all_pages` loads every frame of an animation (n=-1).
int imgbake_vips_open_buffer(const void *buf, size_t len, int all_pages, VipsImage **out);

/// Shrink-on-load thumbnail to `width` (never upscaled), autorotated by EXIF, converted to sRGB.
/// `fail_on_error` makes truncated or corrupt input an error instead of grey pixels.
int imgbake_vips_thumbnail_buffer(const void *buf, size_t len, int width, int all_pages,
                                  VipsImage **out);

/// Thumbnail of an already decoded (in-memory) image; no rotation, no colour management.
int imgbake_vips_thumbnail_image(VipsImage *in, int width, VipsImage **out);

/// A new image sharing `in`'s pixels, with its own metadata (so fields can be removed).
int imgbake_vips_copy(VipsImage *in, VipsImage **out);

int imgbake_vips_webpsave(VipsImage *in, int quality, int effort, void **buf, size_t *len);
int imgbake_vips_jpegsave(VipsImage *in, int quality, void **buf, size_t *len);
/// `palette` quantises to at most 256 colours (libimagequant) when it is non-zero.
int imgbake_vips_pngsave(VipsImage *in, int compression, int palette, int quality, void **buf, size_t *len);
int imgbake_vips_gifsave(VipsImage *in, void **buf, size_t *len);
/// AVIF through libheif's AV1 encoder.
int imgbake_vips_avifsave(VipsImage *in, int quality, int effort, void **buf, size_t *len);

#endif
