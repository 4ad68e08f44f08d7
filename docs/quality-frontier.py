#!/usr/bin/env python3
"""quality-frontier.py - how few WebP bytes any choice of quality per image can reach on the shared bench while
keeping the bench's SSIM goals (issue 22 item 3; docs/MEASUREMENTS.md, "Quality per image").

    python3 docs/quality-frontier.py measure [--urls /tmp/site/urls.txt]   # ~40 min on one core: results.jsonl
    python3 docs/quality-frontier.py frontier                               # the policies and the oracle

`measure` takes every bench image (the site's urls.txt, sources in /tmp/imgcorpus) at widths 400/800/1600 (capped
at its width), resized as both tools resize (libvips' thumbnail), and encodes it as WebP at efforts 2 and 4 and
qualities 30-95 (step 5), metadata removed; for each, the bytes and the SSIM that Benchmarks/quality.py computes
against a floating-point lanczos3 resize of the source. The pyvips script's own file (Q 80, effort 4, metadata kept)
gives its bytes; its SSIM is effort 4 at 80 (metadata does not change pixels).

`frontier` replays: fixed qualities; imgbake-like policies (the lowest quality reaching a target SSIM between a floor
and a ceiling, searched on the bench's own metric, which is kinder to them than imgbake's sample); and an oracle that
knows every variant's SSIM at every quality and spends bytes where they buy the most mean SSIM (a Lagrangian), with
every variant that can reach the script's 5th percentile kept at or above it.
"""
import json, os, re, sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Benchmarks"))
RESULTS = os.environ.get("RESULTS_FILE", "/tmp/quality-frontier.jsonl")
QUALITIES = range(30, 100, 5)


def measure(urls):
    import pyvips
    import quality as Q
    done = set()
    if os.path.exists(RESULTS):
        done = {(r["src"], r["w"]) for r in map(json.loads, open(RESULTS))}
    out = open(RESULTS, "a")
    for name in sorted({re.sub(r"\?.*", "", u.strip()).rsplit("/", 1)[1] for u in open(urls)}):
        src = "/tmp/imgcorpus/" + name
        image = pyvips.Image.new_from_file(src)
        if image.get_typeof("n-pages") and image.get("n-pages") > 1:
            continue
        turned = image.get_typeof("orientation") and image.get("orientation") in (5, 6, 7, 8)
        full = image.height if turned else image.width
        for w in [x for x in (400, 800, 1600) if x <= full] or [full]:
            if (name, w) in done:
                continue
            ref = Q.reference_luma(src, w)
            resized = pyvips.Image.thumbnail(src, w, height=10_000_000).copy_memory()
            row = {"src": name, "w": w, "script_bytes": len(resized.write_to_buffer(".webp", Q=80)), "enc": {}}
            clean = resized.copy()
            for field in clean.get_fields():
                if field in ("exif-data", "xmp-data", "iptc-data", "icc-profile-data", "orientation") or field.startswith("exif-"):
                    clean.remove(field)
            for effort in (2, 4):
                for q in QUALITIES:
                    encoded = clean.write_to_buffer(".webp", Q=q, effort=effort, strip=True)
                    luma = Q.luma(pyvips.Image.new_from_buffer(encoded, ""))
                    if luma.shape == ref.shape:
                        row["enc"]["%d/%d" % (effort, q)] = [len(encoded), Q.ssim(luma, ref)]
            out.write(json.dumps(row) + "\n")
            out.flush()


def frontier():
    rows = [r for r in map(json.loads, open(RESULTS)) if "4/80" in r["enc"] and "2/80" in r["enc"]]
    pct = lambda v, p: sorted(v)[min(len(v) - 1, int(p / 100 * (len(v) - 1) + 0.5))]
    script_bytes = sum(r["script_bytes"] for r in rows)
    script = [r["enc"]["4/80"][1] for r in rows]
    mean, p5 = np.mean(script), pct(script, 5)
    print("%d variants; the script: %.2f MB, SSIM mean %.4f, 5th percentile %.4f" % (len(rows), script_bytes / 1e6, mean, p5))

    def score(pick):
        chosen = [r["enc"][pick(r)] for r in rows]
        ssims = [c[1] for c in chosen]
        return sum(c[0] for c in chosen) / script_bytes, np.mean(ssims) - mean, pct(ssims, 5) - p5

    print("\n| policy | bytes | mean SSIM - script's | 5th pct - script's |\n|---|---|---|---|")
    for effort in (2, 4):
        for q in (60, 70, 75, 80):
            print("| fixed %d, effort %d | %.3f | %+.4f | %+.4f |" % ((q, effort) + score(lambda r: "%d/%d" % (effort, q))))

    def target(t, floor, ceiling, effort):
        def pick(r):
            for q in QUALITIES:
                if floor <= q < ceiling and r["enc"]["%d/%d" % (effort, q)][1] >= t:
                    return "%d/%d" % (effort, q)
            return "%d/%d" % (effort, ceiling)
        return pick
    for effort in (2, 4):
        grid = [(score(target(t, lo, hi, effort)), t, lo, hi) for t in (0.95, 0.96, 0.965, 0.97, 0.975, 0.98, 0.985)
                for lo in (30, 40, 50, 60) for hi in (80, 85, 90, 95)]
        ok = sorted(g for g in grid if g[0][1] >= -0.002 and g[0][2] >= 0)
        if ok:
            (b, m, p), t, lo, hi = ok[0]
            print("| best target meeting both SSIM goals, effort %d: %.3f in [%d, %d] | %.3f | %+.4f | %+.4f |" % (effort, t, lo, hi, b, m, p))

    def oracle(effort, lam):
        def pick(r):
            options = [(q,) + tuple(r["enc"]["%d/%d" % (effort, q)]) for q in QUALITIES]
            allowed = [o for o in options if o[2] >= p5] or [max(options, key=lambda o: o[2])]
            return "%d/%d" % (effort, max(allowed, key=lambda o: o[2] - lam * o[1])[0])
        return pick
    for effort in (2, 4):
        met = sorted(s for s in (score(oracle(effort, lam)) for lam in np.geomspace(1e-8, 1e-4, 60)) if s[1] >= -0.002 and s[2] >= 0)
        if met:
            print("| oracle meeting both SSIM goals, effort %d | %.3f | %+.4f | %+.4f |" % ((effort,) + met[0]))


if __name__ == "__main__":
    if sys.argv[1:2] == ["measure"]:
        measure(sys.argv[sys.argv.index("--urls") + 1] if "--urls" in sys.argv else "/tmp/site/urls.txt")
    else:
        frontier()
