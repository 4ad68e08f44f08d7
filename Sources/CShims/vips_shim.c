#include "vips_shim.h"

static void imgbake_ignore_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

int imgbake_vips_start(const char *argv0, int threads) {
    if (VIPS_INIT(argv0) != 0) return -1;
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

int imgbake_vips_open_buffer(const void *buf, size_t len, int all_pages, VipsImage **out) {
    *out = vips_image_new_from_buffer(buf, len, all_pages ? "n=-1" : "",
                                      "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    return *out ? 0 : -1;
}

int imgbake_vips_thumbnail_buffer(const void *buf, size_t len, int width, int all_pages,
                                  VipsImage **out) {
    return vips_thumbnail_buffer((void *)buf, len, out, width,
                                 "height", VIPS_MAX_COORD,
                                 "size", VIPS_SIZE_DOWN,
                                 "export_profile", "srgb",
                                 "option_string", all_pages ? "n=-1,fail_on=error" : "fail_on=error",
                                 NULL);
}

int imgbake_vips_thumbnail_image(VipsImage *in, int width, VipsImage **out) {
    return vips_thumbnail_image(in, out, width,
                                "height", VIPS_MAX_COORD,
                                "size", VIPS_SIZE_DOWN,
                                "no_rotate", TRUE,
                                NULL);
}

int imgbake_vips_copy(VipsImage *in, VipsImage **out) {
    return vips_copy(in, out, NULL);
}

int imgbake_vips_webpsave(VipsImage *in, int quality, int effort, void **buf, size_t *len) {
    return vips_webpsave_buffer(in, buf, len, "Q", quality, "effort", effort, "strip", TRUE, NULL);
}

int imgbake_vips_jpegsave(VipsImage *in, int quality, void **buf, size_t *len) {
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, "interlace", TRUE,
                                "optimize_coding", TRUE, "strip", TRUE, NULL);
}

int imgbake_vips_pngsave(VipsImage *in, int compression, int palette, int quality, void **buf, size_t *len) {
    if (palette)
        return vips_pngsave_buffer(in, buf, len, "compression", compression, "palette", TRUE,
                                   "Q", quality, "strip", TRUE, NULL);
    return vips_pngsave_buffer(in, buf, len, "compression", compression, "strip", TRUE, NULL);
}

int imgbake_vips_gifsave(VipsImage *in, void **buf, size_t *len) {
    return vips_gifsave_buffer(in, buf, len, "strip", TRUE, NULL);
}

int imgbake_vips_avifsave(VipsImage *in, int quality, int effort, void **buf, size_t *len) {
    return vips_heifsave_buffer(in, buf, len, "Q", quality, "effort", effort,
                                "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1, "strip", TRUE, NULL);
}
