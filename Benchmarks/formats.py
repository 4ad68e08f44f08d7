#!/usr/bin/env python3
"""Not a test: which formats and encoder settings imgbake should make, at the quality its search finds.

For each chosen corpus image, at widths 400, 800 and 1600 (capped at the source's width, as imgbake
does: a width at or past it is the source's own, made once), the variant is made as imgbake makes it
(libvips' thumbnail, lanczos3, upright, 8-bit sRGB, an alpha band that is fully opaque dropped), and
for each encoder configuration the quality is searched as imgbake's QualitySearch does: the LOWEST
quality in [floor, ceiling] whose output reaches the target (the ceiling when none does), with its
secant-and-halving tries (QualitySearch.lowest, ported), but on the WHOLE variant (imgbake tries a
sample of 16 tiles of 64 px above 65,536 px). Two metrics, each a search of its own:

  ssim         imgbake's: mean SSIM of the luma plane as libwebp defines it (7x7 windows, integer
               sums; luma Rec. 601 rounded to 8 bits, alpha flattened onto white), >= --target
               (0.965, imgbake's default). A port of Sources/CShims/vips_shim.c (imgbake_luma,
               imgbake_plane_ssim) to numpy, equal to the last bit (--self-check compares them).
  ssimulacra2  equal SSIMULACRA2: the lowest quality whose SSIMULACRA2 score reaches the score that
               webp-e2 (today's WebP) reached at its SSIM-searched quality for the same variant.

Configurations (--configs, comma-separated; default all):
  webp-e2, webp-e4               libwebp through libvips, effort (method) 2 (today's) and 4; Q 60-90
  avif-eN[-444][-ssim|-psnr]     AV1 through libvips' heifsave (libheif + libaom), effort N in 0,1,2,4
                                 (libheif speed 9-N = aom cpu-used 9-N in all-intra mode: 9,8,7,5),
                                 4:2:0 (subsample_mode on; what "auto" gives below Q 90: avif-e1 is
                                 imgbake's AVIF of a JPEG) or 4:4:4 (off: avif-e1-444 is imgbake's
                                 AVIF of a PNG or GIF), tune auto (= iq with this libaom 3.15)
                                 or ssim or psnr; Q 50-75 (imgbake's floor and ceiling)
  jxl-eN                         libjxl 0.11 (Benchmarks/jxl_codec.cc on libjxl's public API, built on
                                 first use against the project's stack, .build/stack), effort N in
                                 3,4,5,7, libjxl's quality scale (cjxl -q); Q 40-95
  jpeg                           mozjpeg through libvips (tries sequential, the final file progressive
                                 with optimised tables, as imgbake); Q 45-92; not made for images with
                                 transparency (imgbake keeps their PNG)

Per (image, width, config, metric) one JSON line in --out: the quality, bytes, the SSIM and the
SSIMULACRA2 score of the final file, every try (quality, bytes, score), the CPU seconds of the search
(encode + decode of every try, and the extra measure at the ceiling when nothing reached the target:
what imgbake's search spends, less the metric) and of the final encode apart, the CPU of the metric
computations (numpy / PyPI's ssimulacra2, not counted in the search), and the decode check (the final file
decodes to the variant's size and bands, and scores what its try scored). Then a summary (also with
--summary alone, from the JSONL): per config, total bytes against webp-e2's over the same variants,
median SSIM and SSIMULACRA2, quality, share at the floor and short of the target, CPU of the searches
and final encodes; and per format (the best configuration of each) the share of variants where it is
the smallest; for both metrics, and where they disagree.

CPU: libvips runs with one thread (VIPS_CONCURRENCY=1, as imgbake's threadsPerImage: aom gets one
thread too), its operation cache off; vips encoders are timed with time.process_time() around the
call, JPEG XL inside jxl_codec (CLOCK_PROCESS_CPUTIME_ID around the libjxl calls, one thread).
Run one process at a time on an otherwise idle machine for clean CPU figures. --shard K/N runs the
K-th of N interleaved shares of the images (0-based) for parallel runs into the same --out: lines are
appended under an exclusive lock, and each process has its own temporary folder. Resumable: a row
already in --out (same image, width, config, metric, target, floor and ceiling) is skipped.

The floors bind often (imgbake's design: most small variants end at the floor), so "equal SSIM" is
what imgbake would ship, not equal quality: the tables give the share at the floor. --range
FORMAT=LO-HI (repeatable) searches other ranges, e.g. --range avif=1-75 --range webp=1-90 --range
jxl=1-95 --range jpeg=1-92 for an equal-quality comparison without floors (rows keep their range).
--limit N takes N images evenly spread over the eligible list (the manifest groups them by source).

    python3 -m venv /tmp/formats-work/venv
    /tmp/formats-work/venv/bin/pip install pyvips==3.2.0 pyvips-binary==8.18.7 numpy==2.4.6 ssimulacra2==0.3.0
    /tmp/formats-work/venv/bin/python Benchmarks/formats.py                      # everything
    /tmp/formats-work/venv/bin/python Benchmarks/formats.py --limit 6 --widths 400,800
    /tmp/formats-work/venv/bin/python Benchmarks/formats.py --summary            # table only

Needs g++ and the project's stack (--stack, .build/stack: include/jxl and lib/libimgbake-stack.a, which
holds libjxl 0.11; `make stack` makes it): jxl_codec is built against it. SSIMULACRA2 is PyPI's
ssimulacra2 package (Benchmarks/ss2.py, pinned there and in the line above), as in `make bench`: pure
Python, within about a point of libjxl's tools/ssimulacra2 (rows written before this change, with
libjxl's tool, are not comparable to the last point: use a fresh --out), ~1-1.5 CPU s per megapixel
scored (libjxl's tool: ~0.1).

How long (measured on 6 images at 400 and 800 px, on the 2-core machine while it ran other work):
a 400 px variant takes ~30 s of wall over all 17 configurations and both metrics, an 800 px one
(0.6 MP) ~85-110 s, i.e. ~140 s per megapixel; the two AVIF effort-4 configurations are ~40 % of it,
the SSIM search ~40 % and the equal-SSIMULACRA2 search ~60 %. All 136 eligible corpus images at
400/800/1600 are 385 variants, 265 MP: about 9-11 hours in one process (--configs and --metric ssim
cut it; --shard K/N in two processes halves the wall at the cost of cleaner CPU figures). Those
figures are from libjxl's SSIMULACRA2 tool; PyPI's, used now, adds ~1-1.5 CPU s per megapixel per score
(every try of the equal-SSIMULACRA2 searches and one per final file): --metric ssim avoids nearly all of it.
"""
import os

os.environ.setdefault("VIPS_CONCURRENCY", "1")  # read when libvips starts: before pyvips is imported

import argparse
import csv
import fcntl
import json
import math
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyvips

import ss2  # Benchmarks/ss2.py: PyPI's ssimulacra2, as the bench scores it

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------------------------------
# imgbake's SSIM (Sources/CShims/vips_shim.c), in numpy, the same numbers to the last bit.

WEIGHTS = np.array([1, 2, 3, 4, 3, 2, 1], dtype=np.int64)


def luma(px):
    """imgbake_luma: an (h, w, bands) uint8 array -> the (h, w) uint8 luma plane (Rec. 601 weights in
    double, alpha flattened onto white, rint, clipped)."""
    bands = px.shape[2]
    f = px.astype(np.float64)
    y = 0.299 * f[..., 0] + 0.587 * f[..., 1] + 0.114 * f[..., 2] if bands >= 3 else f[..., 0]
    if bands in (2, 4):
        a = f[..., bands - 1] / 255.0
        y = y * a + 255.0 * (1.0 - a)
    return np.clip(np.rint(y), 0, 255).astype(np.uint8)


def _window_sums(v, axis):
    """Each position's weighted 7-wide sum along `axis`, the window clipped at the borders (zeros past
    them add nothing: the same integers as libwebp's clipped windows)."""
    n = v.shape[axis]
    pad = [(0, 0)] * v.ndim
    pad[axis] = (3, 3)
    p = np.pad(v, pad)
    out = np.zeros_like(v)
    for k in range(7):
        index = [slice(None)] * v.ndim
        index[axis] = slice(k, k + n)
        out += WEIGHTS[k] * p[tuple(index)]
    return out


def plane_ssim(a, b):
    """imgbake_plane_ssim: mean SSIM of two (h, w) uint8 planes as libwebp defines it."""
    h, w = a.shape
    x, y = a.astype(np.int64), b.astype(np.int64)
    sums = _window_sums(_window_sums(np.stack([x, y, x * x, x * y, y * y]), 2), 1)
    xm, ym, xxm, xym, yym = sums
    n = np.outer(_window_sums(np.ones(h, np.int64), 0), _window_sums(np.ones(w, np.int64), 0))
    w2 = n * n
    c1, c2, c3 = 20 * w2, 60 * w2, 64 * w2
    xmxm, ymym, xmym = xm * xm, ym * ym, xm * ym
    sxy = xym * n - xmym
    sxx, syy = xxm * n - xmxm, yym * n - ymym
    num = (2 * np.maximum(sxy, 0) + c2) >> 8
    den = (sxx + syy + c2) >> 8
    fnum = (2 * xmym + c1) * num  # < 2^59 for 8-bit planes: int64 holds the C's uint64 products
    fden = (xmxm + ymym + c1) * den
    ssim = fnum.astype(np.float64) / fden.astype(np.float64)
    ssim[xmxm + ymym < c3] = 1.0  # too dark to weigh
    total = np.cumsum(ssim.ravel())[-1]  # added up in raster order, as the C loop does (not pairwise)
    return float(np.float32(total)) / (float(w) * h)


# ---------------------------------------------------------------------------------------------------
# imgbake's quality search (Sources/ImgBake/Transforming/QualitySearch.swift: lowest, Search).

SLOPE = 0.03
MAX_TRIES = 12


def _distance(score):
    return math.log(max(1e-6, 1 - score))


class Search:
    def __init__(self, floor, ceiling, target):
        self.low, self.high, self.target, self.before = floor, ceiling, target, ceiling - floor
        self.below = self.above = None

    def record(self, q, score):
        self.before = self.high - self.low
        if score >= self.target:
            self.high, self.above = q, (q, _distance(score))
        else:
            self.low, self.below = q + 1, (q, _distance(score))

    def next_try(self, tries_left):
        width, goal = self.high - self.low, _distance(self.target)
        halvings = math.ceil(math.log2(width + 1))
        b, a = self.below, self.above
        if tries_left <= halvings or (b and a and 2 * width > self.before and width > 2):
            return (self.low + self.high) // 2
        if b and a and a[1] < b[1]:
            return b[0] + math.ceil((a[0] - b[0]) * (b[1] - goal) / (b[1] - a[1]))
        if b:
            return b[0] + max(1, math.ceil((b[1] - goal) / SLOPE))
        if a:
            return a[0] - max(1, math.floor((goal - a[1]) / SLOPE))
        return (self.low + self.high) // 2


def lowest(floor, ceiling, target, score):
    """The lowest quality in floor...ceiling whose score(q) reaches target (the ceiling when none does)."""
    search, nxt = Search(floor, ceiling, target), floor
    for tried in range(MAX_TRIES):
        if search.low >= search.high:
            break
        q = min(max(nxt, search.low), search.high - 1)
        search.record(q, score(q))
        nxt = search.next_try(MAX_TRIES - tried - 1)
    return search.high


# ---------------------------------------------------------------------------------------------------
# Encoders.

RANGES = {"webp": (60, 90), "avif": (50, 75), "jxl": (40, 95), "jpeg": (45, 92)}


def _configs():
    c = {"webp-e2": {"format": "webp", "effort": 2}, "webp-e4": {"format": "webp", "effort": 4}}
    for effort in (0, 1, 2, 4):
        for sub in ("420", "444"):
            c["avif-e%d%s" % (effort, "-444" if sub == "444" else "")] = {
                "format": "avif", "effort": effort, "subsample": "on" if sub == "420" else "off", "tune": None}
    for tune in ("ssim", "psnr"):
        c["avif-e1-" + tune] = {"format": "avif", "effort": 1, "subsample": "on", "tune": tune}
    for effort in (3, 4, 5, 7):
        c["jxl-e%d" % effort] = {"format": "jxl", "effort": effort}
    c["jpeg"] = {"format": "jpeg"}
    return c


CONFIGS = _configs()
BASELINE = "webp-e2"
FORMATS = ("webp", "avif", "jxl", "jpeg")


def to_array(img):
    return np.ndarray(buffer=img.write_to_memory(), dtype=np.uint8, shape=[img.height, img.width, img.bands])


class Codec:
    """Encodes a variant's pixels and decodes the result, each with its CPU seconds."""

    def __init__(self, jxl_codec, tmp):
        self.jxl_codec, self.tmp = jxl_codec, tmp

    def encode(self, variant, config, q, final):
        fmt, img = config["format"], variant.image
        if fmt == "jxl":
            out = os.path.join(self.tmp, "out.jxl")
            r = self._run("enc", variant.raw_path, str(img.width), str(img.height), str(img.bands), str(q),
                          str(config["effort"]), out)
            size, cpu = r.split()[:2]
            with open(out, "rb") as f:
                data = f.read()
            assert len(data) == int(size)
            return data, float(cpu)
        t = time.process_time()
        if fmt == "webp":
            data = img.webpsave_buffer(Q=q, effort=config["effort"], keep=0)
        elif fmt == "avif":
            extra = {"tune": config["tune"]} if config["tune"] else {}
            data = img.heifsave_buffer(Q=q, effort=config["effort"], compression="av1", subsample_mode=config["subsample"],
                                       keep=0, **extra)
        elif fmt == "jpeg":  # a try: sequential, standard tables (the same pixels); the final file: imgbake's
            data = img.jpegsave_buffer(Q=q, interlace=final, optimize_coding=final, keep=0)
        else:
            raise ValueError(fmt)
        return data, time.process_time() - t

    def decode(self, data, config):
        if config["format"] == "jxl":
            src, out = os.path.join(self.tmp, "dec.jxl"), os.path.join(self.tmp, "dec.raw")
            with open(src, "wb") as f:
                f.write(data)
            w, h, bands, cpu = self._run("dec", src, out).split()
            with open(out, "rb") as f:
                px = np.frombuffer(f.read(), dtype=np.uint8).reshape(int(h), int(w), int(bands))
            return px, float(cpu)
        t = time.process_time()
        img = pyvips.Image.new_from_buffer(data, "", access="sequential")
        if img.format != "uchar":
            img = img.cast("uchar")
        px = to_array(img)
        return px, time.process_time() - t

    def ssimulacra2(self, variant, px):
        return ss2.score(variant.pixels, px)

    def _run(self, *args):
        r = subprocess.run([self.jxl_codec, *args], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("jxl_codec %s: %s" % (args[0], r.stderr.strip()))
        return r.stdout.strip()


class Variant:
    """A source at one width, as imgbake's transformer makes it, and its reference luma."""

    def __init__(self, path, width, tmp):
        img = pyvips.Image.thumbnail(path, width, height=10_000_000, size="down")  # upright, sRGB if tagged
        interpretation = "srgb" if img.bands >= 3 else "b-w"
        if img.interpretation != interpretation or img.format != "uchar":
            img = img.colourspace(interpretation)
        if img.format != "uchar":
            img = img.cast("uchar")
        img = img.copy_memory()  # one pass over the (sequential) source
        if img.hasalpha() and img.extract_band(img.bands - 1).min() == 255:
            img = img.extract_band(0, n=img.bands - 1).copy_memory()  # imgbake's tidyingAlpha: an opaque band goes
        self.image = img
        self.pixels = to_array(self.image)
        self.luma = luma(self.pixels)
        self.alpha = self.image.bands in (2, 4)
        self.raw_path = os.path.join(tmp, "ref.raw")
        with open(self.raw_path, "wb") as f:
            f.write(self.pixels.tobytes())


def cpu_with_children():
    """This process's CPU seconds and its finished children's (jxl_codec's runs)."""
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + child.ru_utime + child.ru_stime


def measure_config(codec, variant, name, metric, target, lo, hi):
    """One search and its final file: the row to write."""
    config = CONFIGS[name]
    tries, search_cpu, search_encode_cpu, metric_cpu = [], 0.0, 0.0, 0.0
    scored, raw = {}, {}

    def score_of(px):
        """The score on the search's scale (SSIMULACRA2 / 100), and as the metric gives it."""
        nonlocal metric_cpu
        t = cpu_with_children()
        if metric == "ssim":
            s = r = plane_ssim(variant.luma, luma(px))
        else:
            r = codec.ssimulacra2(variant, px)
            s = -1e9 if r is None else r / 100.0
        metric_cpu += cpu_with_children() - t
        return s, r

    def measure(q):
        nonlocal search_cpu, search_encode_cpu
        data, enc_cpu = codec.encode(variant, config, q, final=False)
        px, dec_cpu = codec.decode(data, config)
        search_cpu += enc_cpu + dec_cpu
        search_encode_cpu += enc_cpu
        s, r = score_of(px)
        tries.append([q, len(data), r])
        scored[q], raw[q] = s, r
        return s

    wall = time.time()
    quality = lowest(lo, hi, target, measure)
    if quality not in scored:  # the ceiling, never tried: imgbake measures it (QualitySearch.find)
        measure(quality)
    data, final_cpu = codec.encode(variant, config, quality, final=True)
    px, decode_cpu = codec.decode(data, config)
    t = cpu_with_children()
    ssim = plane_ssim(variant.luma, luma(px))
    ss2 = codec.ssimulacra2(variant, px)
    check_cpu = cpu_with_children() - t
    # The decode check: the variant's size, and its transparency kept (JPEG: none; grey may come back RGB).
    decode_ok = (px.shape[0] == variant.image.height and px.shape[1] == variant.image.width
                 and (px.shape[2] in (2, 4)) == (variant.alpha and config["format"] != "jpeg"))
    final_score = ssim if metric == "ssim" else ss2
    return {
        "quality": quality, "floor": lo, "ceiling": hi, "at_floor": quality == lo,
        "reached": final_score is not None and (final_score >= target if metric == "ssim" else final_score / 100.0 >= target),
        "bytes": len(data), "bpp": round(8 * len(data) / (variant.image.width * variant.image.height), 5),
        "ssim": ssim, "ssimulacra2": ss2,
        "tries": tries, "n_tries": len(tries),
        "search_cpu": round(search_cpu, 4), "search_encode_cpu": round(search_encode_cpu, 4),
        "final_cpu": round(final_cpu, 4), "decode_cpu": round(decode_cpu, 4),
        "metric_cpu": round(metric_cpu + check_cpu, 4), "wall": round(time.time() - wall, 3),
        "decode_ok": bool(decode_ok), "decoded_bands": int(px.shape[2]),
        "final_matches_search": final_score == raw[quality],
    }


# ---------------------------------------------------------------------------------------------------
# The run.

def eligible(corpus, min_width=400):
    """Corpus images that imgbake would resize: JPEG or PNG, one frame, at least min_width wide."""
    with open(os.path.join(corpus, "manifest.tsv")) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [r["name"] for r in rows if r["format"] in ("jpg", "png") and int(r["width"]) >= min_width]


def widths_of(src_width, widths):
    """(width, requested width) pairs: a width past the source's is the source's, made once."""
    out = []
    for w in widths:
        if min(w, src_width) not in [o[0] for o in out]:
            out.append((min(w, src_width), w))
    return out


def build_jxl_codec(stack, work):
    """jxl_codec from Benchmarks/jxl_codec.cc against the project's stack (libjxl's public API in
    libimgbake-stack.a), rebuilt when the source or the stack's archive is newer (under a lock)."""
    src, out = os.path.join(HERE, "jxl_codec.cc"), os.path.join(work, "jxl_codec")
    archive = os.path.join(stack, "lib", "libimgbake-stack.a")
    if not os.path.exists(archive) or not os.path.isdir(os.path.join(stack, "include", "jxl")):
        sys.exit("no JPEG XL in the stack at %s (include/jxl, lib/libimgbake-stack.a): `make stack` makes it, "
                 "or name another with --stack" % stack)
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, ".jxl_codec.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(out) and os.path.getmtime(out) >= max(os.path.getmtime(src), os.path.getmtime(archive)):
            return out
        cmd = ["g++", "-O2", "-std=c++17", "-DJXL_STATIC_DEFINE", "-I" + os.path.join(stack, "include"), src,
               "-L" + os.path.join(stack, "lib"), "-limgbake-stack", "-lstdc++", "-lm", "-pthread", "-o", out + ".tmp"]
        print("building jxl_codec ...", file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        os.replace(out + ".tmp", out)
        return out


def key(row):
    return (row["image"], row["width"], row["config"], row["metric"], row["target"], row["floor"], row["ceiling"])


def read_rows(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass  # a line cut by a kill: measured again
    return [r for r in rows if r.get("type") == "row"]


def append(path, row):
    line = (json.dumps(row, separators=(",", ":")) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, line)
    finally:
        os.close(fd)


def run(a):
    os.makedirs(a.work, exist_ok=True)
    pyvips.cache_set_max(0)  # a final encode must not come from the cache of its try
    jxl_codec = build_jxl_codec(a.stack, a.work)
    names = a.images.split(",") if a.images else eligible(a.corpus)
    if a.limit and a.limit < len(names):  # spread over the list (the manifest groups images by source)
        names = [names[i * len(names) // a.limit] for i in range(a.limit)]
    if a.shard:
        k, n = (int(x) for x in a.shard.split("/"))
        names = names[k::n]
    configs = list(CONFIGS) if a.configs == "all" else a.configs.split(",")
    for c in configs:
        if c not in CONFIGS:
            sys.exit("unknown config %s (known: %s)" % (c, ", ".join(CONFIGS)))
    metrics = ["ssim", "ssimulacra2"] if a.metric == "both" else [a.metric]
    if BASELINE not in configs:
        configs.insert(0, BASELINE)  # the tables are relative to it, and its SSIM row sets the SSIMULACRA2 target
    ranges, target = a.ranges, a.target
    done = {key(r): r for r in read_rows(a.out)}
    tmp = tempfile.mkdtemp(prefix="formats-", dir=a.work)
    codec = Codec(jxl_codec, tmp)
    append(a.out, {"type": "run", "time": time.strftime("%Y-%m-%dT%H:%M:%S"), 
                   "libvips": "%d.%d.%d" % (pyvips.version(0), pyvips.version(1), pyvips.version(2)), "pid": os.getpid(),
                   "vips_concurrency": os.environ.get("VIPS_CONCURRENCY"), "target": target, "ranges": ranges,
                   "ssimulacra2": "PyPI ssimulacra2 %s" % ss2.VERSION,
                   "argv": sys.argv[1:]})
    started = time.time()
    for i, name in enumerate(names):
        path = os.path.join(a.corpus, name)
        src = pyvips.Image.new_from_file(path)
        src_width = src.height if src.get_typeof("orientation") and src.get("orientation") in (5, 6, 7, 8) else src.width
        for width, requested in widths_of(src_width, a.widths):
            todo = [(m, c) for m in metrics for c in configs
                    if (name, width, c, m, target, *ranges[CONFIGS[c]["format"]]) not in done]
            if not todo:
                continue
            variant = Variant(path, width, tmp)
            for metric, c in todo:
                config = CONFIGS[c]
                if config["format"] == "jpeg" and variant.alpha:
                    continue  # a JPEG has no transparency: imgbake keeps the PNG
                lo, hi = ranges[config["format"]]
                if metric == "ssim":
                    goal = target
                else:
                    base = done.get((name, width, BASELINE, "ssim", target, *ranges["webp"]))
                    if not base or base["ssimulacra2"] is None:
                        continue
                    goal = base["ssimulacra2"] / 100.0
                row = {"type": "row", "image": name, "width": width, "requested": requested, "config": c, "metric": metric, "target": target,
                       "goal": goal * 100 if metric == "ssimulacra2" else goal,
                       "w": variant.image.width, "h": variant.image.height, "bands": variant.image.bands,
                       "format": config["format"]}
                row.update(measure_config(codec, variant, c, metric, goal, lo, hi))
                append(a.out, row)
                done[key(row)] = row
                print("%3d/%d %-44s %4d %-14s %-11s q=%-3d %7d B ssim %.4f ss2 %6.2f cpu %.2f+%.2f" % (
                    i + 1, len(names), name[:44], width, c, metric, row["quality"], row["bytes"], row["ssim"],
                    row["ssimulacra2"] or 0, row["search_cpu"], row["final_cpu"]), flush=True)
    for f in os.listdir(tmp):
        os.remove(os.path.join(tmp, f))
    os.rmdir(tmp)
    print("elapsed %.1f s" % (time.time() - started), file=sys.stderr)


# ---------------------------------------------------------------------------------------------------
# The summary.

def summarize(rows, target, ranges, configs=None):
    """The tables, from the rows of this target and these floors and ceilings (and configs)."""
    rows = [r for r in rows if r["target"] == target and (r["floor"], r["ceiling"]) == tuple(ranges[r["format"]])
            and (configs is None or r["config"] in configs)]
    out = []
    for metric in ("ssim", "ssimulacra2"):
        by = {}
        for r in rows:
            if r["metric"] == metric:
                by.setdefault(r["config"], {})[(r["image"], r["width"])] = r
        if BASELINE not in by:
            continue
        base = by[BASELINE]
        what = ("SSIM >= %.4f (imgbake's search)" % target if metric == "ssim"
                else "SSIMULACRA2 >= webp-e2's score at its SSIM quality (equal SSIMULACRA2)")
        out.append("\n### %s: %d variants (image-widths)\n" % (what, len(base)))
        out.append("| config | n | bytes vs webp-e2 | median q | at floor | short of target | median SSIM | median SSIMULACRA2 "
                   "| CPU search s | CPU final s | search vs webp-e2 | final vs webp-e2 | tries/variant |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        order = [c for c in CONFIGS if c in by] + sorted(c for c in by if c not in CONFIGS)
        for c in order:
            rs = by[c]
            common = [k for k in rs if k in base]
            if not common:
                continue
            b = sum(rs[k]["bytes"] for k in common) / sum(base[k]["bytes"] for k in common)
            cs = sum(rs[k]["search_cpu"] for k in common)
            cf = sum(rs[k]["final_cpu"] for k in common)
            bs = sum(base[k]["search_cpu"] for k in common)
            bf = sum(base[k]["final_cpu"] for k in common)
            ss2 = [rs[k]["ssimulacra2"] for k in common if rs[k]["ssimulacra2"] is not None]
            out.append("| %s | %d | %.3f | %g | %.0f%% | %.0f%% | %.4f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |" % (
                c, len(common), b, statistics.median(rs[k]["quality"] for k in common),
                100 * sum(rs[k]["at_floor"] for k in common) / len(common),
                100 * sum(not rs[k]["reached"] for k in common) / len(common),
                statistics.median(rs[k]["ssim"] for k in common), statistics.median(ss2) if ss2 else float("nan"),
                cs, cf, cs / bs if bs else float("nan"), cf / bf if bf else float("nan"),
                sum(rs[k]["n_tries"] for k in common) / len(common)))
        # Per format, its best configuration for each variant: where is it the smallest?
        wins = {f: 0 for f in FORMATS}
        counted = 0
        for k in base:
            best = {}
            for c, rs in by.items():
                if k in rs:
                    f = rs[k]["format"]
                    best[f] = min(best.get(f, 1 << 62), rs[k]["bytes"])
            if len(best) < 2:
                continue
            counted += 1
            wins[min(best, key=best.get)] += 1
        out.append("\nSmallest format per variant (best config of each): " + ", ".join(
            "%s %.0f%%" % (f, 100 * wins[f] / counted) for f in FORMATS if counted) + " (of %d)" % counted)
    # Where the metrics disagree: the smallest format under one and the other, per variant.
    pairs = {}
    for r in rows:
        pairs.setdefault((r["image"], r["width"]), {}).setdefault(r["metric"], {})
        d = pairs[(r["image"], r["width"])][r["metric"]]
        d[r["format"]] = min(d.get(r["format"], 1 << 62), r["bytes"])
    both = [(v["ssim"], v["ssimulacra2"]) for v in pairs.values() if "ssim" in v and "ssimulacra2" in v
            and len(v["ssim"]) > 1 and len(v["ssimulacra2"]) > 1]
    if both:
        differ = sum(min(s, key=s.get) != min(t, key=t.get) for s, t in both)
        out.append("\nThe smallest format differs between the two metrics in %d of %d variants." % (differ, len(both)))
        flips = {}
        for s, t in both:
            a_, b_ = min(s, key=s.get), min(t, key=t.get)
            if a_ != b_:
                flips["%s -> %s" % (a_, b_)] = flips.get("%s -> %s" % (a_, b_), 0) + 1
        if flips:
            out.append("(SSIM's smallest -> SSIMULACRA2's: " + ", ".join("%s %d" % kv for kv in sorted(flips.items())) + ")")
    checks = [r for r in rows if not r["decode_ok"] or not r["final_matches_search"]]
    out.append("\nDecode check: %d rows, %d failed to decode to the variant's size/bands, %d final files scored other "
               "than their try." % (len(rows), sum(not r["decode_ok"] for r in rows),
                                    sum(not r["final_matches_search"] for r in rows)))
    for r in checks[:10]:
        out.append("  %s %d %s %s decode_ok=%s matches=%s" % (r["image"], r["width"], r["config"], r["metric"],
                                                            r["decode_ok"], r["final_matches_search"]))
    widths = sorted({r.get("requested", r["width"]) for r in rows})
    per = []
    for w in widths:
        rs = [r for r in rows if r.get("requested", r["width"]) == w]
        n = len({r["image"] for r in rs})
        cpu = sum(r["search_cpu"] + r["final_cpu"] + r["metric_cpu"] + r["decode_cpu"] for r in rs)
        mp = sum(r["w"] * r["h"] for r in rs) / len(rs) / 1e6
        per.append("%d px (%.2f MP on average): %d variants, %.1f s CPU, %.1f s wall" % (
            w, mp, n, cpu / n, sum(r["wall"] for r in rs) / n))
    out.append("\nPer variant, all its rows (CPU: search + final + decode + metric): " + "; ".join(per))
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------

def self_check(a):
    """The numpy SSIM against imgbake's C (compiled from Sources/CShims/vips_shim.c) on corpus variants
    and their WebPs: equal to the last bit, or this exits 1."""
    import ctypes
    src = open(os.path.join(HERE, "..", "Sources", "CShims", "vips_shim.c")).read()
    start = src.index("static unsigned char *imgbake_luma") if "static unsigned char *imgbake_luma" in src else src.index(
        "unsigned char *imgbake_luma")
    luma_c = src[start: src.index("\n}\n", start) + 3]
    start = src.index("enum { SSIM_RADIUS")
    end = src.index("\n}\n", src.index("int imgbake_plane_ssim")) + 3
    c = ("#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n#include <math.h>\n#include <stddef.h>\n"
         "#define g_malloc malloc\n#define g_try_malloc malloc\n#define g_free free\n"
         "#define IMGBAKE_CLIP(A, V, B) ((V) < (A) ? (A) : ((V) > (B) ? (B) : (V)))\n"
         + luma_c.replace("static unsigned char", "unsigned char") + src[start:end])
    os.makedirs(a.work, exist_ok=True)
    cfile, lib = os.path.join(a.work, "ssim_ref.c"), os.path.join(a.work, "ssim_ref.so")
    with open(cfile, "w") as f:
        f.write(c)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", cfile, "-o", lib, "-lm"], check=True)
    L = ctypes.CDLL(lib)
    L.imgbake_luma.restype = ctypes.c_void_p
    L.imgbake_plane_ssim.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_double)]
    L.imgbake_luma.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
    names = a.images.split(",") if a.images else eligible(a.corpus)[:: max(1, len(eligible(a.corpus)) // 12)]
    bad = 0
    rng = np.random.default_rng(1)
    cases = [(rng.integers(0, 256, (h, w, b), dtype=np.uint8), b) for h, w, b in ((1, 1, 3), (5, 9, 4), (13, 3, 2), (40, 33, 1))]
    for name in names:
        v = Variant(os.path.join(a.corpus, name), 400, a.work)
        webp = pyvips.Image.new_from_buffer(v.image.webpsave_buffer(Q=60, effort=2), "")
        cases.append((v.pixels, to_array(webp)))
    for case in cases:
        if isinstance(case[1], int):
            px, other = case[0], np.clip(case[0].astype(int) + rng.integers(-40, 40, case[0].shape), 0, 255).astype(np.uint8)
        else:
            px, other = case
        h, w, bands = px.shape
        lc = ctypes.string_at(L.imgbake_luma(px.tobytes(), h * w, bands), h * w)
        ln = luma(px)
        lo = luma(other)
        out = ctypes.c_double()
        L.imgbake_plane_ssim(ln.tobytes(), lo.tobytes(), w, h, ctypes.byref(out))
        s = plane_ssim(ln, lo)
        same = lc == ln.tobytes() and s == out.value
        bad += not same
        print("%dx%dx%d luma %s ssim C %.17g numpy %.17g %s" % (w, h, bands, "same" if lc == ln.tobytes() else "DIFFERENT",
                                                                 out.value, s, "ok" if same else "MISMATCH"))
    print("%d of %d differ" % (bad, len(cases)))
    sys.exit(1 if bad else 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="/tmp/imgcorpus")
    ap.add_argument("--images", help="comma-separated corpus file names (default: every JPEG/PNG >= 400 px wide)")
    ap.add_argument("--limit", type=int, help="N of those, evenly spaced in the manifest's order")
    ap.add_argument("--widths", default="400,800,1600")
    ap.add_argument("--configs", default="all", help="comma-separated, of: " + ", ".join(CONFIGS))
    ap.add_argument("--metric", choices=["ssim", "ssimulacra2", "both"], default="both")
    ap.add_argument("--target", type=float, default=0.965, help="the SSIM target (imgbake's default 0.965)")
    ap.add_argument("--range", action="append", metavar="FORMAT=LO-HI", help="another floor-ceiling, e.g. jxl=30-95")
    ap.add_argument("--out", default="/tmp/formats-work/formats.jsonl")
    ap.add_argument("--work", default="/tmp/formats-work", help="jxl_codec and temporary files")
    ap.add_argument("--stack", default=os.path.join(HERE, "..", ".build", "stack"),
                    help="the project's stack, whose libjxl jxl_codec is built against (default: .build/stack)")
    ap.add_argument("--shard", help="K/N: the K-th (0-based) of N interleaved shares of the images")
    ap.add_argument("--summary", action="store_true", help="print the summary of --out and stop")
    ap.add_argument("--self-check", action="store_true", help="compare the numpy SSIM with imgbake's C and stop")
    a = ap.parse_args()
    a.widths = [int(w) for w in a.widths.split(",")]
    a.ranges = dict(RANGES)
    for spec in a.range or []:
        fmt, lohi = spec.split("=")
        a.ranges[fmt] = tuple(int(x) for x in lohi.split("-"))
    a.target = round(a.target * 10000) / 10000  # imgbake keeps ten-thousandths
    if a.self_check:
        self_check(a)
    if not a.summary:
        run(a)
    print(summarize(read_rows(a.out), a.target, a.ranges,
                    None if a.configs == "all" else set(a.configs.split(",")) | {BASELINE}))


if __name__ == "__main__":
    main()
