// Encode-only comparison on identical decoded pixels: libvips webpsave_buffer vs libwebp direct
// (WebPEncode with the same quality and method). Prints totals of time, bytes and PSNR.
#include <vips/vips.h>
#include <webp/encode.h>
#include <stdio.h>
#include <time.h>
#include <math.h>
#include <dirent.h>
#include <string.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static double psnr(VipsImage *a, const void *buf, size_t len) {
    VipsImage *b = vips_image_new_from_buffer(buf, len, "", NULL), *d, *sq; double mean;
    VipsImage *a3, *b3;
    vips_extract_band(a, &a3, 0, "n", 3, NULL); vips_extract_band(b, &b3, 0, "n", 3, NULL);
    vips_subtract(a3, b3, &d, NULL); vips_multiply(d, d, &sq, NULL); vips_avg(sq, &mean, NULL);
    g_object_unref(b); g_object_unref(d); g_object_unref(sq); g_object_unref(a3); g_object_unref(b3);
    return 10 * log10(255.0 * 255.0 / (mean > 1e-9 ? mean : 1e-9));
}
int main(int argc, char **argv) {
    if (VIPS_INIT(argv[0])) return 1;
    vips_concurrency_set(1); vips_cache_set_max(0);
    const char *dir = argc > 1 ? argv[1] : "/tmp/enc-in";
    DIR *d = opendir(dir); struct dirent *e;
    double tv = 0, tw = 0, pv = 0, pw = 0; size_t bv = 0, bw = 0; int n = 0;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".png")) continue;
        char path[4096]; snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        VipsImage *in = vips_image_new_from_file(path, NULL), *m, *rgb;
        if (!in) continue;
        if (vips_image_get_bands(in) < 3) { VipsImage *c; vips_colourspace(in, &c, VIPS_INTERPRETATION_sRGB, NULL); g_object_unref(in); in = c; }
        m = vips_image_copy_memory(in); g_object_unref(in);
        int alpha = vips_image_hasalpha(m);
        vips_cast(m, &rgb, VIPS_FORMAT_UCHAR, NULL); VipsImage *mem = vips_image_copy_memory(rgb); g_object_unref(rgb);
        size_t size; void *pixels = vips_image_write_to_memory(mem, &size);
        int w = vips_image_get_width(mem), h = vips_image_get_height(mem), bands = vips_image_get_bands(mem);
        void *buf; size_t len; double t0 = now();
        if (vips_webpsave_buffer(mem, &buf, &len, "Q", 80, "effort", 4, "strip", TRUE, NULL)) { printf("vips failed %s\n", vips_error_buffer()); return 1; }
        tv += now() - t0; bv += len; pv += psnr(mem, buf, len); g_free(buf);
        WebPConfig config; WebPConfigInit(&config); config.quality = 80; config.method = 4;
        WebPPicture pic; WebPPictureInit(&pic); pic.width = w; pic.height = h; pic.use_argb = 0;
        WebPMemoryWriter writer; WebPMemoryWriterInit(&writer); pic.writer = WebPMemoryWrite; pic.custom_ptr = &writer;
        t0 = now();
        if (bands == 4 || alpha) WebPPictureImportRGBA(&pic, pixels, w * bands); else WebPPictureImportRGB(&pic, pixels, w * bands);
        if (!WebPEncode(&config, &pic)) { printf("webp failed\n"); return 1; }
        tw += now() - t0; bw += writer.size; pw += psnr(mem, writer.mem, writer.size);
        WebPMemoryWriterClear(&writer); WebPPictureFree(&pic); g_free(pixels); g_object_unref(m); g_object_unref(mem); n++;
    }
    printf("%d images\nlibvips webpsave: %.2f s, %.2f MB, mean PSNR %.2f dB\nlibwebp direct:   %.2f s, %.2f MB, mean PSNR %.2f dB\nratio time vips/libwebp %.2f, bytes %.3f\n",
           n, tv, bv / 1e6, pv / n, tw, bw / 1e6, pw / n, tv / tw, (double) bv / bw);
    return 0;
}
