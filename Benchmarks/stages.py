#!/usr/bin/env python3
"""Where a cold build's image work goes, by stage, on the bench's images and the stack's own libvips.

    /tmp/imgbake-bench-venvs/script-stack/bin/python3 Benchmarks/stages.py [--urls /tmp/site/urls.txt]

Run after `make bench` (its site lists the images, its origin must be up: `python3 ../shared/bench/origin.py
--root /tmp/imgcorpus --port 8790`). Each image is fetched once, then, one thread (VIPS_CONCURRENCY=1)
and the CPU time of each step counted apart, the work the bench asks of imgbake with its defaults at
widths 400/800/1600: the decode (shrink-on-load to the widest width for JPEG and opaque WebP, the whole
image otherwise), the resizes, WebP at every width (effort 2), and the fallback in the source's format
at 800 (the one `<img>` file) and at the widest (links and Markdown images): JPEG at quality 80
progressive, PNG at zlib level 4 with adaptive filters, GIF as it is. Fixed qualities: the quality
search's share is the bench's own "fixed qualities" row.
"""
import argparse
import os
import time
import urllib.request

os.environ.setdefault("VIPS_CONCURRENCY", "1")
import pyvips  # noqa: E402

WIDTHS = [400, 800, 1600]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--urls", default="/tmp/site/urls.txt")
    args = ap.parse_args()
    pyvips.cache_set_max(0)
    urls = [u.strip() for u in open(args.urls) if u.strip()]
    spent = {}

    def timed(stage, f):
        start = time.process_time()
        value = f()
        spent[stage] = spent.get(stage, 0.0) + time.process_time() - start
        return value

    for url in urls:
        data = urllib.request.urlopen(url).read()
        head = pyvips.Image.new_from_buffer(data, "")
        loader = head.get("vips-loader")
        fmt = "jpeg" if "jpeg" in loader else "png" if "png" in loader else "webp" if "webp" in loader else "gif" if "gif" in loader else "other"
        if fmt in ("gif", "other"):
            continue
        widest = min(WIDTHS[-1], head.width)
        shrinks = fmt == "jpeg" or (fmt == "webp" and not head.hasalpha())
        if shrinks:
            anchor = timed("decode", lambda: pyvips.Image.thumbnail_buffer(data, widest, size="down").copy_memory())
        else:
            full = timed("decode", lambda: pyvips.Image.new_from_buffer(data, "", access="sequential").copy_memory())
            anchor = timed("resize", lambda: full.resize(widest / full.width, kernel="lanczos3").copy_memory()) if full.width > widest else full
        images = {widest: anchor}
        for width in WIDTHS:
            if width < widest:
                images[width] = timed("resize", lambda: anchor.resize(width / anchor.width, kernel="lanczos3").copy_memory())
        for width, image in images.items():
            timed("encode webp", lambda: image.webpsave_buffer(Q=76, effort=2, strip=True))
        for width in sorted({min(800, widest), widest}):
            image = images[width]
            if fmt == "png":
                timed("encode png", lambda: image.pngsave_buffer(compression=4, effort=7, strip=True))
            else:
                timed("encode jpeg", lambda: image.jpegsave_buffer(Q=80, interlace=True, strip=True))
    total = sum(spent.values())
    print("| stage | CPU s | share |\n|---|---|---|")
    for stage, seconds in sorted(spent.items(), key=lambda kv: -kv[1]):
        print("| %s | %.2f | %.0f %% |" % (stage, seconds, 100 * seconds / total))
    print("| all | %.2f | |" % total)


if __name__ == "__main__":
    main()
