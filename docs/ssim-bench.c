// imgbake's SSIM (imgbake_plane_ssim) against libwebp's WebPPlaneDistortion on the same planes, in one
// process: the time of each and whether they agree to the bit (docs/MEASUREMENTS.md, "Quality per image").
//
//   clang -O2 -o /tmp/ssim-bench docs/ssim-bench.c Sources/CShims/vips_shim.c -I Sources/CShims/include \
//     $(pkg-config --cflags --libs vips libwebp) -lm && /tmp/ssim-bench
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <webp/encode.h>
#include "vips_shim.h"

static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void) {
    // A quality search's sample (16 tiles of 64 px) and a whole 1600 px variant.
    const int sizes[][3] = {{256, 256, 200}, {1600, 900, 20}};
    for (int s = 0; s < 2; s++) {
        const int w = sizes[s][0], h = sizes[s][1], rounds = sizes[s][2];
        unsigned char *a = malloc((size_t) w * h), *b = malloc((size_t) w * h);
        srand(1);
        // A gradient with noise, and a copy disturbed by up to 3 levels.
        for (int i = 0; i < w * h; i++) {
            a[i] = (unsigned char) ((i % w + i / w) / 8 + rand() % 30);
            b[i] = (unsigned char) (a[i] + rand() % 7 - 3);
        }
        double ours = 0, theirs = 0;
        double t0 = cpu();
        for (int k = 0; k < rounds; k++) imgbake_plane_ssim(a, b, w, h, &ours);
        double t1 = cpu();
        for (int k = 0; k < rounds; k++) {
            float sum, logarithmic;
            WebPPlaneDistortion(a, w, b, w, w, h, 1, 1, &sum, &logarithmic);
            theirs = (double) sum / ((double) w * h);
        }
        double t2 = cpu();
        printf("%dx%d: imgbake %.3f ms, libwebp %.3f ms (%.2fx), %s\n", w, h, (t1 - t0) / rounds * 1e3,
               (t2 - t1) / rounds * 1e3, (t2 - t1) / (t1 - t0), ours == theirs ? "equal" : "DIFFERENT");
        free(a);
        free(b);
    }
    return 0;
}
