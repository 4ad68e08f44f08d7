#!/usr/bin/env python3
"""avif_quality.py - imgbake's files against the pyvips script's AVIF at equal quality. Run by bench.sh
after the timed runs (untimed); the numbers are about bytes and quality only.

  python3 Benchmarks/avif_quality.py --new RESULTS/rep1/imgbake/out --report RESULTS/imgbake-report.json \\
      --q50 RESULTS/rep1/script-avif/out --q80 RESULTS/once/script-avif80/out --webp RESULTS/rep1/script-stack/out

For every source and width that both imgbake and the AVIF script (--avif: sharp's defaults, Q 50,
effort 4, 4:4:4; and the same at --avif-q 80) made:

  imgbake     the file a browser that takes JPEG XL and AVIF downloads at that width: what the FIRST
              <source> of imgbake's <picture> offers at that width (its JPEG XL if offered, else its
              AVIF, else its WebP; a <source> offers at each width the smallest file a browser taking
              it can decode, so that may be a WebP or the fallback), read from imgbake's output pages
              (html/ and md/). Left out, and counted: a width none of imgbake's <picture>s for that
              source offers (the browser takes another width), a source in no <picture> of imgbake's
              (only an author's <img srcset> or <picture>, localised one for one, or a Markdown image:
              markup, not encoding), an animated source (imgbake keeps the animation, the script its
              first frame).
  the script  its AVIF at that width, from the Q 50 run and from the Q 80 run.

Each is decoded (alpha flattened onto white) and measured against the same floating-point resize of the
corpus source (quality.py's reference(): lanczos3 on doubles) with SSIM (quality.py's ssim(): luma,
Gaussian windows) and SSIMULACRA2 (Benchmarks/ss2.py: PyPI's ssimulacra2, pinned there; within about a
point of libjxl's tool). Reported: bytes, mean, 5th percentile and lowest of both metrics for the three;
then, at equal quality, the script's total bytes at imgbake's 5th-percentile score, interpolated
linearly in the 5th-percentile score between the script's Q 50 and Q 80 totals (and said when imgbake's
score is outside that bracket: extrapolated), and imgbake's bytes over that.

Then the same for a browser without AVIF and JPEG XL: what imgbake's WebP <source> offers at that width
(its WebP, or its fallback where that is smaller; the <picture>'s <img> where there is no WebP <source>)
against the script's WebP (Q 80, one quality only: no bracket, the ratio is at the qualities reached).

Files: imgbake's _img/<stem>-<hash>-<width>.<ext>, matched to corpus sources through its report (URL ->
files) and the site's site.json (URL -> corpus name), or by stem without --report; the script's
_img/<sha256 of the source, 16 hex>-<width>.<ext>. JPEG XL files (pyvips-binary's libvips cannot read
them) are decoded with Benchmarks/jxl_codec.cc built against the project's stack (--stack). References
are kept in REFS (default /tmp/quality-refs, shared with quality.py), scores by file content in
REFS/scores-*.jsonl. --jobs processes (default: one per core) measure the pairs."""
import argparse
import concurrent.futures as cf
import glob
import hashlib
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

import numpy as np
import pyvips

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import quality  # noqa: E402  reference(), ssim(), pct(), stem_of()
import ss2  # noqa: E402

REFS = os.environ.get("REFS", "/tmp/quality-refs")
MODERN = ("image/jxl", "image/avif", "image/webp")


# ---------------------------------------------------------------------------------------------------
# imgbake's pages: which file each browser takes at each width.

def local(url):
    return url.rsplit("/", 1)[1].split("?")[0].split("#")[0] if url and "/_img/" in url else None


def candidates(srcset):
    """srcset -> the file names of its candidates with a width descriptor under /_img/ (the file's own
    width is taken from the report or its name, not from the descriptor: an author's srcset keeps its
    descriptor, e.g. "… 1200w" for a 1600 px file)."""
    out = []
    for part in (srcset or "").split(","):
        bits = part.split()
        if len(bits) == 2 and bits[1].endswith("w") and bits[1][:-1].isdigit() and local(bits[0]):
            out.append(local(bits[0]))
    return out


def img_candidates(a):
    """What an <img> offers: its srcset's width candidates, or (with none: the browser takes src) its src."""
    return candidates(a.get("srcset")) or ([local(a.get("src"))] if local(a.get("src")) else [])


class Pictures(HTMLParser):
    """Every <picture> (its <source>s: type and candidates; its <img>'s candidates) and every <img srcset>
    outside one, in page order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.items, self.sources, self.img = [], None, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "picture":
            self.sources, self.img = [], []
        elif tag == "source" and self.sources is not None:
            self.sources.append(((a.get("type") or "").strip().lower(), candidates(a.get("srcset"))))
        elif tag == "img":
            if self.sources is not None:
                self.img = img_candidates(a)
            elif img_candidates(a):
                self.items.append(("img", [], img_candidates(a)))

    def handle_endtag(self, tag):
        if tag == "picture" and self.sources is not None:
            # imgbake's own <picture> offers typed <source>s first (or none); an author's, localised one for
            # one (its <source srcset media> rewritten to local files), is not counted as one.
            mine = not self.sources or self.sources[0][0] in MODERN
            self.items.append(("picture" if mine else "author-picture", self.sources, self.img))
            self.sources = None


MD_IMAGE = re.compile(r'!\[[^\]]*\]\(\s*<?([^\s)>]+)|^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)', re.M)


def served(out):
    """{"modern"|"webp": {file name: {"picture"|"img"}}} from imgbake's output pages: what the first
    <source> offers to a browser taking JPEG XL, AVIF and WebP, and the first WebP <source> (or the
    <img> where there is none; a Markdown image counts as an <img src>)."""
    found = {"modern": {}, "webp": {}}
    pages = glob.glob(os.path.join(out, "html", "**", "*.html"), recursive=True) + \
        glob.glob(os.path.join(out, "md", "**", "*.md"), recursive=True)
    for page in pages:
        text = open(page, encoding="utf-8", errors="replace").read()
        p = Pictures()
        p.feed(text)
        p.close()
        if page.endswith(".md"):
            p.items += [("img", [], [local(m.group(1) or m.group(2))]) for m in MD_IMAGE.finditer(text)
                        if local(m.group(1) or m.group(2))]
        for kind, sources, img in p.items:
            first = next((c for t, c in sources if t in MODERN), None)
            webp = next((c for t, c in sources if t == "image/webp"), None)
            for browser, cands in (("modern", first if first is not None else img),
                                   ("webp", webp if webp is not None else img)):
                for name in cands:
                    found[browser].setdefault(name, set()).add(kind)
    return found


# ---------------------------------------------------------------------------------------------------
# Sources.

def corpus_by_hash(corpus):
    out = {}
    for f in glob.glob(os.path.join(corpus, "*")):
        if not f.endswith(".tsv"):
            out[hashlib.sha256(open(f, "rb").read()).hexdigest()[:16]] = f
    return out


def imgbake_widths(report):
    """imgbake's file name -> its width: from the report, else from the name (<stem>-<hash>-<width>.<ext>)."""
    known = {}
    if report and os.path.exists(report):
        known = {f["name"]: f["width"] for image in json.load(open(report)).get("images", []) for f in image.get("files", [])}

    def width(name):
        m = re.search(r"-[0-9a-f]{10}-(\d+)\.[a-z]+$", name)
        return known.get(name) or (int(m.group(1)) if m else None)
    return width


def imgbake_sources(folder, corpus, report, site):
    """imgbake's file name -> corpus path: through the report and site.json when there is a report,
    else by the name's stem (quality.py's stem_of; a stem two sources share is left out)."""
    if report and os.path.exists(report) and os.path.exists(os.path.join(site, "site.json")):
        names = {i["url"]: i["name"] for i in json.load(open(os.path.join(site, "site.json")))["images"]}
        out = {}
        for image in json.load(open(report)).get("images", []):
            src = names.get(image.get("url"))
            if src and os.path.exists(os.path.join(folder, src)):
                for f in image.get("files", []):
                    out[f["name"]] = os.path.join(folder, src)
        return out.get
    stems = {}
    for path in corpus.values():
        stems.setdefault(quality.stem_of(path), set()).add(path)

    def by_stem(name):
        m = re.match(r"(.+)-[0-9a-f]{10}(-\d+)?\.[a-z]+$", name)
        paths = stems.get(m.group(1)) if m else None
        return next(iter(paths)) if paths and len(paths) == 1 else None
    return by_stem


def is_animated(src):
    img = pyvips.Image.new_from_file(src)
    return bool(img.get_typeof("n-pages")) and img.get("n-pages") > 1


def peer_files(out, ext, corpus):
    """(source, width) -> path of the script's files of one format."""
    found = {}
    folder = os.path.join(out, "_img")
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        m = re.match(r"([0-9a-f]{16})-(\d+)\.%s$" % ext, name)
        if m and m.group(1) in corpus:
            found[(corpus[m.group(1)], int(m.group(2)))] = os.path.join(folder, name)
    return found


# ---------------------------------------------------------------------------------------------------
# Measuring (in worker processes).

def to_array(img):
    return np.ndarray(buffer=img.write_to_memory(), dtype=np.uint8, shape=[img.height, img.width, img.bands])


def flat_pixels(img):
    """As quality.luma() reads a file, before its luma: alpha flattened onto white, 8 bits."""
    img = img.copy_memory()
    if img.hasalpha():
        img = img.flatten(background=[255] * (img.bands - 1))
    return to_array(img.cast("uchar"))


def luma_of(px):
    """quality.luma() of those pixels."""
    a = px.astype(np.float64)
    return a[..., 0] * 0.299 + a[..., 1] * 0.587 + a[..., 2] * 0.114 if px.shape[2] >= 3 else a[..., 0]


def reference(src, w):
    """quality.reference(src, w) as pixels and luma, kept in REFS (the luma under quality.py's name)."""
    key = "%s-%d" % (hashlib.sha256(open(src, "rb").read()).hexdigest()[:16], w)
    px_path, luma_path = os.path.join(REFS, key + "-rgb.npy"), os.path.join(REFS, key + ".npy")
    os.makedirs(REFS, exist_ok=True)
    if os.path.exists(px_path):
        px = np.load(px_path)
    else:
        px = flat_pixels(quality.reference(src, w))
        np.save(px_path + ".%d.tmp.npy" % os.getpid(), px)
        os.replace(px_path + ".%d.tmp.npy" % os.getpid(), px_path)
    if os.path.exists(luma_path):
        ref_luma = np.load(luma_path)
    else:
        ref_luma = luma_of(px)
        np.save(luma_path + ".%d.tmp.npy" % os.getpid(), ref_luma)
        os.replace(luma_path + ".%d.tmp.npy" % os.getpid(), luma_path)
    return px, ref_luma


def decode(path, codec):
    if path.endswith(".jxl"):
        with tempfile.NamedTemporaryFile(suffix=".raw") as raw:
            r = subprocess.run([codec, "dec", path, raw.name], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError("jxl_codec dec %s: %s" % (path, r.stderr.strip()))
            w, h, bands = (int(x) for x in r.stdout.split()[:3])
            data = open(raw.name, "rb").read()
        img = pyvips.Image.new_from_memory(data, w, h, bands, "uchar")
        img = img.copy(interpretation="srgb" if bands >= 3 else "b-w")
    else:
        img = pyvips.Image.new_from_file(path)
    if img.format != "uchar":  # a 16-bit PNG fallback
        img = img.colourspace("srgb" if img.bands >= 3 else "b-w").cast("uchar")
    return flat_pixels(img)


def measure(src, w, paths, codec):
    """{path: [SSIM, SSIMULACRA2]} against the reference of src at w, or {path: "why"} where a file is not
    the reference's size or does not decode."""
    ref_px, ref_luma = reference(src, w)
    out = {}
    for path in paths:
        try:
            px = decode(path, codec)
        except Exception as e:  # noqa: BLE001  reported with the files left out
            out[path] = "cannot decode: %s" % (str(e).splitlines() or [type(e).__name__])[0]
            continue
        if px.shape[:2] != ref_px.shape[:2]:
            out[path] = "%dx%d, the reference %dx%d" % (px.shape[1], px.shape[0], ref_px.shape[1], ref_px.shape[0])
            continue
        out[path] = [quality.ssim(luma_of(px), ref_luma), ss2.score(ref_px, px)]
    return out


# ---------------------------------------------------------------------------------------------------
# The run.

def file_key(path, src, w):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return "%s|%s|%d|ss2-%s" % (h.hexdigest()[:20], os.path.basename(src), w, ss2.VERSION)


def jxl_codec(stack):
    had = "VIPS_CONCURRENCY" in os.environ
    import formats  # its build of jxl_codec (formats.py sets VIPS_CONCURRENCY=1 for itself: undone here)
    if not had:
        os.environ.pop("VIPS_CONCURRENCY", None)
    return formats.build_jxl_codec(stack, os.path.join(REFS, "jxl_codec-build"))


def summary(values):
    v = [x for x in values if x is not None]
    return (sum(v) / len(v), quality.pct(v, 5), min(v)) if v else (float("nan"),) * 3


def at_equal(mine, lo, hi, bytes_lo, bytes_hi):
    """The script's bytes at imgbake's score, linear between (lo, bytes_lo) and (hi, bytes_hi); and
    whether that is inside the bracket."""
    if hi == lo:
        return None, False
    t = (mine - lo) / (hi - lo)
    return bytes_lo + t * (bytes_hi - bytes_lo), 0 <= t <= 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--new", required=True, help="imgbake's output folder (pages and _img/)")
    ap.add_argument("--report", help="imgbake's --report JSON of that build (matches files to sources)")
    ap.add_argument("--q50", required=True, help="the AVIF script's output at Q 50 (--avif)")
    ap.add_argument("--q80", required=True, help="the AVIF script's output at Q 80 (--avif --avif-q 80)")
    ap.add_argument("--webp", help="the script's output whose WebPs to compare (default: --q50's)")
    ap.add_argument("--corpus", default="/tmp/imgcorpus")
    ap.add_argument("--site", default="/tmp/site")
    ap.add_argument("--stack", default=os.path.join(HERE, "..", ".build", "stack"), help="for jxl_codec")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--pairs", help="write every measured file's row here (JSON)")
    a = ap.parse_args()

    corpus = corpus_by_hash(a.corpus)
    source_of = imgbake_sources(a.corpus, corpus, a.report, a.site)
    width_of = imgbake_widths(a.report)
    pages = served(a.new)
    img_dir = os.path.join(a.new, "_img")
    mine = {}  # browser -> (src, w) -> (path, kinds)
    stats = {"no source": set(), "conflicts": 0}
    seen, pictured = set(), {}  # imgbake's sources; those in a <picture>, per browser
    for browser, found in pages.items():
        by = {}
        for name, kinds in found.items():
            src, w = source_of(name), width_of(name)
            if not src or not w:
                stats["no source"].add(name)
                continue
            by.setdefault((src, w), []).append((name, kinds))
            seen.add(src)
            if "picture" in kinds:
                pictured.setdefault(browser, set()).add(src)
        mine[browser] = {}
        for key, options in by.items():
            # The <picture>'s file; pages that disagree are counted. An image at a width that is in no
            # <picture> of imgbake's (only an author's <img srcset> or <picture> localised one for one, or a
            # Markdown image) is left out.
            options = sorted(o for o in options if "picture" in o[1])
            if not options:
                continue
            stats["conflicts"] += len(options) > 1
            mine[browser][key] = (os.path.join(img_dir, options[0][0]), options[0][1])
    q50, q80 = peer_files(a.q50, "avif", corpus), peer_files(a.q80, "avif", corpus)
    webp = peer_files(a.webp or a.q50, "webp", corpus)
    # An animated source: imgbake keeps the animation, the script makes its first frame (and no AVIF): left out.
    animated = {src for b in mine.values() for src, _ in b if is_animated(src)}
    avif_keys = sorted(k for k in mine["modern"] if k in q50 and k in q80 and k[0] not in animated)
    webp_keys = sorted(k for k in mine["webp"] if k in webp and k[0] not in animated)
    if not avif_keys and not webp_keys:
        print("\navif_quality.py: no source and width made by both imgbake and the AVIF script")
        return

    # Every file to measure, once, grouped by source and width; scores kept by content.
    todo = {}
    for k in avif_keys:
        todo.setdefault(k, set()).update([mine["modern"][k][0], q50[k], q80[k]])
    for k in webp_keys:
        todo.setdefault(k, set()).update([mine["webp"][k][0], webp[k]])
    cache_path = os.path.join(REFS, "scores-ss2-%s.jsonl" % ss2.VERSION)
    cache = {}
    if os.path.exists(cache_path):
        for line in open(cache_path):
            try:
                r = json.loads(line)
                cache[r["key"]] = r["scores"]
            except (ValueError, KeyError):
                pass
    keys = {(p, k): file_key(p, *k) for k, paths in todo.items() for p in paths}
    scores = {p: cache[keys[(p, k)]] for k, paths in todo.items() for p in paths if keys[(p, k)] in cache}
    need = {k: sorted(p for p in paths if p not in scores) for k, paths in todo.items()}
    need = {k: v for k, v in need.items() if v}
    codec = jxl_codec(a.stack) if any(p.endswith(".jxl") for v in need.values() for p in v) else None
    if need:
        os.makedirs(REFS, exist_ok=True)
        with cf.ProcessPoolExecutor(max(1, a.jobs), mp_context=multiprocessing.get_context("spawn")) as ex, \
                open(cache_path, "a") as cache_file:
            futures = {ex.submit(measure, k[0], k[1], paths, codec): k for k, paths in need.items()}
            for fu in cf.as_completed(futures):
                k = futures[fu]
                for p, r in fu.result().items():
                    scores[p] = r
                    if not isinstance(r, str):
                        cache_file.write(json.dumps({"key": keys[(p, k)], "scores": r}) + "\n")

    def ok(*paths):
        return all(not isinstance(scores.get(p), str) for p in paths)

    rows = []
    for k in avif_keys:
        paths = (mine["modern"][k][0], q50[k], q80[k])
        if ok(*paths):
            rows.append({"src": os.path.basename(k[0]), "w": k[1], "browser": "jxl+avif", "from": sorted(mine["modern"][k][1]),
                         "files": [os.path.basename(p) for p in paths], "bytes": [os.path.getsize(p) for p in paths],
                         "ssim": [scores[p][0] for p in paths], "ssimulacra2": [scores[p][1] for p in paths]})
    webp_rows = []
    for k in webp_keys:
        paths = (mine["webp"][k][0], webp[k])
        if ok(*paths):
            webp_rows.append({"src": os.path.basename(k[0]), "w": k[1], "browser": "webp", "from": sorted(mine["webp"][k][1]),
                              "files": [os.path.basename(p) for p in paths], "bytes": [os.path.getsize(p) for p in paths],
                              "ssim": [scores[p][0] for p in paths], "ssimulacra2": [scores[p][1] for p in paths]})
    skipped = sorted({"%s (%s)" % (os.path.basename(p), r) for p, r in scores.items() if isinstance(r, str)})

    def exts(rs):
        counts = {}
        for r in rs:
            e = r["files"][0].rsplit(".", 1)[1]
            counts[e] = counts.get(e, 0) + 1
        return ", ".join("%s %d" % kv for kv in sorted(counts.items(), key=lambda kv: -kv[1]))

    def origin(browser, peer):
        """What the script made that is left out, and why."""
        left = [k for k in peer if k[0] in seen and k not in mine[browser]] + \
            [k for k in peer if k in mine[browser] and k[0] in animated]
        pic = pictured.get(browser, set())
        n_anim = sum(k[0] in animated for k in left)
        n_width = sum(k[0] not in animated and k[0] in pic for k in left)
        n_nopic = sum(k[0] not in animated and k[0] not in pic for k in left)
        parts = ["%d where imgbake's <picture>s offer no file of that width (that <source> lists other widths: "
                 "the browser takes one of those)" % n_width if n_width else "",
                 "%d of sources in no <picture> of imgbake's on any page (only an author's <img srcset> or <picture>, "
                 "localised one for one, or a Markdown image)" % n_nopic if n_nopic else "",
                 "%d of animated sources (imgbake keeps the animation, the script its first frame)" % n_anim if n_anim else ""]
        parts = [x for x in parts if x]
        return "; left out of the script's: " + ", ".join(parts) if parts else ""

    def score_rows(rows, columns, tail=""):
        """Prints mean, 5th percentile and lowest of both metrics over `rows`, one cell per tool (the
        first `columns`); returns each metric's 5th percentiles."""
        p5 = {}
        for metric, label, fmt in (("ssim", "SSIM", "%.4f"), ("ssimulacra2", "SSIMULACRA2", "%.2f")):
            s = [summary(r[metric][i] for r in rows) for i in range(columns)]
            p5[metric] = [x[1] for x in s]
            for j, what in enumerate(("mean", "5th percentile", "lowest")):
                print("| %s %s | %s |%s" % (label, what, " | ".join(fmt % x[j] for x in s), tail))
        return p5

    print("\n### What a browser taking JPEG XL and AVIF downloads: imgbake against the script with AVIF (sharp's "
          "defaults: Q 50, effort 4, 4:4:4; and Q 80), same source and width\n")
    if rows:
        n = len(rows)
        print("%d source-widths; imgbake's files (its <picture>s' first <source>): %s%s. SSIM (quality.py's, luma) and"
              % (n, exts(rows), origin("modern", q50)))
        print("SSIMULACRA2 (PyPI ssimulacra2 %s) against a floating-point resize of the source." % ss2.VERSION)
        print()
        print("| | imgbake | script AVIF Q50 | script AVIF Q80 |")
        print("|---|---|---|---|")
        total = [sum(r["bytes"][i] for r in rows) for i in range(3)]
        print("| bytes | %.3f MB | %.3f MB | %.3f MB |" % tuple(t / 1e6 for t in total))
        print("| imgbake / script bytes | | %.3f | %.3f |" % (total[0] / total[1], total[0] / total[2]))
        p5 = score_rows(rows, 3)
        print("\nAt equal quality: the script's total bytes at imgbake's 5th-percentile score, linear in its 5th-percentile")
        print("score between its Q50 and Q80 totals.\n")
        print("| metric | imgbake 5th pct | script 5th pct Q50 / Q80 | script bytes there | imgbake / script bytes |")
        print("|---|---|---|---|---|")
        for metric, label, fmt in (("ssim", "SSIM", "%.4f"), ("ssimulacra2", "SSIMULACRA2", "%.2f")):
            m, lo, hi = p5[metric]
            b, inside = at_equal(m, lo, hi, total[1], total[2])
            where = "" if inside else (" (outside the bracket: extrapolated)" if b is not None else "")
            print(("| %s | " + fmt + " | " + fmt + " / " + fmt + " | %s | %s |") % (
                label, m, lo, hi, "%.3f MB%s" % (b / 1e6, where) if b else "- (Q50 and Q80 score the same)",
                "%.3f" % (total[0] / b) if b and b > 0 else "-"))
        widths = sorted({r["w"] for r in rows if r["w"] in (400, 800, 1600)})
        if widths:
            print("\nBy width (bytes imgbake / script Q50, Q80; SSIMULACRA2 5th pct imgbake, Q50, Q80): " + "; ".join(
                "%d px (%d): %.3f, %.3f; %.1f, %.1f, %.1f" % (
                    w, len(sel), sum(r["bytes"][0] for r in sel) / sum(r["bytes"][1] for r in sel),
                    sum(r["bytes"][0] for r in sel) / sum(r["bytes"][2] for r in sel),
                    *(summary(r["ssimulacra2"][i] for r in sel)[1] for i in range(3)))
                for w in widths for sel in [[r for r in rows if r["w"] == w]]))
    else:
        print("none measured")

    print("\n### What a browser without AVIF and JPEG XL downloads: imgbake's WebP <source> against the script's WebP "
          "(Q 80), same source and width\n")
    if webp_rows:
        n = len(webp_rows)
        print("%d source-widths; imgbake's files (its <picture>s' WebP <source>, or <img> where none): %s%s."
              % (n, exts(webp_rows), origin("webp", webp)))
        print("The script's WebP has one quality (80): no bracket, the bytes ratio is at the scores each reached.\n")
        print("| | imgbake | script WebP Q80 | imgbake / script |")
        print("|---|---|---|---|")
        total = [sum(r["bytes"][i] for r in webp_rows) for i in range(2)]
        print("| bytes | %.3f MB | %.3f MB | %.3f |" % (total[0] / 1e6, total[1] / 1e6, total[0] / total[1]))
        score_rows(webp_rows, 2, tail=" |")
    else:
        print("none measured")
    left = []
    if skipped:
        left.append("%d file(s) not the reference's size or not decoded: %s" % (len(skipped), ", ".join(skipped[:6]) + (" ..." if len(skipped) > 6 else "")))
    if stats["no source"]:
        left.append("%d imgbake file(s) matched to no corpus source" % len(stats["no source"]))
    if stats["conflicts"]:
        left.append("%d source-width(s) where pages offered different files (the first by name taken)" % stats["conflicts"])
    if left:
        print("\nLeft out: " + "; ".join(left) + ".")
    if a.pairs:
        json.dump(rows + webp_rows, open(a.pairs, "w"), indent=0)


if __name__ == "__main__":
    main()
