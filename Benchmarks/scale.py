#!/usr/bin/env python3
"""Benchmark (not a test): how wall time and peak memory grow with the number of image references.

    make release && python3 Benchmarks/scale.py [--refs 10000,100000,400000,1000000]   # or: make bench-scale

For each size, a site of pages holding 10 references each (HTML with <img>, srcset, <picture>, an
og:image and a CSS background; every fifth page Markdown), over 300 distinct images (URLs of the
example images with a query, served by the loopback test origin; most sites reuse a few hundred images
on many pages). Then, one run each, with the release binary:
  cold       empty cache, build with --out
  warm-out   the same sources, the cache kept, into a new --out folder (every page written again)
  in-place   a copy of the site rewritten in place, the cache kept
  scan       imgbake scan --json (output to /dev/null)
Prints wall seconds, CPU seconds and the peak RSS of the imgbake process (its own, from wait4).
"""
import argparse, os, random, shutil, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--refs", default="10000,100000,400000,1000000")
ap.add_argument("--binary", default=os.path.join(root, ".build/release/imgbake"))
ap.add_argument("--images", type=int, default=300)
ap.add_argument("--keep", action="store_true", help="leave the last site, outputs and cache")
a = ap.parse_args()

NAMES = ["hubble.jpg", "hubble-wide.jpg", "astronaut.jpg", "coffee.png", "astronaut-round.png", "deep-field.gif"]
FILLER = "<p>" + "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 12 + "</p>\n"


def generate(site, references, images):
    """Pages of 10 references each over `images` distinct URLs."""
    urls = ["http://images.test/img/%s?v=%d" % (NAMES[i % len(NAMES)], i) for i in range(images)]
    rng = random.Random(references)
    pages = references // 10
    for n in range(pages):
        folder = os.path.join(site, "s%03d" % (n % 200))
        if n < 200:
            os.makedirs(folder, exist_ok=True)
        u = [urls[rng.randrange(images)] for _ in range(10)]
        if n % 5 == 0:
            body = "".join("![%d](%s)\n\n" % (i, x) for i, x in enumerate(u[:8]))
            text = "---\ntitle: Post %d\nimage: %s\ncover: %s\n---\n# Post %d\n\n%s\n%s" % (n, u[8], u[9], n, FILLER, body)
            name = "post%06d.md" % n
        else:
            text = ("<!doctype html><html><head><title>%d</title><meta property=\"og:image\" content=\"%s\"></head><body>%s"
                    "<img src=\"%s\" alt=\"a\"><img src=\"%s\" alt=\"b\"><img srcset=\"%s 1x, %s 2x\" alt=\"c\">"
                    "<picture><source srcset=\"%s\"><img src=\"%s\" alt=\"d\"></picture>"
                    "<div style=\"background: url('%s')\"></div><img src=\"%s\" alt=\"e\">%s</body></html>\n"
                    % (n, u[0], FILLER, u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], FILLER))
            name = "page%06d.html" % n
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
    with open(os.path.join(site, "imgbake.toml"), "w") as f:
        f.write('[output]\nbase_url = "https://example.org/"\n')
    return pages


def run(label, arguments, pages, references):
    t0 = time.monotonic()
    with open(os.devnull, "w") as null:
        p = subprocess.Popen([a.binary] + arguments, stdout=null, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err = p.stderr.read()
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("%s failed (%d): %s" % (label, p.returncode, err[-2000:]))
    cpu = usage.ru_utime + usage.ru_stime
    print("| %9d | %7d | %-9s | %8.2f | %8.2f | %9.1f | %9d |" % (
        references, pages, label, wall, cpu, wall / pages * 1000, usage.ru_maxrss // 1024), flush=True)


origin = subprocess.Popen([sys.executable, os.path.join(root, "Tests/Support/origin.py"), "--root",
                           os.path.join(root, "Examples/images"), "--watch-parent"], stdout=subprocess.PIPE, text=True)
port = int(origin.stdout.readline().split()[1])
connect = ["--connect-to", "images.test:80:127.0.0.1:%d" % port]
print("| references | pages | run | wall s | CPU s | wall s per 1,000 pages | peak RSS MiB |")
print("|---|---|---|---|---|---|---|")
for references in [int(x) for x in a.refs.split(",")]:
    work = tempfile.mkdtemp(prefix="imgbake-scale-")
    site, cache = os.path.join(work, "site"), os.path.join(work, "cache")
    pages = generate(site, references, a.images)
    common = ["--cache-dir", cache, "--config", os.path.join(site, "imgbake.toml"), "--quiet"] + connect
    run("cold", ["build", site, "--out", os.path.join(work, "out")] + common, pages, references)
    run("warm-out", ["build", site, "--out", os.path.join(work, "out2")] + common, pages, references)
    shutil.copytree(site, os.path.join(work, "inplace"))
    run("in-place", ["build", os.path.join(work, "inplace")] + common, pages, references)
    run("scan", ["scan", site, "--json"], pages, references)
    if a.keep:
        print("kept: %s" % work)
    else:
        shutil.rmtree(work)
origin.terminate()
origin.wait()  # every child waited for
