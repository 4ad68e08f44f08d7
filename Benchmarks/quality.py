#!/usr/bin/env python3
"""quality.py [IMGBAKE_REPORT.json] - the WebP variants of imgbake (/tmp/new-out) and of the pyvips script
(/tmp/pyvips-out), paired by source and width, against the same resize done in floating point (lanczos3
on doubles) from the corpus source: bytes of both, SSIM (mean, 5th percentile, lowest) and PSNR. With
imgbake's JSON report of the same build, also how its WebP qualities are spread. Run by bench.sh.

SSIM is Wang et al.'s: luma (Rec. 601), Gaussian windows of sigma 1.5 (11 taps), C1 = (0.01 * 255)^2,
C2 = (0.03 * 255)^2, a 5 px border left out - what scikit-image's structural_similarity computes with
gaussian_weights=True, use_sample_covariance=False, data_range=255."""
import glob, hashlib, json, math, os, re, sys

import numpy as np
import pyvips
from scipy.ndimage import gaussian_filter

# NEW= and PEER= name other output folders (a second site and origin, beside a run of the harness).
NEW = os.environ.get("NEW", "/tmp/new-out/_img")
PEER = os.environ.get("PEER", "/tmp/pyvips-out/_img")


def stem_of(path):
    return re.sub(r"[^a-z0-9]+", "-", os.path.splitext(os.path.basename(path))[0].lower()).strip("-")[:40].rstrip("-")


def luma(img):
    """8-bit sRGB or grey, alpha flattened onto white -> float64 luma array."""
    img = img.copy_memory()
    if img.hasalpha():
        img = img.flatten(background=[255] * (img.bands - 1))
    a = np.ndarray(buffer=img.cast("uchar").write_to_memory(), dtype=np.uint8,
                   shape=[img.height, img.width, img.bands]).astype(np.float64)
    return a[..., 0] * 0.299 + a[..., 1] * 0.587 + a[..., 2] * 0.114 if img.bands >= 3 else a[..., 0]


def ssim(x, y):
    g = lambda a: gaussian_filter(a, 1.5, truncate=3.5)
    mx, my = g(x), g(y)
    sxx, syy, sxy = g(x * x) - mx * mx, g(y * y) - my * my, g(x * y) - mx * my
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    s = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))
    return float(s[5:-5, 5:-5].mean()) if min(s.shape) > 10 else float(s.mean())


def psnr(x, y):
    mse = float(((x - y) ** 2).mean())
    return 99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse)


def reference(src, w):
    img = pyvips.Image.new_from_file(src).autorot()
    if img.interpretation == "cmyk" or img.get_typeof("icc-profile-data"):
        img = img.icc_transform("srgb")
    if img.format == "ushort":
        img = img.colourspace("srgb").cast("uchar")
    if img.hasalpha():
        img = img.flatten(background=[255] * (img.bands - 1))
    return img.cast("double").resize(w / img.width, kernel="lanczos3").cast("uchar")


def reference_luma(src, w):
    """luma(reference(src, w)), kept in REFS (default /tmp/quality-refs) by the source's hash: the same
    for every run, and the floating-point resize of a 24 MP source is most of this script's time."""
    folder = os.environ.get("REFS", "/tmp/quality-refs")
    path = os.path.join(folder, "%s-%d.npy" % (hashlib.sha256(open(src, "rb").read()).hexdigest()[:16], w))
    if os.path.exists(path):
        return np.load(path)
    ref = luma(reference(src, w))
    os.makedirs(folder, exist_ok=True)
    np.save(path + ".tmp.npy", ref)
    os.replace(path + ".tmp.npy", path)
    return ref


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(p / 100 * (len(v) - 1) + 0.5))]


def fallback_table(corpus, fallbacks):
    """The fallback files (what a browser without WebP gets: JPEG or PNG) that both tools made for the
    same source at the same width, against the same reference. imgbake makes one per image (at 800 on
    the bench, the widest for links and Markdown images), a PNG photograph's as a JPEG searched to the
    quality target; the script one per width in the source's format, lossless for a PNG."""
    rows = []
    for name in sorted(os.listdir(PEER)):
        m = re.match(r"([0-9a-f]{16})-(\d+)\.(jpg|png)$", name)
        if not m or m.group(1) not in corpus:
            continue
        src, w = corpus[m.group(1)], int(m.group(2))
        mine = fallbacks.get((stem_of(src), w))
        if not mine or mine.endswith(".gif"):
            continue
        ref = reference_luma(src, w)
        la = luma(pyvips.Image.new_from_file(os.path.join(NEW, mine)))
        lb = luma(pyvips.Image.new_from_file(os.path.join(PEER, name)))
        if la.shape != ref.shape or lb.shape != ref.shape:
            continue
        rows.append({"png": m.group(3) == "png", "jpeg": mine.endswith(".jpg"),
                     "bytes": (os.path.getsize(os.path.join(NEW, mine)), os.path.getsize(os.path.join(PEER, name))),
                     "ssim": (ssim(la, ref), ssim(lb, ref))})
    if not rows:
        return
    print("\n%d fallback files made by both tools (same source, same width)\n" % len(rows))
    print("| | imgbake | pyvips script | bytes ratio |")
    print("|---|---|---|---|")
    for label, sel in (("every pair", rows), ("JPEG sources", [r for r in rows if not r["png"]]),
                       ("PNG sources, imgbake's JPEG", [r for r in rows if r["png"] and r["jpeg"]]),
                       ("PNG sources, both PNG", [r for r in rows if r["png"] and not r["jpeg"]])):
        if not sel:
            continue
        a, b = [r["ssim"][0] for r in sel], [r["ssim"][1] for r in sel]
        print("| %s (%d): SSIM mean, 5th pct | %.4f, %.4f | %.4f, %.4f | %.3f |" % (
            label, len(sel), sum(a) / len(a), pct(a, 5), sum(b) / len(b), pct(b, 5),
            sum(r["bytes"][0] for r in sel) / sum(r["bytes"][1] for r in sel)))


def main():
    corpus = {}
    for f in glob.glob("/tmp/imgcorpus/*"):
        if not f.endswith(".tsv"):
            corpus[hashlib.sha256(open(f, "rb").read()).hexdigest()[:16]] = f
    ours, fallbacks = {}, {}
    for n in os.listdir(NEW):
        m = re.match(r"(.+)-[0-9a-f]{10}-(\d+)\.(webp|jpg|png|gif)$", n)
        if m:
            (ours if m.group(3) == "webp" else fallbacks)[(m.group(1), int(m.group(2)))] = n
    rows, served = [], []
    for name in sorted(os.listdir(PEER)):
        m = re.match(r"([0-9a-f]{16})-(\d+)\.webp$", name)
        if not m or m.group(1) not in corpus:
            continue
        src, w = corpus[m.group(1)], int(m.group(2))
        # What a browser that takes WebP gets from imgbake: its WebP, or the fallback where the WebP
        # was dropped (larger than the fallback of that width).
        mine = ours.get((stem_of(src), w)) or fallbacks.get((stem_of(src), w))
        if not mine:
            continue  # imgbake made another width
        a = pyvips.Image.new_from_file(os.path.join(NEW, mine))
        b = pyvips.Image.new_from_file(os.path.join(PEER, name))
        ref = reference_luma(src, w)
        la, lb = luma(a), luma(b)
        if la.shape != ref.shape or lb.shape != ref.shape:
            continue
        row = {"src": os.path.basename(src), "w": w, "file": mine,
               "bytes": (os.path.getsize(os.path.join(NEW, mine)), os.path.getsize(os.path.join(PEER, name))),
               "ssim": (ssim(la, ref), ssim(lb, ref)), "psnr": (psnr(la, ref), psnr(lb, ref))}
        served.append(row)
        if mine.endswith(".webp"):
            rows.append(row)
    n = len(rows)
    if not n:
        print("no WebP variant made by both tools")
        return
    total = lambda k: sum(os.path.getsize(os.path.join(d, f)) for d in [k] for f in os.listdir(d) if f.endswith(".webp"))
    mine_b, peer_b = sum(r["bytes"][0] for r in rows), sum(r["bytes"][1] for r in rows)
    print("\n%d WebP variants made by both tools (same source, same width); SSIM and PSNR against a floating-point resize" % n)
    print("of the source\n")
    print("| | imgbake | pyvips script | ratio |")
    print("|---|---|---|---|")
    print("| WebP bytes, these variants | %.2f MB | %.2f MB | %.3f |" % (mine_b / 1e6, peer_b / 1e6, mine_b / peer_b))
    print("| WebP bytes, every WebP file | %.2f MB (%d) | %.2f MB (%d) | %.3f |" % (
        total(NEW) / 1e6, len([f for f in os.listdir(NEW) if f.endswith(".webp")]),
        total(PEER) / 1e6, len([f for f in os.listdir(PEER) if f.endswith(".webp")]), total(NEW) / total(PEER)))
    for label, k, fmt in (("SSIM mean", "ssim", "%.4f"), ("PSNR mean (dB)", "psnr", "%.2f")):
        a, b = [r[k][0] for r in rows], [r[k][1] for r in rows]
        print(("| %s | " + fmt + " | " + fmt + " | |") % (label, sum(a) / n, sum(b) / n))
    a, b = [r["ssim"][0] for r in rows], [r["ssim"][1] for r in rows]
    print("| SSIM 5th percentile | %.4f | %.4f | |" % (pct(a, 5), pct(b, 5)))
    print("| SSIM lowest | %.4f | %.4f | |" % (min(a), min(b)))
    sb = [r["ssim"][0] for r in served]
    print("| served to a WebP browser (%d; %d where imgbake's WebP was dropped for its smaller fallback): bytes, SSIM mean, 5th pct | %.2f MB, %.4f, %.4f | %.2f MB, %.4f, %.4f | %.3f |" % (
        len(served), len(served) - n, sum(r["bytes"][0] for r in served) / 1e6, sum(sb) / len(sb), pct(sb, 5),
        sum(r["bytes"][1] for r in served) / 1e6, sum(r["ssim"][1] for r in served) / len(served), pct([r["ssim"][1] for r in served], 5),
        sum(r["bytes"][0] for r in served) / sum(r["bytes"][1] for r in served)))
    for w in sorted({r["w"] for r in rows if r["w"] in (400, 800, 1600)}):
        sel = [r for r in rows if r["w"] == w]
        print("| %d px (%d): bytes ratio, SSIM mean | %.4f | %.4f | %.3f |" % (
            w, len(sel), sum(r["ssim"][0] for r in sel) / len(sel), sum(r["ssim"][1] for r in sel) / len(sel),
            sum(r["bytes"][0] for r in sel) / sum(r["bytes"][1] for r in sel)))
    fallback_table(corpus, fallbacks)
    if len(sys.argv) > 1 and os.path.exists(sys.argv[1]):
        report = json.load(open(sys.argv[1]))
        for q in report.get("qualities") or []:
            counts = {int(k): v for k, v in q["counts"].items()}
            bands = {}
            for k, v in counts.items():
                bands[k // 10 * 10] = bands.get(k // 10 * 10, 0) + v
            print("\nimgbake's %s qualities (%d files, %.2f MB): min %d, median %d, max %d; by tens: %s" % (
                q["format"], q["files"], q["bytes"] / 1e6, q["min"], q["median"], q["max"],
                ", ".join("%d-%d: %d" % (b, b + 9, bands[b]) for b in sorted(bands))))
    json.dump(served, open(os.environ.get("RESULTS", "/tmp/bench-results") + "/quality-pairs.json", "w"))


if __name__ == "__main__":
    main()
