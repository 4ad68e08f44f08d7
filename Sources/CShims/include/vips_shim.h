// Fixed-arity wrappers for the variadic libvips calls and the VIPS_INIT macro, which Swift cannot call.
// Ownership: every `VipsImage **out` receives a new reference that the caller must g_object_unref;
// every `void **buf` receives a g_malloc'd buffer that the caller must g_free. All return 0 on success
// and -1 on failure, with the reason in vips_error_buffer().
#ifndef IMGBAKE_VIPS_SHIM_H
#define IMGBAKE_VIPS_SHIM_H
#include "../../CVips/CVips.h"  // the CVips module's declarations of libvips

/// VIPS_INIT, then the process-wide settings a batch tool wants: warnings silenced (failures come back
/// as errors), no operation cache (every image is
/// seen once), `threads` worker threads per pipeline, and every loader blocked except the formats
/// imgbake decodes (JPEG, PNG, GIF, WebP, HEIF/AVIF).
int imgbake_vips_start(const char *argv0, int threads);

/// Opens an image lazily: only the header is read until pixels are needed.
/// `all_pages` loads every frame of an animation (n=-1).
int imgbake_vips_open_buffer(const void *buf, size_t len, int all_pages, VipsImage **out);

/// Shrink-on-load thumbnail to `width` (never upscaled), autorotated by EXIF; with `colour_manage`,
/// converted from its embedded profile (or CMYK) to sRGB. Corrupt or truncated input is an error
/// instead of grey pixels.
int imgbake_vips_thumbnail_buffer(const void *buf, size_t len, int width, int all_pages, int colour_manage,
                                  VipsImage **out);

/// Opens `buf` to be decoded as stored (sequentially: the pixels stream in once), failing on corrupt
/// input instead of returning grey. `shrink` (1, 2, 4 or 8) divides both sides as the decoder goes
/// where the format can: a JPEG's DCT scaling, libwebp's scaled decode; other formats ignore it.
int imgbake_vips_load(const void *buf, size_t len, int shrink, VipsImage **out);

/// Converts from the embedded profile (or libvips' CMYK one) to 8-bit sRGB, relative colorimetric.
int imgbake_vips_to_srgb(VipsImage *in, VipsImage **out);

/// Turns the image upright by its EXIF orientation (and drops the orientation).
int imgbake_vips_autorot(VipsImage *in, VipsImage **out);

/// A black `width` × `height` image of `bands` 8-bit bands (for probing what the savers can write).
int imgbake_vips_black(int width, int height, int bands, VipsImage **out);

/// Resizes to exactly `width` × `height` with lanczos3. With alpha and `premultiply`, the
/// colours are premultiplied for the resize (in floating point) and rounded (not truncated) back to 8
/// bits, so a constant colour under varying transparency stays constant; without `premultiply` the
/// alpha band is resized like the others (right only where the image is opaque).
int imgbake_vips_resize_exact(VipsImage *in, int width, int height, int premultiply, VipsImage **out);

/// Thumbnail of an already decoded animation (a stack of frames): every frame resized to `width`,
/// the page height updated. No rotation, no colour management.
int imgbake_vips_thumbnail_image(VipsImage *in, int width, VipsImage **out);

/// A new image sharing `in`'s pixels, with its own metadata (so fields can be removed).
int imgbake_vips_copy(VipsImage *in, VipsImage **out);

/// Converts to `space` (e.g. VIPS_INTERPRETATION_sRGB turns 16-bit RGB into 8-bit sRGB).
int imgbake_vips_colourspace(VipsImage *in, VipsInterpretation space, VipsImage **out);

/// The rectangle at (`left`, `top`) of size `width` × `height`.
int imgbake_vips_crop(VipsImage *in, int left, int top, int width, int height, VipsImage **out);

/// For an 8-bit image with alpha: fully transparent pixels get colour 0 (what is under them is never
/// seen, and its noise costs PNG and GIF bytes); an alpha band that is fully opaque is dropped.
/// Returns the image unchanged (a new reference) when neither applies.
int imgbake_vips_tidy_alpha(VipsImage *in, VipsImage **out);

/// Gaussian blur with standard deviation `sigma`.
int imgbake_vips_gaussblur(VipsImage *in, double sigma, VipsImage **out);

/// Savers. `strip` removes all metadata; without it, the fields left on the image are written
/// (callers remove the ones that must not leave first).
int imgbake_vips_webpsave(VipsImage *in, int quality, int effort, int strip, void **buf, size_t *len);
int imgbake_vips_jpegsave(VipsImage *in, int quality, int strip, void **buf, size_t *len);
/* The same quantised coefficients as imgbake_vips_jpegsave (so the same pixels once decoded), in one
 * sequential scan with the standard Huffman tables: for measuring a quality, not for keeping. */
int imgbake_vips_jpegsave_sequential(VipsImage *in, int quality, void **buf, size_t *len);
/// `palette` quantises to at most 256 colours (libimagequant) when it is non-zero; `effort` 1–10.
/// Otherwise lossless, with adaptive row filters.
int imgbake_vips_pngsave(VipsImage *in, int compression, int palette, int quality, int effort, int strip,
                         void **buf, size_t *len);
int imgbake_vips_gifsave(VipsImage *in, int strip, void **buf, size_t *len);
/// AVIF through libheif's AV1 encoder.
int imgbake_vips_avifsave(VipsImage *in, int quality, int effort, int full_chroma, int strip, void **buf, size_t *len);

/// The luma plane of an 8-bit image of 1 to 4 bands (grey, grey and alpha, RGB, RGBA): Rec. 601
/// weights rounded to the nearest level, alpha flattened onto white (as a page without a background
/// shows it). `*out` receives `width` × `height` bytes, g_malloc'd: the caller g_frees it. Computed
/// here rather than with libvips operations: a quality search takes the luma of every try, and the
/// operations' set-up cost more than the arithmetic on a sample.
/* The luma imgbake measures SSIM on (Rec. 601 weights, rounded; alpha flattened onto white) of `count`
   pixels of `bands` 8-bit samples, in a new plane (g_free). */
unsigned char *imgbake_luma(const unsigned char *pixels, size_t count, int bands);
/* An 8-bit image's interleaved samples, in new memory (g_free). */
int imgbake_vips_pixels(VipsImage *in, unsigned char **out, int *width, int *height, int *bands);
int imgbake_vips_luma_plane(VipsImage *in, unsigned char **out, int *width, int *height);

/// Same, of the image encoded in `buf` (decoded first).
int imgbake_vips_decode_luma_plane(const void *buf, size_t len, unsigned char **out, int *width, int *height);

/// `across` × `down` square tiles of `tile` pixels, one from the middle of each cell of an even grid
/// over `in` (even coordinates, so 4:2:0 chroma lines up), joined into one image `across` tiles wide:
/// a sample of the whole picture for an encoder to be tried on. `in` must hold at least one tile per cell.
int imgbake_vips_tile_sample(VipsImage *in, int tile, int across, int down, VipsImage **out);

/// Mean SSIM of two 8-bit planes of `width` × `height` (rows `width` bytes apart), the value libwebp's
/// WebPPlaneDistortion gives (7 × 7 windows, what cwebp -print_ssim reports). Returns -1 when memory
/// for its sums cannot be had, or a side is 0.
int imgbake_plane_ssim(const unsigned char *a, const unsigned char *b, int width, int height, double *out);

/// SSIMULACRA2 (ssimulacra2.c): a reference image's scales, kept for scoring any number of tries of it.
/// `pixels`: interleaved 8-bit samples of `bands` (1 grey to 4 sRGB and alpha; alpha is not looked at).
typedef struct imgbake_ss2_reference imgbake_ss2_reference;
imgbake_ss2_reference *imgbake_ss2_reference_new(const unsigned char *pixels, int width, int height, int bands);
void imgbake_ss2_reference_free(imgbake_ss2_reference *reference);
/// The score of `pixels` (the same size) against the reference: 100 when identical, lower the worse.
/// Returns -1 when the sizes differ or memory cannot be had.
int imgbake_ss2_score(const imgbake_ss2_reference *reference, const unsigned char *pixels, int width, int height,
                      int bands, double *score);

#endif
