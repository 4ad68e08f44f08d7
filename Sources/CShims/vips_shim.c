#include "vips_shim.h"
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#define IMGBAKE_CLIP(lo, v, hi) ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))
static void imgbake_ignore_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}
int imgbake_vips_start(const char *argv0, int threads) {
    // What VIPS_INIT checks, and the oldest libvips whose options imgbake passes (CVips.h declares 8's ABI).
    if (vips_version(0) != 8 || vips_version(1) < 16) {
        vips_error("imgbake", "libvips %s is not 8.16 or later", vips_version_string());
        return -1;
    }
    if (vips_init(argv0) != 0) return -1;
    // glibc raises the size from which an allocation gets pages of its own (given back when freed)
    // each time such a block is freed, up to 32 MiB, so decoded images' buffers soon stay in the heap
    // after they are done. Fixed at 1 MiB once images are decoded, the bench's cold peak is 239–249
    // MiB against 249–267 without it (three runs each). Not from the start: a warm build, which
    // decodes nothing, copies its files 0.05 s slower with it.
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    // libvips also logs what it returns as an error ("error in tile ..."); callers report the error.
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING, imgbake_ignore_log, NULL);
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    if (threads > 0) vips_concurrency_set(threads);
    // Block every loader, then allow back only the ones we mean to decode: remote bytes are untrusted.
    vips_operation_block_set("VipsForeignLoad", TRUE);
    vips_operation_block_set("VipsForeignLoadJpeg", FALSE);
    vips_operation_block_set("VipsForeignLoadPng", FALSE);
    vips_operation_block_set("VipsForeignLoadNsgif", FALSE);
    vips_operation_block_set("VipsForeignLoadWebp", FALSE);
    vips_operation_block_set("VipsForeignLoadHeif", FALSE);
    return 0;
}

int imgbake_vips_black(int width, int height, int bands, VipsImage **out) {
    VipsImage *black = NULL;
    if (vips_black(&black, width, height, "bands", bands, NULL)) return -1;
    int result = vips_cast_uchar(black, out, NULL);
    g_object_unref(black);
    return result;
}


int imgbake_vips_open_buffer(const void *buf, size_t len, int all_pages, VipsImage **out) {
    *out = vips_image_new_from_buffer(buf, len, all_pages ? "n=-1" : "",
                                      "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    return *out ? 0 : -1;
}

int imgbake_vips_thumbnail_buffer(const void *buf, size_t len, int width, int all_pages, int colour_manage,
                                  VipsImage **out) {
    const char *options = all_pages ? "n=-1,fail_on=error" : "fail_on=error";
    // Without an embedded profile, export_profile would still run an sRGB->sRGB transform through
    // LittleCMS, which tints pure greys (measured: up to 3 levels).
    if (colour_manage)
        return vips_thumbnail_buffer((void *)buf, len, out, width, "height", VIPS_MAX_COORD, "size", VIPS_SIZE_DOWN,
                                     "export_profile", "srgb", "option_string", options, NULL);
    return vips_thumbnail_buffer((void *)buf, len, out, width, "height", VIPS_MAX_COORD, "size", VIPS_SIZE_DOWN,
                                 "option_string", options, NULL);
}

int imgbake_vips_load(const void *buf, size_t len, int shrink, VipsImage **out) {
    const char *loader = shrink > 1 ? vips_foreign_find_load_buffer(buf, len) : NULL;
    if (loader && vips_isprefix("VipsForeignLoadJpeg", loader))
        *out = vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR,
                                          "shrink", shrink, NULL);
    else if (loader && vips_isprefix("VipsForeignLoadWebp", loader))
        *out = vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR,
                                          "scale", 1.0 / shrink, NULL);
    else
        *out = vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR, NULL);
    return *out ? 0 : -1;
}

int imgbake_vips_to_srgb(VipsImage *in, VipsImage **out) {
    return vips_icc_transform(in, out, "srgb", "embedded", TRUE, "intent", VIPS_INTENT_RELATIVE, NULL);
}

int imgbake_vips_autorot(VipsImage *in, VipsImage **out) {
    return vips_autorot(in, out, NULL);
}

int imgbake_vips_resize_exact(VipsImage *in, int width, int height, int premultiply, VipsImage **out) {
    double scale = (double) width / vips_image_get_width(in), vscale = (double) height / vips_image_get_height(in);
    if (!premultiply || !vips_image_hasalpha(in))
        return vips_resize(in, out, scale, "vscale", vscale, "kernel", VIPS_KERNEL_LANCZOS3, NULL);
    VipsImage *context = vips_image_new();
    VipsImage **t = (VipsImage **) vips_object_local_array((VipsObject *) context, 5);
    int result = -1;
    if (vips_premultiply(in, &t[0], NULL) ||
        vips_resize(t[0], &t[1], scale, "vscale", vscale, "kernel", VIPS_KERNEL_LANCZOS3, NULL) ||
        vips_unpremultiply(t[1], &t[2], NULL) ||
        vips_round(t[2], &t[3], VIPS_OPERATION_ROUND_RINT, NULL) ||
        vips_cast(t[3], &t[4], vips_image_get_format(in), NULL) ||
        vips_copy(t[4], out, "interpretation", vips_image_get_interpretation(in), NULL)) goto done;
    result = 0;
done:
    g_object_unref(context);
    return result;
}

int imgbake_vips_thumbnail_image(VipsImage *in, int width, VipsImage **out) {
    return vips_thumbnail_image(in, out, width, "height", VIPS_MAX_COORD, "size", VIPS_SIZE_DOWN,
                                "no_rotate", TRUE, NULL);
}

int imgbake_vips_copy(VipsImage *in, VipsImage **out) {
    return vips_copy(in, out, NULL);
}

int imgbake_vips_colourspace(VipsImage *in, VipsInterpretation space, VipsImage **out) {
    return vips_colourspace(in, out, space, NULL);
}

int imgbake_vips_crop(VipsImage *in, int left, int top, int width, int height, VipsImage **out) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

int imgbake_vips_tidy_alpha(VipsImage *in, VipsImage **out) {
    if (!vips_image_hasalpha(in) || vips_image_get_format(in) != VIPS_FORMAT_UCHAR) {
        g_object_ref(in);
        *out = in;
        return 0;
    }
    VipsImage *context = vips_image_new();
    VipsImage **t = (VipsImage **) vips_object_local_array((VipsObject *) context, 5);
    int result = -1;
    double lowest;
    int colours = vips_image_get_bands(in) - 1;
    if (vips_extract_band(in, &t[0], colours, NULL) || vips_min(t[0], &lowest, NULL)) goto done;
    if (lowest >= 255) {
        result = vips_extract_band(in, out, 0, "n", colours, NULL);
        goto done;
    }
    // Where alpha is 0, take a black (all-zero) pixel; elsewhere the image.
    if (vips_equal_const1(t[0], &t[1], 0.0, NULL) ||
        vips_black(&t[2], vips_image_get_width(in), vips_image_get_height(in), "bands", vips_image_get_bands(in), NULL) ||
        vips_cast(t[2], &t[3], VIPS_FORMAT_UCHAR, NULL) ||
        vips_ifthenelse(t[1], t[3], in, &t[4], NULL) ||
        vips_copy(t[4], out, "interpretation", vips_image_get_interpretation(in), NULL)) goto done;
    result = 0;
done:
    g_object_unref(context);
    return result;
}

int imgbake_vips_gaussblur(VipsImage *in, double sigma, VipsImage **out) {
    return vips_gaussblur(in, out, sigma, NULL);
}

int imgbake_vips_webpsave(VipsImage *in, int quality, int effort, int strip, void **buf, size_t *len) {
    return vips_webpsave_buffer(in, buf, len, "Q", quality, "effort", effort, "strip", strip, NULL);
}

int imgbake_vips_jpegsave(VipsImage *in, int quality, int strip, void **buf, size_t *len) {
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, "interlace", TRUE,
                                "optimize_coding", TRUE, "strip", strip, NULL);
}

int imgbake_vips_jpegsave_sequential(VipsImage *in, int quality, void **buf, size_t *len) {
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, "interlace", FALSE,
                                "optimize_coding", FALSE, "strip", TRUE, NULL);
}

int imgbake_vips_pngsave(VipsImage *in, int compression, int palette, int quality, int effort, int strip,
                         void **buf, size_t *len) {
    if (palette)
        return vips_pngsave_buffer(in, buf, len, "compression", compression, "palette", TRUE,
                                   "Q", quality, "effort", effort, "strip", strip, NULL);
    // Adaptive per-row filtering: libvips 8.14 defaults to none, which made PNGs ~1.3x larger here.
    return vips_pngsave_buffer(in, buf, len, "compression", compression, "filter", VIPS_FOREIGN_PNG_FILTER_ALL,
                               "strip", strip, NULL);
}

int imgbake_vips_gifsave(VipsImage *in, int strip, void **buf, size_t *len) {
    return vips_gifsave_buffer(in, buf, len, "strip", strip, NULL);
}

int imgbake_vips_avifsave(VipsImage *in, int quality, int effort, int full_chroma, int strip, void **buf, size_t *len) {
    return vips_heifsave_buffer(in, buf, len, "Q", quality, "effort", effort,
                                "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1, "strip", strip,
                                "subsample_mode", full_chroma ? VIPS_FOREIGN_SUBSAMPLE_OFF : VIPS_FOREIGN_SUBSAMPLE_AUTO, NULL);
}

// The luma of `count` pixels of `bands` 8-bit bands (Rec. 601 weights, rounded; alpha flattened onto
// white), into a new plane.
unsigned char *imgbake_luma(const unsigned char *pixels, size_t count, int bands) {
    int alpha = bands == 2 || bands == 4;
    unsigned char *plane = g_malloc(count ? count : 1);
    for (size_t i = 0; i < count; i++) {
        const unsigned char *p = pixels + i * bands;
        double y = bands >= 3 ? 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2] : p[0];
        // Flattened onto white: what a page without a background shows under transparency.
        if (alpha) {
            double a = p[bands - 1] / 255.0;
            y = y * a + 255.0 * (1.0 - a);
        }
        plane[i] = (unsigned char) IMGBAKE_CLIP(0, rint(y), 255);
    }
    return plane;
}

int imgbake_vips_luma_plane(VipsImage *in, unsigned char **out, int *width, int *height) {
    const int bands = vips_image_get_bands(in), width_ = vips_image_get_width(in), height_ = vips_image_get_height(in);
    if (vips_image_get_format(in) != VIPS_FORMAT_UCHAR || bands < 1 || bands > 4) {
        vips_error("imgbake", "luma of a %d-band image of format %d", bands, vips_image_get_format(in));
        return -1;
    }
    size_t size = 0;
    unsigned char *pixels = vips_image_write_to_memory(in, &size);
    if (!pixels) return -1;
    *out = imgbake_luma(pixels, (size_t) width_ * height_, bands);
    g_free(pixels);
    *width = width_;
    *height = height_;
    return 0;
}

int imgbake_vips_pixels(VipsImage *in, unsigned char **out, int *width, int *height, int *bands) {
    if (vips_image_get_format(in) != VIPS_FORMAT_UCHAR || vips_image_get_bands(in) < 1 || vips_image_get_bands(in) > 4) {
        vips_error("imgbake", "pixels of a %d-band image of format %d", vips_image_get_bands(in), vips_image_get_format(in));
        return -1;
    }
    size_t size = 0;
    unsigned char *pixels = vips_image_write_to_memory(in, &size);
    if (!pixels) return -1;
    *out = pixels;
    *width = vips_image_get_width(in);
    *height = vips_image_get_height(in);
    *bands = vips_image_get_bands(in);
    return 0;
}

int imgbake_vips_decode_luma_plane(const void *buf, size_t len, unsigned char **out, int *width, int *height) {
    VipsImage *image = vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!image) return -1;
    int result = imgbake_vips_luma_plane(image, out, width, height);
    g_object_unref(image);
    return result;
}
int imgbake_vips_tile_sample(VipsImage *in, int tile, int across, int down, VipsImage **out) {
    const int count = across * down, iw = vips_image_get_width(in), ih = vips_image_get_height(in);
    if (count < 1 || tile < 2 || iw < tile * across || ih < tile * down) {
        vips_error("imgbake", "%dx%d is too small for %d x %d tiles of %d px", iw, ih, across, down, tile);
        return -1;
    }
    VipsImage **tiles = g_malloc0(sizeof(VipsImage *) * (size_t) count);
    int result = -1, made = 0;
    for (int j = 0; j < down; j++)
        for (int i = 0; i < across; i++, made++) {
            // The middle of cell (i, j), kept inside the image, rounded down to even coordinates.
            int x = (int) ((i + 0.5) * iw / across) - tile / 2, y = (int) ((j + 0.5) * ih / down) - tile / 2;
            x = IMGBAKE_CLIP(0, x, iw - tile) & ~1;
            y = IMGBAKE_CLIP(0, y, ih - tile) & ~1;
            if (vips_extract_area(in, &tiles[made], x, y, tile, tile, NULL)) goto done;
        }
    result = vips_arrayjoin(tiles, out, count, "across", across, NULL);
done:
    for (int k = 0; k < made; k++) g_object_unref(tiles[k]);
    g_free(tiles);
    return result;
}

// Mean SSIM of two 8-bit planes, as libwebp defines it (what `cwebp -print_ssim` reports and what
// WebPPlaneDistortion computes): every pixel's 7 x 7 window, weighted 1 2 3 4 3 2 1 along each side
// and clipped at the borders, its sums in integers, libwebp's constants, the pixels' values added up
// in raster order in double and the total rounded to float. The same numbers, made faster: libwebp
// adds up each of the 49 products of every window again (3.9 % of a cold bench build's CPU, most of
// a quality search's); the weights are separable, so here each row's 7-wide weighted sums are made
// once and each window is 7 of them (`QualitySearchTests` checks equality with libwebp's).
enum { SSIM_RADIUS = 3, SSIM_SPAN = 2 * SSIM_RADIUS + 1, SSIM_MOMENTS = 5 };
static const uint32_t imgbake_ssim_weight[SSIM_SPAN] = {1, 2, 3, 4, 3, 2, 1};

static double imgbake_ssim_of(uint32_t xm, uint32_t ym, uint32_t xxm, uint32_t xym, uint32_t yym, uint32_t n) {
    const uint32_t w2 = n * n, c1 = 20 * w2, c2 = 60 * w2, c3 = 8 * 8 * w2;
    const uint64_t xmxm = (uint64_t) xm * xm, ymym = (uint64_t) ym * ym;
    if (xmxm + ymym < c3) return 1.;  // too dark to weigh
    const int64_t xmym = (int64_t) xm * ym;
    const int64_t sxy = (int64_t) xym * n - xmym;
    const uint64_t sxx = (uint64_t) xxm * n - xmxm, syy = (uint64_t) yym * n - ymym;
    // Scaled down by 8 bits so that the products below fit in 64.
    const uint64_t num = (2 * (uint64_t) (sxy < 0 ? 0 : sxy) + c2) >> 8, den = (sxx + syy + c2) >> 8;
    const uint64_t fnum = (2 * xmym + c1) * num, fden = (xmxm + ymym + c1) * den;
    return (double) fnum / fden;
}

// The weighted sum of v[i] over the window around x that lies inside [0, n) (v NULL: of the weights).
static uint32_t imgbake_ssim_clipped(const uint32_t *v, int n, int x) {
    uint32_t sum = 0;
    for (int i = x < SSIM_RADIUS ? 0 : x - SSIM_RADIUS; i <= x + SSIM_RADIUS && i < n; i++)
        sum += imgbake_ssim_weight[SSIM_RADIUS + i - x] * (v ? v[i] : 1);
    return sum;
}

// One row's horizontal sums: for each x, the weighted sums over its window of a, b, a*a, a*b and b*b,
// as five runs of `width` in `out`; `values` is room for five runs more.
static void imgbake_ssim_row(const unsigned char *a, const unsigned char *b, int width, uint32_t *out, uint32_t *values) {
    for (int x = 0; x < width; x++) {
        const uint32_t p = a[x], q = b[x];
        values[x] = p;
        values[width + x] = q;
        values[2 * width + x] = p * p;
        values[3 * width + x] = p * q;
        values[4 * width + x] = q * q;
    }
    // x in [inner_from, inner_to) has its whole window in the row; the rest are clipped.
    const int inner_from = SSIM_RADIUS < width ? SSIM_RADIUS : width;
    const int inner_to = width - SSIM_RADIUS > inner_from ? width - SSIM_RADIUS : inner_from;
    for (int m = 0; m < SSIM_MOMENTS; m++) {
        const uint32_t *v = values + (size_t) m * width;
        uint32_t *o = out + (size_t) m * width;
        for (int x = 0; x < inner_from; x++) o[x] = imgbake_ssim_clipped(v, width, x);
        for (int x = inner_from; x < inner_to; x++)
            o[x] = v[x - 3] + 2 * v[x - 2] + 3 * v[x - 1] + 4 * v[x] + 3 * v[x + 1] + 2 * v[x + 2] + v[x + 3];
        for (int x = inner_to; x < width; x++) o[x] = imgbake_ssim_clipped(v, width, x);
    }
}

int imgbake_plane_ssim(const unsigned char *a, const unsigned char *b, int width, int height, double *out) {
    if (width < 1 || height < 1) return -1;
    const size_t run = (size_t) SSIM_MOMENTS * width;
    // The last 7 rows' sums (row y at y % 7), one row's windows, room for a row's values, and each
    // column's weight across (16 where the window is whole).
    uint32_t *rows = g_try_malloc(SSIM_SPAN * run * sizeof(uint32_t));
    uint32_t *window = g_try_malloc(run * sizeof(uint32_t));
    uint32_t *values = g_try_malloc(run * sizeof(uint32_t));
    uint32_t *across = g_try_malloc((size_t) width * sizeof(uint32_t));
    if (!rows || !window || !values || !across) { g_free(rows); g_free(window); g_free(values); g_free(across); return -1; }
    for (int x = 0; x < width; x++) across[x] = imgbake_ssim_clipped(NULL, width, x);
    double sum = 0.;
    int made = 0;  // rows summed so far
    for (int y = 0; y < height; y++) {
        const int top = y < SSIM_RADIUS ? 0 : y - SSIM_RADIUS, bottom = y + SSIM_RADIUS >= height ? height - 1 : y + SSIM_RADIUS;
        for (; made <= bottom; made++)
            imgbake_ssim_row(a + (size_t) made * width, b + (size_t) made * width, width, rows + (size_t) (made % SSIM_SPAN) * run, values);
        // The windows of row y: the weighted sums of those rows' sums.
        if (bottom - top == 2 * SSIM_RADIUS) {  // the whole window: one pass
            const uint32_t *r[SSIM_SPAN];
            for (int j = 0; j < SSIM_SPAN; j++) r[j] = rows + (size_t) ((top + j) % SSIM_SPAN) * run;
            for (size_t k = 0; k < run; k++)
                window[k] = r[0][k] + 2 * r[1][k] + 3 * r[2][k] + 4 * r[3][k] + 3 * r[4][k] + 2 * r[5][k] + r[6][k];
        } else {
            memset(window, 0, run * sizeof(uint32_t));
            for (int j = top; j <= bottom; j++) {
                const uint32_t w = imgbake_ssim_weight[SSIM_RADIUS + j - y], *row = rows + (size_t) (j % SSIM_SPAN) * run;
                for (size_t k = 0; k < run; k++) window[k] += w * row[k];
            }
        }
        // A window's weight is the product of its weights across and down.
        const uint32_t down = imgbake_ssim_clipped(NULL, height, y);
        for (int x = 0; x < width; x++)
            sum += imgbake_ssim_of(window[x], window[width + x], window[2 * width + x], window[3 * width + x],
                                   window[4 * width + x], across[x] * down);
    }
    g_free(rows);
    g_free(window);
    g_free(values);
    g_free(across);
    *out = (double) (float) sum / ((double) width * height);
    return 0;
}
