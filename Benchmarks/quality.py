#!/usr/bin/env python3
"""quality.py - PSNR of the 1600 px WebP variants of imgbake (/tmp/new-out) and of the pyvips script
(/tmp/pyvips-out) against the same resize done in floating point (lanczos3 on doubles) from the
corpus source; run by bench.sh after a bench run."""
import pyvips, glob, hashlib, os, re, math, sys
corpus = {}
for f in glob.glob("/tmp/imgcorpus/*"):
    if f.endswith(".tsv"): continue
    corpus[hashlib.sha256(open(f, "rb").read()).hexdigest()[:16]] = f
bystem = {}
for f in corpus.values():
    stem = re.sub(r"[^a-z0-9]+", "-", os.path.splitext(os.path.basename(f))[0].lower()).strip("-")[:40].rstrip("-")
    bystem[stem] = f
def psnr(a, b):
    if a.bands != b.bands:
        a = a[:3] if a.bands > 3 else a; b = b[:3] if b.bands > 3 else b
    if a.width != b.width or a.height != b.height: return None
    mse = ((a.cast("double") - b.cast("double")) ** 2).avg()
    return 99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse)
def reference(src, w):
    img = pyvips.Image.new_from_file(src).autorot()
    if img.interpretation == "cmyk" or img.get_typeof("icc-profile-data"): img = img.icc_transform("srgb")
    if img.format != "uchar": img = img.colourspace("srgb").cast("uchar") if img.format == "ushort" else img
    if img.hasalpha(): img = img.flatten(background=[255,255,255])
    f = img.cast("double")
    r = f.resize(w / img.width, kernel="lanczos3")
    return r.cast("uchar")
res = {"imgbake": [], "pyvips": []}
for name in os.listdir("/tmp/pyvips-out/_img"):
    m = re.match(r"([0-9a-f]{16})-1600\.webp$", name)
    if not m or m.group(1) not in corpus: continue
    src = corpus[m.group(1)]
    stem = re.sub(r"[^a-z0-9]+", "-", os.path.splitext(os.path.basename(src))[0].lower()).strip("-")[:40].rstrip("-")
    ours = [n for n in os.listdir("/tmp/new-out/_img") if re.match(re.escape(stem) + r"-[0-9a-f]{10}-1600\.webp$", n)]
    if not ours: continue
    ref = reference(src, 1600)
    def load(p):
        d = pyvips.Image.new_from_file(p)
        if d.hasalpha(): d = d.flatten(background=[255,255,255])
        return d
    a = psnr(load("/tmp/new-out/_img/" + ours[0]), ref); b = psnr(load("/tmp/pyvips-out/_img/" + name), ref)
    if a is None or b is None: continue
    res["imgbake"].append(a); res["pyvips"].append(b)
n = len(res["imgbake"])
print("%d sources with a 1600 px WebP from both tools" % n)
for k, v in res.items(): print("%-8s mean PSNR %.2f dB, min %.2f" % (k, sum(v)/n, min(v)))
