// SSIMULACRA2 (Cloudinary's perceptual metric, the one libjxl's tools and PyPI's `ssimulacra2` compute):
// both images in XYB, at six scales (each half the last, averaged in linear RGB), per channel an SSIM map
// (means and variances under a Gaussian of sigma 1.5) and an edge map (where the distorted image has
// edges the original lacks: ringing, blocks; where it lacks the original's: blur), each averaged as a
// 1-norm and a 4-norm; 108 weighted terms mapped to a score of 100 (identical) down.
//
// Written here, in single precision, so that the quality search can ask it of every try: the reference
// side (its XYB, means and variances at each scale) is computed once per sample and kept. The constants
// are the metric's published ones; the boundaries are those of the PyPI implementation the benchmarks
// score with (zero beyond the sides, mirrored across the top and bottom), so the two agree to a few hundredths
// (Tests/UnitTests/SimilarityTests.swift holds its scores on real images).
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "vips_shim.h"

#define SS2_SCALES 6
#define SS2_RADIUS 5

static const double ss2_weights[108] = {
    0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0, 0.0004371155730107379, 0.0,
    1.1041726426657346, 0.00066284834129271, 0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0,
    1.8422455520539298, 11.441172603757666, 0.0, 0.0007989109436015163, 0.000176816438078653, 0.0,
    1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072, 0.9677937080626833, 0.0,
    0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0,
    0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
    0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
    225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
    176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0,
    0.0, 34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0004179171803251336, 0.0017290828234722833, 0.0, 0.0020827005846636437,
    0.0, 0.0, 8.826982764996862, 23.19243343998926, 0.0, 95.1080498811086, 0.9863978034400682,
    0.9834382792465353, 0.0012286405048278493, 171.2667255897307, 0.9807858872435379, 0.0, 0.0, 0.0,
    0.0005130064588990679, 0.0, 0.00010854057858411537,
};

// One scale of an image: linear RGB (to halve for the next scale), XYB made positive, and for the
// reference its blurred XYB and blurred squares.
typedef struct {
    int width, height;
    float *linear;        // 3 planes
    float *xyb;           // 3 planes
    float *mu, *sigma;    // reference only: 3 planes each
} ss2_scale;

struct imgbake_ss2_reference {
    int width, height, scales;
    ss2_scale scale[SS2_SCALES];
};

static float ss2_kernel[2 * SS2_RADIUS + 1];
static float ss2_to_linear[256];
static pthread_once_t ss2_tables_once = PTHREAD_ONCE_INIT;

static double ss2_srgb_to_linear(double c) { return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4); }

static void ss2_tables(void) {
    double k[2 * SS2_RADIUS + 1], sum = 0.;
    for (int i = -SS2_RADIUS; i <= SS2_RADIUS; i++) sum += k[i + SS2_RADIUS] = exp(-0.5 * i * i / (1.5 * 1.5));
    for (int i = 0; i <= 2 * SS2_RADIUS; i++) ss2_kernel[i] = (float) (k[i] / sum);
    for (int v = 0; v < 256; v++) ss2_to_linear[v] = (float) ss2_srgb_to_linear(v / 255.0);
}

// Mirrored across a side (d c b a | a b c d | d c b a), however far out.
static int ss2_mirror(int i, int n) {
    while (i < 0 || i >= n) i = i < 0 ? -i - 1 : 2 * n - i - 1;
    return i;
}

// Separable Gaussian of one plane into `out`; `tmp` holds the horizontal pass. Nothing (zero) beyond
// the left and right columns; mirrored across the top and bottom rows. (The PyPI implementation blurs
// its XYB planes transposed, zero-padded along its first axis: that is across, in the image.)
static void ss2_blur(const float *in, float *out, float *tmp, int w, int h) {
    for (int y = 0; y < h; y++) {
        const float *row = in + (size_t) y * w;
        float *t = tmp + (size_t) y * w;
        for (int x = 0; x < w; x++) {
            float s = 0.f;
            const int from = x < SS2_RADIUS ? -x : -SS2_RADIUS, to = x + SS2_RADIUS >= w ? w - 1 - x : SS2_RADIUS;
            for (int k = from; k <= to; k++) s += ss2_kernel[k + SS2_RADIUS] * row[x + k];
            t[x] = s;
        }
    }
    for (int y = 0; y < h; y++) {
        float *o = out + (size_t) y * w;
        memset(o, 0, sizeof(float) * (size_t) w);
        for (int k = -SS2_RADIUS; k <= SS2_RADIUS; k++) {
            const float weight = ss2_kernel[k + SS2_RADIUS], *t = tmp + (size_t) ss2_mirror(y + k, h) * w;
            for (int x = 0; x < w; x++) o[x] += weight * t[x];
        }
    }
}

static void ss2_xyb(const float *linear, float *xyb, size_t n) {
    static const float m[9] = {0.30f, 0.622f, 0.078f, 0.23f, 0.692f, 0.078f,
                               0.24342268924547819f, 0.20476744424496821f, 0.55180986651f};
    const float bias = 0.0037930732552754493f, cbias = cbrtf(bias);
    const float *r = linear, *g = linear + n, *b = linear + 2 * n;
    float *px = xyb, *py = xyb + n, *pb = xyb + 2 * n;
    for (size_t i = 0; i < n; i++) {
        float l = m[0] * r[i] + m[1] * g[i] + m[2] * b[i] + bias;
        float mm = m[3] * r[i] + m[4] * g[i] + m[5] * b[i] + bias;
        float s = m[6] * r[i] + m[7] * g[i] + m[8] * b[i] + bias;
        l = cbrtf(l > 0.f ? l : 0.f) - cbias;
        mm = cbrtf(mm > 0.f ? mm : 0.f) - cbias;
        s = cbrtf(s > 0.f ? s : 0.f) - cbias;
        const float x = 0.5f * (l - mm), y = 0.5f * (l + mm);
        px[i] = x * 14.f + 0.42f;
        py[i] = y + 0.01f;
        pb[i] = (s - y) + 0.55f;
    }
}

// Box average by 2 (a partial block at the right or bottom averages what it has).
static float *ss2_halve(const float *in, int w, int h, int *ow, int *oh) {
    const int w2 = (w + 1) / 2, h2 = (h + 1) / 2;
    float *out = malloc(sizeof(float) * 3 * (size_t) w2 * h2);
    if (!out) return NULL;
    for (int c = 0; c < 3; c++) {
        const float *p = in + (size_t) c * w * h;
        float *o = out + (size_t) c * w2 * h2;
        for (int y = 0; y < h2; y++)
            for (int x = 0; x < w2; x++) {
                float s = 0.f;
                int count = 0;
                for (int dy = 0; dy < 2 && 2 * y + dy < h; dy++)
                    for (int dx = 0; dx < 2 && 2 * x + dx < w; dx++, count++) s += p[(size_t) (2 * y + dy) * w + 2 * x + dx];
                o[(size_t) y * w2 + x] = s / (float) count;
            }
    }
    *ow = w2;
    *oh = h2;
    return out;
}

// Linear RGB planes of interleaved 8-bit samples (one band is grey); an alpha band is flattened onto
// white, what a page without a background shows (as the search's luma is).
static float *ss2_linear(const unsigned char *pixels, int w, int h, int bands) {
    const size_t n = (size_t) w * h;
    const int alpha = bands == 2 || bands == 4;
    float *out = malloc(sizeof(float) * 3 * n);
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = pixels + i * bands;
        for (int c = 0; c < 3; c++) {
            const unsigned char v = p[bands >= 3 ? c : 0];
            if (alpha && p[bands - 1] != 255) {
                const double a = p[bands - 1] / 255.0;
                out[c * n + i] = (float) ss2_srgb_to_linear((v * a + 255.0 * (1.0 - a)) / 255.0);
            } else {
                out[c * n + i] = ss2_to_linear[v];
            }
        }
    }
    return out;
}

static void ss2_scale_free(ss2_scale *s) {
    free(s->linear); free(s->xyb); free(s->mu); free(s->sigma);
    memset(s, 0, sizeof *s);
}

// The scales of an image: each with its linear RGB and XYB; with `blurred`, its means and squares blurred.
static int ss2_scales(const unsigned char *pixels, int w, int h, int bands, int blurred, ss2_scale *out) {
    pthread_once(&ss2_tables_once, ss2_tables);
    float *linear = ss2_linear(pixels, w, h, bands);
    if (!linear) return -1;
    int made = 0;
    for (; made < SS2_SCALES; made++) {
        if (w < 8 || h < 8) { free(linear); break; }
        ss2_scale *s = &out[made];
        const size_t n = (size_t) w * h;
        s->width = w; s->height = h; s->linear = linear;
        s->xyb = malloc(sizeof(float) * 3 * n);
        if (!s->xyb) return -1;
        ss2_xyb(linear, s->xyb, n);
        if (blurred) {
            s->mu = malloc(sizeof(float) * 3 * n);
            s->sigma = malloc(sizeof(float) * 3 * n);
            float *square = malloc(sizeof(float) * n), *tmp = malloc(sizeof(float) * n);
            if (!s->mu || !s->sigma || !square || !tmp) { free(square); free(tmp); return -1; }
            for (int c = 0; c < 3; c++) {
                const float *p = s->xyb + c * n;
                for (size_t i = 0; i < n; i++) square[i] = p[i] * p[i];
                ss2_blur(p, s->mu + c * n, tmp, w, h);
                ss2_blur(square, s->sigma + c * n, tmp, w, h);
            }
            free(square); free(tmp);
        }
        if (made + 1 < SS2_SCALES) {
            int w2, h2;
            linear = ss2_halve(linear, w, h, &w2, &h2);
            if (!linear) return -1;
            w = w2; h = h2;
        }
    }
    return made;
}

imgbake_ss2_reference *imgbake_ss2_reference_new(const unsigned char *pixels, int width, int height, int bands) {
    if (!pixels || width < 1 || height < 1 || bands < 1 || bands > 4) return NULL;
    imgbake_ss2_reference *ref = calloc(1, sizeof *ref);
    if (!ref) return NULL;
    ref->width = width; ref->height = height;
    ref->scales = ss2_scales(pixels, width, height, bands, 1, ref->scale);
    if (ref->scales < 0) { imgbake_ss2_reference_free(ref); return NULL; }
    return ref;
}

void imgbake_ss2_reference_free(imgbake_ss2_reference *ref) {
    if (!ref) return;
    for (int i = 0; i < SS2_SCALES; i++) ss2_scale_free(&ref->scale[i]);
    free(ref);
}

int imgbake_ss2_score(const imgbake_ss2_reference *ref, const unsigned char *pixels, int width, int height, int bands,
                      double *score) {
    if (!ref || !pixels || width != ref->width || height != ref->height || bands < 1 || bands > 4) return -1;
    ss2_scale dist[SS2_SCALES];
    memset(dist, 0, sizeof dist);
    int scales = ss2_scales(pixels, width, height, bands, 0, dist), status = -1;
    double sum = 0.;
    float *mu2 = NULL, *s22 = NULL, *s12 = NULL, *tmp = NULL, *prod = NULL;
    if (scales != ref->scales) goto done;
    const size_t largest = (size_t) width * height;
    mu2 = malloc(sizeof(float) * largest); s22 = malloc(sizeof(float) * largest); s12 = malloc(sizeof(float) * largest);
    tmp = malloc(sizeof(float) * largest); prod = malloc(sizeof(float) * largest);
    if (!mu2 || !s22 || !s12 || !tmp || !prod) goto done;
    // avg[scale][c][0..5]: SSIM 1-norm, 4-norm; artifact 1-norm, 4-norm; detail lost 1-norm, 4-norm.
    double avg[SS2_SCALES][3][6];
    for (int k = 0; k < scales; k++) {
        const ss2_scale *a = &ref->scale[k], *b = &dist[k];
        const int w = a->width, h = a->height;
        const size_t n = (size_t) w * h;
        for (int c = 0; c < 3; c++) {
            const float *x1 = a->xyb + c * n, *x2 = b->xyb + c * n, *mu1 = a->mu + c * n, *s11 = a->sigma + c * n;
            for (size_t i = 0; i < n; i++) prod[i] = x2[i] * x2[i];
            ss2_blur(prod, s22, tmp, w, h);
            for (size_t i = 0; i < n; i++) prod[i] = x1[i] * x2[i];
            ss2_blur(prod, s12, tmp, w, h);
            ss2_blur(x2, mu2, tmp, w, h);
            double d1 = 0., d4 = 0., a1 = 0., a4 = 0., l1 = 0., l4 = 0.;
            for (size_t i = 0; i < n; i++) {
                const float m1 = mu1[i], m2 = mu2[i];
                const float num_m = 1.f - (m1 - m2) * (m1 - m2);
                const float num_s = 2.f * (s12[i] - m1 * m2) + 0.0009f;
                const float denom_s = (s11[i] - m1 * m1) + (s22[i] - m2 * m2) + 0.0009f;
                float d = 1.f - num_m * num_s / denom_s;
                if (d < 0.f) d = 0.f;
                d1 += d; d4 += (double) (d * d) * (d * d);
                const float edge = (1.f + fabsf(x2[i] - m2)) / (1.f + fabsf(x1[i] - m1)) - 1.f;
                const float artifact = edge > 0.f ? edge : 0.f, lost = edge < 0.f ? -edge : 0.f;
                a1 += artifact; a4 += (double) (artifact * artifact) * (artifact * artifact);
                l1 += lost; l4 += (double) (lost * lost) * (lost * lost);
            }
            avg[k][c][0] = d1 / n; avg[k][c][1] = pow(d4 / n, 0.25);
            avg[k][c][2] = a1 / n; avg[k][c][3] = pow(a4 / n, 0.25);
            avg[k][c][4] = l1 / n; avg[k][c][5] = pow(l4 / n, 0.25);
        }
    }
    // The weights in the metric's order: channel, scale, norm; SSIM, artifact, detail lost.
    int i = 0;
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < scales; k++)
            for (int norm = 0; norm < 2; norm++) {
                sum += ss2_weights[i++] * fabs(avg[k][c][norm]);
                sum += ss2_weights[i++] * fabs(avg[k][c][2 + norm]);
                sum += ss2_weights[i++] * fabs(avg[k][c][4 + norm]);
            }
    sum *= 0.9562382616834844;
    sum = 2.326765642916932 * sum - 0.020884521182843837 * sum * sum + 6.248496625763138e-05 * sum * sum * sum;
    *score = sum > 0. ? 100. - 10. * pow(sum, 0.6276336467831387) : 100.;
    status = 0;
done:
    for (int k = 0; k < SS2_SCALES; k++) ss2_scale_free(&dist[k]);
    free(mu2); free(s22); free(s12); free(tmp); free(prod);
    return status;
}
