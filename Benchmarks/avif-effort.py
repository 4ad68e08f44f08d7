#!/usr/bin/env python3
"""Not a test: which AVIF effort, at equal quality. For each image (resized to 1200 px), WebP at Q80
(effort 2, imgbake's) is encoded and its luma SSIM measured; then for each AVIF effort the lowest
quality whose AVIF reaches at least that SSIM is found (a bisection), and its bytes and encode CPU
time are compared with the WebP's. Medians over the images.

    python3 Benchmarks/avif-effort.py [--efforts 0,1,2,4] [--images 6] [--corpus /tmp/imgcorpus]

SSIM is quality.py's: Wang et al.'s on Rec. 601 luma, Gaussian windows of sigma 1.5.
"""
import argparse, os, statistics, time

import pyvips

from quality import luma, ssim  # the same luma and SSIM as make bench's comparison

ap = argparse.ArgumentParser()
ap.add_argument("--efforts", default="0,1,2,4")
ap.add_argument("--images", type=int, default=6)
ap.add_argument("--corpus", default="/tmp/imgcorpus")
ap.add_argument("--width", type=int, default=1200)
a = ap.parse_args()


def encode(img, fmt, q, effort):
    t = time.process_time()
    data = img.webpsave_buffer(Q=q, effort=effort, strip=True) if fmt == "webp" else img.heifsave_buffer(
        Q=q, effort=effort, compression="av1", strip=True)
    return data, time.process_time() - t


def score(data, ref):
    return ssim(luma(pyvips.Image.new_from_buffer(data, "")), ref)


# Photos (JPEG sources) at least as wide as the width, in the manifest's order: name, bytes, width, ...
fields = [line.rstrip("\n").split("\t") for line in open(os.path.join(a.corpus, "manifest.tsv"))]
names = [f[0] for f in fields if len(f) > 5 and f[5] == "jpg" and f[2].isdigit() and int(f[2]) >= a.width][: a.images]
efforts = [int(e) for e in a.efforts.split(",")]
rows = {e: [] for e in efforts}
for name in names:
    src = pyvips.Image.thumbnail(os.path.join(a.corpus, name), a.width).copy_memory()
    ref = luma(src)
    webp, webp_cpu = encode(src, "webp", 80, 2)
    target = score(webp, ref)
    for effort in efforts:
        low, high, found = 1, 100, None
        while low <= high:  # the lowest quality whose SSIM reaches the WebP's
            q = (low + high) // 2
            data, cpu = encode(src, "avif", q, effort)
            if score(data, ref) >= target:
                found, high = (q, len(data), cpu), q - 1
            else:
                low = q + 1
        if found:
            rows[effort].append((found[0], found[1] / len(webp), found[2] / webp_cpu))
    print("%s: WebP Q80 %d B, SSIM %.4f" % (name, len(webp), target), flush=True)

print()
print("| AVIF effort | quality (median) | bytes vs WebP Q80 | encode CPU vs WebP | images |")
print("|---|---|---|---|---|")
for effort in efforts:
    r = rows[effort]
    if r:
        print("| %d | %d | %.2f× | %.1f× | %d |" % (effort, statistics.median(x[0] for x in r), statistics.median(x[1] for x in r),
                                                 statistics.median(x[2] for x in r), len(r)))
